package exec

import "context"

// Progress is what the runtime's slow-task detector knows of a running
// attempt: the bytes of its input it has consumed against the bytes it
// was planned to read. The runtime counts what exchange readers hand an
// attempt; a split leaf reports its own through the task context, since
// only it knows how far into its files it is.

// ReportInput tells the runtime that the task consumed n more bytes of
// its input. A scan reports the compressed bytes of the row groups it
// decodes, in proportion to the rows decoded, so that its reports add up
// to what TaskInputBytes planned. Safe on a context without a listener.
func (tc *TaskContext) ReportInput(n int64) {
	if tc != nil && tc.InputRead != nil && n != 0 {
		tc.InputRead(n)
	}
}

// TaskSizedSource is implemented by split leaves (a Scan) that can tell,
// before any task starts, how many bytes each of p tasks will read: the
// planned input of a task, which its progress is measured against. Every
// attempt of a task reads the same share (the assignment depends only on
// the splits and p), so a retry or a speculative copy has the same
// planned input as the first attempt. tc is as for SizedSource.
type TaskSizedSource interface {
	TaskInputBytes(ctx context.Context, tc *TaskContext, p int) ([]int64, error)
}
