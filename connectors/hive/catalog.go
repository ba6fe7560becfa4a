package hive

import (
	"context"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
)

// Sentinel errors, each of a kind of package errs, so callers tell "we
// cannot read this kind of file" from "this file is broken" without
// parsing messages, and wrapping them keeps their kind and MySQL number.
var (
	// ErrUnsupported marks Parquet features fsql does not read (nested
	// columns, INTERVAL, encrypted footers, a nanosecond value finer than
	// a microsecond, ...).
	ErrUnsupported = errs.New(errs.Unsupported, "Parquet feature")
	// ErrCorrupt marks files that cannot be parsed, and columns whose
	// files disagree on a type fsql does not widen.
	ErrCorrupt = errs.New(errs.ErNotFormFile, "bad parquet data")
	// ErrNoTable is returned by Catalog.Table for an unknown name.
	ErrNoTable = errs.New(errs.ErNoSuchTable, "no such table")
	// ErrNotParquet marks a data file that is not Parquet at all (no PAR1
	// magic). Messages name the file and never quote its bytes.
	ErrNotParquet = errs.New(errs.ErNotFormFile, "not a parquet file")
	// ErrChanged marks a data file whose size or modification time is not
	// what the query was planned with: it was rewritten, truncated or
	// replaced while the query ran. Running the query again reads the new
	// version (errs.Retryable).
	ErrChanged = errs.New(errs.ErTableDefChanged, "data file changed during the query")
)

// DefaultPartitionName is the folder value Hive writes for a NULL partition key.
const DefaultPartitionName = "__HIVE_DEFAULT_PARTITION__"

// Catalog is one view of a data directory: each sub-folder is a table.
// A table is listed and its footers read at its first lookup, and the view
// keeps it: every later lookup of the name returns the same *Table, so
// everything planned against one view reads the same files with the same
// footers. A long-lived user takes a fresh view per query (Snapshot); the
// views of one directory share a cache of footers, each entry valid only
// while its file keeps the size and modification time it had when the
// footer was read (see doc.go, "Freshness").
type Catalog struct {
	Dir     string
	opts    Options
	root    string            // Dir with every symlink resolved: followed links must stay under it
	footers *footerCache      // shared by every view of Dir
	names   []string          // table names as spelled on disk, sorted
	entries map[string]*entry // by lower-cased name
	memSrc  MemorySource      // the in-memory tables' keeper, nil when none
	mem     map[string]*Table // in-memory tables by lower-cased name, as of this view

	pathMu sync.Mutex
	paths  map[string]*entry // path tables by the path as written (see PathTable)
}

// Options are a catalog's settings, fixed when it is opened and kept by
// its snapshots.
type Options struct {
	// OutsideDataDir lets path tables (PathTable) name files outside the
	// data directory: absolute paths, paths through "..", and symlinks
	// that lead out. Off (the default), a path table stays inside the
	// data directory, so a library embedding fsql for others does not
	// open every file the process may read.
	OutsideDataDir bool
	// TruncateNanos reads Parquet nanosecond TIMESTAMP and TIME values
	// (and INT96) with their sub-microsecond digits dropped. Off (the
	// default), a value with a sub-microsecond part fails the query:
	// fsql's DATETIME, TIMESTAMP and TIME hold microseconds, as MySQL's
	// do, and dropping digits silently would change the data.
	TruncateNanos bool
	// CSV says how CSV files are read.
	CSV CSVOptions
}

// DefaultOptions are the settings Open uses.
func DefaultOptions() Options { return Options{CSV: DefaultCSVOptions()} }

type entry struct {
	name, dir string
	err       error // set when the folder cannot be a table (a bad symlink)
	once      sync.Once
	table     *Table
}

// Open lists the tables of the data directory dir. Listing reads one
// directory; no table folder or file is touched until a table is looked up.
func Open(dir string) (*Catalog, error) {
	return OpenWith(dir, DefaultOptions())
}

// OpenWith is Open with settings.
func OpenWith(dir string, opts Options) (*Catalog, error) {
	if err := opts.CSV.check(); err != nil {
		return nil, err
	}
	return open(dir, opts, newFooterCache(), nil)
}

// OpenWithMemory is OpenWith whose views also list the in-memory tables
// of mem (see MemorySource).
func OpenWithMemory(dir string, opts Options, mem MemorySource) (*Catalog, error) {
	if err := opts.CSV.check(); err != nil {
		return nil, err
	}
	return open(dir, opts, newFooterCache(), mem)
}

// Snapshot returns a new view of the catalog's directory for one query:
// it lists the tables again, and lists each table's folders again at its
// first lookup, reusing the cached footers of files whose size and
// modification time have not changed. The view's tables never change
// after that lookup; a file that changes on disk while a query reads it
// fails the query (ErrChanged).
func (c *Catalog) Snapshot() (*Catalog, error) {
	return open(c.Dir, c.opts, c.footers, c.memSrc)
}

// Refresh forgets every cached footer, then reads again, through a new
// view, the footers of every table that had cached ones, so the next
// query finds them warm. Queries never need it to see added, removed or
// rewritten files (each view lists again and checks every file's size
// and modification time); it is for a rewrite that kept both (a copy that
// preserves times, a rewrite within the file system's timestamp
// resolution). Views taken before keep their tables. Cancelling ctx stops
// the reload; the cache is dropped either way. The error names the first
// table that could not be read again.
func (c *Catalog) Refresh(ctx context.Context) error {
	had := c.footers.clear()
	snap, err := c.Snapshot()
	if err != nil {
		return err
	}
	for _, name := range snap.names {
		e := snap.entries[strings.ToLower(name)]
		if !had[e.dir] || e.err != nil {
			continue
		}
		if _, err := snap.loadTable(ctx, e.name, e.dir); err != nil {
			return fmt.Errorf("refreshing table %s: %w", e.name, err)
		}
	}
	return nil
}

func open(dir string, opts Options, footers *footerCache, memSrc MemorySource) (*Catalog, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err == nil {
		root, err = filepath.Abs(root)
	}
	if err != nil {
		return nil, errs.Wrap(errs.IO, "opening data directory %s: %w", dir, err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, errs.Wrap(errs.IO, "opening data directory %s: %w", dir, err)
	}
	c := &Catalog{Dir: dir, opts: opts, root: root, footers: footers, memSrc: memSrc, entries: map[string]*entry{}, paths: map[string]*entry{}}
	for _, e := range ents {
		if skipped(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		var linkErr error
		switch {
		case e.IsDir():
		case e.Type()&fs.ModeSymlink != 0:
			// A link to a folder is a table; its target is checked when
			// the table is looked up, so one bad link does not make the
			// other tables unreadable. Links to files are ignored like
			// files (the data directory holds only table folders).
			st, err := os.Stat(path)
			if err == nil && !st.IsDir() {
				continue
			}
			if err != nil {
				linkErr = fmt.Errorf("%w: table folder %s is a symlink that cannot be followed: %w", ErrCorrupt, path, err)
			}
		default:
			continue
		}
		key := strings.ToLower(e.Name())
		if prev, ok := c.entries[key]; ok {
			return nil, fmt.Errorf("%w: data directory %s has two folders named %s and %s; table names are case-insensitive",
				ErrCorrupt, dir, prev.name, e.Name())
		}
		c.entries[key] = &entry{name: e.Name(), dir: path, err: linkErr}
		c.names = append(c.names, e.Name())
	}
	if memSrc != nil {
		c.mem = memSrc.MemoryTables()
		for key, t := range c.mem {
			if _, clash := c.entries[key]; !clash {
				c.names = append(c.names, t.Name)
			}
		}
	}
	sort.Strings(c.names)
	return c, nil
}

// Has reports whether the data directory has a folder called name
// (case-insensitive), table or not, or the view an in-memory table of
// that name.
func (c *Catalog) Has(name string) bool {
	_, ok := c.entries[strings.ToLower(name)]
	return ok || c.IsMemory(name)
}

// Folder is the folder of the data directory called name
// (case-insensitive), as spelled on disk.
func (c *Catalog) Folder(name string) (string, bool) {
	e, ok := c.entries[strings.ToLower(name)]
	if !ok {
		return "", false
	}
	return e.dir, true
}

// TableNames returns the table names as spelled on disk, sorted.
func (c *Catalog) TableNames() []string { return append([]string(nil), c.names...) }

// Table returns the table called name (case-insensitive), listing its
// folders and reading (or revalidating) its footers on the first call to
// this view. Safe for concurrent use; every call returns the same *Table.
func (c *Catalog) Table(name string) (*Table, error) {
	e, ok := c.entries[strings.ToLower(name)]
	if t := c.mem[strings.ToLower(name)]; t != nil {
		if ok {
			return nil, errs.New(errs.ErNonUniqTable, "table '%s' is both a table held in memory and the folder %s of the data directory; drop the in-memory table (DROP TABLE %s) or rename the folder", name, e.dir, t.Name)
		}
		return t, nil
	}
	if !ok {
		known := "none"
		if len(c.names) > 0 {
			known = strings.Join(c.names, ", ")
		}
		return nil, fmt.Errorf("%w: table %q is not a folder of data directory %s (tables: %s)", ErrNoTable, name, c.Dir, known)
	}
	e.once.Do(func() {
		if e.err == nil {
			e.table, e.err = c.loadTable(context.Background(), e.name, e.dir)
		}
	})
	return e.table, e.err
}

// Table is one Hive table: its schema, partitions, files and row-group
// statistics, all read from footers. It is immutable once loaded.
type Table struct {
	// Name is the table's name: a folder of the data directory, or the
	// path as the query wrote it (PathTable).
	Name string
	// Dir is the table folder (for a path table: the folder of a single
	// file, or the glob's fixed part).
	Dir string
	// Format is the format of every data file of the table.
	Format Format
	// Schema lists the file columns (the union of the files' columns, see
	// evolution.go), then the partition columns in folder-nesting order.
	// Every field is nullable.
	Schema           *arrow.Schema
	NumFileColumns   int
	PartitionColumns []string
	// Partitions are sorted by folder. A table without partition folders
	// has a single Partition with nil Values.
	Partitions []*Partition

	// Managed says fsql created the table: its marker declares the
	// schema and its manifest lists the files (manifest.go), so fsql may
	// write it.
	Managed bool
	// Source is what made a table that is no folder: for an in-memory
	// table (Format Memory) the package that keeps it puts its column
	// definitions here, for the binder of INSERT. nil for folders.
	Source any

	columns []tableColumn // per file column: name, type, and the error reading it gives
	opts    Options
	// bounds are DistinctBound's answers by column, computed when the
	// table is assembled (nil for a table made otherwise).
	bounds []distinctBound
}

// Format is the format of a table's data files.
type Format int

const (
	// Parquet files, known by content (PAR1 at both ends).
	Parquet Format = iota
	// CSV files, known by name (*.csv, *.csv.gz).
	CSV
	// Memory: an in-memory table, whose files are Arrow batches
	// (memory.go).
	Memory
)

func (f Format) String() string {
	switch f {
	case CSV:
		return "CSV"
	case Memory:
		return "Memory"
	}
	return "Parquet"
}

// ColumnError returns the error a query reading file column i gets: its
// files disagree on its type, or fsql cannot read it (a nested column).
// nil when the column reads fine, and for partition columns.
func (t *Table) ColumnError(i int) error {
	if i < 0 || i >= len(t.columns) {
		return nil
	}
	return t.columns[i].err
}

// Partition is one leaf partition folder.
type Partition struct {
	// Values holds one value per partition column, typed as the column:
	// int32, int64, string or arrow.Date32; nil for NULL.
	Values []any
	Dir    string
	Files  []*File
}

// File is one data file with its footer statistics, as of one version of
// the file: Size and ModTime are what the file had when the footer was
// read, and a reader fails (ErrChanged) when they differ. A CSV file has
// one row group, no statistics, and an estimated NumRows (from the rows
// and bytes its type detection sampled).
type File struct {
	Path      string
	Size      int64
	ModTime   time.Time
	NumRows   int64
	RowGroups []RowGroup

	stamp fileStamp    // Size and ModTime, compared on every open
	cols  []columnInfo // the file's own top-level columns, in its order
	// chunks locates every column chunk: row group g's leaf l is
	// chunks[g*leaves+l]. footer identifies the footer they came from.
	chunks []chunkLoc
	footer footerSum
	// index maps the table's file columns to the file's (-1: the file
	// lacks it); nil when they are the same. Set on the copy one table
	// view makes of a cached File (remapFile).
	index []int
	csv   *csvFile          // set for a CSV file: what its detection found
	mem   arrow.RecordBatch // set for a chunk of an in-memory table (memory.go)
}

// fileColumn is the index in f.cols of table file column c, or -1.
func (f *File) fileColumn(c int) int {
	if f.index == nil {
		return c
	}
	return f.index[c]
}

// RowGroup is the footer summary of one row group.
type RowGroup struct {
	NumRows int64
	// Bytes is the compressed size of all its column chunks.
	Bytes int64
	// Columns has one entry per file column, in Table.Schema order (a
	// column the file lacks: all NULL, no bytes).
	Columns []ColumnStats
}

// ColumnStats are the footer statistics of one column chunk.
type ColumnStats struct {
	// HasMinMax says Min and Max are known. They are Go values of the
	// column's Arrow type: int32, int64, uint64, float64, decimal128.Num,
	// string, arrow.Date32, arrow.Timestamp, arrow.Time64 or bool.
	HasMinMax bool
	Min, Max  any
	// NullCount is the number of NULLs; -1 when the writer did not record
	// statistics for a nullable column, so it is unknown.
	NullCount int64
	// Bytes is the compressed size of the chunk, what reading it costs.
	Bytes int64
}

// NumRows is the table's row count from the footers.
func (t *Table) NumRows() int64 {
	var n int64
	for _, p := range t.Partitions {
		for _, f := range p.Files {
			n += f.NumRows
		}
	}
	return n
}

// NumBytes is the total size of the table's files.
func (t *Table) NumBytes() int64 {
	var n int64
	for _, p := range t.Partitions {
		for _, f := range p.Files {
			n += f.Size
		}
	}
	return n
}

// loadTable lists the table in dir and reads the footers of its files,
// reusing cached footers whose file stamps are unchanged. A table whose
// folders are watched and had no event since its last listing is that
// listing's table, with no system call but a stat of its folder
// (watch.go).
func (c *Catalog) loadTable(ctx context.Context, name, dir string) (*Table, error) {
	return c.loadListed(ctx, name, dir, true)
}

func (c *Catalog) loadListed(ctx context.Context, name, dir string, first bool) (*Table, error) {
	w := c.footers.watch
	if t := w.lookup(dir); t != nil && t.Name == name && t.opts == c.opts {
		return t, nil
	}
	mark := w.begin(dir)
	// A table fsql wrote lists its files in a manifest (manifest.go).
	if meta, ok, err := ReadTableMeta(dir); err != nil || ok {
		if err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
		return c.loadManifestTable(ctx, name, dir, meta)
	}
	var watch *watcher
	if mark.ok {
		watch = w
	}
	raws, keep, watched, err := listTable(c.root, name, dir, c.footers.listings(dir), watch)
	if err != nil {
		return nil, err
	}
	c.footers.storeListings(dir, keep)
	if len(raws) == 0 {
		return nil, fmt.Errorf("%w: table %s has no data files under %s", ErrCorrupt, name, dir)
	}
	t, err := c.buildTable(ctx, name, dir, dir, raws)
	if err != nil {
		return nil, err
	}
	switch {
	case watched:
		w.commit(dir, mark, t)
	case first && !mark.ok && len(raws) >= minWatchedFolders && w.open():
		// The first table this large: list it again, watched, so the
		// next query is served (the second listing stats what the first
		// read and reuses the table it built).
		return c.loadListed(ctx, name, dir, false)
	}
	return t, nil
}

// buildTable makes a table of listed partitions: it types the partition
// columns, reads (or reuses) every file's footer, and unites the files'
// columns. key names the table's entries in the footer cache. When the
// last table built under key came from the same files with the same
// stamps it is returned instead: a Table never changes once built.
func (c *Catalog) buildTable(ctx context.Context, name, dir, key string, raws []rawPartition) (*Table, error) {
	if b := c.footers.lastBuilt(key); b != nil && b.serves(name, dir, c.opts, raws) {
		return b.table, nil
	}
	t, err := c.assembleTable(ctx, name, dir, key, raws, nil)
	if err != nil {
		return nil, err
	}
	c.footers.storeBuilt(key, &builtTable{raws: raws, table: t})
	return t, nil
}

// buildTableTyped is buildTable with the partition columns' types given
// (an fsql table's marker declares them) rather than guessed from the
// folder values.
func (c *Catalog) buildTableTyped(ctx context.Context, name, dir, key string, raws []rawPartition, declared []arrow.DataType) (*Table, error) {
	return c.assembleTable(ctx, name, dir, key, raws, declared)
}

// assembleTable is buildTable without the reuse; declared, when not nil,
// types the partition columns.
func (c *Catalog) assembleTable(ctx context.Context, name, dir, key string, raws []rawPartition, declared []arrow.DataType) (*Table, error) {
	keys := raws[0].keys
	for _, r := range raws[1:] {
		if !equalFold(r.keys, keys) {
			return nil, fmt.Errorf("%w: table %s: partition folder %s is nested as %s, but %s is nested as %s",
				ErrCorrupt, name, r.dir, describeKeys(r.keys), raws[0].dir, describeKeys(keys))
		}
	}
	partTypes, partValues, err := typePartitions(keys, raws)
	if declared != nil {
		partTypes = declared
		partValues, err = typedPartitions(keys, raws, declared)
	}
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}

	parts := make([]*Partition, len(raws))
	var listed []listedFile
	for i, r := range raws {
		p := &Partition{Dir: r.dir, Files: make([]*File, len(r.files))}
		if len(keys) > 0 {
			p.Values = partValues[i]
		}
		parts[i] = p
		listed = append(listed, r.files...)
	}
	format, err := formatOf(name, listed)
	if err != nil {
		return nil, err
	}
	footers, err := c.footersOf(ctx, key, format, listed)
	if err != nil {
		return nil, err
	}
	files := make([]*File, len(footers))
	for i, f := range footers {
		files[i] = f.file
	}
	var cols []tableColumn
	var index [][]int
	if format == CSV {
		cols, index = csvColumns(files)
	} else {
		cols, index = unionColumns(name, files)
	}
	for i, idx := range index {
		if idx != nil {
			files[i] = remapFile(files[i], cols, idx)
		}
	}
	n := 0
	for _, p := range parts {
		for j := range p.Files {
			p.Files[j] = files[n]
			n++
		}
	}
	fields := make([]arrow.Field, 0, len(cols)+len(keys))
	for _, col := range cols {
		fields = append(fields, arrow.Field{Name: col.name, Type: col.typ, Nullable: !col.required})
	}
	for i, k := range keys {
		for _, f := range fields {
			if strings.EqualFold(f.Name, k) {
				return nil, fmt.Errorf("%w: table %s: partition column %s is also a column of the data files", ErrCorrupt, name, k)
			}
		}
		fields = append(fields, arrow.Field{Name: k, Type: partTypes[i], Nullable: true})
	}
	return (&Table{
		Name:             name,
		Dir:              dir,
		Format:           format,
		Schema:           arrow.NewSchema(fields, nil),
		NumFileColumns:   len(cols),
		PartitionColumns: append([]string(nil), keys...),
		Partitions:       parts,
		columns:          cols,
		opts:             c.opts,
	}).withBounds(), nil
}

// formatOf decides a table's format from its files' names: CSV when they
// end in .csv (or .csv.gz), Parquet (checked by content) otherwise. One
// table holds one format.
func formatOf(name string, listed []listedFile) (Format, error) {
	format := Parquet
	if isCSVName(listed[0].path) {
		format = CSV
	}
	for _, lf := range listed[1:] {
		if isCSVName(lf.path) != (format == CSV) {
			csvFile, other := listed[0].path, lf.path
			if format != CSV {
				csvFile, other = other, csvFile
			}
			return 0, fmt.Errorf("%w: table %s mixes CSV files (%s) with other files (%s); one table holds one format: move one kind into a table folder of its own",
				ErrCorrupt, name, csvFile, other)
		}
	}
	return format, nil
}

// footersOf returns the footer of every listed file, in order: the cached
// one when the file's stamp is unchanged, else read from the file. The
// table's cache entries are then replaced by these.
func (c *Catalog) footersOf(ctx context.Context, dir string, format Format, listed []listedFile) ([]*footer, error) {
	cached := c.footers.table(dir)
	out := make([]*footer, len(listed))
	var misses []int
	for i, lf := range listed {
		if f, ok := cached[lf.path]; ok && f.stamp == lf.stamp && f.matches(format, &c.opts.CSV) {
			out[i] = f
			continue
		}
		misses = append(misses, i)
	}
	// Read the missing footers a few at a time: footers are small reads,
	// so the time goes to latency, not bandwidth.
	errs := make([]error, len(listed))
	workers := min(4*runtime.GOMAXPROCS(0), len(misses))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if errs[i] = ctx.Err(); errs[i] == nil {
					if format == CSV {
						out[i], errs[i] = readCSVHeader(listed[i].path, c.opts.CSV)
					} else {
						out[i], errs[i] = readFooter(listed[i].path)
					}
				}
			}
		}()
	}
	for _, i := range misses {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	fresh := make(map[string]*footer, len(listed))
	for i, lf := range listed {
		fresh[lf.path] = out[i]
	}
	c.footers.store(dir, fresh)
	return out, nil
}

func equalFold(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !strings.EqualFold(a[i], b[i]) {
			return false
		}
	}
	return true
}

func describeKeys(keys []string) string {
	if len(keys) == 0 {
		return "no partition folders"
	}
	return strings.Join(keys, "=…/") + "=…"
}

// DistinctBound is an upper bound of the distinct non-NULL values of
// column c (Schema order), from what the footers and folders say: the
// count of distinct folder values of a partition column, max - min + 1 of
// an integer or date file column's statistics. ok is false when neither
// applies (strings, decimals, floats, files without statistics). The
// planner's join estimates use it; computed once per table and column.
func (t *Table) DistinctBound(c int) (n int64, ok bool) {
	if c >= 0 && c < len(t.bounds) {
		return t.bounds[c].n, t.bounds[c].ok
	}
	return t.distinctBound(c)
}

// withBounds computes every column's DistinctBound once (a pass over the
// row-group statistics the table holds anyway), so the planner, which
// asks at every join estimate, never walks the files again. A Table
// holds only data: plans carry it.
func (t *Table) withBounds() *Table {
	t.bounds = make([]distinctBound, len(t.Schema.Fields()))
	for c := range t.bounds {
		n, ok := t.distinctBound(c)
		t.bounds[c] = distinctBound{n: n, ok: ok}
	}
	return t
}

type distinctBound struct {
	n  int64
	ok bool
}

func (t *Table) distinctBound(c int) (int64, bool) {
	if c < 0 || c >= len(t.Schema.Fields()) {
		return 0, false
	}
	if c >= t.NumFileColumns {
		k := c - t.NumFileColumns
		seen := map[any]bool{}
		for _, p := range t.Partitions {
			if p.Values[k] != nil {
				seen[p.Values[k]] = true
			}
		}
		return int64(len(seen)), true
	}
	var lo, hi int64
	found := false
	for _, p := range t.Partitions {
		for _, f := range p.Files {
			for _, rg := range f.RowGroups {
				if rg.NumRows == 0 {
					continue
				}
				st := rg.Columns[c]
				if !st.HasMinMax {
					if st.NullCount == rg.NumRows {
						continue // all NULL: no values
					}
					return 0, false
				}
				a, okA := integerStat(st.Min)
				b, okB := integerStat(st.Max)
				if !okA || !okB {
					return 0, false
				}
				if !found || a < lo {
					lo = a
				}
				if !found || b > hi {
					hi = b
				}
				found = true
			}
		}
	}
	if !found {
		return 0, true
	}
	if hi-lo < 0 || hi-lo >= math.MaxInt64-1 {
		return 0, false
	}
	return hi - lo + 1, true
}

// integerStat reads a statistic of an integer or date column as int64.
func integerStat(v any) (int64, bool) {
	switch x := v.(type) {
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case arrow.Date32:
		return int64(x), true
	}
	return 0, false
}
