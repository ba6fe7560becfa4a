-- A CTE referenced twice is computed once: one stage aggregates store
-- sales (after the date filter prunes it dynamically) and both semi joins
-- read its output (TPC-DS q23 has this shape).
with frequent as (
  select ss_item_sk item_sk from store_sales, date_dim
  where ss_sold_date_sk = d_date_sk and d_year = 2000
  group by ss_item_sk having count(*) > 4)
select 'catalog' channel, sum(cs_quantity) from catalog_sales where cs_item_sk in (select item_sk from frequent)
union all
select 'web' channel, sum(ws_quantity) from web_sales where ws_item_sk in (select item_sk from frequent)
