package pruning

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec/expr"
)

// StaticPartitions keeps the partitions of t for which every conjunct may be
// true. Conjuncts reference columns by index into t.Schema; those that
// reference a file column are ignored (they cannot prune folders). The rest
// are evaluated for real, with the same evaluator the Filter uses, on a batch
// holding one row per partition (partition columns filled, file columns
// NULL), so pruning can never disagree with filtering: a partition is
// dropped when a conjunct is FALSE or NULL for it, exactly as WHERE drops a
// row. The result keeps t.Partitions' order.
func StaticPartitions(t *hive.Table, conjuncts []expr.Expr, alloc memory.Allocator) ([]*hive.Partition, error) {
	var usable []expr.Expr
	for _, c := range conjuncts {
		if partitionOnly(c, t.NumFileColumns) {
			usable = append(usable, c)
		}
	}
	if len(usable) == 0 || len(t.PartitionColumns) == 0 {
		return t.Partitions, nil
	}
	if alloc == nil {
		alloc = memory.DefaultAllocator
	}
	batch, err := partitionBatch(t, alloc)
	if err != nil {
		return nil, err
	}
	defer batch.Release()
	keep := make([]bool, len(t.Partitions))
	for i := range keep {
		keep[i] = true
	}
	ec := &expr.Context{Alloc: alloc}
	for _, c := range usable {
		if c.DataType().ID() != arrow.BOOL {
			return nil, fmt.Errorf("static partition pruning of %s: condition %s is %s, not boolean", t.Name, c, c.DataType())
		}
		res, err := c.Eval(ec, batch)
		if err != nil {
			return nil, fmt.Errorf("static partition pruning of %s: evaluating %s: %w", t.Name, c, err)
		}
		b, ok := res.(*array.Boolean)
		if !ok || b.Len() != len(keep) {
			res.Release()
			return nil, fmt.Errorf("static partition pruning of %s: %s returned %d %s values for %d partitions", t.Name, c, res.Len(), res.DataType(), len(keep))
		}
		for i := range keep {
			keep[i] = keep[i] && expr.IsValid(b, i) && b.Value(i)
		}
		res.Release()
	}
	out := make([]*hive.Partition, 0, len(keep))
	for i, k := range keep {
		if k {
			out = append(out, t.Partitions[i])
		}
	}
	return out, nil
}

// partitionOnly reports whether e references no file column.
func partitionOnly(e expr.Expr, numFileColumns int) bool {
	if c, ok := e.(*expr.Column); ok {
		return c.Index >= numFileColumns
	}
	for _, ch := range e.Children() {
		if !partitionOnly(ch, numFileColumns) {
			return false
		}
	}
	return true
}

// partitionBatch builds the one-row-per-partition batch over t.Schema.
func partitionBatch(t *hive.Table, alloc memory.Allocator) (arrow.RecordBatch, error) {
	n := len(t.Partitions)
	cols := make([]arrow.Array, len(t.Schema.Fields()))
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for i, f := range t.Schema.Fields() {
		if i < t.NumFileColumns {
			cols[i] = array.MakeArrayOfNull(alloc, f.Type, n)
			continue
		}
		k := i - t.NumFileColumns
		b := array.NewBuilder(alloc, f.Type)
		for _, p := range t.Partitions {
			if k >= len(p.Values) || p.Values[k] == nil {
				b.AppendNull()
				continue
			}
			switch b := b.(type) {
			case *array.Int32Builder:
				b.Append(p.Values[k].(int32))
			case *array.Int64Builder:
				b.Append(p.Values[k].(int64))
			case *array.Date32Builder:
				b.Append(p.Values[k].(arrow.Date32))
			case *array.StringBuilder:
				b.Append(p.Values[k].(string))
			default:
				b.Release()
				return nil, fmt.Errorf("static partition pruning of %s: partition column %s has unexpected type %s", t.Name, f.Name, f.Type)
			}
		}
		cols[i] = b.NewArray()
		b.Release()
	}
	return array.NewRecordBatch(t.Schema, cols, int64(n)), nil
}
