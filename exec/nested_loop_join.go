package exec

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// NestedLoopJoin joins without equality keys: every probe row is paired
// with every build row and Cond (nil: cross join) decides the match. The
// build side is held in memory; pairs are evaluated a batch at a time. It
// runs on the hash join's machinery with a single chain through all build
// rows, so inner, left, semi and anti behave exactly as there.
type NestedLoopJoin struct {
	Type         JoinType
	Build, Probe Node
	Cond         expr.Expr
}

func (j *NestedLoopJoin) asHashJoin() *HashJoin {
	return &HashJoin{Type: j.Type, Build: j.Build, Probe: j.Probe, Residual: j.Cond}
}

// Schema implements Node.
func (j *NestedLoopJoin) Schema() *arrow.Schema {
	return joinSchema(j.Type, j.Probe.Schema(), j.Build.Schema())
}

// Children implements Node: build first, then probe.
func (j *NestedLoopJoin) Children() []Node { return []Node{j.Build, j.Probe} }

// String implements Node.
func (j *NestedLoopJoin) String() string {
	if j.Cond == nil {
		return fmt.Sprintf("NestedLoopJoin(%s, cross)", j.Type)
	}
	return fmt.Sprintf("NestedLoopJoin(%s, %s)", j.Type, j.Cond)
}

// Open implements Node.
func (j *NestedLoopJoin) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 2 {
		return nil, fmt.Errorf("%w: NestedLoopJoin wants 2 inputs, got %d", ErrInternal, len(inputs))
	}
	switch j.Type {
	case InnerJoin, LeftJoin, SemiJoin, AntiJoin:
	default:
		return nil, fmt.Errorf("%w: a %s join without an equality between its sides (fsql runs such joins for INNER, LEFT, EXISTS and NOT EXISTS): add an equality to ON, or write it as a LEFT JOIN", ErrNotImplemented, j.Type)
	}
	s := newJoinStream(tc, j.asHashJoin(), inputs, "nested loop join build")
	s.cross = true
	return s, nil
}
