package runtime

// AttemptFault is a test and fault-injection facility (speculative
// execution's tests build on it): it makes the scheduler run a task as two
// attempts, so that tests can check that a task's output counts once
// whichever attempt wins and that a lost attempt leaks nothing.
//
// The result stage streams its rows to the caller and cannot take them
// back: it always runs exactly one attempt, whatever the fault says.
type AttemptFault struct {
	// Twin runs a second attempt of the task beside the first.
	Twin bool
	// CancelAfter, when positive, stops attempt 0 once it produced that
	// many batches, as a lost worker would: it ends cancelled mid-way, and
	// the other attempt must finish the task.
	CancelAfter int
	// BothFinish lets the second attempt to finish run to its end rather
	// than being cancelled when the first is committed; it is then
	// discarded.
	BothFinish bool
}
