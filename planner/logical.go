package planner

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
)

// Column is one output column of a logical node. Columns are positional:
// expressions of a node's parent refer to them by index.
type Column struct {
	Table string // qualifier the binder resolves `t.c` against ("" if none)
	Name  string
	Type  arrow.DataType
}

// Schema is the ordered output of a logical node.
type Schema []Column

// Plan is a node of the logical plan. Nodes are rebuilt, not mutated, by
// rules, except where a rule owns a freshly built node.
type Plan interface {
	Schema() Schema
	Children() []Plan
}

// Scan reads a table. Columns index Table.Schema; Filters are conjuncts
// over the scan's output columns, pushed down by the optimizer; the scan
// evaluates them right after reading, and static pruning uses them to drop
// partitions and row groups.
type Scan struct {
	Table      *hive.Table
	Alias      string
	Columns    []int
	Filters    []expr.Expr
	Partitions []*hive.Partition // set by static partition pruning; nil = all
	Pruned     bool              // static partition pruning ran
}

// Filter keeps rows where Cond is true.
type Filter struct {
	Child Plan
	Cond  expr.Expr
}

// Project computes Exprs over its child's columns.
type Project struct {
	Child Plan
	Exprs []expr.Expr
	Names []string
	// Tables are the qualifiers of the output columns ("" when none).
	Tables []string
}

// JoinType of a logical join. Right joins are rewritten by the binder into
// left joins with swapped inputs, so the executor's preserved side is
// always the probe side.
type JoinType int

// Logical join types.
const (
	InnerJoin JoinType = iota
	LeftJoin
	SemiJoin
	AntiJoin
	NullAwareAntiJoin
	// MarkJoin outputs every left row plus a nullable boolean "mark": the
	// value of `left IN (right)` under SQL's NULL rules. It plans IN and
	// EXISTS subqueries nested in expressions (under OR, in CASE).
	MarkJoin
)

func (t JoinType) String() string {
	return [...]string{"inner", "left", "semi", "anti", "null-aware anti", "mark"}[t]
}

// Join combines Left and Right; Cond is over Left's columns followed by
// Right's. Semi and anti joins output Left's columns only.
type Join struct {
	Type        JoinType
	Left, Right Plan
	Cond        expr.Expr // nil: cross product
}

// MultiJoin is a set of inner-joined inputs with their join conjuncts
// (over the concatenation of all inputs' columns, in order). The binder
// builds it for comma joins and INNER JOIN chains; the join ordering rule
// turns it into a tree of Joins.
type MultiJoin struct {
	Inputs []Plan
	Conds  []expr.Expr
}

// AggCall is one aggregate of an Aggregate node.
type AggCall struct {
	Fn       string // sum, avg, min, max, count, count_star, stddev_samp, ...
	Arg      expr.Expr
	Distinct bool
	Type     arrow.DataType
	Name     string
}

// Aggregate groups its child by GroupBy and computes Aggs. With Rollup the
// grouping sets are the prefixes of GroupBy (longest first), and the output
// gains an int64 grouping id after the group columns (bit i set when
// GroupBy[i] is rolled up), which grouping() reads. A Local aggregate
// (a DISTINCT's pre-aggregation, push_distinct_below_join.go) groups
// only the rows of each task: it has no aggregate calls, and a parent
// DISTINCT removes the duplicates it leaves across tasks, so it needs no
// exchange.
type Aggregate struct {
	Child   Plan
	GroupBy []expr.Expr
	Names   []string
	Aggs    []AggCall
	Rollup  bool
	Local   bool
}

// SortKey orders by one expression.
type SortKey = exec.SortKey

// Sort orders its input. MySQL puts NULL first ascending, last descending.
type Sort struct {
	Child Plan
	Keys  []SortKey
}

// Limit keeps N rows after skipping Offset; N < 0 means no limit.
type Limit struct {
	Child     Plan
	N, Offset int64
}

// Union concatenates inputs of equal schemas (UNION ALL). UNION DISTINCT
// is a Union under an Aggregate grouping by every column.
type Union struct {
	Inputs []Plan
}

// WindowCall is one window function.
type WindowCall = exec.WindowFunc

// Window appends one column per function, computed over partitions of its
// child ordered by OrderBy.
type Window struct {
	Child       Plan
	PartitionBy []expr.Expr
	OrderBy     []SortKey
	Funcs       []WindowCall
	Frame       exec.WindowFrame
}

// Values is a constant relation.
type Values struct {
	Rows [][]expr.Expr
	Cols Schema
}

// MaxOneRow passes through its child's single row (or none) and fails the
// query when the child yields more: the guard of a scalar subquery.
type MaxOneRow struct {
	Child Plan
}
