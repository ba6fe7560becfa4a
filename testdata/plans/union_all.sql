-- Dynamic pruning into every branch of a UNION ALL: the date filter's
-- keys prune both sales channels' scans (q5, q77 and q80 have this shape).
select s.channel, sum(s.price)
from (select 'store' channel, ss_sold_date_sk sold, ss_net_paid price from store_sales
      union all
      select 'catalog' channel, cs_sold_date_sk sold, cs_net_paid price from catalog_sales) s,
     date_dim
where s.sold = d_date_sk and d_year = 2000 and d_moy = 1
group by s.channel
