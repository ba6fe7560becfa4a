package runtime

import "sync/atomic"

// Progress is a snapshot of how far a run got, for a progress bar: it may
// be taken from any goroutine while the run goes on.
type Progress struct {
	// Stages are the job graph's stages, in JobGraph.Stages order.
	Stages []StageProgress
}

// StageProgress is one stage's share of a Progress.
type StageProgress struct {
	ID int
	// Tasks is the stage's task count, zero until the stage started (its
	// parallelism is decided then); TasksDone how many of them finished.
	Tasks, TasksDone int
	// Started and Finished say whether the stage's tasks were created and
	// whether all of them finished.
	Started, Finished bool
}

// progress is the Execution's side of Progress: counters the scheduler
// bumps as stages start and tasks finish, read without its lock.
type progress struct {
	index  map[*Stage]int // immutable after newProgress
	stages []stageCounters
}

type stageCounters struct {
	id               int
	tasks, done      atomic.Int64
	started, stopped atomic.Bool
}

func newProgress(g *JobGraph) *progress {
	p := &progress{index: make(map[*Stage]int, len(g.Stages)), stages: make([]stageCounters, len(g.Stages))}
	for i, st := range g.Stages {
		p.index[st] = i
		p.stages[i].id = st.ID
	}
	return p
}

// launched records that st started as n tasks.
func (p *progress) launched(st *Stage, n int) {
	if c := p.of(st); c != nil {
		c.tasks.Store(int64(n))
		c.started.Store(true)
	}
}

// taskDone records that one task of st finished.
func (p *progress) taskDone(st *Stage) {
	if c := p.of(st); c != nil {
		c.done.Add(1)
	}
}

// stageDone records that every task of st finished.
func (p *progress) stageDone(st *Stage) {
	if c := p.of(st); c != nil {
		c.stopped.Store(true)
	}
}

func (p *progress) of(st *Stage) *stageCounters {
	i, ok := p.index[st]
	if !ok {
		return nil
	}
	return &p.stages[i]
}

// Progress is a snapshot of the run's stages: which started, with how
// many tasks, and how many finished. Safe to call at any time, also after
// Close.
func (e *Execution) Progress() Progress {
	out := Progress{Stages: make([]StageProgress, len(e.progress.stages))}
	for i := range e.progress.stages {
		c := &e.progress.stages[i]
		out.Stages[i] = StageProgress{
			ID:        c.id,
			Tasks:     int(c.tasks.Load()),
			TasksDone: int(c.done.Load()),
			Started:   c.started.Load(),
			Finished:  c.stopped.Load(),
		}
	}
	return out
}
