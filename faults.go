package fsql

import (
	"github.com/fsql-dev/fsql/runtime"
)

// Faults is fault injection for tests and benchmarks: it slows workers
// and fails attempts, to exercise speculative execution, the blocklist
// and failover. Only Go code reaches it (Engine.WithFaults); no SQL
// statement or configuration key does.
type Faults struct {
	// SlowWorkers slows the named workers (tm-0, tm-1, ...) by a factor:
	// every batch an attempt there processes takes that many times as
	// long, as on a machine that runs hot.
	SlowWorkers map[string]float64
	// FailAttempt, when set, is asked about every attempt by stage ID (as
	// EXPLAIN numbers stages), task index and attempt number (0 first);
	// true fails that attempt with a retryable injected error once it
	// produced all its output, before it is committed, so all its work is
	// lost. A result-stage attempt fails before its first batch instead
	// (after it, its rows are the caller's and it could not be retried).
	FailAttempt func(stage, task, attempt int) bool
}

// WithFaults returns a copy of the engine whose queries run with the
// faults f injected. The copy shares the engine's workers and their
// blocklist.
func (e *Engine) WithFaults(f Faults) *Engine {
	c := *e
	rf := &runtime.Faults{Slow: f.SlowWorkers}
	if fail := f.FailAttempt; fail != nil {
		rf.Attempt = func(stage, task, attempt int) runtime.AttemptFault {
			return runtime.AttemptFault{FailAtEnd: fail(stage, task, attempt)}
		}
	}
	c.faults = rf
	return &c
}

// AttemptStats counts how a query's tasks ran: attempts made, how many
// were speculative copies or retries, how many failed, and the workers
// blocklisted during the query.
type AttemptStats struct {
	Tasks, Attempts, Speculative, Retries, Failed int
	// SpeculativeWon counts tasks whose committed attempt was a copy.
	SpeculativeWon int
	Blocklisted    []string
}

// Attempts reports how the query's tasks ran; complete once the rows are
// drained or closed. Zero for EXPLAIN.
func (r *Rows) Attempts() AttemptStats {
	var st AttemptStats
	if r.run == nil {
		return st
	}
	g := r.run.Graph()
	for _, sr := range g.Stages {
		for _, t := range sr.Tasks {
			st.Tasks++
			for _, a := range t.Attempts {
				st.Attempts++
				switch a.Kind {
				case runtime.SpeculativeAttempt:
					st.Speculative++
				case runtime.RetryAttempt:
					st.Retries++
				}
				if a.State() == runtime.Failed {
					st.Failed++
				}
			}
			if c := t.Committed; c != nil && c.Kind == runtime.SpeculativeAttempt {
				st.SpeculativeWon++
			}
		}
	}
	for _, b := range g.Blocked {
		st.Blocklisted = append(st.Blocklisted, b.Worker)
	}
	return st
}
