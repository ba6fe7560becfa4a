package fsql

import (
	"github.com/fsql-dev/fsql/errs"
)

// Errors. Every error the engine returns is an *Error: its Kind says what
// went wrong (and so what to do about it), Code the MySQL error number and
// SQLSTATE a MySQL client expects, Pos where in the statement it happened
// when that is known, and its cause is kept for errors.Is and errors.As (a
// missing data folder is still fs.ErrNotExist, a deadline still
// context.DeadlineExceeded). A library user needs only these names:
//
//	if errors.Is(err, fsql.ErrUnknownName) { ... }   // by kind
//	fsql.KindOf(err) == fsql.ErrSyntax               // the same
//	code, state := fsql.CodeOf(err)                 // 1146, "42S02"
//	if p := fsql.PositionOf(err); p != nil { ... }   // p.Line, p.Column
//	var e *fsql.Error; errors.As(err, &e)            // all of it
type (
	// Error is the type of every error the engine returns.
	Error = errs.Error
	// Kind is the class of an error; each Err kind below is one, and a
	// target for errors.Is.
	Kind = errs.Kind
	// Position is a place in the statement text: 1-based line and column,
	// and the byte offset.
	Position = errs.Position
)

// The kinds of error. The query's fault (fix the statement): ErrSyntax,
// ErrUnknownName, ErrSemantic, ErrType. fsql's limit: ErrUnsupported. The
// data's: ErrExecution, ErrIO, ErrConflict (retry: the files changed
// while the query ran). The machine's: ErrResources. The caller's:
// ErrCancelled. A bug in fsql: ErrInternal.
const (
	// ErrSyntax: the statement does not parse (MySQL 1064, 42000), with
	// the line and column.
	ErrSyntax = errs.Syntax
	// ErrUnknownName: a table (1146), column (1054), function (1305) or
	// window that does not exist.
	ErrUnknownName = errs.UnknownName
	// ErrSemantic: the statement parses and its names resolve but it is
	// not a valid query (an ambiguous column, an aggregate in WHERE, ...).
	ErrSemantic = errs.Semantic
	// ErrType: a function, operator or cast applied to arguments of the
	// wrong number or types.
	ErrType = errs.Type
	// ErrUnsupported: valid MySQL that fsql does not run, or a file
	// feature its readers do not handle (1235, 42000).
	ErrUnsupported = errs.Unsupported
	// ErrExecution: the data makes a valid query fail: a value out of
	// range (1690), a string that does not convert (1292), a scalar
	// subquery of several rows (1242).
	ErrExecution = errs.Execution
	// ErrIO: reading the data failed: a missing or unreadable file or
	// folder, a file that is not Parquet, corrupt Parquet, bad CSV.
	ErrIO = errs.IO
	// ErrConflict: a data file changed while the query ran; running the
	// query again reads the new version (Retryable).
	ErrConflict = errs.Conflict
	// ErrResources: the query exceeds a limit: the memory budget, the
	// nesting depth, the number of tables, the statement length.
	ErrResources = errs.Resources
	// ErrCancelled: the context was cancelled (1317) or its deadline
	// passed (3024).
	ErrCancelled = errs.Cancelled
	// ErrInternal: a bug in fsql; the message says what broke.
	ErrInternal = errs.Internal
)

// KindOf returns the kind of err (zero for nil or an error that did not
// come from fsql).
func KindOf(err error) Kind { return errs.KindOf(err) }

// CodeOf returns the MySQL error number and SQLSTATE of err, as a
// MySQL-protocol front end sends them (1105, HY000 for an error that did
// not come from fsql).
func CodeOf(err error) (code int, sqlState string) { return errs.CodeOf(err) }

// PositionOf returns where in the statement err happened, or nil when
// that is not known.
func PositionOf(err error) *Position { return errs.PositionOf(err) }

// Retryable reports whether running the same statement again may succeed
// without changing it: only for ErrConflict.
func Retryable(err error) bool { return errs.Retryable(err) }

// classify makes every error the engine returns an *errs.Error, so a
// caller can use errors.As and errs.CodeOf without walking the chain.
// Every layer classifies its own errors, so classify only wraps: the
// result keeps the kind, number and position the error already has (a
// context error becomes Cancelled); an error nothing classified reached a
// running query and is an execution error.
func classify(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := err.(*errs.Error); ok {
		return err
	}
	return errs.Wrap(errs.Execution, "%w", err)
}
