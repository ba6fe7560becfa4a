package memtable

import (
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// Def is an in-memory table's definition: its name as created and its
// columns. Table.Source of the table's hive.Table is its *Def.
type Def struct {
	Name    string
	Columns []Column
	// Keys are the PRIMARY KEY and UNIQUE keys every write is checked
	// against.
	Keys []Key
}

// Column is one column of an in-memory table and the checks every row
// written to it passes (zero values: none).
type Column struct {
	Name string
	// Type is the Arrow type the column holds (hive.MemoryType).
	Type arrow.DataType
	// Declared is the type as CREATE TABLE spelled it ("varchar(10)"), for
	// messages and SHOW CREATE TABLE; "" for registered tables.
	Declared string
	// NotNull refuses NULLs (MySQL's ER_BAD_NULL_ERROR).
	NotNull bool
	// Default is the value an INSERT that does not name the column gives
	// it, a literal of Type; nil means NULL.
	Default expr.Expr
	// Min and Max bound an integer column narrower than its Type
	// (TINYINT, SMALLINT, MEDIUMINT, INT UNSIGNED); used when Bounded.
	Bounded  bool
	Min, Max int64
	// MaxChars bounds a string's length in characters (VARCHAR(n),
	// CHAR(n)); 0: unbounded.
	MaxChars int
	// Char drops trailing spaces, as MySQL's CHAR(n) does on reading.
	Char bool
	// Float32 rounds to single precision (MySQL's FLOAT).
	Float32 bool
	// FracDigits keeps this many fractional digits of seconds in a
	// DATETIME, TIMESTAMP or TIME column (rounding the rest, as MySQL
	// does); 6, the type's own precision, changes nothing.
	FracDigits int
}

// Schema is the Arrow schema of the table's rows.
func (d *Def) Schema() *arrow.Schema {
	fs := make([]arrow.Field, len(d.Columns))
	for i, c := range d.Columns {
		fs[i] = arrow.Field{Name: c.Name, Type: c.Type, Nullable: true}
	}
	return arrow.NewSchema(fs, nil)
}

// Store holds an engine's in-memory tables. It is safe for concurrent
// use; it implements hive.MemorySource.
type Store struct {
	dataDir string
	nextID  atomic.Int64 // chunk IDs

	mu     sync.Mutex
	tables map[string]*table // by lower-cased name
}

type table struct {
	def   *Def
	files []*hive.File // the current version's chunks, never changed in place
	view  *hive.Table  // the current version as a Table, made at the first read
	keys  []keySet     // the rows' values of def.Keys, built at the first write that needs them
}

// New returns an empty store for the engine over dataDir, whose folders
// in-memory tables may not share names with.
func New(dataDir string) *Store { return &Store{dataDir: dataDir, tables: map[string]*table{}} }

// MemoryTables implements hive.MemorySource: every table's current
// version.
func (s *Store) MemoryTables() map[string]*hive.Table {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]*hive.Table, len(s.tables))
	for key, t := range s.tables {
		if t.view == nil {
			t.view = hive.NewMemoryTable(t.def.Name, t.def.Schema(), t.files, t.def)
		}
		out[key] = t.view
	}
	return out
}

// Names lists the tables, sorted.
func (s *Store) Names() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, t := range s.tables {
		out = append(out, t.def.Name)
	}
	sort.Strings(out)
	return out
}

// Create adds an empty table. An existing in-memory table of the name is
// an error unless ifNotExists (then Create reports false); so is a
// folder of the data directory of the name.
func (s *Store) Create(def *Def, ifNotExists bool) (bool, error) {
	return s.add(def, nil, ifNotExists)
}

// add adds the table def with chunks.
func (s *Store) add(def *Def, chunks []arrow.RecordBatch, ifNotExists bool) (bool, error) {
	if err := s.checkDef(def); err != nil {
		return false, err
	}
	if err := s.checkFolder(def.Name); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(def.Name)
	if _, ok := s.tables[key]; ok {
		if ifNotExists {
			return false, nil
		}
		return false, errs.New(errs.ErTableExistsError, "table '%s' already exists (a table held in memory; DROP TABLE %s first)", def.Name, def.Name)
	}
	if _, err := checkKeys(def, nil, chunks); err != nil {
		return false, err
	}
	t := &table{def: def}
	for _, c := range chunks {
		t.files = append(t.files, hive.NewMemoryFile(def.Name, hive.MemoryChunk{ID: s.nextID.Add(1), Batch: c, Created: time.Now()}))
	}
	s.tables[key] = t
	return true, nil
}

func (s *Store) checkDef(def *Def) error {
	if len(def.Columns) == 0 {
		return errs.New(errs.Semantic, "table %s has no columns; a table needs at least one", def.Name)
	}
	seen := map[string]bool{}
	for _, c := range def.Columns {
		k := strings.ToLower(c.Name)
		if seen[k] {
			return errs.New(errs.Semantic, "duplicate column name '%s' in table %s", c.Name, def.Name)
		}
		seen[k] = true
		if err := hive.MemoryType(c.Type); err != nil {
			return errs.Wrap(errs.Unsupported, "column %s of table %s: %w", c.Name, def.Name, err)
		}
	}
	primary := 0
	for _, k := range def.Keys {
		if k.Primary {
			primary++
		}
		if len(k.Columns) == 0 {
			return errs.New(errs.Semantic, "key %s of table %s has no columns", k.Name, def.Name)
		}
		for _, c := range k.Columns {
			if c < 0 || c >= len(def.Columns) {
				return errs.New(errs.Internal, "key %s of table %s names column #%d of %d", k.Name, def.Name, c, len(def.Columns))
			}
			if k.Primary && !def.Columns[c].NotNull {
				return errs.New(errs.Internal, "primary key column %s of table %s is not NOT NULL", def.Columns[c].Name, def.Name)
			}
		}
	}
	if primary > 1 {
		return errs.New(errs.Semantic, "multiple primary key defined in table %s", def.Name)
	}
	return nil
}

// checkFolder refuses a name the data directory has a folder of.
func (s *Store) checkFolder(name string) error {
	if s.dataDir == "" {
		return nil
	}
	ents, err := os.ReadDir(s.dataDir)
	if err != nil {
		return errs.Wrap(errs.IO, "checking the data directory for a folder named %s: %w", name, err)
	}
	for _, e := range ents {
		if strings.EqualFold(e.Name(), name) {
			return errs.New(errs.ErTableExistsError, "table '%s' already exists as the folder %s of the data directory; an in-memory table needs a name of its own", name, e.Name())
		}
	}
	return nil
}

// Drop removes the table; running queries keep reading the version they
// took.
func (s *Store) Drop(name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	key := strings.ToLower(name)
	if _, ok := s.tables[key]; !ok {
		return errs.New(errs.ErBadTableError, "unknown table '%s'", name)
	}
	delete(s.tables, key)
	return nil
}

// Def returns the definition of the table called name.
func (s *Store) Def(name string) (*Def, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[strings.ToLower(name)]
	if !ok {
		return nil, false
	}
	return t.def, true
}

// Write makes the next version of the table: batches appended
// (overwrite false, INSERT) or instead of its rows (REPLACE). batches
// hold the table's columns in order, typed as the columns (their storage
// types); every row is checked against the columns' definitions and the
// values copied into memory the store owns, before the table changes
// at all. It returns the rows written. The batches stay the caller's.
func (s *Store) Write(name string, batches []arrow.RecordBatch, overwrite bool) (int64, error) {
	key := strings.ToLower(name)
	s.mu.Lock()
	t0 := s.tables[key]
	s.mu.Unlock()
	if t0 == nil {
		return 0, errs.New(errs.ErNoSuchTable, "table '%s' was dropped while the statement ran", name)
	}
	chunks, rows, err := s.prepare(t0.def, batches)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.tables[key]
	if t != t0 {
		return 0, errs.New(errs.ErNoSuchTable, "table '%s' was dropped or created again while the statement ran; run it again", name)
	}
	def := t.def
	var kept []keySet
	if !overwrite {
		if kept, err = t.keySets(); err != nil {
			return 0, err
		}
	}
	added, err := checkKeys(def, kept, chunks)
	if err != nil {
		return 0, err
	}
	if kept == nil {
		t.keys = added
	} else {
		for i, set := range added {
			for k := range set {
				kept[i][k] = struct{}{}
			}
		}
	}
	var files []*hive.File
	if !overwrite {
		files = append(files, t.files...)
		// Many small INSERTs (a script's one row each) must not make a
		// chunk per row: a short last chunk is merged with the first new
		// one, a copy of at most maxChunkRows rows.
		if n := len(files); n > 0 && len(chunks) > 0 && files[n-1].NumRows < smallChunkRows &&
			files[n-1].NumRows+chunks[0].NumRows() <= maxChunkRows {
			merged, err := concat(def, []arrow.RecordBatch{hive.MemoryBatch(files[n-1]), chunks[0]})
			if err != nil {
				return 0, err
			}
			files, chunks[0] = files[:n-1], merged
		}
	}
	for _, c := range chunks {
		files = append(files, hive.NewMemoryFile(def.Name, hive.MemoryChunk{ID: s.nextID.Add(1), Batch: c, Created: time.Now()}))
	}
	t.files, t.view = files, nil
	return rows, nil
}

// Chunk sizes: a chunk holds at most maxChunkRows rows (a scan task reads
// whole chunks); a last chunk under smallChunkRows is topped up by the
// next append.
const (
	maxChunkRows   = 1 << 16
	smallChunkRows = hive.DefaultBatchSize
)

// prepare checks batches against def and copies them into chunks of at
// most maxChunkRows rows in memory of the store's own.
func (s *Store) prepare(def *Def, batches []arrow.RecordBatch) ([]arrow.RecordBatch, int64, error) {
	var rows int64
	var out, group []arrow.RecordBatch
	var groupRows int64
	flush := func() error {
		if len(group) == 0 {
			return nil
		}
		c, err := concat(def, group)
		for _, g := range group {
			g.Release()
		}
		group, groupRows = nil, 0
		if err != nil {
			return err
		}
		out = append(out, c)
		return nil
	}
	for _, b := range batches {
		if int(b.NumCols()) != len(def.Columns) {
			return nil, 0, errs.New(errs.Internal, "writing table %s: a batch of %d columns for %d", def.Name, b.NumCols(), len(def.Columns))
		}
		for off := int64(0); off < b.NumRows(); {
			n := min(b.NumRows()-off, maxChunkRows-groupRows)
			part := b.NewSlice(off, off+n)
			checked, err := check(def, part, rows)
			part.Release()
			if err != nil {
				for _, g := range group {
					g.Release()
				}
				return nil, 0, err
			}
			group = append(group, checked)
			groupRows += n
			rows += n
			off += n
			if groupRows == maxChunkRows {
				if err := flush(); err != nil {
					return nil, 0, err
				}
			}
		}
	}
	if err := flush(); err != nil {
		return nil, 0, err
	}
	return out, rows, nil
}

// Register makes a table of the rows r yields, copied into the store,
// with its columns as r's schema has them. The name must be new (no
// in-memory table, no folder of the data directory).
func (s *Store) Register(name string, r array.RecordReader) error {
	def := &Def{Name: name}
	for _, f := range r.Schema().Fields() {
		t := f.Type
		if et, ok := t.(arrow.ExtensionType); ok {
			t = et.StorageType()
		}
		def.Columns = append(def.Columns, Column{Name: f.Name, Type: t, FracDigits: 6})
	}
	if err := s.checkDef(def); err != nil {
		return err
	}
	var batches []arrow.RecordBatch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for r.Next() {
		b := r.RecordBatch()
		b.Retain()
		batches = append(batches, b)
	}
	if err := r.Err(); err != nil && err != io.EOF {
		return errs.Wrap(errs.Execution, "reading the rows of table %s: %w", name, err)
	}
	chunks, _, err := s.prepare(def, batches)
	if err != nil {
		return err
	}
	_, err = s.add(def, chunks, false)
	return err
}

// AddKey adds a unique key to the table (CREATE UNIQUE INDEX), checking
// the rows it holds satisfy it.
func (s *Store) AddKey(name string, k Key) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tables[strings.ToLower(name)]
	if !ok {
		return errs.New(errs.ErNoSuchTable, "unknown table '%s'", name)
	}
	def := *t.def
	def.Keys = append(append([]Key(nil), def.Keys...), k)
	if err := s.checkDef(&def); err != nil {
		return err
	}
	sets := []keySet{{}}
	one := &Def{Name: def.Name, Columns: def.Columns, Keys: []Key{k}}
	var batches []arrow.RecordBatch
	for _, f := range t.files {
		batches = append(batches, hive.MemoryBatch(f))
	}
	if err := addKeys(one, sets, batches); err != nil {
		return err
	}
	t.def, t.view = &def, nil
	if t.keys != nil {
		t.keys = append(t.keys, sets[0])
	}
	return nil
}
