package pruning

import "github.com/fsql-dev/fsql/errs"

// Errors of the pruning package: kinds of package errs (it sits below
// exec, so it cannot use exec's), and a sentinel for a filter read before
// every task of its collector finished.
const (
	ErrInternal    = errs.Internal
	ErrUnsupported = errs.Unsupported
)

var ErrIncomplete = errs.New(errs.Execution, "incomplete")
