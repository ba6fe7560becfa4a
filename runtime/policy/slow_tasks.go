package policy

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// DetectorMode is the rule the slow-task detector judges attempts by.
type DetectorMode int

const (
	// DetectProgress is fsql's rule (the default): an attempt is slow when
	// its elapsed time passes a baseline weighted by its input bytes (as
	// Flink 1.17) and its own progress rate says it will not finish
	// before a fresh attempt would (as the LATE scheduler estimates time
	// left). A task that is slow because it got more data is not slow.
	//
	// It also asks how the attempt's worker ran its recent attempts
	// (RunningAttempt.WorkerPace): an attempt whose worker did its other
	// work at the usual pace is slow because of its data (rows that cost
	// more per input byte than its peers', such as the one task whose row
	// groups hold the dates a join keeps), which a copy would read as
	// slowly, so it is left alone.
	DetectProgress DetectorMode = iota
	// DetectInputBytes is Flink 1.17's rule: elapsed time past the
	// baseline weighted by input bytes, progress not consulted.
	DetectInputBytes
	// DetectTimeOnly is Flink 1.16's rule: elapsed time past the
	// multiplied median execution time, input bytes not consulted. It
	// takes a task that got more data (skew) for a slow machine; fsql
	// keeps it to measure exactly that.
	DetectTimeOnly
)

func (m DetectorMode) String() string {
	switch m {
	case DetectProgress:
		return "progress"
	case DetectInputBytes:
		return "input-bytes"
	case DetectTimeOnly:
		return "time-only"
	}
	return fmt.Sprintf("DetectorMode(%d)", int(m))
}

// ParseDetectorMode reads a mode by its String name.
func ParseDetectorMode(s string) (DetectorMode, error) {
	for _, m := range []DetectorMode{DetectProgress, DetectInputBytes, DetectTimeOnly} {
		if strings.EqualFold(strings.TrimSpace(s), m.String()) {
			return m, nil
		}
	}
	return 0, fmt.Errorf("want progress, input-bytes or time-only, got %q", s)
}

// DetectorConfig is the slow-task detector's configuration (Flink's
// slow-task-detector.* keys, plus the mode).
type DetectorConfig struct {
	Mode DetectorMode
	// CheckInterval is how often the scheduler runs the detector
	// (slow-task-detector.check-interval).
	CheckInterval time.Duration
	// BaselineRatio is the share of a stage's tasks that must have
	// finished before its attempts are judged, in [0, 1)
	// (slow-task-detector.execution-time.baseline-ratio). As in Flink, a
	// ratio that rounds to no task judges against the lower bound alone.
	BaselineRatio float64
	// BaselineMultiplier scales the finished tasks' median into the
	// baseline, at least 1
	// (slow-task-detector.execution-time.baseline-multiplier).
	BaselineMultiplier float64
	// BaselineLowerBound is the least baseline: no attempt younger than
	// it is slow (slow-task-detector.execution-time.baseline-lower-bound).
	BaselineLowerBound time.Duration
}

// DefaultDetectorConfig is fsql's defaults. Flink's ratio (0.75) and
// multiplier (1.5) are kept. The check interval is 100 ms rather than
// Flink's 1 s, and the lower bound 200 ms rather than Flink's 1 min:
// fsql's tasks last tens to hundreds of milliseconds, so a one-minute
// floor would never let a copy start, while below about 200 ms a copy
// can save little (at most what is left of a short task) and the noise of
// a loaded machine (a scheduling slice, a garbage collection) is of the
// same size as the delay it would be reacting to. Checking every 100 ms
// sees an attempt pass a 200 ms baseline within half its length again.
func DefaultDetectorConfig() DetectorConfig {
	return DetectorConfig{
		Mode:               DetectProgress,
		CheckInterval:      100 * time.Millisecond,
		BaselineRatio:      0.75,
		BaselineMultiplier: 1.5,
		BaselineLowerBound: 200 * time.Millisecond,
	}
}

// FinishedTask is a task of the stage with a committed attempt: how long
// that attempt ran and the task's planned input bytes.
type FinishedTask struct {
	Duration   time.Duration
	InputBytes int64
}

// RunningAttempt is an attempt still running: its task's planned input
// bytes and what it has consumed of them so far. Task and Attempt are
// the caller's identifiers, handed back in SlowAttempt.
type RunningAttempt struct {
	Task, Attempt int
	Elapsed       time.Duration
	InputBytes    int64
	ReadBytes     int64
	// WorkerPace is how its worker ran its recent finished attempts
	// (WorkerPace of their PaceOf samples): 1 at its peers' pace, 10 ten
	// times slower; 0 when not known.
	WorkerPace float64
}

// StageSample is what the detector sees of one stage: its task count,
// the finished tasks and the running attempts.
type StageSample struct {
	Tasks    int
	Finished []FinishedTask
	Running  []RunningAttempt
}

// Unknown is the time left of an attempt that has consumed nothing yet
// (or whose input size is unknown): longer than any estimate.
const Unknown = time.Duration(math.MaxInt64)

// SlowAttempt is a running attempt the detector judged slow, with the
// figures that made it so (EXPLAIN ANALYZE prints Why).
type SlowAttempt struct {
	Task, Attempt int
	Elapsed       time.Duration
	// Baseline is the time the attempt was allowed; Fresh the time a new
	// attempt of its task is expected to take (the median rate times its
	// input, without the multiplier).
	Baseline, Fresh time.Duration
	// Progress is the share of its input consumed, -1 when its input
	// size is unknown; TimeLeft its estimated time to finish at its own
	// rate (Unknown without progress).
	Progress float64
	TimeLeft time.Duration
	Why      string
}

// FindSlowAttempts applies the detector to one stage and returns the slow
// attempts, the longest estimated time left first (ties: longest elapsed,
// then by task and attempt), which is the order to speculate in.
//
// No attempt is slow before round(Tasks × BaselineRatio) tasks finished;
// if that rounds to 0 the baseline is the lower bound alone. The baseline
// of an attempt is BaselineMultiplier × the median over finished tasks of
// execution time per input byte × its input bytes (the time-only mode,
// and any attempt or stage without input sizes: the multiplied median
// execution time), at least BaselineLowerBound. The median is the upper
// one, as Flink's. An attempt is slow when its elapsed time passes its
// baseline and, in the progress mode, when at its own rate (consumed
// bytes over elapsed time) it has more time left than a fresh attempt
// would take, and its worker's pace is not known to be the usual one
// (WorkerPace 0, or above BaselineMultiplier).
//
// The pace test is what tells a slow machine from costly data that input
// bytes do not show. It was the cause of every copy the 20-query TPC-DS
// set launched without a fault (4 workers of 1 slot, scale 1): q59's
// scan of store_sales, when it ran as 3 tasks of 2.7–4.8 MiB, had one
// task whose row groups held the year the date join keeps; its partial
// aggregate did 5–6 times the work per byte of the others, so it passed
// its baseline (714 ms, well above the 200 ms lower bound) with a third
// of its input read and got a copy, and its healthy worker a one-minute
// block that took a quarter of the pool from the queries after it. The
// copy read the same rows as slowly and never won. Neither the lower
// bound, the ratio nor the progress estimate was at fault: the rule
// assumed that peers do the same work per byte. A worker that is slow is
// slow for every attempt, so its recent ones show it; one whose pace is
// not known yet (a new engine, or samples older than PaceHorizon) is
// judged without it, as before, and an attempt of costly data there
// still gets its one useless copy.
func FindSlowAttempts(s StageSample, c DetectorConfig) []SlowAttempt {
	need := int(math.Round(float64(s.Tasks) * c.BaselineRatio))
	if need > 0 && len(s.Finished) < need {
		return nil
	}
	mult := max(c.BaselineMultiplier, 1)
	var times []time.Duration
	var perByte []float64 // nanoseconds per input byte
	for _, f := range s.Finished {
		times = append(times, f.Duration)
		if f.InputBytes > 0 {
			perByte = append(perByte, float64(f.Duration)/float64(f.InputBytes))
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	sort.Float64s(perByte)
	var out []SlowAttempt
	for _, r := range s.Running {
		sl := SlowAttempt{Task: r.Task, Attempt: r.Attempt, Elapsed: r.Elapsed, Progress: -1, TimeLeft: Unknown}
		var rule string
		switch {
		case c.Mode != DetectTimeOnly && r.InputBytes > 0 && len(perByte) > 0:
			rate := perByte[len(perByte)/2]
			sl.Fresh = clampDuration(rate * float64(r.InputBytes))
			rule = fmt.Sprintf("%g × median %s/MiB × %s", mult, fmtDur(clampDuration(rate*(1<<20))), FormatBytes(r.InputBytes))
		case len(times) > 0:
			sl.Fresh = times[len(times)/2]
			rule = fmt.Sprintf("%g × median %s", mult, fmtDur(sl.Fresh))
		}
		sl.Baseline = clampDuration(mult * float64(sl.Fresh))
		if sl.Baseline < c.BaselineLowerBound {
			sl.Baseline, rule = c.BaselineLowerBound, "the lower bound"
		}
		if r.Elapsed <= sl.Baseline {
			continue
		}
		sl.Why = fmt.Sprintf("ran %s, past its baseline %s (%s)", fmtDur(r.Elapsed), fmtDur(sl.Baseline), rule)
		if r.InputBytes > 0 {
			sl.Progress = min(float64(max(r.ReadBytes, 0))/float64(r.InputBytes), 1)
			if sl.Progress > 0 {
				sl.TimeLeft = clampDuration(float64(r.Elapsed) * (1 - sl.Progress) / sl.Progress)
			}
		}
		if c.Mode == DetectProgress && sl.Progress >= 0 {
			if sl.TimeLeft <= sl.Fresh {
				continue // at its own rate it ends before a copy could
			}
			left := "nothing read yet"
			if sl.TimeLeft != Unknown {
				left = "about " + fmtDur(sl.TimeLeft) + " left"
			}
			sl.Why += fmt.Sprintf("; %.0f%% of %s read, %s, a fresh attempt needs %s", 100*sl.Progress, FormatBytes(r.InputBytes), left, fmtDur(sl.Fresh))
		}
		if c.Mode == DetectProgress {
			if r.WorkerPace > 0 && r.WorkerPace <= mult {
				continue // a healthy worker: the time is the data's
			}
			if r.WorkerPace > 0 {
				sl.Why += fmt.Sprintf("; its worker's recent attempts took %.1f× their peers' time", r.WorkerPace)
			}
		}
		out = append(out, sl)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.TimeLeft != b.TimeLeft {
			return a.TimeLeft > b.TimeLeft
		}
		if a.Elapsed != b.Elapsed {
			return a.Elapsed > b.Elapsed
		}
		if a.Task != b.Task {
			return a.Task < b.Task
		}
		return a.Attempt < b.Attempt
	})
	return out
}

// PaceHorizon is how long a pace sample speaks for its worker: a
// machine's heat changes over minutes, and a sample older than this no
// longer says how the worker runs now.
const PaceHorizon = time.Minute

// PaceWindow is how many of a worker's latest pace samples WorkerPace
// reads: enough that one task of costly data (a sample of 5 on a healthy
// worker) does not move the median.
const PaceWindow = 5

// minPacePrediction is the least predicted run time a pace sample is
// taken from: below it a task's fixed costs (opening files, building a
// small hash table) and the noise of a loaded machine outweigh its rate.
const minPacePrediction = 10 * time.Millisecond

// PaceOf is the pace of a finished attempt that ran d over inputBytes,
// against the other committed tasks of its stage (peers): d over the
// time the peers' median rate per input byte predicts for inputBytes. 1
// is the peers' pace, 10 ten times slower. ok is false when it cannot be
// told: no input bytes, no peer with input bytes, or a prediction under
// 10 ms.
func PaceOf(d time.Duration, inputBytes int64, peers []FinishedTask) (pace float64, ok bool) {
	if inputBytes <= 0 || d <= 0 {
		return 0, false
	}
	var perByte []float64
	for _, p := range peers {
		if p.InputBytes > 0 && p.Duration > 0 {
			perByte = append(perByte, float64(p.Duration)/float64(p.InputBytes))
		}
	}
	if len(perByte) == 0 {
		return 0, false
	}
	sort.Float64s(perByte)
	want := perByte[len(perByte)/2] * float64(inputBytes)
	if want < float64(minPacePrediction) {
		return 0, false
	}
	return float64(d) / want, true
}

// WorkerPace is a worker's pace from its pace samples: the median of the
// last PaceWindow of them, 0 when there are none.
func WorkerPace(samples []float64) float64 {
	if len(samples) == 0 {
		return 0
	}
	s := append([]float64(nil), samples[max(len(samples)-PaceWindow, 0):]...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// clampDuration converts nanoseconds to a Duration without overflowing.
func clampDuration(ns float64) time.Duration {
	if ns >= float64(math.MaxInt64) {
		return Unknown
	}
	if ns < 0 {
		return 0
	}
	return time.Duration(ns)
}

// fmtDur rounds a duration to what a reader can use.
func fmtDur(d time.Duration) string {
	switch {
	case d == Unknown:
		return "unknown"
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}
