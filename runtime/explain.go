package runtime

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// Explain renders the plan as an indented tree per stage, the result stage
// first and producers after their consumers (EXPLAIN, without running).
// The output is deterministic for the same plan.
func (g *JobGraph) Explain() string { return explain(g, nil, nil) }

// Explain renders the run (EXPLAIN ANALYZE, after it ended): the plan as
// JobGraph.Explain does, every stage with its decisions, tasks, attempts
// and workers, time and output, and every operator with its counters from
// stats. The output is deterministic for the same plan and counters.
func (e *ExecutionGraph) Explain(stats *exec.QueryStats) string {
	if stats == nil {
		stats = exec.NewQueryStats()
	}
	return explain(e.Job, e, stats)
}

func explain(g *JobGraph, run *ExecutionGraph, stats *exec.QueryStats) string {
	producer := map[*shuffle.Exchange]*Stage{}
	for _, st := range g.Stages {
		if st.Output != nil {
			producer[st.Output] = st
		}
	}
	x := &explainer{g: g, run: run, stats: stats, producer: producer}
	for i := len(g.Stages) - 1; i >= 0; i-- {
		st := g.Stages[i]
		x.stageHeader(st)
		explainNode(&x.sb, g, st.Root, 1, stats, producer)
	}
	if run != nil {
		explainOccupancy(&x.sb, run)
		explainBlocked(&x.sb, run)
	}
	return x.sb.String()
}

type explainer struct {
	sb       strings.Builder
	g        *JobGraph
	run      *ExecutionGraph // nil: plan only
	stats    *exec.QueryStats
	producer map[*shuffle.Exchange]*Stage
}

// out is the output buffer of stage st's run, nil before a run.
func (x *explainer) out(st *Stage) *shuffle.Buffer {
	if x.run == nil {
		return nil
	}
	return x.run.Run(st).OutBuffer
}

// stageNames names each stage of sts once, in order.
func stageNames(sts []*Stage) []string {
	seen := map[*Stage]bool{}
	var out []string
	for _, st := range sts {
		if !seen[st] {
			seen[st] = true
			out = append(out, fmt.Sprintf("Stage %d", st.ID))
		}
	}
	return out
}

func (x *explainer) stageHeader(st *Stage) {
	sb := &x.sb
	fmt.Fprintf(sb, "Stage %d", st.ID)
	var r *StageRun
	if x.run != nil {
		r = x.run.Run(st)
	}
	if r != nil && r.Parallelism > 0 {
		fmt.Fprintf(sb, " (parallelism %d)", r.Parallelism)
	} else {
		sb.WriteString(" (parallelism decided at run time)")
	}
	if st.Output == nil {
		sb.WriteString(" -> result")
	} else {
		fmt.Fprintf(sb, " -> %s", exchangeRouting(st.Output, x.out(st)))
		if readers := stageNames(st.Consumers); len(readers) > 1 {
			// A shared subplan (planner's share_subplans): computed once,
			// its output kept until every reader finished.
			fmt.Fprintf(sb, " shared by %s", strings.Join(readers, ", "))
		}
	}
	if len(st.Inputs) > 0 {
		reads := make([]string, len(st.Inputs))
		for i, ex := range st.Inputs {
			p := x.producer[ex]
			reads[i] = fmt.Sprintf("Stage %d [%s]", p.ID, exchangeRouting(ex, x.out(p)))
		}
		fmt.Fprintf(sb, " <- reads %s", strings.Join(reads, ", "))
	}
	if len(st.DependsOn) > 0 {
		dyn := dynamicFilterDeps(st)
		ids := make([]string, len(st.DependsOn))
		for i, d := range st.DependsOn {
			ids[i] = fmt.Sprintf("Stage %d", d.ID)
			if dyn[d] {
				ids[i] += " (dynamic filter)"
			}
		}
		fmt.Fprintf(sb, " waits for %s", strings.Join(ids, ", "))
	}
	sb.WriteString("\n")
	if r == nil {
		return
	}
	fmt.Fprintf(sb, "  tasks=%d time=%s rows=%d bytes=%s", len(r.Tasks), fmtDuration(r.Duration()), r.Rows(), policy.FormatBytes(r.Bytes()))
	if b := r.OutBuffer; b != nil && b.Subpartitions > 1 {
		var maxKG int64
		for _, n := range b.SubpartitionBytes() {
			maxKG = max(maxKG, n)
		}
		fmt.Fprintf(sb, " shuffled=%s largest-key-group=%s", policy.FormatBytes(b.TotalBytes()), policy.FormatBytes(maxKG))
	}
	if len(r.Tasks) > 1 {
		var slow time.Duration
		for _, t := range r.Tasks {
			if a := t.Committed; a != nil && !a.Start.IsZero() && !a.End.IsZero() {
				slow = max(slow, a.End.Sub(a.Start))
			}
		}
		fmt.Fprintf(sb, " slowest-task=%s", fmtDuration(slow))
	}
	sb.WriteString("\n")
	explainAttempts(sb, r)
	explainAdaptive(sb, r)
}

// explainAttempts says where the stage's attempts ran: one line counting
// attempts per worker, then per task its planned input and every attempt:
// worker and slot, start (from the stage's start), run time, input bytes
// read, outcome (committed, cancelled and why, failed and why), and why
// it was made (a retry, a speculative copy) or judged slow.
func explainAttempts(sb *strings.Builder, r *StageRun) {
	perWorker := map[string]int{}
	var workers []string
	for _, t := range r.Tasks {
		for _, a := range t.Attempts {
			if a.Worker == "" {
				continue
			}
			if perWorker[a.Worker] == 0 {
				workers = append(workers, a.Worker)
			}
			perWorker[a.Worker]++
		}
	}
	if len(workers) == 0 {
		return
	}
	sort.Strings(workers)
	parts := make([]string, len(workers))
	for i, w := range workers {
		parts[i] = fmt.Sprintf("%s (%d)", w, perWorker[w])
	}
	fmt.Fprintf(sb, "  attempts on workers: %s\n", strings.Join(parts, ", "))
	for _, t := range r.Tasks {
		head := fmt.Sprintf("  task %d (input %s):", t.Index, policy.FormatBytes(t.InputBytes))
		if len(t.Attempts) == 1 {
			fmt.Fprintf(sb, "%s %s\n", head, describeAttempt(r, t.Attempts[0]))
			continue
		}
		sb.WriteString(head + "\n")
		for _, a := range t.Attempts {
			fmt.Fprintf(sb, "    %s\n", describeAttempt(r, a))
		}
	}
}

// describeAttempt is one attempt for EXPLAIN ANALYZE.
func describeAttempt(r *StageRun, a *Attempt) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "attempt %d", a.Number)
	if a.Worker != "" {
		fmt.Fprintf(&sb, " on %s slot %d", a.Worker, a.Slot)
	}
	if !a.Start.IsZero() && !a.End.IsZero() {
		fmt.Fprintf(&sb, ", start +%s, ran %s", fmtDuration(max(a.Start.Sub(r.Start), 0)), fmtDuration(a.End.Sub(a.Start)))
		fmt.Fprintf(&sb, ", read %s", policy.FormatBytes(a.InputBytes.Load()))
	}
	sb.WriteString(", " + attemptOutcome(a))
	if a.Why != "" {
		sb.WriteString("; " + a.Why)
	}
	if a.Slow != "" {
		fmt.Fprintf(&sb, "; slow: %s", a.Slow)
	}
	return sb.String()
}

// attemptOutcome says how an attempt ended.
func attemptOutcome(a *Attempt) string {
	t := a.Task
	switch a.State() {
	case Finished:
		if a == t.Committed {
			return "committed"
		}
		if t.Committed != nil {
			return fmt.Sprintf("finished, discarded (attempt %d was committed first)", t.Committed.Number)
		}
		return "finished, not committed"
	case Failed:
		return "failed: " + firstLine(a.Err)
	case Cancelled:
		switch {
		case a.Start.IsZero() && a.End.IsZero():
			return "cancelled before it ran"
		case errors.Is(a.Err, errFaultCancel):
			return "cancelled by an injected fault"
		case a.stopped.Load() && t.Committed != nil:
			return fmt.Sprintf("cancelled (attempt %d won)", t.Committed.Number)
		}
		return "cancelled (the query ended)"
	}
	return a.State().String()
}

// firstLine is err's message up to its first line break (a panic's stack
// follows it).
func firstLine(err error) string {
	if err == nil {
		return "no error recorded"
	}
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// explainOccupancy says how busy the run kept the workers' slots: the
// attempts' run time against the slots times the run's wall time (first
// attempt's start to last attempt's end). The idle rest is what another
// parallelism could have used; the stages' task lines show where.
func explainOccupancy(sb *strings.Builder, run *ExecutionGraph) {
	if run.Slots <= 0 {
		return
	}
	var t0, t1 time.Time
	var busy time.Duration
	for _, r := range run.Stages {
		for _, t := range r.Tasks {
			for _, a := range t.Attempts {
				if a.Start.IsZero() || a.End.IsZero() {
					continue
				}
				busy += a.End.Sub(a.Start)
				if t0.IsZero() || a.Start.Before(t0) {
					t0 = a.Start
				}
				if a.End.After(t1) {
					t1 = a.End
				}
			}
		}
	}
	wall := t1.Sub(t0)
	if wall <= 0 {
		return
	}
	capacity := wall * time.Duration(run.Slots)
	fmt.Fprintf(sb, "Slot occupancy: %d slots over %s, attempts ran %s of %s slot time (%.0f%%)\n",
		run.Slots, fmtDuration(wall), fmtDuration(busy), fmtDuration(capacity), 100*float64(busy)/float64(capacity))
}

// explainBlocked lists the workers blocklisted during the run, times from
// the run's first stage start.
func explainBlocked(sb *strings.Builder, run *ExecutionGraph) {
	if len(run.Blocked) == 0 && run.NotBlocked == 0 {
		return
	}
	var t0 time.Time
	for _, r := range run.Stages {
		if !r.Start.IsZero() && (t0.IsZero() || r.Start.Before(t0)) {
			t0 = r.Start
		}
	}
	rel := func(t time.Time) string {
		if t0.IsZero() {
			return t.Format(time.RFC3339Nano)
		}
		if t.Before(t0) {
			return "-" + fmtDuration(t0.Sub(t))
		}
		return "+" + fmtDuration(t.Sub(t0))
	}
	sb.WriteString("Blocklisted workers\n")
	for _, b := range run.Blocked {
		when := "from " + rel(b.At)
		if b.Inherited {
			when = "already at the query's start"
		}
		fmt.Fprintf(sb, "  %s: %s until %s", b.Worker, when, rel(b.Until))
		if b.Renewals > 0 {
			fmt.Fprintf(sb, " (renewed %d times)", b.Renewals)
		}
		if b.Why != "" {
			fmt.Fprintf(sb, "; %s", b.Why)
		}
		sb.WriteString("\n")
	}
	if run.NotBlocked > 0 {
		fmt.Fprintf(sb, "  %d findings of a slow attempt left its worker unblocked: half the workers were blocked already\n", run.NotBlocked)
	}
}

// explainAdaptive prints the scheduler's run-time decisions for a stage:
// its parallelism and why, the bytes each task read, split key groups and
// a switched join.
func explainAdaptive(sb *strings.Builder, r *StageRun) {
	if r.Decision != nil {
		fmt.Fprintf(sb, "  decided: %s\n", r.Decision)
	}
	if len(r.Pipelined) > 0 {
		fmt.Fprintf(sb, "  pipelined: %s\n", pipelinedEdges(r))
	}
	if len(r.TaskBytes) > 0 {
		lo, med, hi := policy.Spread(r.TaskBytes)
		what := "key-group ranges: %d tasks balanced by bytes"
		if r.Switch != "" {
			what = "inputs: %d tasks, each its probe task's output and the whole build side"
		}
		if len(r.PipelinedEstimates) > 0 {
			what = "key-group ranges: %d tasks balanced by the bytes committed when it started"
		}
		fmt.Fprintf(sb, "  "+what+", bytes per task min=%s median=%s max=%s\n", len(r.TaskBytes), policy.FormatBytes(lo), policy.FormatBytes(med), policy.FormatBytes(hi))
	}
	for _, sp := range r.SkewSplits {
		fmt.Fprintf(sb, "  skew: %s\n", sp)
	}
	if r.Switch != "" {
		fmt.Fprintf(sb, "  %s\n", r.Switch)
	}
	for _, c := range r.CoPartitions {
		fmt.Fprintf(sb, "  %s\n", c)
	}
}

// pipelinedEdges says which input edges of r ran pipelined (hybrid
// shuffle) and how its parallelism was decided without their final
// bytes, edge by edge.
func pipelinedEdges(r *StageRun) string {
	var edges []string
	est := 0
	for _, p := range r.Pipelined {
		for i, q := range r.Stage.Producers {
			if q != p {
				continue
			}
			kind := r.Stage.Inputs[i].Kind
			how := map[shuffle.Kind]string{
				shuffle.Gather:    "one task",
				shuffle.Forward:   "the producer's task count",
				shuffle.Broadcast: "its bytes not counted",
				shuffle.Hash:      "parallelism.default, count-based key-group ranges (adaptive off)",
			}[kind]
			if kind == shuffle.Hash && est < len(r.PipelinedEstimates) {
				how = r.PipelinedEstimates[est] + ", key-group ranges balanced by the committed bytes"
				est++
			}
			edges = append(edges, fmt.Sprintf("Stage %d [%s: %s]", p.ID, kind, how))
			break
		}
	}
	return fmt.Sprintf("started while %s ran, reading each task's output as it committed", strings.Join(edges, ", "))
}

// exchangeRouting describes how an exchange routes rows, with the key
// groups actually used when the run resolved them.
func exchangeRouting(ex *shuffle.Exchange, buf *shuffle.Buffer) string {
	if buf != nil && buf.Forward() {
		return "forward, not shuffled (run-time broadcast switch)"
	}
	switch ex.Kind {
	case shuffle.Hash:
		kg := ex.MaxParallelism
		if buf != nil {
			kg = buf.Subpartitions
		}
		if kg > 0 {
			return fmt.Sprintf("hash [%s] by key group, %d key groups", ex.KeyList(), kg)
		}
		return fmt.Sprintf("hash [%s] by key group, default key groups", ex.KeyList())
	case shuffle.Broadcast:
		return "broadcast"
	case shuffle.Gather:
		return "gather"
	case shuffle.Forward:
		return "forward"
	}
	return ex.Kind.String()
}

func explainNode(sb *strings.Builder, g *JobGraph, n exec.Node, depth int, stats *exec.QueryStats, producer map[*shuffle.Exchange]*Stage) {
	sb.WriteString(strings.Repeat("  ", depth))
	sb.WriteString(n.String())
	ex, isExchange := n.(*shuffle.Exchange)
	if isExchange {
		if p := producer[ex]; p != nil {
			fmt.Fprintf(sb, " <- Stage %d", p.ID)
		}
	}
	if stats != nil {
		st := stats.For(g.NodeID(n))
		fmt.Fprintf(sb, "  [rows=%d batches=%d bytes=%s time=%s", st.Rows.Load(), st.Batches.Load(), policy.FormatBytes(st.Bytes.Load()), fmtDuration(time.Duration(st.Nanos.Load())))
		sc := &st.Scan
		if sc.Active() && !sc.Dynamic() {
			fmt.Fprintf(sb, " bytes_read=%d files=%d", sc.BytesRead.Load(), sc.Files.Load())
			if n := sc.FilesPruned.Load(); n > 0 {
				fmt.Fprintf(sb, " files_pruned=%d", n)
			}
			if sc.Partitioned() {
				fmt.Fprintf(sb, " partitions=%d/%d", sc.PartitionsKept.Load(), sc.PartitionsTotal.Load())
			}
			fmt.Fprintf(sb, " row_groups=%d/%d", sc.RowGroupsKept.Load(), sc.RowGroupsTotal.Load())
		}
		if n := st.Reserved.Load(); n > 0 {
			fmt.Fprintf(sb, " reserved=%s", policy.FormatBytes(n))
		}
		if b, u := st.SharedBuilt.Load(), st.SharedBorrowed.Load(); b+u > 0 {
			fmt.Fprintf(sb, " shared_build=%d built, %d borrowed", b, u)
		}
		if n := st.Agg.PassTasks.Load(); n > 0 {
			fmt.Fprintf(sb, " passed_through=%d rows in %d tasks", st.Agg.PassRows.Load(), n)
		}
		if sp := &st.Spill; sp.Files.Load() > 0 {
			fmt.Fprintf(sb, " spilled=%s spill_rows=%d spill_files=%d spill_passes=%d",
				policy.FormatBytes(sp.Bytes.Load()), sp.Rows.Load(), sp.Files.Load(), sp.Passes.Load())
			if p := sp.Partitioning(); p != "" {
				fmt.Fprintf(sb, " spill_partitioning=%s", p)
			}
		}
		sb.WriteString("]")
		if sc.Active() && sc.Dynamic() {
			sb.WriteString("\n")
			sb.WriteString(strings.Repeat("  ", depth+2))
			sb.WriteString(dynamicLedger(sc))
		}
	}
	sb.WriteString("\n")
	if isExchange {
		return // its child belongs to the producer stage
	}
	for _, c := range n.Children() {
		explainNode(sb, g, c, depth+1, stats, producer)
	}
}

// fmtDuration rounds to a precision a reader can use.
func fmtDuration(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.Round(time.Microsecond).String()
	}
}

// dynamicLedger renders the pruning ledger of a dynamically pruned scan.
func dynamicLedger(sc *exec.ScanStats) string {
	var parts []string
	p := fmt.Sprintf("partitions %d/%d", sc.PartitionsKept.Load(), sc.PartitionsTotal.Load())
	if static := sc.PartitionsStatic.Load(); static != sc.PartitionsTotal.Load() {
		p += fmt.Sprintf(" (%d after static pruning)", static)
	}
	parts = append(parts, p)
	files := sc.Files.Load()
	parts = append(parts, fmt.Sprintf("files %d/%d", files, files+sc.FilesPruned.Load()))
	parts = append(parts, fmt.Sprintf("row groups %d/%d", sc.RowGroupsKept.Load(), sc.RowGroupsTotal.Load()))
	parts = append(parts, fmt.Sprintf("rows %d/%d kept", sc.RowsKept.Load(), sc.RowsRead.Load()))
	parts = append(parts, "bytes "+policy.FormatBytes(sc.BytesRead.Load()))
	parts = append(parts, "filter wait "+fmtDuration(sc.FilterWait()))
	for _, l := range sc.Ledger() {
		name := fmt.Sprintf("collector %d", l.Collector)
		if l.Key != 0 {
			name += fmt.Sprintf(" key %d", l.Key)
		}
		if l.Exact {
			parts = append(parts, fmt.Sprintf("%s keys %d", name, l.Keys))
		} else {
			parts = append(parts, fmt.Sprintf("%s bloom bytes %d", name, l.Bloom))
		}
	}
	return "ledger: " + strings.Join(parts, ", ")
}
