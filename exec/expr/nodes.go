package expr

import (
	"github.com/apache/arrow-go/v18/arrow"
)

// Literal is a constant. Value holds the Go value of the constant in the
// natural representation of Type: nil (NULL, of any type), bool, int32,
// int64, uint64, float64, decimal128.Num (scaled integer of a
// Decimal128Type), string, arrow.Date32 (days since 1970-01-01) or
// arrow.Timestamp (microseconds since 1970-01-01 00:00:00, for DATETIME
// and TIMESTAMP).
type Literal struct {
	Value any
	Type  arrow.DataType
}

// Call applies the scalar function Fn to Args. Build calls with NewCall,
// which checks the arguments, inserts the implicit casts MySQL applies and
// decides the result Type; a hand-built Call is not valid.
//
// Function names (Fn) are lower case. Operators use their SQL spelling:
// "+", "-", "*", "/", "%", "neg", "=", "<>", "<", "<=", ">", ">=", "<=>",
// "and", "or", "not", "isnull", "isnotnull". Special forms:
//   - "cast": one argument, Type is the target type.
//   - "case": Args are when1, then1, when2, then2, ..., else (else is
//     always present; NULL literal when the query has none).
//   - "in": Args[0] is the probe, Args[1:] the list (all literals after
//     constant folding, though any expression works).
//   - "like": value, pattern (a literal).
//   - "getbit": (x, n) is (x >> n) & 1 for an int64 x, used by grouping().
type Call struct {
	Fn   string
	Args []Expr
	Type arrow.DataType
	impl kernel
}

// kernel evaluates one Call over evaluated arguments. Implementations live
// beside each function family.
type kernel interface {
	eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error)
}
