package runtime

import (
	"fmt"
	"strings"
	"time"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// Explain renders the plan as an indented tree per stage, the result stage
// first and producers after their consumers. With graph == nil the plan
// is cut here (EXPLAIN without running). With stats (EXPLAIN ANALYZE,
// after the run) every operator shows its rows, batches, bytes, time and
// notes, and every stage its tasks, time and output. The output is
// deterministic for the same plan and counters.
func Explain(root exec.Node, stats *exec.QueryStats, graph *JobGraph) string {
	if graph == nil {
		g, err := BuildJobGraph(root)
		if err != nil {
			return fmt.Sprintf("cannot cut the plan into stages: %v\n", err)
		}
		graph = g
	}
	producer := map[*shuffle.Exchange]*Stage{}
	for _, st := range graph.Stages {
		if st.Output != nil {
			producer[st.Output] = st
		}
	}
	var sb strings.Builder
	for i := len(graph.Stages) - 1; i >= 0; i-- {
		st := graph.Stages[i]
		explainStageHeader(&sb, st, producer, stats != nil)
		explainNode(&sb, graph, st.Root, 1, stats, producer)
	}
	return sb.String()
}

func explainStageHeader(sb *strings.Builder, st *Stage, producer map[*shuffle.Exchange]*Stage, analyze bool) {
	fmt.Fprintf(sb, "Stage %d", st.ID)
	if st.Parallelism > 0 {
		fmt.Fprintf(sb, " (parallelism %d)", st.Parallelism)
	} else {
		sb.WriteString(" (parallelism decided at run time)")
	}
	if st.Output == nil {
		sb.WriteString(" -> result")
	} else {
		fmt.Fprintf(sb, " -> %s", exchangeRouting(st.Output, st.OutBuffer))
	}
	if len(st.Inputs) > 0 {
		reads := make([]string, len(st.Inputs))
		for i, ex := range st.Inputs {
			p := producer[ex]
			reads[i] = fmt.Sprintf("Stage %d [%s]", p.ID, exchangeRouting(ex, p.OutBuffer))
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
	if analyze {
		fmt.Fprintf(sb, "  tasks=%d time=%s rows=%d bytes=%s", len(st.Tasks), fmtDuration(st.Duration()), st.Rows(), policy.FormatBytes(st.Bytes()))
		if b := st.OutBuffer; b != nil && b.Subpartitions > 1 {
			var maxKG int64
			for _, n := range b.SubpartitionBytes() {
				maxKG = max(maxKG, n)
			}
			fmt.Fprintf(sb, " shuffled=%s largest-key-group=%s", policy.FormatBytes(b.TotalBytes()), policy.FormatBytes(maxKG))
		}
		if len(st.Tasks) > 1 {
			var slow time.Duration
			for _, t := range st.Tasks {
				for _, a := range t.Attempts {
					if !a.Start.IsZero() && !a.End.IsZero() {
						slow = max(slow, a.End.Sub(a.Start))
					}
				}
			}
			fmt.Fprintf(sb, " slowest-task=%s", fmtDuration(slow))
		}
		sb.WriteString("\n")
		explainAdaptive(sb, st)
	}
}

// explainAdaptive prints the scheduler's run-time decisions for a stage:
// its parallelism and why, the bytes each task read, split key groups and
// a switched join.
func explainAdaptive(sb *strings.Builder, st *Stage) {
	if st.Decision != nil {
		fmt.Fprintf(sb, "  decided: %s\n", st.Decision)
	}
	if len(st.TaskBytes) > 0 {
		lo, med, hi := policy.Spread(st.TaskBytes)
		what := "key-group ranges: %d tasks balanced by bytes"
		if st.Switch != "" {
			what = "inputs: %d tasks, each its probe task's output and the whole build side"
		}
		fmt.Fprintf(sb, "  "+what+", bytes per task min=%s median=%s max=%s\n", len(st.TaskBytes), policy.FormatBytes(lo), policy.FormatBytes(med), policy.FormatBytes(hi))
	}
	for _, sp := range st.SkewSplits {
		fmt.Fprintf(sb, "  skew: %s\n", sp)
	}
	if st.Switch != "" {
		fmt.Fprintf(sb, "  %s\n", st.Switch)
	}
}

// exchangeRouting describes how an exchange routes rows, with the key
// groups actually used when the run resolved them.
func exchangeRouting(ex *shuffle.Exchange, buf *shuffle.Buffer) string {
	if buf != nil && buf.Forward() {
		return "forward, not shuffled (run-time broadcast switch)"
	}
	switch ex.Kind {
	case shuffle.Hash:
		keys := make([]string, len(ex.Keys))
		for i, k := range ex.Keys {
			keys[i] = k.String()
		}
		kg := ex.MaxParallelism
		if buf != nil {
			kg = buf.Subpartitions
		}
		if kg > 0 {
			return fmt.Sprintf("hash [%s] by key group, %d key groups", strings.Join(keys, ", "), kg)
		}
		return fmt.Sprintf("hash [%s] by key group, default key groups", strings.Join(keys, ", "))
	case shuffle.Broadcast:
		return "broadcast"
	case shuffle.Gather:
		return "gather"
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
