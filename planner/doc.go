// Package planner turns a bound logical plan into an executable physical
// plan. It owns the logical plan nodes, the optimizer rules (one per file,
// run by one driver in rules.go), cost estimates, and the physical planner
// that picks join strategies and inserts exchanges (hash by key group,
// broadcast, gather) where the data must move, and the dynamic partition
// pruning nodes (DynamicFilterDataCollector on a selective join side,
// OrderEnforce above the fact scan it prunes; dynamic_filter.go).
package planner
