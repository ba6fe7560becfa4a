package runtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/pruning"
	"github.com/fsql-dev/fsql/shuffle"
	"github.com/fsql-dev/fsql/shuffle/keygroup"
)

// scheduler runs a JobGraph's stages on a worker: a stage starts when all
// its producers and dependencies finished (blocking shuffle), so a task
// only takes a slot once its inputs are complete and slots cannot
// deadlock. Its loop owns all stage bookkeeping; tasks report back on done.
type scheduler struct {
	g      *JobGraph
	cfg    *RunConfig
	worker *Worker
	exec   *Execution
	// services is what every task context of the run starts from: the
	// allocator, the memory budget and the run's dynamic-filter
	// coordinator, which operators find their share of by ID.
	services exec.TaskContext

	buffers  map[*shuffle.Exchange]*shuffle.Buffer
	keyGroup map[*shuffle.Exchange]int // resolved key-group count of hash exchanges
	finished map[*Stage]bool
	started  map[*Stage]bool
	left     map[*Stage]int // unfinished tasks
	// readers counts, per exchange, the consumer stages still to finish
	// reading it; the last one releases its buffer.
	readers map[*shuffle.Exchange]int
	done    chan taskDone
	wg      sync.WaitGroup

	// Run-time broadcast switches by probe stage and by join stage.
	switchByProbe, switchByJoin map[*Stage]*broadcastSwitch
}

type taskDone struct {
	att *Attempt
	err error
}

func newScheduler(g *JobGraph, cfg *RunConfig, e *Execution) (*scheduler, error) {
	s := &scheduler{
		g: g, cfg: cfg, worker: NewWorker(cfg.Slots), exec: e,
		buffers: map[*shuffle.Exchange]*shuffle.Buffer{}, keyGroup: map[*shuffle.Exchange]int{},
		finished: map[*Stage]bool{}, started: map[*Stage]bool{}, left: map[*Stage]int{},
		readers:       map[*shuffle.Exchange]int{},
		done:          make(chan taskDone),
		switchByProbe: map[*Stage]*broadcastSwitch{}, switchByJoin: map[*Stage]*broadcastSwitch{},
		services: exec.TaskContext{
			Alloc: cfg.Alloc, Memory: cfg.Memory,
			DynamicFilters: pruning.NewCoordinator(pruning.CoordinatorConfig{MaxValues: cfg.DynamicFilterMaxValues}),
		},
	}
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
			return nil, fmt.Errorf("%w: %s: %v", exec.ErrPlan, st.Output, err)
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

// run drives the graph to the end and returns the query's error (nil on
// success). When it returns every task goroutine has ended and every
// exchange buffer is released.
func (s *scheduler) run(ctx context.Context) error {
	var failure error
	fail := func(err error) {
		if failure == nil {
			failure = err
			s.exec.setErr(err)
		}
	}
	running := 0
	defer func() {
		for _, b := range s.buffers {
			b.Release()
		}
	}()
	for {
		if failure == nil && ctx.Err() == nil {
			for _, st := range s.g.Stages {
				if s.started[st] || !st.ready(s.finished) || s.waitsForBuild(st) {
					continue
				}
				n, err := s.launch(ctx, st)
				if err != nil {
					fail(err)
					break
				}
				running += n
			}
		}
		if running == 0 {
			break
		}
		d := <-s.done
		running--
		st := d.att.Task.Stage
		if d.err != nil {
			fail(d.err)
			continue
		}
		s.left[st]--
		if s.left[st] == 0 {
			s.finishStage(st)
		}
	}
	s.wg.Wait()
	if failure == nil {
		if err := ctx.Err(); err != nil {
			failure = err
		} else if !s.finished[s.g.Result] {
			failure = fmt.Errorf("%w: the scheduler stopped before the result stage finished", exec.ErrInternal)
		}
	}
	return failure
}

// waitsForBuild holds back the probe stage of a switchable join until the
// join's build stage finished, so the switch can still be made.
func (s *scheduler) waitsForBuild(st *Stage) bool {
	sw := s.switchByProbe[st]
	return sw != nil && !s.finished[sw.build]
}

// launch decides the stage's parallelism and what each task reads, and
// starts its tasks.
func (s *scheduler) launch(ctx context.Context, st *Stage) (int, error) {
	s.started[st] = true
	inBufs := make([]*shuffle.Buffer, 0, len(st.Inputs))
	bufs := map[*shuffle.Exchange]*shuffle.Buffer{}
	for _, ex := range st.Inputs {
		b := s.buffers[ex]
		inBufs = append(inBufs, b)
		bufs[ex] = b
	}
	p, err := decideParallelism(ctx, st, inBufs, s.cfg, &s.services)
	if err != nil {
		return 0, err
	}
	var plan *stagePlan
	if sw := s.switchByJoin[st]; sw != nil && sw.switched {
		p = sw.probe.Parallelism
		st.Decision.Parallelism = p
		st.Decision.Clamps = append(st.Decision.Clamps, fmt.Sprintf("set to the probe side's %d tasks by the broadcast switch", p))
		plan = sw.plan(bufs, p)
		st.Switch = sw.String()
	} else if s.cfg.Adaptive.Enabled {
		if sh, ok := shuffledJoin(st); ok {
			plan, st.SkewSplits = skewPlan(st, sh, bufs, p, s.cfg.Adaptive)
		}
		if plan == nil {
			plan = balancedPlan(st, inBufs, p)
		}
	}
	for _, ex := range st.Inputs {
		if bufs[ex].Hashed() {
			if err := keygroup.Check(p, s.keyGroup[ex]); err != nil {
				return 0, fmt.Errorf("%w: stage %d: %v", exec.ErrPlan, st.ID, err)
			}
		}
	}
	if plan != nil {
		for ex, per := range plan.slices {
			bufs[ex].SetSlices(st.ID, per)
		}
		st.TaskBytes = plan.taskBytes
	}
	st.Parallelism = p
	st.Start = time.Now()
	if st.Output != nil {
		subs := 1
		forward := false
		if sw := s.switchByProbe[st]; sw != nil {
			sw.decide(s.cfg.Adaptive.BroadcastThreshold)
			forward = sw.switched
		}
		if st.Output.Kind == shuffle.Hash && !forward {
			subs = s.keyGroup[st.Output]
		}
		b := shuffle.NewBuffer(st.Output, subs, p, forward, s.cfg.Memory)
		s.readers[st.Output] = len(st.Consumers)
		s.buffers[st.Output] = b
		st.OutBuffer = b
	}
	s.left[st] = p
	for i := 0; i < p; i++ {
		t := &Task{Stage: st, Index: i}
		att := &Attempt{Task: t, Number: 0}
		t.Attempts = append(t.Attempts, att)
		st.Tasks = append(st.Tasks, t)
		tc := s.services
		tc.Stage, tc.Task, tc.Parallelism = st.ID, i, p
		r := &attemptRun{
			att:    att,
			tc:     &tc,
			graph:  s.g,
			stats:  s.cfg.Stats,
			inputs: bufs,
			out:    st.OutBuffer,
			result: s.exec.results,
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			err := s.worker.run(ctx, r)
			s.done <- taskDone{att: att, err: err}
		}()
	}
	return p, nil
}

// finishStage records the stage's end and releases input buffers no other
// stage still has to read.
func (s *scheduler) finishStage(st *Stage) {
	s.finished[st] = true
	st.End = time.Now()
	if b := st.OutBuffer; b != nil {
		b.FinishProducers()
	}
	for _, ex := range st.Inputs {
		s.readers[ex]--
		if b := s.buffers[ex]; b != nil && s.readers[ex] == 0 {
			b.Release()
		}
	}
}
