package fsql

import "github.com/fsql-dev/fsql/runtime"

// WaitBackgroundParses waits for parses that outlived their cancelled
// query (statements over 64 KB parse in a goroutine of their own), so a
// test that cancels one leaves no goroutine behind for a later test's
// leak check to trip on.
func WaitBackgroundParses() { backgroundParses.Wait() }

// WithAttemptFaults returns a copy of e whose queries run each attempt
// with the fault f chooses (runtime.Faults.Attempt), for the write
// path's fault tests.
func (e *Engine) WithAttemptFaults(f func(stage, task, attempt int) runtime.AttemptFault) *Engine {
	c := *e
	c.faults = &runtime.Faults{Attempt: f}
	return &c
}
