package policy

import "time"

// RestartConfig is the failover of failed attempts (Flink's
// restart-strategy.fixed-delay.* keys, applied per task: fsql retries the
// failed attempt, not the job).
type RestartConfig struct {
	// Attempts is how many times one task may be retried after failed
	// attempts (restart-strategy.fixed-delay.attempts); 0 turns failover
	// off.
	Attempts int
	// Delay is the wait before a retry starts on a worker where an
	// attempt of its task failed (restart-strategy.fixed-delay.delay); a
	// retry on another worker does not wait.
	Delay time.Duration
}

// DefaultRestartConfig is fsql's defaults: 3 retries per task, 100 ms
// apart. Flink's fixed-delay strategy restarts a whole job after a 1 s
// delay; fsql retries one task on another worker, which needs no time for
// the failed machine to come back, so the delay only spaces out retries
// that go back to the worker of the fault (a flaky read there), and
// 100 ms is small beside queries of seconds.
func DefaultRestartConfig() RestartConfig {
	return RestartConfig{Attempts: 3, Delay: 100 * time.Millisecond}
}

// Retry decides whether a task gets a new attempt after one failed:
// retryable says the error was marked so (a lost worker, a transient I/O
// error, an injected fault; never an error of the query itself), failures
// counts the task's failed attempts, this one included. It returns the
// delay before the new attempt may start.
func (c RestartConfig) Retry(retryable bool, failures int) (bool, time.Duration) {
	if !retryable || failures > c.Attempts {
		return false, 0
	}
	return true, max(c.Delay, 0)
}

// SpeculationConfig is speculative execution (Flink's
// execution.batch.speculative.* keys) and the detector it runs.
type SpeculationConfig struct {
	// Enabled turns speculation on (execution.batch.speculative.enabled).
	Enabled bool
	// MaxConcurrent is the most attempts of one task running at once
	// (execution.batch.speculative.max-concurrent-executions); below 2
	// no copy is made.
	MaxConcurrent int
	// BlockDuration is how long the worker of a slow attempt takes no new
	// attempt, renewed while slow attempts run there
	// (execution.batch.speculative.block-slow-node-duration).
	BlockDuration time.Duration
	Detector      DetectorConfig
}

// DefaultSpeculationConfig is fsql's defaults: Flink's 2 attempts and
// one-minute block; on, unlike Flink, since copies take only slots no
// queued attempt claims and measured no cost without a fault (see README,
// "Speculative execution and failover"); the detector's own defaults.
func DefaultSpeculationConfig() SpeculationConfig {
	return SpeculationConfig{Enabled: true, MaxConcurrent: 2, BlockDuration: time.Minute, Detector: DefaultDetectorConfig()}
}
