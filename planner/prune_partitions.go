package planner

import (
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/pruning"
)

// prunePartitions applies static partition pruning: scan filters that
// test only partition columns are evaluated once per partition, and the
// partitions where they cannot hold are never listed for reading.
type prunePartitions struct{}

func (prunePartitions) Name() string { return "prune_partitions" }

func (r prunePartitions) Apply(p Plan, ctx *Context) (Plan, bool, error) {
	return bottomUp(p, ctx, r, pruneScan)
}

func pruneScan(p Plan) (Plan, bool, error) {
	s, ok := p.(*Scan)
	if !ok || s.Pruned || len(s.Table.PartitionColumns) == 0 {
		return p, false, nil
	}
	conj := TableFilters(s)
	parts, err := pruning.StaticPartitions(s.Table, conj, memory.DefaultAllocator)
	if err != nil {
		return nil, false, err
	}
	c := *s
	c.Partitions, c.Pruned = parts, true
	return &c, true, nil
}

// TableFilters returns a scan's filters with column indexes into the
// table's full schema, as static pruning and row-group skipping want them.
func TableFilters(s *Scan) []expr.Expr {
	out := make([]expr.Expr, len(s.Filters))
	for i, f := range s.Filters {
		out[i] = remap(f, func(j int) int { return s.Columns[j] })
	}
	return out
}
