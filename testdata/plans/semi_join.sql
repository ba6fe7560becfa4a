-- Dynamic pruning through a semi join: IN (subquery) on the partition key.
select count(*), sum(ss_net_paid)
from store_sales
where ss_sold_date_sk in (select d_date_sk from date_dim where d_year = 2000 and d_moy = 1)
