package fsql

import (
	"github.com/fsql-dev/fsql/errs"
)

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
