// Package runtime runs physical plans: it cuts a plan into a job graph of
// stages at its shuffle.Exchange nodes (BuildJobGraph), schedules the
// stages' tasks on worker slots once their inputs are complete, opens each
// task's tree with exchange readers as inputs and a writer as output, and
// applies the adaptive policies of package policy (parallelism, key-group
// ranges, skew splits, the broadcast switch) to the statistics its
// producers left. Explain renders a graph, with its run-time decisions and
// counters after a run (EXPLAIN ANALYZE).
//
// The runtime learns what it needs of an operator (must it run as one
// task, how big is a source, which inputs may be split, which dynamic
// filters it produces or waits for) from the declarations in package exec,
// never from an operator's concrete type.
package runtime
