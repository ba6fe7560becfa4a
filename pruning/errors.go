package pruning

import "errors"

// Sentinel errors of the pruning package. It sits below exec (exec's
// scans and collectors call it), so it cannot wrap exec's sentinels; exec
// maps these onto its own when it reports them: ErrInternal is a bug,
// ErrUnsupported a key type dynamic filters do not handle
// (exec.ErrNotImplemented), ErrIncomplete a filter read before every
// task of its collector finished (exec.ErrExecution).
var (
	ErrInternal    = errors.New("internal error")
	ErrUnsupported = errors.New("not implemented")
	ErrIncomplete  = errors.New("incomplete")
)
