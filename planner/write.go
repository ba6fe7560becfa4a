package planner

import (
	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

// PlanWrite puts the physical plan of a write statement on top of the
// plan of its query, whose columns are the table's (file columns, then
// the partitions trailing partition columns):
//
//	TableCommit            one task: publishes the committed files at once
//	  Exchange(gather)     so it starts after every writing task committed
//	    Sink               one staging folder per task attempt
//	      Exchange(hash)   by the partition columns, when there are any, so
//	                       each partition is written by one task
//	        query
//
// The writing tasks run under the scheduler like any other stage, their
// parallelism decided by the bytes they read.
func PlanWrite(query exec.Node, spec *hive.WriteSpec, partitions int, cfg PhysicalConfig) exec.Node {
	in := query
	if partitions > 0 {
		s := query.Schema()
		keys := make([]expr.Expr, partitions)
		for i := range keys {
			c := s.NumFields() - partitions + i
			keys[i] = expr.NewColumn(c, s.Field(c).Type, s.Field(c).Name)
		}
		in = &shuffle.Exchange{Kind: shuffle.Hash, Child: query, Keys: keys, MaxParallelism: cfg.MaxParallelism}
	}
	if x := spec.Export; x != nil && x.Parquet && !x.Folder {
		// One Parquet file has one writer: the rows are gathered to one
		// task. (A CSV file is the tasks' parts concatenated in order.)
		in = &shuffle.Exchange{Kind: shuffle.Gather, Child: query}
	}
	sink := &exec.Sink{Input: in, Spec: spec, Partitions: partitions}
	return &exec.TableCommit{Input: &shuffle.Exchange{Kind: shuffle.Gather, Child: sink}, Spec: spec}
}
