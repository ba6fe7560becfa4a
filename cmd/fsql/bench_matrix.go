package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/fsql-dev/fsql"
)

// multiStageQueries are the TPC-DS statements of many stages (CTEs read
// several times, several fact tables): the set the hybrid shuffle's
// target is stated over.
var multiStageQueries = []string{"4", "11", "23a", "23b", "64", "74", "78"}

// benchCell is one configuration of a matrix run: a shuffle mode and a
// slot count, with its own engine, and per query its times and the peak
// memory its runs reserved.
type benchCell struct {
	mode  string // Flink's name, "" when --modes was not given
	slots int    // 0 when --slots was not given
	eng   *fsql.Engine
	times map[string][]time.Duration
	peak  map[string]int64
	err   map[string]error
}

// label is the cell's column heading.
func (c *benchCell) label() string {
	var parts []string
	switch {
	case c.slots == 1:
		parts = append(parts, "1 slot")
	case c.slots > 1:
		parts = append(parts, fmt.Sprintf("%d slots", c.slots))
	}
	if c.mode != "" {
		parts = append(parts, shortMode(c.mode))
	}
	return strings.Join(parts, " ")
}

// shortModes maps the short names --modes takes to Flink's.
var shortModes = map[string]string{
	"blocking":         "ALL_EXCHANGES_BLOCKING",
	"hybrid-full":      "ALL_EXCHANGES_HYBRID_FULL",
	"hybrid-selective": "ALL_EXCHANGES_HYBRID_SELECTIVE",
}

func shortMode(flink string) string {
	for s, f := range shortModes {
		if f == flink {
			return s
		}
	}
	return flink
}

// parseModes reads --modes: short names or Flink's, comma-separated.
func parseModes(list string) ([]string, error) {
	var out []string
	for _, m := range strings.Split(list, ",") {
		m = strings.TrimSpace(m)
		if m == "" {
			continue
		}
		if f, ok := shortModes[strings.ToLower(m)]; ok {
			m = f
		}
		m = strings.ToUpper(m)
		if shortMode(m) == m {
			return nil, fmt.Errorf("--modes: unknown shuffle mode %q (want blocking, hybrid-full, hybrid-selective or Flink's ALL_EXCHANGES_* names)", m)
		}
		out = append(out, m)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--modes lists no mode")
	}
	return out, nil
}

// parseSlots reads --slots: positive slot counts, comma-separated.
func parseSlots(list string) ([]int, error) {
	var out []int
	for _, s := range strings.Split(list, ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--slots: want positive slot counts, got %q", s)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--slots lists no slot count")
	}
	return out, nil
}

// newCells makes one cell per slot count and mode (slots outer), each
// with an engine over dir opened with cfg plus its two settings.
func newCells(dir string, cfg fsql.Config, modes []string, slots []int) ([]*benchCell, error) {
	if len(modes) == 0 {
		modes = []string{""}
	}
	if len(slots) == 0 {
		slots = []int{0}
	}
	var cells []*benchCell
	for _, n := range slots {
		for _, m := range modes {
			c := cfg
			if m != "" {
				if err := c.Set("execution.batch-shuffle-mode", m); err != nil {
					return nil, err
				}
			}
			if n > 0 {
				if err := c.Set("taskmanager.numberOfTaskSlots", strconv.Itoa(n)); err != nil {
					return nil, err
				}
			}
			eng, err := fsql.Open(dir, c)
			if err != nil {
				return nil, err
			}
			cells = append(cells, &benchCell{mode: m, slots: n, eng: eng,
				times: map[string][]time.Duration{}, peak: map[string]int64{}, err: map[string]error{}})
		}
	}
	return cells, nil
}

// runMatrix runs every query once per cell per round, `runs` rounds: in
// round r the cells take turns in an order rotated by r, and each runs
// the whole query list in its turn, so drifts of the machine's load
// spread over the cells evenly.
func runMatrix(ctx context.Context, cells []*benchCell, qs []*benchQuery, runs int, stderr io.Writer) error {
	for r := 0; r < runs; r++ {
		for k := range cells {
			c := cells[(k+r)%len(cells)]
			fmt.Fprintf(stderr, "fsql: round %d of %d, %s\n", r+1, runs, c.label())
			for _, q := range qs {
				if c.err[q.name] != nil {
					continue
				}
				start := time.Now()
				rows, err := c.eng.Query(ctx, q.text)
				if err == nil {
					for rows.Next() {
					}
					rows.Close()
					err = rows.Err()
				}
				if err != nil {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					c.err[q.name] = err
					fmt.Fprintf(stderr, "fsql: %s, %s: %s\n", c.label(), q.name, message(err))
					continue
				}
				c.times[q.name] = append(c.times[q.name], time.Since(start))
				c.peak[q.name] = max(c.peak[q.name], rows.MemoryPeak())
			}
		}
	}
	return nil
}

// benchSet is a named list of queries whose medians are summed.
type benchSet struct {
	name    string
	queries []string // q-names
}

// matrixSets are the sets a matrix run totals: every query run, and the
// 20-query set and the multi-stage set when all their queries ran.
func matrixSets(qs []*benchQuery) []benchSet {
	ran := map[string]bool{}
	all := benchSet{name: fmt.Sprintf("all %d", len(qs))}
	for _, q := range qs {
		ran[q.name] = true
		all.queries = append(all.queries, q.name)
	}
	sets := []benchSet{all}
	for _, s := range []struct {
		name string
		qs   []string
	}{{"20-query set", defaultBenchQueries}, {"multi-stage set", multiStageQueries}} {
		set := benchSet{name: s.name}
		for _, n := range s.qs {
			set.queries = append(set.queries, "q"+n)
		}
		complete := len(set.queries) < len(qs)
		for _, n := range set.queries {
			complete = complete && ran[n]
		}
		if complete {
			sets = append(sets, set)
		}
	}
	return sets
}

// printMatrix prints, per cell, the summed medians of each set (and
// their ratio to the blocking cell of the same slot count, when there is
// one) and the highest memory peak of its queries; then every query's
// median per cell.
func printMatrix(out io.Writer, cells []*benchCell, qs []*benchQuery) error {
	sets := matrixSets(qs)
	total := func(c *benchCell, s benchSet) (time.Duration, bool) {
		var sum time.Duration
		for _, n := range s.queries {
			if c.err[n] != nil || len(c.times[n]) == 0 {
				return 0, false
			}
			sum += median(c.times[n])
		}
		return sum, true
	}
	blocking := func(c *benchCell) *benchCell {
		for _, b := range cells {
			if b.slots == c.slots && b.mode == shortModes["blocking"] {
				return b
			}
		}
		return nil
	}
	head := []string{"configuration"}
	for _, s := range sets {
		head = append(head, s.name+" (s)")
		if cells[0].mode != "" {
			head = append(head, "vs blocking")
		}
	}
	head = append(head, "peak reserved (MiB)")
	lines := [][]string{head}
	failed := 0
	for _, c := range cells {
		l := []string{c.label()}
		for _, s := range sets {
			t, ok := total(c, s)
			cell, ratio := "failed", "-"
			if ok {
				cell = fmt.Sprintf("%.2f", t.Seconds())
				if b := blocking(c); b != nil {
					if bt, ok := total(b, s); ok && bt > 0 {
						ratio = fmt.Sprintf("%.2fx", float64(t)/float64(bt))
					}
				}
			}
			l = append(l, cell)
			if c.mode != "" {
				l = append(l, ratio)
			}
		}
		var peak int64
		for _, p := range c.peak {
			peak = max(peak, p)
		}
		l = append(l, fmt.Sprintf("%.0f", float64(peak)/(1<<20)))
		lines = append(lines, l)
		failed += len(c.err)
	}
	var b strings.Builder
	writeTable(&b, lines)
	b.WriteByte('\n')
	per := [][]string{append([]string{"query (median ms)"}, labels(cells)...)}
	for _, q := range qs {
		l := []string{q.name}
		for _, c := range cells {
			if c.err[q.name] != nil || len(c.times[q.name]) == 0 {
				l = append(l, "failed")
				continue
			}
			l = append(l, fmt.Sprintf("%.1f", ms(median(c.times[q.name]))))
		}
		per = append(per, l)
	}
	writeTable(&b, per)
	if _, err := io.WriteString(out, b.String()); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d query runs failed (their sets show as failed)", failed)
	}
	return nil
}

func labels(cells []*benchCell) []string {
	out := make([]string, len(cells))
	for i, c := range cells {
		out[i] = c.label()
	}
	return out
}

// writeTable writes lines as columns: the first left-aligned, the others
// right-aligned.
func writeTable(b *strings.Builder, lines [][]string) {
	width := []int{}
	for _, l := range lines {
		for i, c := range l {
			if i == len(width) {
				width = append(width, 0)
			}
			width[i] = max(width[i], len(c))
		}
	}
	for _, l := range lines {
		fmt.Fprintf(b, "%-*s", width[0], l[0])
		for i := 1; i < len(l); i++ {
			fmt.Fprintf(b, "  %*s", width[i], l[i])
		}
		b.WriteByte('\n')
	}
}
