package errs

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// A transient error is a failure of one attempt of the work, not of the
// query: a lost worker, a read the disk or network failed this time, an
// injected fault. Another attempt of the same task, perhaps on another
// worker, may not meet it, so the runtime's failover retries the attempt
// (IsTransient); every other error is the query's own (syntax, types,
// overflow, an exhausted budget, a cancellation, a Conflict) and fails it
// at once. Transience is marked where the failure is raised, never guessed
// from a message, and the mark is kept through Wrap and fmt.Errorf's %w.
//
// A Conflict is Retryable but not transient: the files changed under the
// query, and one task reading the new version while the others read the
// old one would mix two versions in one answer; the whole statement must
// run again.

// Transient marks err as transient; nil stays nil. Its message, kind and
// chain (errors.Is, errors.As, KindOf) are err's.
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &transientError{err: err}
}

type transientError struct{ err error }

func (e *transientError) Error() string { return e.err.Error() }
func (e *transientError) Unwrap() error { return e.err }

// IsTransient reports whether err is marked transient. A cancellation or
// deadline never is, whatever it wraps: the caller asked the query to
// stop.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var t *transientError
	return errors.As(err, &t)
}

// transientIO are the operating system's errors that say the device or
// the network failed this time, not that the file is wrong.
var transientIO = []error{
	syscall.EIO, syscall.ETIMEDOUT, syscall.ECONNRESET, syscall.ECONNREFUSED,
	syscall.ECONNABORTED, syscall.EPIPE, syscall.ESTALE, syscall.EAGAIN,
	syscall.EHOSTUNREACH, syscall.ENETUNREACH, os.ErrDeadlineExceeded,
}

// TransientIO marks err transient when its chain holds one of the
// operating system's transient I/O errors (an *os.PathError wraps the
// errno); any other error is returned unchanged. Readers call it on what
// a read failed with, so a hiccup of a disk or a network costs one
// attempt, not the query.
func TransientIO(err error) error {
	if err == nil || IsTransient(err) {
		return err
	}
	for _, t := range transientIO {
		if errors.Is(err, t) {
			return Transient(err)
		}
	}
	return err
}
