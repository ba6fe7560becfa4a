package expr

import "github.com/fsql-dev/fsql/errs"

// Errors of the expression layer: kinds of package errs, and two
// sentinels of their own for bad values, which carry MySQL's numbers.
const (
	// ErrType reports arguments of the wrong number or type for a function.
	ErrType = errs.Type
	// ErrUnsupported reports a function, cast or unit fsql does not have.
	ErrUnsupported = errs.Unsupported
	// ErrInternal reports a bug: a kernel that panicked, usually because
	// a batch's column does not have the type its Column declares.
	ErrInternal = errs.Internal
)

var (
	// ErrOverflow reports a value that does not fit its result type: an
	// int64 past its range or a decimal past 38 digits. MySQL raises an
	// error here too, never wrapping around.
	ErrOverflow = errs.New(errs.ErDataOutOfRange, "value out of range")
	// ErrInvalidValue reports a value a cast cannot convert, such as the
	// string 'abc' cast to a date.
	ErrInvalidValue = errs.New(errs.ErTruncatedWrongValue, "invalid value")
)
