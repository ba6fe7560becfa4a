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
	}
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
			return nil, fmt.Errorf("%w: %s has no keys", exec.ErrPlan, st.Output)
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
				return nil, fmt.Errorf("%w: stage %d reads hash exchanges with %d and %d key groups; co-partitioned inputs need the same count", exec.ErrPlan, st.ID, kg, s.keyGroup[in])
			}
			kg = s.keyGroup[in]
		}
	}
	return s, nil
}

// FreeSlots is the number of attempts the workers can take now: the sum
// over workers of their slots minus the attempts running there. It is the
// one definition of free capacity the adaptive rules, speculation and
// hybrid shuffle read.
func (s *scheduler) FreeSlots() int {
	n := 0
	for i, w := range s.workers {
		n += w.Slots() - s.running[i]
	}
	return n
}

// unclaimedSlots is FreeSlots less the attempts already queued for them:
// what a stage being scheduled now can fill without waiting.
func (s *scheduler) unclaimedSlots() int {
	return max(s.FreeSlots()-len(s.queue), 0)
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
// buffer is released.
func (s *scheduler) run(ctx context.Context) error {
	defer func() {
		for _, b := range s.buffers {
			b.Release()
		}
	}()
	for {
		if s.failure == nil && ctx.Err() == nil {
			s.launchReady(ctx)
			s.place(ctx)
		} else {
			s.dropQueue()
		}
		if s.live == 0 {
			break
		}
		ev := <-s.events
		s.ended(ctx, ev)
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

// launchReady launches every stage whose producers and dependencies
// finished.
func (s *scheduler) launchReady(ctx context.Context) {
	for _, r := range s.eg.Stages {
		if r.started || !s.ready(r.Stage) || s.waitsForBuild(r.Stage) {
			continue
		}
		if err := s.launch(ctx, r); err != nil {
			s.fail(err)
			return
		}
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
// on the worker with the most free slots.
func (s *scheduler) place(ctx context.Context) {
	for len(s.queue) > 0 && s.FreeSlots() > 0 {
		att := s.queue[0]
		s.queue = s.queue[1:]
		w := 0
		for i := range s.workers {
			if s.workers[i].Slots()-s.running[i] > s.workers[w].Slots()-s.running[w] {
				w = i
			}
		}
		slot := 0
		for slot < len(s.busy[w]) && s.busy[w][slot] {
			slot++
		}
		if err := att.transition(Scheduled); err != nil {
			s.fail(errs.Wrap(errs.Internal, "%w", err))
			return
		}
		s.busy[w][slot] = true
		s.running[w]++
		att.Worker, att.Slot, att.worker = s.workers[w].ID(), slot, w
		actx, cancel := context.WithCancel(ctx)
		att.cancel = cancel
		s.live++
		att.Task.Stage.live++
		spec := s.spec(att)
		s.wg.Add(1)
		s.workers[w].Run(actx, spec, attemptEvents{s: s, att: att})
	}
}

// spec is what attempt att runs.
func (s *scheduler) spec(att *Attempt) *AttemptSpec {
	r := att.Task.Stage
	st := r.Stage
	inputs := make(map[*shuffle.Exchange]*shuffle.Buffer, len(st.Inputs))
	for _, ex := range st.Inputs {
		inputs[ex] = s.buffers[ex]
	}
	spec := &AttemptSpec{
		Stage: st.ID, Root: st.Root, Graph: s.g,
		Task: att.Task.Index, Attempt: att.Number, Parallelism: r.Parallelism,
		Inputs: inputs, Output: r.OutBuffer, Result: s.exec.results,
		Services: s.services, Stats: s.cfg.Stats,
	}
	if att.Number == 0 && st != s.g.Result {
		spec.Fault.CancelAfter = s.fault(r, att.Task.Index).CancelAfter
	}
	return spec
}

// fault is the injected fault of a task (none outside tests). The result
// stage streams rows to the caller and cannot retract them: it runs
// exactly one attempt, so it takes no fault.
func (s *scheduler) fault(r *StageRun, task int) AttemptFault {
	if s.cfg.Faults == nil || r.Stage == s.g.Result {
		return AttemptFault{}
	}
	return s.cfg.Faults(r.Stage.ID, task)
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
// failed or cancelled one is discarded, and fails the query when its task
// has no other attempt left to finish it.
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
		if task.Committed == nil && !s.hasOther(att) && s.failure == nil {
			err := res.Err
			if state == Cancelled && ctx.Err() == nil {
				err = fmt.Errorf("%w: stage %d task %d: every attempt was cancelled: %w", exec.ErrExecution, r.Stage.ID, task.Index, res.Err)
			}
			s.fail(err)
		}
	}
	if r.committed == len(r.Tasks) && r.open == 0 && !r.finished && s.failure == nil {
		s.finishStage(r)
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

// commit admits a finished attempt as its task's: its output and its
// nodes' staged effects become visible.
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
	task.Committed = att
	r.committed++
	s.exec.progress.taskDone(r.Stage)
	r.rows += att.Rows
	r.bytes += att.Bytes
	return nil
}

// discard drops what att wrote and staged.
func (s *scheduler) discard(att *Attempt) {
	task, r := att.Task, att.Task.Stage
	if b := r.OutBuffer; b != nil {
		b.Discard(task.Index, att.Number)
	}
	for _, id := range r.Stage.collectors {
		s.services.DynamicFilters.Collector(id).Discard(task.Index, att.Number)
	}
}

// loseOthers stops the other attempts of a committed task: queued ones
// never run, running ones are cancelled (they are discarded when they
// end), unless the task's fault lets them finish.
func (s *scheduler) loseOthers(won *Attempt) {
	if s.fault(won.Task.Stage, won.Task.Index).BothFinish {
		return // the test wants the others to run to their end
	}
	for _, o := range won.Task.Attempts {
		if o == won || o.ended() {
			continue
		}
		if o.State() == Created {
			for i, q := range s.queue {
				if q == o {
					s.queue = append(s.queue[:i], s.queue[i+1:]...)
					break
				}
			}
			_ = o.transition(Cancelled)
			o.Task.Stage.open--
			continue
		}
		o.stopped.Store(true)
		o.cancel()
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
	p, err := decideParallelism(ctx, r, inBufs, s.cfg, &s.services, s.unclaimedSlots())
	if err != nil {
		return err
	}
	for i, ex := range st.Inputs {
		if ex.Kind == shuffle.Forward {
			// A forward edge reads producer task i in task i.
			p = s.eg.Run(st.Producers[i]).Parallelism
			r.Decision.Parallelism = p
			r.Decision.Clamps = append(r.Decision.Clamps, fmt.Sprintf("set to the producer's %d tasks (forward input)", p))
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
		if sh, ok := shuffledJoin(st); ok {
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
	r.Parallelism = p
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
		r.readers = len(st.Consumers)
		s.buffers[st.Output] = b
		r.OutBuffer = b
	}
	for i := 0; i < p; i++ {
		t := &TaskRun{Stage: r, Index: i}
		if i < len(r.TaskBytes) {
			t.InputBytes = r.TaskBytes[i]
		}
		r.Tasks = append(r.Tasks, t)
		attempts := 1
		if s.fault(r, i).Twin {
			attempts = 2
		}
		for a := 0; a < attempts; a++ {
			att := &Attempt{Task: t, Number: a}
			t.Attempts = append(t.Attempts, att)
			s.queue = append(s.queue, att)
			r.open++
		}
	}
	if p == 0 {
		s.finishStage(r)
	}
	return nil
}

// finishStage records the stage's end and releases input buffers no other
// stage still has to read.
func (s *scheduler) finishStage(r *StageRun) {
	r.finished = true
	r.End = time.Now()
	s.exec.progress.stageDone(r.Stage)
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
