-- full outer join rewritten as a left join plus the unmatched right rows
-- (the TiDB grammar has no full outer join); a matched row has a non-NULL
-- ssci.item_sk, so "ssci.item_sk is null" selects exactly the unmatched ones.
with ssci as (
select ss_customer_sk customer_sk
      ,ss_item_sk item_sk
from store_sales,date_dim
where ss_sold_date_sk = d_date_sk
  and d_month_seq between 1212 and 1212 + 11
group by ss_customer_sk
        ,ss_item_sk),
csci as(
 select cs_bill_customer_sk customer_sk
      ,cs_item_sk item_sk
from catalog_sales,date_dim
where cs_sold_date_sk = d_date_sk
  and d_month_seq between 1212 and 1212 + 11
group by cs_bill_customer_sk
        ,cs_item_sk)
 select  sum(case when store_customer_sk is not null and catalog_customer_sk is null then 1 else 0 end) store_only
      ,sum(case when store_customer_sk is null and catalog_customer_sk is not null then 1 else 0 end) catalog_only
      ,sum(case when store_customer_sk is not null and catalog_customer_sk is not null then 1 else 0 end) store_and_catalog
from (select ssci.customer_sk store_customer_sk, csci.customer_sk catalog_customer_sk
      from ssci left join csci on (ssci.customer_sk=csci.customer_sk
                               and ssci.item_sk = csci.item_sk)
      union all
      select ssci.customer_sk store_customer_sk, csci.customer_sk catalog_customer_sk
      from csci left join ssci on (ssci.customer_sk=csci.customer_sk
                               and ssci.item_sk = csci.item_sk)
      where ssci.item_sk is null) x
limit 100;
