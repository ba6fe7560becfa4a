package fsql

import (
	"context"
	"errors"
	"fmt"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/pruning"
)

// classify makes every error the engine returns wrap one of exec's
// sentinels (ErrPlan, ErrNotImplemented, ErrExecution, ErrInternal,
// ErrResourcesExhausted) or a context error, so callers can tell a bad
// query from a bad value from a bug with errors.Is. Lower layers that
// cannot import exec (expressions, pruning) have their own sentinels,
// mapped here.
func classify(err error) error {
	if err == nil {
		return nil
	}
	for _, s := range []error{exec.ErrPlan, exec.ErrNotImplemented, exec.ErrExecution, exec.ErrInternal,
		exec.ErrResourcesExhausted, context.Canceled, context.DeadlineExceeded} {
		if errors.Is(err, s) {
			return err
		}
	}
	switch {
	case errors.Is(err, expr.ErrType):
		return fmt.Errorf("%w: %w", exec.ErrPlan, err)
	case errors.Is(err, expr.ErrUnsupported):
		return fmt.Errorf("%w: %w", exec.ErrNotImplemented, err)
	case errors.Is(err, expr.ErrInternal), errors.Is(err, pruning.ErrInternal):
		return fmt.Errorf("%w: %w", exec.ErrInternal, err)
	case errors.Is(err, pruning.ErrUnsupported):
		return fmt.Errorf("%w: %w", exec.ErrNotImplemented, err)
	}
	// Bad values (expr.ErrInvalidValue, expr.ErrOverflow) and anything
	// else that reached a running query.
	return fmt.Errorf("%w: %w", exec.ErrExecution, err)
}
