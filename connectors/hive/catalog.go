package hive

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
)

// Sentinel errors. Callers (exec) wrap them again with their own sentinels;
// these let them tell "we cannot read this kind of file" from "this file is
// broken" without parsing messages.
var (
	// ErrUnsupported marks Parquet features fsql does not read (nested or
	// repeated columns, timestamps, INT96, ...).
	ErrUnsupported = errors.New("unsupported parquet feature")
	// ErrCorrupt marks files that cannot be parsed, and tables whose files
	// disagree with each other.
	ErrCorrupt = errors.New("bad parquet data")
	// ErrNoTable is returned by Catalog.Table for an unknown name.
	ErrNoTable = errors.New("no such table")
)

// DefaultPartitionName is the folder value Hive writes for a NULL partition key.
const DefaultPartitionName = "__HIVE_DEFAULT_PARTITION__"

// Catalog is a data directory: each sub-folder is a table. Tables are loaded
// on first use and cached, so opening a catalog over hundreds of tables
// costs one directory listing.
type Catalog struct {
	Dir     string
	names   []string          // table names as spelled on disk, sorted
	entries map[string]*entry // by lower-cased name
}

type entry struct {
	name, dir string
	once      sync.Once
	table     *Table
	err       error
}

// Open lists the tables of the data directory dir.
func Open(dir string) (*Catalog, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("opening data directory %s: %w", dir, err)
	}
	c := &Catalog{Dir: dir, entries: map[string]*entry{}}
	for _, e := range ents {
		if !e.IsDir() || hidden(e.Name()) {
			continue
		}
		key := strings.ToLower(e.Name())
		if prev, ok := c.entries[key]; ok {
			return nil, fmt.Errorf("%w: data directory %s has two folders named %s and %s; table names are case-insensitive",
				ErrCorrupt, dir, prev.name, e.Name())
		}
		c.entries[key] = &entry{name: e.Name(), dir: filepath.Join(dir, e.Name())}
		c.names = append(c.names, e.Name())
	}
	sort.Strings(c.names)
	return c, nil
}

// TableNames returns the table names as spelled on disk, sorted.
func (c *Catalog) TableNames() []string { return append([]string(nil), c.names...) }

// Table returns the table called name (case-insensitive), reading its
// footers on the first call. Safe for concurrent use.
func (c *Catalog) Table(name string) (*Table, error) {
	e, ok := c.entries[strings.ToLower(name)]
	if !ok {
		known := "none"
		if len(c.names) > 0 {
			known = strings.Join(c.names, ", ")
		}
		return nil, fmt.Errorf("%w: table %q is not a folder of data directory %s (tables: %s)", ErrNoTable, name, c.Dir, known)
	}
	e.once.Do(func() { e.table, e.err = loadTable(e.name, e.dir) })
	return e.table, e.err
}

// Table is one Hive table: its schema, partitions, files and row-group
// statistics, all read from footers. It is immutable once loaded.
type Table struct {
	Name string
	Dir  string
	// Schema lists the file columns in file order, then the partition
	// columns in folder-nesting order. Every field is nullable.
	Schema           *arrow.Schema
	NumFileColumns   int
	PartitionColumns []string
	// Partitions are sorted by folder. A table without partition folders
	// has a single Partition with nil Values.
	Partitions []*Partition

	physical []columnInfo // per file column: how to decode it
}

// Partition is one leaf partition folder.
type Partition struct {
	// Values holds one value per partition column, typed as the column:
	// int32, int64, string or arrow.Date32; nil for NULL.
	Values []any
	Dir    string
	Files  []*File
}

// File is one Parquet data file with its footer statistics.
type File struct {
	Path      string
	Size      int64
	NumRows   int64
	RowGroups []RowGroup
}

// RowGroup is the footer summary of one row group.
type RowGroup struct {
	NumRows int64
	// Bytes is the compressed size of all its column chunks.
	Bytes int64
	// Columns has one entry per file column, in Table.Schema order.
	Columns []ColumnStats
}

// ColumnStats are the footer statistics of one column chunk.
type ColumnStats struct {
	// HasMinMax says Min and Max are known. They are Go values of the
	// column's Arrow type: int32, int64, float64, decimal128.Num, string,
	// arrow.Date32 or bool.
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

// hidden reports names Hive and Spark leave beside data: dot files,
// _SUCCESS, _temporary, _common_metadata and the like.
func hidden(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

type rawPartition struct {
	keys, values []string
	dir          string
	files        []string
}

// walkTable finds the leaf partition folders of a table.
func walkTable(dir string, keys, values []string, out *[]rawPartition) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing table folder %s: %w", dir, err)
	}
	var files []string
	var subdirs []os.DirEntry
	for _, e := range ents {
		name := e.Name()
		if hidden(name) {
			continue
		}
		if e.IsDir() {
			subdirs = append(subdirs, e)
			continue
		}
		if strings.HasSuffix(strings.ToLower(name), ".parquet") {
			files = append(files, filepath.Join(dir, name))
		}
	}
	if len(files) > 0 && len(subdirs) > 0 {
		return fmt.Errorf("%w: folder %s holds both data files and sub-folders; Hive tables keep files only in the innermost partition folders",
			ErrCorrupt, dir)
	}
	if len(files) > 0 {
		sort.Strings(files)
		*out = append(*out, rawPartition{keys: append([]string(nil), keys...), values: append([]string(nil), values...), dir: dir, files: files})
		return nil
	}
	for _, e := range subdirs {
		k, v, ok := strings.Cut(e.Name(), "=")
		if !ok || k == "" {
			return fmt.Errorf("%w: folder %s is not a partition folder (want key=value)", ErrCorrupt, filepath.Join(dir, e.Name()))
		}
		if err := walkTable(filepath.Join(dir, e.Name()), append(keys, unescapePath(k)), append(values, unescapePath(v)), out); err != nil {
			return err
		}
	}
	return nil
}

// unescapePath undoes Hive's %XX escaping of partition folder names.
func unescapePath(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if h, ok := unhex(s[i+1]); ok {
				if l, ok := unhex(s[i+2]); ok {
					b.WriteByte(h<<4 | l)
					i += 2
					continue
				}
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func loadTable(name, dir string) (*Table, error) {
	var raws []rawPartition
	if err := walkTable(dir, nil, nil, &raws); err != nil {
		return nil, err
	}
	if len(raws) == 0 {
		return nil, fmt.Errorf("%w: table %s has no .parquet files under %s", ErrCorrupt, name, dir)
	}
	sort.Slice(raws, func(i, j int) bool { return raws[i].dir < raws[j].dir })
	keys := raws[0].keys
	for _, r := range raws[1:] {
		if !equalFold(r.keys, keys) {
			return nil, fmt.Errorf("%w: table %s: partition folder %s is nested as %s, but %s is nested as %s",
				ErrCorrupt, name, r.dir, describeKeys(r.keys), raws[0].dir, describeKeys(keys))
		}
	}
	partTypes, partValues, err := typePartitions(keys, raws)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}

	// Read every footer, a few at a time: footers are small reads, so the
	// time goes to latency, not bandwidth.
	type job struct {
		path string
		out  **File
		info *[]columnInfo
		err  *error
	}
	var jobs []job
	parts := make([]*Partition, len(raws))
	infos := make([][]columnInfo, 0)
	errs := make([]error, 0)
	for i, r := range raws {
		p := &Partition{Dir: r.dir, Files: make([]*File, len(r.files))}
		if len(keys) > 0 {
			p.Values = partValues[i]
		}
		parts[i] = p
		for j, path := range r.files {
			jobs = append(jobs, job{path: path, out: &p.Files[j]})
		}
	}
	infos = make([][]columnInfo, len(jobs))
	errs = make([]error, len(jobs))
	for i := range jobs {
		jobs[i].info = &infos[i]
		jobs[i].err = &errs[i]
	}
	workers := min(4*runtime.GOMAXPROCS(0), len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				*jobs[i].out, *jobs[i].info, *jobs[i].err = readFooter(jobs[i].path)
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	first := infos[0]
	for i := 1; i < len(infos); i++ {
		if err := sameSchema(first, jobs[0].path, infos[i], jobs[i].path); err != nil {
			return nil, fmt.Errorf("table %s: %w", name, err)
		}
	}
	fields := make([]arrow.Field, 0, len(first)+len(keys))
	for _, ci := range first {
		fields = append(fields, arrow.Field{Name: ci.name, Type: ci.arrow, Nullable: true})
	}
	for i, k := range keys {
		for _, f := range fields {
			if strings.EqualFold(f.Name, k) {
				return nil, fmt.Errorf("%w: table %s: partition column %s is also a column of the data files", ErrCorrupt, name, k)
			}
		}
		fields = append(fields, arrow.Field{Name: k, Type: partTypes[i], Nullable: true})
	}
	return &Table{
		Name:             name,
		Dir:              dir,
		Schema:           arrow.NewSchema(fields, nil),
		NumFileColumns:   len(first),
		PartitionColumns: append([]string(nil), keys...),
		Partitions:       parts,
		physical:         first,
	}, nil
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
