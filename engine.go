package fsql

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/pingcap/tidb/pkg/parser/ast"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/connectors/memtable"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/internal/mempool"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/runtime"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/spill"
	"github.com/fsql-dev/fsql/sql"
)

// Open returns an engine over dir, a folder with one sub-folder per table
// (Parquet files directly inside, or under Hive key=value/ folders).
func Open(dir string, cfg Config) (*Engine, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	mem := memtable.New(dir)
	cat, err := hive.OpenWithMemory(dir, cfg.catalogOptions(), mem)
	if err != nil {
		return nil, errs.Wrap(errs.IO, "%w", err)
	}
	// Leftovers of write statements a crashed process could not finish
	// are removed now. They are invisible to readers either way (hidden
	// folders), so a directory this process may not change still opens.
	_ = hive.SweepStaging(dir)
	if cfg.Spill {
		// Folders a crashed process left behind; never a live one's. A
		// directory that cannot be read is reported when a query first
		// spills there, not here: most queries never spill.
		_, _ = spill.Sweep(spill.ParseDirs(cfg.TmpDirs))
	}
	workers := runtime.NewLocalPool(cfg.TaskManagers, cfg.Slots)
	return &Engine{dir: dir, cfg: cfg, catalog: cat, mem: mem, alloc: queryPool, workers: workers, catalogs: &catalogSet{}, blocklist: runtime.NewBlocklist()}, nil
}

// queryPool allocates the Arrow buffers of every query of every engine
// (unless WithAllocator says otherwise): operators build batch after batch
// of the same shapes, and a released batch's buffers reused from the pool
// cost far less than fresh zeroed memory from the Go allocator and its
// collections. Like the scans' own pool it recycles a buffer once its last
// reference is released, so nothing may read a batch after releasing it.
var queryPool = mempool.New()

// Refresh drops the engine's cached footers and folder listings and reads
// again the footers of every table a query had read, so the next query
// starts warm. Queries do not need it to see added, removed or rewritten
// files: each query checks its tables' folders again (reading a folder
// whose modification time moved) and re-reads the footer of any file
// whose size or modification time changed. Refresh is for a rewrite that
// kept both (a copy that preserves times, or a rewrite within the file
// system's timestamp resolution), or a folder whose time was set back
// after an entry was added or removed. Queries already running keep the files
// they planned with. Cancelling ctx stops the reload (the cache is
// dropped anyway); an error names the first table that could not be read.
func (e *Engine) Refresh(ctx context.Context) error {
	for _, c := range append([]*hive.Catalog{e.catalog}, e.catalogs.all()...) {
		if err := c.Refresh(ctx); err != nil {
			if ctx.Err() != nil {
				return classify(ctx.Err())
			}
			return errs.Wrap(errs.IO, "%w", err)
		}
	}
	return nil
}

// WithAllocator returns a copy of the engine whose queries allocate every
// Arrow buffer from alloc (tests pass a checked allocator to catch leaks).
func (e *Engine) WithAllocator(alloc memory.Allocator) *Engine {
	c := *e
	c.alloc = alloc
	return &c
}

// Config is the engine's configuration.
func (e *Engine) Config() Config { return e.cfg }

// Query parses, plans and starts one SQL statement (SELECT, WITH,
// EXPLAIN [ANALYZE] of one of those, SHOW, DESCRIBE) and returns its rows.
// EXPLAIN returns one string column named "plan". args are the values of
// the statement's ? markers, in order (Go types: see Session.Query).
// Cancelling ctx stops the query; so does Rows.Close.
//
// SET fails here: the engine's settings are the Config given to Open and
// every caller shares them. Run SET through a Session (Engine.Session).
func (e *Engine) Query(ctx context.Context, query string, args ...any) (*Rows, error) {
	rows, err := e.query(ctx, nil, resources{cfg: e.cfg, catalog: e.catalog, workers: e.workers, blocklist: e.blocklist}, query, args)
	return rows, classify(err)
}

// resources are what one statement runs with: the settings, and the
// catalog and workers made from them (the engine's, or a session's own
// when its settings differ from the engine's in those).
type resources struct {
	cfg     Config
	catalog *hive.Catalog
	workers []runtime.Worker
	// blocklist is the workers' blocklist: the engine's for its pool; nil
	// for a pool of a session's own, whose runs each keep their own.
	blocklist *runtime.Blocklist
}

// query runs one statement; sess, when not nil, is the session whose
// settings SET changes.
func (e *Engine) query(ctx context.Context, sess *Session, res resources, query string, args []any) (*Rows, error) {
	stmts, err := parse(ctx, query)
	if err != nil {
		return nil, err
	}
	if len(stmts) != 1 {
		return nil, errs.New(errs.Semantic, "Query runs one statement, got %d; split scripts with SplitStatements", len(stmts))
	}
	cfg := res.cfg
	env := sql.Env{Source: query, Params: args, Variables: cfg.variables()}
	st, root, err := e.plan(ctx, res, stmts[0], env)
	if err != nil {
		return nil, err
	}
	if st.Set != nil {
		if sess == nil {
			return nil, errs.New(errs.Semantic, "SET changes a session's settings, and Engine.Query runs outside any session: run SET through a Session (eng.Session()); the engine's own settings are the Config given to Open")
		}
		if err := sess.apply(st.Set); err != nil {
			return nil, err
		}
		return e.emptyRows(ctx), nil
	}
	if st.Explain && !st.Analyze && st.Write == nil {
		graph, err := runtime.BuildJobGraph(root)
		if err != nil {
			return nil, err
		}
		text := graph.Explain()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return e.textRows(ctx, text), nil
	}
	if st.Write != nil {
		return e.write(ctx, res, st, root)
	}
	if st.Drop != nil {
		return e.drop(ctx, st.Drop)
	}
	if st.CreateMemory != nil {
		return e.createMemory(ctx, st.CreateMemory)
	}
	if st.NoOp {
		return e.affectedRows(ctx, 0), nil
	}
	if st.AddKey != nil {
		if err := e.mem.AddKey(st.AddKey.Table, st.AddKey.Key); err != nil {
			return nil, err
		}
		return e.affectedRows(ctx, 0), nil
	}
	stats := exec.NewQueryStats()
	mem := exec.NewMemoryBudget(cfg.MemoryBudget)
	run, err := runtime.Run(ctx, root, e.runConfig(res, stats, mem))
	if err != nil {
		return nil, err
	}
	if st.Analyze {
		return e.analyzeRows(ctx, run, stats, mem), nil
	}
	schema, next := boolsAsInts(e.alloc, renamed(run.Schema(), st.Names), run.Next)
	next = positiveZeros(e.alloc, schema, next)
	r := &Rows{schema: schema, next: next, close: run.Close, ctx: ctx, run: run, mem: mem}
	r.stats = stats
	r.progress = run.Progress
	return r, nil
}

// runConfig is how the engine runs a statement's plan with res.
func (e *Engine) runConfig(res resources, stats *exec.QueryStats, mem *exec.MemoryBudget) runtime.RunConfig {
	cfg := res.cfg
	return runtime.RunConfig{
		Parallelism:            cfg.Parallelism,
		MaxParallelism:         cfg.KeyGroups(),
		Workers:                res.workers,
		Alloc:                  e.alloc,
		Memory:                 mem,
		Spill:                  spillConfig(cfg),
		Stats:                  stats,
		Adaptive:               adaptiveConfig(cfg),
		DynamicFilterMaxValues: cfg.DynamicFilterMaxValues,
		Speculation:            speculationConfig(cfg),
		Restart:                policy.RestartConfig{Attempts: cfg.RestartAttempts, Delay: cfg.RestartDelay},
		ShuffleMode:            cfg.ShuffleMode,
		Blocklist:              res.blocklist,
		Faults:                 e.faults,
	}
}

// spillConfig is the runtime's part of Config: nil when spilling is off.
func spillConfig(cfg Config) *spill.Config {
	if !cfg.Spill {
		return nil
	}
	return &spill.Config{Dirs: spill.ParseDirs(cfg.TmpDirs), Compression: cfg.SpillCompression}
}

// adaptiveConfig is the scheduler's part of Config.
func adaptiveConfig(cfg Config) policy.AdaptiveConfig {
	return policy.AdaptiveConfig{
		Enabled:            cfg.Adaptive,
		BytesPerTask:       cfg.AdaptiveBytesPerTask,
		MinBytesPerTask:    cfg.AdaptiveMinBytesPerTask,
		MinParallelism:     cfg.AdaptiveMinParallelism,
		MaxParallelism:     cfg.AdaptiveMaxParallelism,
		SkewFactor:         cfg.SkewFactor,
		SkewThreshold:      cfg.SkewThreshold,
		BroadcastThreshold: cfg.BroadcastThreshold,
	}
}

// speculationConfig is the scheduler's speculation part of Config.
func speculationConfig(cfg Config) policy.SpeculationConfig {
	return policy.SpeculationConfig{
		Enabled:       cfg.Speculative,
		MaxConcurrent: cfg.SpeculativeMaxAttempts,
		BlockDuration: cfg.BlockSlowNodeDuration,
		Detector:      cfg.SlowTaskDetector,
	}
}

// renamed gives the result the column names the query wrote.
func renamed(s *arrow.Schema, names []string) *arrow.Schema {
	if len(names) != s.NumFields() {
		return s
	}
	fs := make([]arrow.Field, len(names))
	for i, f := range s.Fields() {
		f.Name = names[i]
		fs[i] = f
	}
	return arrow.NewSchema(fs, nil)
}

// bigStatement is the statement size above which parsing runs beside the
// caller, so a cancelled query returns at once instead of after the parse
// (the TiDB parser takes no context; it reads a few MB of SQL a second).
const bigStatement = 64 << 10

// backgroundParses counts parses still running after their query gave up,
// so tests that check for leaked goroutines can wait for them.
var backgroundParses sync.WaitGroup

// parse parses query, giving up when ctx is done.
func parse(ctx context.Context, query string) ([]ast.StmtNode, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(query) < bigStatement {
		return sql.Parse(query)
	}
	type result struct {
		stmts []ast.StmtNode
		err   error
	}
	done := make(chan result, 1) // the parse may finish after we gave up
	backgroundParses.Add(1)
	go func() {
		defer backgroundParses.Done()
		stmts, err := sql.Parse(query)
		done <- result{stmts, err}
	}()
	select {
	case r := <-done:
		return r.stmts, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// plan binds, optimizes and physically plans one statement with res,
// stopping with ctx's error once ctx is done. A SET statement has no plan
// (root is nil). Planning bugs surface as ErrInternal errors, never as
// panics.
func (e *Engine) plan(ctx context.Context, res resources, stmt ast.StmtNode, env sql.Env) (st *sql.Statement, root exec.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: planner panic: %v\n%s", exec.ErrInternal, r, debug.Stack())
		}
	}()
	// One snapshot of the catalog per query: every table it names is
	// listed and validated once, and all its tasks read those files.
	snap, err := res.catalog.Snapshot()
	if err != nil {
		return nil, nil, errs.Wrap(errs.IO, "%w", err)
	}
	st, err = sql.NewBinder(snap).BindEnv(ctx, stmt, env)
	if err != nil {
		return nil, nil, err
	}
	if st.Plan == nil {
		return st, nil, nil
	}
	disabled, err := disabledRules(res.cfg.DisabledRules)
	if err != nil {
		return nil, nil, err
	}
	lp, err := planner.Optimize(st.Plan, &planner.Context{Ctx: ctx, Disabled: disabled})
	if err != nil {
		return nil, nil, err
	}
	root, err = planner.PhysicalContext(ctx, lp, planner.PhysicalConfig{
		MaxParallelism:     res.cfg.KeyGroups(),
		BroadcastThreshold: res.cfg.BroadcastThreshold,
		DynamicFiltering:   res.cfg.DynamicFiltering,
	})
	if err != nil {
		return nil, nil, err
	}
	if e.planHook != nil {
		if root, err = e.planHook(root, res.catalog); err != nil {
			return nil, nil, err
		}
	}
	return st, root, nil
}

// emptyRows is the result of a statement that returns none (SET): no
// columns, no batches.
func (e *Engine) emptyRows(ctx context.Context) *Rows {
	return &Rows{
		schema: arrow.NewSchema(nil, nil),
		ctx:    ctx,
		next:   func(context.Context) (arrow.RecordBatch, error) { return nil, io.EOF },
	}
}

// textRows returns text as a one-column result, one row per line.
// analyzeRows is the result of EXPLAIN ANALYZE: the first Next runs the
// query to its end, discarding its rows, and returns the plan with what
// each operator did. The query runs while the caller reads, not inside
// Query, so Rows.Progress follows it (the prompt's progress bar) and
// cancelling ctx or closing the rows stops it.
func (e *Engine) analyzeRows(ctx context.Context, run *runtime.Execution, stats *exec.QueryStats, mem *exec.MemoryBudget) *Rows {
	var text *Rows
	r := &Rows{schema: planSchema, ctx: ctx, stats: stats, progress: run.Progress, run: run}
	r.next = func(ctx context.Context) (arrow.RecordBatch, error) {
		if text == nil {
			var rows int64
			for {
				b, err := run.Next(ctx)
				if err == io.EOF {
					break
				}
				if err != nil {
					return nil, err
				}
				rows += b.NumRows()
				b.Release()
			}
			run.Close()
			out := run.Graph().Explain(stats)
			out += fmt.Sprintf("\nresult: %d rows; memory peak %d bytes of a %d-byte budget", rows, mem.Peak(), mem.Limit())
			if sp := run.Spill(); sp.Files > 0 {
				out += fmt.Sprintf("; spilled %d bytes in %d files (%d rows)", sp.Bytes, sp.Files, sp.Rows)
			}
			text = e.textRows(ctx, out+"\n")
		}
		return text.next(ctx)
	}
	r.close = func() {
		run.Close()
		if text != nil {
			text.close()
		}
	}
	return r
}

// planSchema is the one column of EXPLAIN's result.
var planSchema = arrow.NewSchema([]arrow.Field{{Name: "plan", Type: arrow.BinaryTypes.String}}, nil)

func (e *Engine) textRows(ctx context.Context, text string) *Rows {
	schema := planSchema
	bld := array.NewStringBuilder(e.alloc)
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		bld.Append(line)
	}
	arr := bld.NewArray()
	bld.Release()
	batch := array.NewRecordBatch(schema, []arrow.Array{arr}, int64(arr.Len()))
	arr.Release()
	sent := false
	return &Rows{
		schema: schema,
		ctx:    ctx,
		next: func(context.Context) (arrow.RecordBatch, error) {
			if sent {
				return nil, io.EOF
			}
			sent = true
			batch.Retain()
			return batch, nil
		},
		close: func() { batch.Release() },
	}
}

// SplitStatements splits a script into its ';'-separated statements,
// honouring quotes and comments.
func SplitStatements(script string) ([]string, error) {
	return sql.Split(script)
}
