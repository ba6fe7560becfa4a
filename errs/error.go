package errs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
)

// Error is an fsql error: its kind, the MySQL number and SQLSTATE a
// MySQL-protocol front end sends, where in the statement it happened when
// that is known, the message and the cause.
//
// Msg is the whole message, the cause's text included where New or Wrap
// formatted it; Error returns it unchanged. Err is the cause (the %w
// operand; with several, an error wrapping them all), which Unwrap
// returns, so errors.Is and errors.As see through an Error.
type Error struct {
	Kind     Kind
	Code     int    // MySQL error number
	SQLState string // SQLSTATE, five characters
	Pos      *Position
	Msg      string
	Err      error
}

// Position is a place in the statement text. Line and Column are 1-based
// as the parser counts them; Offset is the byte offset in the statement
// (-1 when only the line and column are known).
type Position struct {
	Line, Column, Offset int
}

func (p Position) String() string {
	return "line " + strconv.Itoa(p.Line) + " column " + strconv.Itoa(p.Column)
}

func (e *Error) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, kind) and errors.Is(err, condition) hold for an
// error of that kind or MySQL number.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case Kind:
		return t == e.Kind
	case Condition:
		return t.Code == e.Code && t.Kind == e.Kind
	}
	return false
}

// At returns a copy of e at position p.
func (e *Error) At(p Position) *Error {
	c := *e
	c.Pos = &p
	return &c
}

// New returns an error of class c (a Kind, or a Condition for a specific
// MySQL number) whose message is fmt.Sprintf(format, args...). As in
// fmt.Errorf, a %w operand is kept as the cause. Internal and Unsupported
// messages get the prefix "internal error: " and "not supported: ", so
// they need only name what broke or what is missing.
func New(c Class, format string, args ...any) *Error {
	cond := c.condition()
	fe := fmt.Errorf(format, args...)
	return &Error{
		Kind:     cond.Kind,
		Code:     cond.Code,
		SQLState: cond.SQLState,
		Msg:      prefix(cond.Kind) + fe.Error(),
		Err:      cause(fe),
	}
}

// Wrap is New for an error that adds context to a cause: when the %w
// operand has a kind (KindOf), the result keeps the cause's kind, MySQL
// number, SQLSTATE and position; only a cause without one takes class c.
// So a scan wrapping a file's I/O error is still an I/O error, and a
// wrapped context.Canceled is Cancelled.
func Wrap(c Class, format string, args ...any) *Error {
	fe := fmt.Errorf(format, args...)
	inner := cause(fe)
	if cond, pos, ok := lookup(inner); ok {
		return &Error{Kind: cond.Kind, Code: cond.Code, SQLState: cond.SQLState, Pos: pos, Msg: fe.Error(), Err: inner}
	}
	e := New(c, "%s", fe.Error())
	e.Err = inner
	return e
}

// cause is what fmt.Errorf's result wraps: nil without %w, the operand
// with one, the result itself with several (its Unwrap returns them all).
func cause(fe error) error {
	if _, ok := fe.(interface{ Unwrap() []error }); ok {
		return fe
	}
	return errors.Unwrap(fe)
}

func prefix(k Kind) string {
	if !k.valid() {
		return ""
	}
	return info[k].prefix
}

// lookup finds the classification of err: its first *Error, else a
// Condition or Kind it wraps, else Cancelled for a context error.
func lookup(err error) (Condition, *Position, bool) {
	if err == nil {
		return Condition{}, nil, false
	}
	var e *Error
	if errors.As(err, &e) && e.Kind.valid() {
		return Condition{Kind: e.Kind, Code: e.Code, SQLState: e.SQLState}, e.Pos, true
	}
	var c Condition
	if errors.As(err, &c) && c.Kind.valid() {
		return c, nil, true
	}
	var k Kind
	if errors.As(err, &k) && k.valid() {
		return k.Condition(), nil, true
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return ErQueryTimeout, nil, true
	case errors.Is(err, context.Canceled):
		return ErQueryInterrupted, nil, true
	}
	return Condition{}, nil, false
}

// KindOf returns the kind of err: that of the first *Error in its chain,
// else of a Kind or Condition it wraps; Cancelled for a context error;
// zero for nil and for an error nothing classified.
func KindOf(err error) Kind {
	c, _, _ := lookup(err)
	return c.Kind
}

// CodeOf returns the MySQL error number and SQLSTATE to send for err:
// those of its kind's default condition unless it carries a specific
// one; 1105 (HY000, ER_UNKNOWN_ERROR) for an unclassified error.
func CodeOf(err error) (code int, sqlState string) {
	c, _, ok := lookup(err)
	if !ok {
		c = ErUnknownError
	}
	return c.Code, c.SQLState
}

// PositionOf returns where in the statement err happened, or nil.
func PositionOf(err error) *Position {
	_, p, _ := lookup(err)
	return p
}

// Retryable reports whether running the same statement again may succeed
// without changing it or the engine's configuration: for a Conflict (the
// files changed under the query; the next run reads the new ones) and for
// a transient failure that outlived the runtime's own retries of the
// attempt (IsTransient). Every other kind fails the same way again on the
// same data.
func Retryable(err error) bool {
	return KindOf(err) == Conflict || IsTransient(err)
}
