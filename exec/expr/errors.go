package expr

import "errors"

// Sentinel errors of the expression layer. The package cannot import exec
// (exec's operators import expr), so callers map these onto exec's
// sentinels: ErrType and ErrUnsupported are plan errors, ErrOverflow and
// ErrInvalidValue are execution errors, ErrInternal is a bug.
var (
	// ErrType reports arguments of the wrong number or type for a function.
	ErrType = errors.New("type error")
	// ErrUnsupported reports a function, cast or unit fsql does not have.
	ErrUnsupported = errors.New("unsupported")
	// ErrOverflow reports a value that does not fit its result type: an
	// int64 past its range or a decimal past 38 digits. MySQL raises an
	// error here too, never wrapping around.
	ErrOverflow = errors.New("value out of range")
	// ErrInvalidValue reports a value a cast cannot convert, such as the
	// string 'abc' cast to a date.
	ErrInvalidValue = errors.New("invalid value")
	// ErrInternal reports a bug: a kernel that panicked, usually because
	// a batch's column does not have the type its Column declares.
	ErrInternal = errors.New("internal error")
)
