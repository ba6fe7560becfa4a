package tpcds

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"
)

// Options configures Generate.
type Options struct {
	Scale        float64   // scale factor, >= 0.01
	Out          string    // destination folder (one sub-folder per table)
	Partitioned  bool      // fact tables Hive-partitioned on their date key
	RowGroupRows int       // rows per row group (default 122880)
	Seed         uint64    // random seed
	Workers      int       // parallel files (default GOMAXPROCS)
	Progress     io.Writer // per-table progress lines; may be nil
}

// ErrInvalidOptions reports unusable options.
var ErrInvalidOptions = errors.New("tpcds: invalid options")

// TableNames lists the 24 TPC-DS tables.
func TableNames() []string {
	n := append([]string(nil), stats().order...)
	sort.Strings(n)
	return n
}

// task writes one file.
type task struct {
	table string
	path  string // relative to the output folder
	key   uint64 // chunk number, seeds the file's stream (facts reseed per partition)
	skip  int
	run   func(s *sink) error
}

const hiveNull = "__HIVE_DEFAULT_PARTITION__"

// Generate writes the data set into o.Out. It writes into a temporary
// folder next to o.Out and renames it at the end, so an interrupted run
// leaves no partial data set.
func Generate(ctx context.Context, o Options) error { return generate(ctx, o, subset{}) }

// subset restricts generate to part of a data set; tests use it to stay
// fast (file-system work per partition dominates at small scales).
type subset struct {
	tables   map[string]bool // nil: all tables
	from, to int64           // fact partitions kept: value in [from, to] or NULL; to = 0: all
}

func (b subset) keepPart(val int64) bool {
	return b.to == 0 || val < 0 || val >= b.from && val <= b.to
}

// generate is Generate restricted to a subset.
func generate(ctx context.Context, o Options, only subset) error {
	if o.Scale < 0.01 {
		return fmt.Errorf("%w: scale %g is below 0.01", ErrInvalidOptions, o.Scale)
	}
	if o.Out == "" {
		return fmt.Errorf("%w: no output folder", ErrInvalidOptions)
	}
	if o.RowGroupRows <= 0 {
		o.RowGroupRows = 122880
	}
	if o.Workers <= 0 {
		o.Workers = runtime.GOMAXPROCS(0)
	}
	if ents, err := os.ReadDir(o.Out); err == nil && len(ents) > 0 {
		return fmt.Errorf("%w: output folder %s exists and is not empty", ErrInvalidOptions, o.Out)
	}
	parent := filepath.Dir(filepath.Clean(o.Out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("tpcds: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(o.Out)+".tmp-")
	if err != nil {
		return fmt.Errorf("tpcds: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			_ = os.RemoveAll(tmp)
		}
	}()
	w := newWorld(o.Scale, o.Seed)
	tasks := w.tasks(o, only)
	if only.tables != nil {
		kept := tasks[:0]
		for _, t := range tasks {
			if only.tables[t.table] {
				kept = append(kept, t)
			}
		}
		tasks = kept
	}
	if err := runTasks(ctx, w, tmp, tasks, o); err != nil {
		return err
	}
	_ = os.Remove(o.Out) // an empty existing folder
	if err := os.Rename(tmp, o.Out); err != nil {
		return fmt.Errorf("tpcds: %w", err)
	}
	ok = true
	return nil
}

func (w *world) tasks(o Options, only subset) []task {
	var ts []task
	dim := func(name string, run func(s *sink) error) {
		ts = append(ts, task{table: name, path: filepath.Join(name, "part-0.parquet"), skip: -1, run: run})
	}
	// The largest dimensions first so they overlap with the fact tables.
	dim("customer_demographics", w.genCDemo)
	dim("customer", w.genCustomer)
	dim("date_dim", w.genDate)
	dim("time_dim", w.genTime)
	dim("customer_address", w.genAddress)
	dim("item", w.genItem)
	dim("household_demographics", w.genHDemo)
	dim("income_band", w.genIncomeBand)
	for _, name := range []string{"store", "call_center", "warehouse", "web_site", "web_page", "reason", "ship_mode", "promotion", "catalog_page"} {
		name := name
		dim(name, func(s *sink) error {
			return w.genericDim(s, w.rows(name), func(col string, i int64) bool {
				if col == "p_item_sk" {
					s.i(w.pick(s.r, w.nItem))
					return true
				}
				return false
			})
		})
	}
	// Fact partitions: a list of (partition value, writer) per table.
	type part struct {
		val int64 // -1 = NULL
		run func(s *sink) error
	}
	facts := map[string][]part{}
	order := []string{"inventory", "store_sales", "catalog_sales", "web_sales", "store_returns", "catalog_returns", "web_returns"}
	for _, wk := range inventoryWeeks() {
		wk := wk
		facts["inventory"] = append(facts["inventory"], part{wk, func(s *sink) error { return w.inventoryPart(wk, s) }})
	}
	for _, cn := range []string{"store", "catalog", "web"} {
		c := w.ch[cn]
		for d := 0; d <= salesDays; d++ {
			if c.tickets[d] == 0 {
				continue
			}
			d := d
			facts[c.sales] = append(facts[c.sales], part{dateOf(d), func(s *sink) error { return w.salesPart(c, d, s) }})
		}
		for r := int64(salesFirstSK + 1); r <= salesLastSK+int64(c.maxLag); r++ {
			r := r
			facts[c.returns] = append(facts[c.returns], part{r, func(s *sink) error { return w.returnsPart(c, r, s) }})
		}
		facts[c.returns] = append(facts[c.returns], part{-1, func(s *sink) error { return w.returnsPart(c, -1, s) }})
	}
	for _, name := range order {
		t := w.tabs[name]
		var parts []part
		for _, p := range facts[name] {
			if only.keepPart(p.val) {
				parts = append(parts, p)
			}
		}
		// Each partition draws from its own stream seeded by (seed, table,
		// partition value), not the file's: the rows are then the same
		// whether a partition is a file of its own or a slice of a flat file.
		for i := range parts {
			p := &parts[i]
			run, key := p.run, uint64(p.val+1)
			tk := hashString(name)
			p.run = func(s *sink) error {
				s.r = newRNG(w.seed, tk, 1, key)
				return run(s)
			}
		}
		pk := t.cols[t.partKey].name
		if o.Partitioned {
			for i, p := range parts {
				dir := pk + "=" + strconv.FormatInt(p.val, 10)
				if p.val < 0 {
					dir = pk + "=" + hiveNull
				}
				ts = append(ts, task{table: name, path: filepath.Join(name, dir, "part-0.parquet"), key: uint64(i + 1), skip: t.partKey, run: p.run})
			}
			continue
		}
		// Unpartitioned: a few files, each a contiguous date range (NULLs last).
		nf := int(w.scale*4 + 0.5)
		if nf < 1 {
			nf = 1
		}
		if nf > 64 {
			nf = 64
		}
		for f := 0; f < nf; f++ {
			lo, hi := len(parts)*f/nf, len(parts)*(f+1)/nf
			sub := parts[lo:hi]
			ts = append(ts, task{table: name, path: filepath.Join(name, "part-"+strconv.Itoa(f)+".parquet"), key: uint64(f + 1), skip: -1,
				run: func(s *sink) error {
					for _, p := range sub {
						if err := p.run(s); err != nil {
							return err
						}
					}
					return nil
				}})
		}
	}
	return ts
}

func runTasks(ctx context.Context, w *world, dir string, ts []task, o Options) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	remaining := map[string]int{}
	rowsDone := map[string]int64{}
	for _, t := range ts {
		remaining[t.table]++
	}
	start := time.Now()
	var mu sync.Mutex
	var firstErr error
	next := 0
	var wg sync.WaitGroup
	for k := 0; k < o.Workers; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if firstErr != nil || next >= len(ts) || ctx.Err() != nil {
					if firstErr == nil && ctx.Err() != nil {
						firstErr = fmt.Errorf("tpcds: %w", ctx.Err())
					}
					mu.Unlock()
					return
				}
				t := ts[next]
				next++
				mu.Unlock()
				n, err := runTask(w, dir, t, o)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
					cancel()
				}
				rowsDone[t.table] += n
				remaining[t.table]--
				if remaining[t.table] == 0 && o.Progress != nil && err == nil {
					fmt.Fprintf(o.Progress, "tpcds: %-22s %10d rows  (%.1fs)\n", t.table, rowsDone[t.table], time.Since(start).Seconds())
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return firstErr
}

func runTask(w *world, dir string, t task, o Options) (int64, error) {
	path := filepath.Join(dir, t.path)
	rg := 0
	if t.skip < 0 {
		rg = o.RowGroupRows
	}
	s, err := newSink(path, w.tabs[t.table], t.skip, newRNG(w.seed, hashString(t.table), t.key), rg)
	if err != nil {
		return 0, err
	}
	if err := t.run(s); err != nil {
		s.abort()
		return 0, err
	}
	if err := s.close(); err != nil {
		return 0, fmt.Errorf("tpcds: %s: %w", t.path, err)
	}
	return s.nrows, nil
}
