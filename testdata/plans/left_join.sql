-- Dynamic pruning of the optional side of an outer join: date_dim (the
-- preserved side) is filtered, so store_sales partitions no January-2000
-- day can match are never read. The join shuffles both sides so the
-- collector's stage can run before the fact scan's.
select d_date, count(ss_ticket_number), sum(ss_net_paid)
from date_dim left join store_sales on d_date_sk = ss_sold_date_sk
where d_year = 2000 and d_moy = 1
group by d_date
order by d_date
