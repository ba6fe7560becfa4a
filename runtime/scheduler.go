package runtime

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/pruning"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// scheduler runs one ExecutionGraph of a JobGraph. It is an event loop: a
// stage's tasks are created when all its producers and dependencies
// finished (blocking shuffle), so an attempt only takes a slot once its
// inputs are complete and slots cannot deadlock; created attempts wait in
// a queue until the scheduler places them on a free worker slot; workers
// report each attempt's end as an event, and the loop commits or discards
// it. All bookkeeping (stage and task runs, slots, buffers) belongs to
// the loop.
type scheduler struct {
	g       *JobGraph
	eg      *ExecutionGraph
	cfg     *RunConfig
	exec    *Execution
	workers []Worker
	busy    [][]bool // [worker][slot]
	running []int    // attempts on each worker

	// services is what every task context of the run starts from: the
	// allocator, the memory budget and the run's dynamic-filter
	// coordinator, which operators find their share of by ID.
	services exec.TaskContext

	buffers  map[*shuffle.Exchange]*shuffle.Buffer
	keyGroup map[*shuffle.Exchange]int // resolved key-group count of hash exchanges
	queue    []*Attempt                // created, waiting for a slot
	live     int                       // attempts placed and not ended
	events   chan attemptEnded
	wg       sync.WaitGroup
	failure  error

	// Run-time broadcast switches by probe stage and by join stage.
	switchByProbe, switchByJoin map[*Stage]*broadcastSwitch

	// hybrid is the parallelism decided for stages that may start while
	// their producers run (hybrid shuffle, hybrid.go).
	hybrid map[*StageRun]*hybridPlan
	// whole is, per stage, the inputs it reads to the end before it
	// produces anything (readWhole).
	whole map[*Stage]map[*shuffle.Exchange]bool

	// blocklist is the engine's (or the run's own); workerIDs the pool's
	// IDs in order; nextCheck when the slow-task detector runs next.
	blocklist *Blocklist
	workerIDs []string
	nextCheck time.Time
}

// attemptEnded is a worker's report that an attempt ended.
type attemptEnded struct {
	att *Attempt
	res AttemptResult
}

// attemptEvents relays a worker's reports on one attempt to the loop.
type attemptEvents struct {
	s   *scheduler
	att *Attempt
}

func (e attemptEvents) Started() {
	e.att.started.Store(time.Now().UnixNano())
	// Scheduled -> Running cannot fail; a refusal would be a bookkeeping
	// bug that the end event reports.
	_ = e.att.transition(Running)
}

func (e attemptEvents) ReadBytes(n int64) { e.att.InputBytes.Add(n) }

func (e attemptEvents) Ended(r AttemptResult) { e.s.events <- attemptEnded{att: e.att, res: r} }

func newScheduler(g *JobGraph, cfg *RunConfig, e *Execution) (*scheduler, error) {
	s := &scheduler{
		g: g, eg: e.graph, cfg: cfg, exec: e, workers: cfg.Workers,
		buffers: map[*shuffle.Exchange]*shuffle.Buffer{}, keyGroup: map[*shuffle.Exchange]int{},
		events:        make(chan attemptEnded),
		switchByProbe: map[*Stage]*broadcastSwitch{}, switchByJoin: map[*Stage]*broadcastSwitch{},
		services: exec.TaskContext{
			Alloc: cfg.Alloc, Memory: cfg.Memory,
			DynamicFilters: pruning.NewCoordinator(pruning.CoordinatorConfig{MaxValues: cfg.DynamicFilterMaxValues}),
		},
	}
	for _, w := range s.workers {
		s.busy = append(s.busy, make([]bool, max(w.Slots(), 0)))
		s.workerIDs = append(s.workerIDs, w.ID())
		s.eg.Slots += max(w.Slots(), 0)
	}
	s.blocklist = cfg.Blocklist
	if s.blocklist == nil {
		s.blocklist = NewBlocklist()
	}
	s.eg.Blocked = s.blocklist.blocked(time.Now())
	s.running = make([]int, len(s.workers))
	if cfg.Adaptive.Enabled && cfg.Adaptive.BroadcastThreshold > 0 {
		for _, sw := range findSwitches(g) {
			s.switchByProbe[sw.probe] = sw
			s.switchByJoin[sw.join] = sw
		}
	}
	// Key groups are fixed before anything runs: producers write one
	// subpartition per key group before consumers' parallelism is known.
	for _, st := range g.Stages {
		if st.Output == nil || st.Output.Kind != shuffle.Hash {
			continue
		}
		mp := st.Output.MaxParallelism
		if mp == 0 {
			mp = cfg.MaxParallelism
		}
		if mp == 0 && cfg.Adaptive.Enabled {
			mp = cfg.Adaptive.Normalized().MaxParallelism
		}
		if mp == 0 {
			mp = keygroup.DefaultMaxParallelism(cfg.Parallelism)
		}
		if err := keygroup.Check(1, mp); err != nil {
			return nil, errs.Wrap(errs.Semantic, "%s: %w", st.Output, err)
		}
		if len(st.Output.Keys) == 0 {
			return nil, errs.New(errs.Internal, "%s has no keys", st.Output)
		}
		s.keyGroup[st.Output] = mp
	}
	for _, st := range g.Stages {
		kg := 0
		for _, in := range st.Inputs {
			if in.Kind != shuffle.Hash {
				continue
			}
			if kg != 0 && s.keyGroup[in] != kg {
				return nil, errs.New(errs.Internal, "stage %d reads hash exchanges with %d and %d key groups; co-partitioned inputs need the same count", st.ID, kg, s.keyGroup[in])
			}
			kg = s.keyGroup[in]
		}
	}
	return s, nil
}

// FreeSlots is the number of attempts the workers can take now: the sum,
// over the workers that take new attempts (those not blocklisted, or all
// of them when every one is), of their slots minus the attempts running
// there. It is the one definition of free capacity the adaptive rules,
// speculation and hybrid shuffle read.
func (s *scheduler) FreeSlots() int { return s.freeSlots(s.usableWorkers(time.Now())) }

// freeSlots is FreeSlots over the usable workers.
func (s *scheduler) freeSlots(usable []bool) int {
	n := 0
	for i := range s.workers {
		if usable[i] {
			n += s.free(i)
		}
	}
	return n
}

// unclaimedSlots is FreeSlots less the attempts already queued for them:
// what a stage being scheduled now can fill without waiting.
func (s *scheduler) unclaimedSlots() int {
	return max(s.FreeSlots()-len(s.queue), 0)
}

// usableSlots is the capacity of the workers that take new attempts: all
// their slots, busy or not. A stage that starts blocking is spread over
// it (its tasks queue for slots that free while it runs).
func (s *scheduler) usableSlots() int {
	usable := s.usableWorkers(time.Now())
	n := 0
	for i, w := range s.workers {
		if usable[i] {
			n += max(w.Slots(), 0)
		}
	}
	return n
}

// free is the free slots of worker i.
func (s *scheduler) free(i int) int { return s.workers[i].Slots() - s.running[i] }

// usableWorkers says which workers take new attempts at now: those not
// blocklisted, or all when every one is (scheduling goes on rather than
// stalls).
func (s *scheduler) usableWorkers(now time.Time) []bool {
	u, _ := s.blocklist.usable(s.workerIDs, now)
	return u
}

// fail records the query's first error and stops the query.
func (s *scheduler) fail(err error) {
	if s.failure == nil {
		s.failure = err
		s.exec.setErr(err)
	}
}

// run drives the graph to the end and returns the query's error (nil on
// success). When it returns every attempt has ended and every exchange
// buffer is released. Besides the workers' reports, the loop wakes on a
// timer: for the slow-task detector every check interval while attempts
// run (with speculation on), and when a delayed retry may start.
func (s *scheduler) run(ctx context.Context) error {
	defer func() {
		for _, b := range s.buffers {
			b.Release()
		}
		for _, r := range s.eg.byStage {
			r.closeShared()
		}
	}()
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		if s.failure == nil && ctx.Err() == nil {
			s.launchReady(ctx)
			s.place(ctx)
			if now := time.Now(); s.speculating() && s.live > 0 && !now.Before(s.nextCheck) {
				s.detect(ctx, now)
				s.nextCheck = now.Add(s.cfg.Speculation.Detector.CheckInterval)
			}
		} else {
			s.dropQueue()
		}
		if s.live == 0 && len(s.queue) == 0 {
			break
		}
		var wake <-chan time.Time
		if d, ok := s.nextWake(time.Now()); ok {
			timer.Reset(d)
			wake = timer.C
		}
		var done <-chan struct{}
		if s.failure == nil && ctx.Err() == nil {
			done = ctx.Done()
		}
		select {
		case ev := <-s.events:
			s.ended(ctx, ev)
		case <-wake:
		case <-done:
		}
		timer.Stop()
	}
	s.wg.Wait()
	if s.failure == nil {
		if err := ctx.Err(); err != nil {
			s.failure = err
		} else if !s.eg.Result.finished {
			s.failure = fmt.Errorf("%w: the scheduler stopped before the result stage finished", exec.ErrInternal)
		}
	}
	return s.failure
}

// nextWake is how long the loop may sleep before it has something to do
// besides handling a report: the next detector check while attempts run,
// or the earliest delayed retry. ok is false when only a report can wake
// it.
func (s *scheduler) nextWake(now time.Time) (d time.Duration, ok bool) {
	if s.failure != nil {
		return 0, false
	}
	var at time.Time
	if s.speculating() && s.live > 0 {
		at = s.nextCheck
	}
	for _, a := range s.queue {
		if !a.notBefore.IsZero() && (at.IsZero() || a.notBefore.Before(at)) {
			at = a.notBefore
		}
	}
	if at.IsZero() {
		return 0, false
	}
	return max(at.Sub(now), time.Millisecond), true
}

// launchReady launches every stage whose producers and dependencies
// finished.
func (s *scheduler) launchReady(ctx context.Context) {
	for _, r := range s.eg.Stages {
		if r.started || s.waitsForBuild(r.Stage) {
			continue
		}
		if !s.ready(r.Stage) {
			// Hybrid shuffle: it may start while producers run.
			ok, err := s.pipelinable(ctx, r)
			if err != nil {
				s.fail(err)
				return
			}
			if !ok {
				continue
			}
		}
		if err := s.launch(ctx, r); err != nil {
			s.fail(err)
			return
		}
		// Its tasks start now, before the next ready stage is sized:
		// sizing a scan (SourceSize: its splits after pruning) takes
		// milliseconds, which a stage launched before it would otherwise
		// wait with its slots idle (q7: the date_dim collector that
		// gates the fact scan started 9 ms late, behind the sizing of
		// customer_demographics). Unclaimed slots are the same either
		// way: a placed attempt leaves the queue as it takes a slot.
		s.place(ctx)
	}
}

// ready reports whether every producer and dependency of st finished.
func (s *scheduler) ready(st *Stage) bool {
	for _, p := range st.Producers {
		if !s.eg.Run(p).finished {
			return false
		}
	}
	for _, p := range st.DependsOn {
		if !s.eg.Run(p).finished {
			return false
		}
	}
	return true
}

// waitsForBuild holds back the probe stage of a switchable join until the
// join's build stage finished, so the switch can still be made.
func (s *scheduler) waitsForBuild(st *Stage) bool {
	sw := s.switchByProbe[st]
	return sw != nil && !s.eg.Run(sw.build).finished
}

// place puts queued attempts on free slots, first come first served, each
// on the usable worker with the most free slots (see pickWorker); an
// attempt that cannot be placed yet (only workers it should avoid have
// room, or only they exist and its retry delay has not passed) keeps its
// place in the queue.
func (s *scheduler) place(ctx context.Context) {
	if len(s.queue) == 0 {
		return
	}
	now := time.Now()
	usable := s.usableWorkers(now)
	var waiting []*Attempt
	for i, att := range s.queue {
		if s.freeSlots(usable) == 0 {
			waiting = append(waiting, s.queue[i:]...)
			break
		}
		// A retry whose delay has not passed may still start at once on
		// a worker where no attempt of its task failed: the delay spaces
		// out retries on the worker that saw the fault (see failover.go).
		w := s.pickWorker(att, usable, now.Before(att.notBefore))
		if w < 0 {
			waiting = append(waiting, att)
			continue
		}
		if err := s.start(ctx, att, w); err != nil {
			waiting = append(waiting, s.queue[i+1:]...)
			s.queue = waiting
			s.fail(err)
			return
		}
	}
	s.queue = waiting
}

// pickWorker chooses the worker for att among the usable ones with a free
// slot, most free slots first: one that att does not avoid (the workers
// its task's failed or running attempts are on). A retry falls back to an
// avoided worker only when no other usable worker exists at all (it would
// wait for a busy one otherwise); a speculative copy (strict) never does.
// -1 when it must wait.
func (s *scheduler) pickWorker(att *Attempt, usable []bool, strict bool) int {
	best, fallback, others := -1, -1, false
	for i := range s.workers {
		if !usable[i] {
			continue
		}
		free := s.free(i)
		if att.avoids(i) {
			if free > 0 && (fallback < 0 || free > s.free(fallback)) {
				fallback = i
			}
			continue
		}
		others = true
		if free > 0 && (best < 0 || free > s.free(best)) {
			best = i
		}
	}
	if best >= 0 || strict || others {
		return best
	}
	return fallback
}

// start places att on a free slot of worker w and runs it.
func (s *scheduler) start(ctx context.Context, att *Attempt, w int) error {
	slot := 0
	for slot < len(s.busy[w]) && s.busy[w][slot] {
		slot++
	}
	if err := att.transition(Scheduled); err != nil {
		return errs.Wrap(errs.Internal, "%w", err)
	}
	s.busy[w][slot] = true
	s.running[w]++
	att.Worker, att.Slot, att.worker = s.workers[w].ID(), slot, w
	att.placed = time.Now()
	actx, cancel := context.WithCancel(ctx)
	att.cancel = cancel
	s.live++
	att.Task.Stage.live++
	spec := s.spec(att)
	s.wg.Add(1)
	s.workers[w].Run(actx, spec, attemptEvents{s: s, att: att})
	return nil
}

// spec is what attempt att runs.
func (s *scheduler) spec(att *Attempt) *AttemptSpec {
	r := att.Task.Stage
	st := r.Stage
	inputs := make(map[*shuffle.Exchange]*shuffle.Buffer, len(st.Inputs))
	for _, ex := range st.Inputs {
		inputs[ex] = s.buffers[ex]
	}
	if s.cfg.Stats != nil {
		att.stats = exec.NewQueryStats()
	}
	spec := &AttemptSpec{
		Stage: st.ID, Root: st.Root, Graph: s.g,
		Task: att.Task.Index, Attempt: att.Number, Parallelism: r.Parallelism,
		Inputs: inputs, Output: r.OutBuffer, Result: s.exec.results,
		Services: s.services, Stats: att.stats, Worker: att.Worker,
		SharedBuilds: r.shared, CoPartitioned: r.coPartitioned,
	}
	f := s.fault(r, att.Task.Index, att.Number)
	spec.Fault = AttemptFault{CancelAfter: f.CancelAfter, FailAt: f.FailAt, FailAtEnd: f.FailAtEnd}
	if s.cfg.Faults != nil {
		spec.Slowdown = s.cfg.Faults.Slow[att.Worker]
	}
	return spec
}

// fault is the injected fault of an attempt (none outside tests and
// benchmarks). The result stage streams rows to the caller and cannot
// retract them: it never runs twins and is failed only before its first
// batch.
func (s *scheduler) fault(r *StageRun, task, attempt int) AttemptFault {
	if s.cfg.Faults == nil || s.cfg.Faults.Attempt == nil {
		return AttemptFault{}
	}
	f := s.cfg.Faults.Attempt(r.Stage.ID, task, attempt)
	if r.Stage == s.g.Result {
		// A failure is injected before the first batch, the only point
		// where a result attempt can still be retried.
		fail := f.FailAt > 0 || f.FailAtEnd
		f = AttemptFault{}
		if fail {
			f.FailAt = 1
		}
	}
	return f
}

// dropQueue cancels the attempts still waiting for a slot (the query
// failed or was cancelled).
func (s *scheduler) dropQueue() {
	for _, att := range s.queue {
		_ = att.transition(Cancelled)
		att.Task.Stage.open--
	}
	s.queue = nil
}

// ended handles the end of an attempt: its slot is freed; a finished
// attempt is committed if its task has none yet and discarded otherwise; a
// failed or cancelled one is discarded. A failed attempt with a retryable
// error is retried (see retry); otherwise, when its task has no other
// attempt left to finish it, its error fails the query.
func (s *scheduler) ended(ctx context.Context, ev attemptEnded) {
	s.wg.Done()
	att, res := ev.att, ev.res
	task, r := att.Task, att.Task.Stage
	s.busy[att.worker][att.Slot] = false
	s.running[att.worker]--
	s.live--
	r.live--
	r.open--
	att.cancel()
	att.Start, att.End, att.Rows, att.Bytes, att.Err = res.Start, res.End, res.Rows, res.Bytes, res.Err
	state := Finished
	switch {
	case res.Err == nil:
	case att.stopped.Load() || errors.Is(res.Err, errFaultCancel) || (ctx.Err() != nil && errors.Is(res.Err, ctx.Err())):
		state = Cancelled
	default:
		state = Failed
	}
	if err := att.transition(state); err != nil {
		s.fail(errs.Wrap(errs.Internal, "%w", err))
	}
	switch {
	case state == Finished && task.Committed == nil:
		if err := s.commit(att); err != nil {
			s.fail(err)
			break
		}
		s.loseOthers(att)
	default:
		s.discard(att)
		if task.Committed != nil || s.failure != nil {
			break
		}
		if state == Failed {
			task.failures++
			if err := s.retry(att, res); err != nil {
				s.fail(err)
			}
			break
		}
		if !s.hasOther(att) {
			err := res.Err
			if ctx.Err() == nil {
				err = fmt.Errorf("%w: stage %d task %d: every attempt was cancelled: %w", exec.ErrExecution, r.Stage.ID, task.Index, res.Err)
			}
			s.fail(err)
		}
	}
	if r.committed == len(r.Tasks) && r.open == 0 && !r.finished && s.failure == nil {
		s.finishStage(ctx, r)
	}
}

// hasOther reports whether att's task has another attempt that may still
// finish it.
func (s *scheduler) hasOther(att *Attempt) bool {
	for _, o := range att.Task.Attempts {
		if o != att && !o.ended() {
			return true
		}
	}
	return false
}

// commit admits a finished attempt as its task's: its output, its nodes'
// staged effects and its operators' counters become visible.
func (s *scheduler) commit(att *Attempt) error {
	task, r := att.Task, att.Task.Stage
	if b := r.OutBuffer; b != nil {
		if err := b.Commit(task.Index, att.Number); err != nil {
			return err
		}
	}
	for _, id := range r.Stage.collectors {
		if err := s.services.DynamicFilters.Collector(id).Commit(task.Index, att.Number); err != nil {
			return fmt.Errorf("%w: stage %d task %d: %w", exec.ErrInternal, r.Stage.ID, task.Index, err)
		}
	}
	s.cfg.Stats.Add(att.stats)
	att.stats = nil
	for _, n := range r.Stage.stagers {
		if err := n.CommitAttempt(task.Index, att.Number); err != nil {
			return fmt.Errorf("stage %d task %d: %w", r.Stage.ID, task.Index, err)
		}
	}
	task.Committed = att
	r.committed++
	for _, ex := range r.Stage.Inputs {
		// Selective mode: output only committed tasks read is let go.
		s.buffers[ex].Consumed(r.Stage.ID, task.Index, r.Parallelism)
	}
	s.exec.progress.taskDone(r.Stage)
	r.rows += att.Rows
	r.bytes += att.Bytes
	return nil
}

// discard drops what att wrote and staged, and its counters.
func (s *scheduler) discard(att *Attempt) {
	task, r := att.Task, att.Task.Stage
	if b := r.OutBuffer; b != nil {
		b.Discard(task.Index, att.Number)
	}
	for _, id := range r.Stage.collectors {
		s.services.DynamicFilters.Collector(id).Discard(task.Index, att.Number)
	}
	att.stats = nil
	for _, n := range r.Stage.stagers {
		if err := n.DiscardAttempt(task.Index, att.Number); err != nil {
			s.fail(fmt.Errorf("stage %d task %d: %w", r.Stage.ID, task.Index, err))
		}
	}
}

// loseOthers stops the other attempts of a committed task: queued ones
// never run, running ones are cancelled (they are discarded when they
// end), unless the task's fault lets them finish.
func (s *scheduler) loseOthers(won *Attempt) {
	if s.fault(won.Task.Stage, won.Task.Index, 0).BothFinish {
		return // the test wants the others to run to their end
	}
	for _, o := range won.Task.Attempts {
		if o == won || o.ended() {
			continue
		}
		if o.State() == Created {
			s.unqueue(o)
			_ = o.transition(Cancelled)
			o.Task.Stage.open--
			continue
		}
		o.stopped.Store(true)
		o.cancel()
	}
}

// unqueue takes att out of the queue.
func (s *scheduler) unqueue(att *Attempt) {
	for i, q := range s.queue {
		if q == att {
			s.queue = append(s.queue[:i], s.queue[i+1:]...)
			return
		}
	}
}

// launch decides the stage's parallelism and what each task reads, and
// queues its tasks' attempts.
func (s *scheduler) launch(ctx context.Context, r *StageRun) error {
	st := r.Stage
	r.started = true
	inBufs := make([]*shuffle.Buffer, 0, len(st.Inputs))
	bufs := map[*shuffle.Exchange]*shuffle.Buffer{}
	for _, ex := range st.Inputs {
		b := s.buffers[ex]
		inBufs = append(inBufs, b)
		bufs[ex] = b
	}
	p, pipelined := s.plannedParallelism(r)
	if !pipelined {
		var err error
		if p, err = s.decide(ctx, r, inBufs, nil, s.unclaimedSlots(), s.usableSlots()); err != nil {
			return err
		}
	}
	var plan *stagePlan
	if sw := s.switchByJoin[st]; sw != nil && sw.switched {
		p = s.eg.Run(sw.probe).Parallelism
		r.Decision.Parallelism = p
		r.Decision.Clamps = append(r.Decision.Clamps, fmt.Sprintf("set to the probe side's %d tasks by the broadcast switch", p))
		plan = sw.plan(bufs, p)
		r.Switch = sw.describe(p)
	} else if s.cfg.Adaptive.Enabled {
		if !pipelined {
			p = s.coPartition(r, bufs, p)
		}
		// Skew splits need every key group's final bytes: a stage reading
		// a hash input still being written balances its ranges by the
		// bytes committed so far instead.
		if sh, ok := shuffledJoin(st); ok && !s.readsRunningHash(r) {
			plan, r.SkewSplits = skewPlan(st, sh, bufs, p, s.cfg.Adaptive)
		}
		if plan == nil {
			plan = balancedPlan(st, inBufs, p)
		}
	}
	for _, ex := range st.Inputs {
		if bufs[ex].Hashed() {
			if err := keygroup.Check(p, s.keyGroup[ex]); err != nil {
				return errs.Wrap(errs.Semantic, "stage %d: %w", st.ID, err)
			}
		}
	}
	if plan != nil {
		for ex, per := range plan.slices {
			bufs[ex].SetSlices(st.ID, per)
		}
		r.TaskBytes = plan.taskBytes
	}
	for _, ex := range st.Inputs {
		bufs[ex].PlanConsumer(st.ID, p)
	}
	r.Parallelism = p
	if p > 1 {
		r.shared = sharedBuilds(st.Root, s.cfg.Memory, r.coPartitioned)
	}
	r.Start = time.Now()
	s.exec.progress.launched(st, p)
	if st.Output != nil {
		kind, subs := st.Output.Kind, 1
		if sw := s.switchByProbe[st]; sw != nil {
			sw.decide(s.eg.Run(sw.build).OutBuffer, s.cfg.Adaptive.BroadcastThreshold)
			if sw.switched {
				kind = shuffle.Forward
			}
		}
		if kind == shuffle.Hash {
			subs = s.keyGroup[st.Output]
		}
		b := shuffle.NewBuffer(st.Output, kind, subs, p, s.cfg.Memory)
		b.Spill(s.services.Spill, s.cfg.Alloc, s.cfg.Stats.For(s.g.NodeID(st.Output)))
		if s.cfg.ShuffleMode == AllExchangesHybridSelective {
			b.Selective(distinctStages(st.Consumers))
		}
		r.readers = len(st.Consumers)
		s.buffers[st.Output] = b
		r.OutBuffer = b
	}
	planned, err := s.plannedInput(ctx, r, p)
	if err != nil {
		return err
	}
	for i := 0; i < p; i++ {
		t := &TaskRun{Stage: r, Index: i, InputBytes: planned[i]}
		r.Tasks = append(r.Tasks, t)
		s.enqueue(&Attempt{Task: t, Kind: FirstAttempt}, false)
		if st != s.g.Result && s.fault(r, i, 0).Twin {
			s.enqueue(&Attempt{Task: t, Kind: TwinAttempt, Why: "twin of attempt 0 (a test's fault)"}, false)
		}
	}
	if p == 0 {
		s.finishStage(ctx, r)
	}
	return nil
}

// decide is stage run r's parallelism from its input buffers bufs (nil
// for an input whose bytes are not known yet; est, when not nil, the
// expected final bytes of inputs still being written), its free
// (unclaimed) slots and the slots its tasks are spread over, recorded on
// r.Decision.
func (s *scheduler) decide(ctx context.Context, r *StageRun, bufs []*shuffle.Buffer, est []int64, free, slots int) (int, error) {
	p, err := decideParallelism(ctx, r, bufs, est, s.cfg, &s.services, free, slots)
	if err != nil {
		return 0, err
	}
	fwd := -1
	for i, ex := range r.Stage.Inputs {
		if ex.Kind == shuffle.Forward {
			// A forward edge reads producer task i in task i.
			pp := s.eg.Run(r.Stage.Producers[i]).Parallelism
			if fwd >= 0 {
				if pp != fwd {
					return 0, errs.New(errs.Internal, "stage %d reads forward inputs from stages of %d and %d tasks", r.Stage.ID, fwd, pp)
				}
				continue
			}
			fwd, p = pp, pp
			r.Decision.Parallelism = p
			r.Decision.Clamps = append(r.Decision.Clamps, fmt.Sprintf("set to the producer's %d tasks (forward input)", p))
		}
	}
	return p, nil
}

// finishStage records the stage's end and releases input buffers no other
// stage still has to read.
func (s *scheduler) finishStage(ctx context.Context, r *StageRun) {
	r.finished = true
	r.closeShared()
	r.End = time.Now()
	s.recordPaces(r, r.End)
	s.exec.progress.stageDone(r.Stage)
	s.pipelinedInputsDone(ctx, r.Stage)
	for _, ex := range r.Stage.Inputs {
		pr := s.eg.Run(s.producerOf(r.Stage, ex))
		pr.readers--
		if pr.readers == 0 {
			s.buffers[ex].Release()
		}
	}
}

// producerOf is the stage writing ex, an input of st.
func (s *scheduler) producerOf(st *Stage, ex *shuffle.Exchange) *Stage {
	for i, in := range st.Inputs {
		if in == ex {
			return st.Producers[i]
		}
	}
	return nil
}
