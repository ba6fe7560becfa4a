// Package runtime runs physical plans. It cuts a plan into an immutable
// job graph of stages at its shuffle.Exchange nodes (BuildJobGraph); each
// run keeps what it decided and did in its own execution graph (stage
// runs, tasks, attempts with their states and workers). The scheduler is
// an event loop: it starts a stage once its inputs are complete (or, with
// hybrid shuffle, while producers of its gather, broadcast and forward
// inputs still run, when the free slots hold both: hybrid.go), decides
// its parallelism and what each task reads by applying the adaptive
// policies of package policy to the statistics its producers left, places
// the tasks' attempts on free worker slots, and commits the attempt of
// each task that finishes first (its output in the shuffle store, its
// nodes' staged effects) while discarding the others. Explain renders a
// job graph (EXPLAIN) or a finished run (EXPLAIN ANALYZE).
//
// The runtime learns what it needs of an operator (must it run as one
// task, how big is a source, which inputs may be split, which dynamic
// filters it produces or waits for, what it stages per attempt) from the
// declarations in package exec, never from an operator's concrete type.
package runtime
