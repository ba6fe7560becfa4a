package hive

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/internal/format"
)

// SELECT ... INTO OUTFILE is a write transaction like a table's
// (write.go), with the target a file or folder instead of a table:
//
//  1. BeginWrite checks the target does not exist (a folder target may
//     be an empty folder) and makes a hidden staging folder beside it,
//     .fsql-<id>-<name>, holding the transaction folder and its lock.
//  2. Each task attempt writes its part files (CSV, or Parquet) into its
//     own folder; the admitted attempt's is committed as its task's and
//     the others are removed, as for a table.
//  3. CommitWrite makes the target appear at once: a CSV file is the
//     committed parts concatenated in task order, linked to its name (a
//     link fails if the name exists, so nothing is ever overwritten); a
//     Parquet file is the one task's file, linked the same way; a folder
//     is the parts moved into a folder renamed to the target's name.
//
// The statement removes the staging folder when it ends, so a failed or
// cancelled statement leaves no file. A crashed process leaves its
// hidden staging folder beside the target, its lock released: the next
// export into the same folder removes every such dead staging folder
// there (sweepExports), and SweepStaging removes those of the data
// directory when an engine opens it.

// ExportSpec is the target of SELECT ... INTO OUTFILE.
type ExportSpec struct {
	// Path is the target: a file, or a folder when Folder.
	Path string
	// Parquet writes Parquet files, else CSV with the CSV options.
	Parquet bool
	// Folder writes a folder of part files, one or more per task.
	Folder bool
	CSV    CSVExport
}

// CSVExport are MySQL's FIELDS and LINES options of INTO OUTFILE.
type CSVExport struct {
	FieldsTerminated string // default "\t"
	Enclosed         string // at most one character; "" for none
	OptEnclosed      bool   // enclose only string and temporal values
	Escaped          string // at most one character; "" for none (NULL is then the word NULL)
	LinesStarting    string
	LinesTerminated  string // default "\n"
}

// DefaultCSVExport are MySQL's defaults.
func DefaultCSVExport() CSVExport {
	return CSVExport{FieldsTerminated: "\t", Escaped: `\`, LinesTerminated: "\n"}
}

// beginExport checks the target and makes the staging folder.
func beginExport(spec *WriteSpec) (*Write, error) {
	x := spec.Export
	if fi, err := os.Stat(x.Path); err == nil {
		if !x.Folder || !fi.IsDir() {
			return nil, errs.New(errs.ErFileExistsError, "file '%s' already exists; INTO OUTFILE never overwrites: remove it or name another", x.Path)
		}
		if ents, err := os.ReadDir(x.Path); err != nil || len(ents) > 0 {
			return nil, errs.New(errs.ErFileExistsError, "folder '%s' already exists and is not empty; INTO OUTFILE never overwrites: remove it or name another", x.Path)
		}
	}
	parent := filepath.Dir(x.Path)
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return nil, errs.New(errs.ErCantCreateFile, "can't create file '%s': the folder %s does not exist", x.Path, parent)
	}
	sweepExports(parent)
	spec.Work = filepath.Join(parent, createPrefix+spec.ID+"-"+filepath.Base(x.Path))
	w := &Write{Spec: spec}
	if err := os.MkdirAll(spec.TxnDir(), 0o755); err != nil {
		w.Abort()
		return nil, errs.Wrap(errs.ErCantCreateFile, "can't create file '%s' (is the folder %s writable?): %w", x.Path, parent, err)
	}
	lock, err := lockFile(filepath.Join(spec.TxnDir(), lockName), false)
	if err != nil {
		w.Abort()
		return nil, errs.Wrap(errs.IO, "writing %s: %w", x.Path, err)
	}
	w.lock = lock
	return w, nil
}

// sweepExports removes the staging folders crashed exports left in dir:
// hidden .fsql-<id>-<name> folders holding an export's transaction folder
// (_fsql/txn-<id> with its lock file) whose lock no process holds. A
// folder of that name without that shape is not fsql's to remove, and a
// running export's is left alone. Errors are ignored: a leftover that
// cannot be removed stays hidden and is tried again next time.
func sweepExports(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		id, _, ok := strings.Cut(strings.TrimPrefix(e.Name(), createPrefix), "-")
		if !e.IsDir() || !strings.HasPrefix(e.Name(), createPrefix) || !ok || id == "" {
			continue
		}
		work := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(work, MarkerDir, txnPrefix+id, lockName)); err != nil {
			continue
		}
		if !txnsLive(work) {
			os.RemoveAll(work)
		}
	}
}

// commitExport publishes the committed tasks' parts as the target.
func commitExport(w *WriteSpec, expect int64) (int64, error) {
	x := w.Export
	fail := func(err error) (int64, error) {
		return 0, errs.Wrap(errs.IO, "writing %s: %w", x.Path, err)
	}
	// A retried commit (its attempt failed after publishing) finds the
	// mark the first left and publishes nothing again.
	mark := filepath.Join(w.Work, "published")
	if _, err := os.Stat(mark); err == nil {
		return expect, nil
	}
	parts, err := exportParts(w.TxnDir())
	if err != nil {
		return fail(err)
	}
	var rows int64
	if x.Parquet {
		for _, p := range parts {
			n, err := parquetRows(p)
			if err != nil {
				return fail(err)
			}
			rows += n
		}
		if rows != expect {
			return 0, errs.New(errs.Internal, "writing %s: the committed files hold %d rows, the committed tasks wrote %d", x.Path, rows, expect)
		}
	}
	switch {
	case x.Folder:
		out := filepath.Join(w.Work, "out")
		if err := os.Mkdir(out, 0o755); err != nil {
			return fail(err)
		}
		for _, p := range parts {
			if err := os.Rename(p, filepath.Join(out, filepath.Base(p))); err != nil {
				return fail(err)
			}
		}
		// An empty folder of the name may stand in the way: the
		// system's rename replaces it at once; a non-empty one fails it.
		// (os.Rename refuses any existing folder.)
		if err := syscall.Rename(out, x.Path); err != nil {
			if errors.Is(err, syscall.ENOTEMPTY) || errors.Is(err, syscall.EEXIST) {
				return 0, errs.New(errs.ErFileExistsError, "folder '%s' is not empty (files were put in it while the statement ran); INTO OUTFILE never overwrites", x.Path)
			}
			return fail(err)
		}
	case x.Parquet:
		if len(parts) != 1 {
			return 0, errs.New(errs.Internal, "writing %s: %d Parquet parts for one file", x.Path, len(parts))
		}
		if err := publishFile(parts[0], x.Path); err != nil {
			return 0, err
		}
	default:
		out := filepath.Join(w.Work, "out.csv")
		os.Remove(out) // a retried commit's, not yet published
		if err := concatFiles(out, parts); err != nil {
			return fail(err)
		}
		if err := publishFile(out, x.Path); err != nil {
			return 0, err
		}
	}
	if err := os.WriteFile(mark, nil, 0o644); err != nil {
		return fail(err)
	}
	return expect, nil
}

// publishFile links the finished file from to its name, which must not
// exist: a link never replaces a file, unlike a rename.
func publishFile(from, to string) error {
	if err := os.Link(from, to); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errs.New(errs.ErFileExistsError, "file '%s' already exists (made while the statement ran); INTO OUTFILE never overwrites", to)
		}
		return errs.Wrap(errs.IO, "writing %s: %w", to, err)
	}
	return nil
}

// exportParts lists the committed tasks' files: tasks in task order,
// each task's files in the order it wrote them.
func exportParts(txn string) ([]string, error) {
	ents, err := os.ReadDir(txn)
	if err != nil {
		return nil, err
	}
	type task struct {
		n   int
		dir string
	}
	var tasks []task
	for _, e := range ents {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "t") {
			continue
		}
		n, err := strconv.Atoi(e.Name()[1:])
		if err != nil {
			continue
		}
		tasks = append(tasks, task{n, filepath.Join(txn, e.Name())})
	}
	sort.Slice(tasks, func(a, b int) bool { return tasks[a].n < tasks[b].n })
	var out []string
	for _, t := range tasks {
		files, err := os.ReadDir(t.dir)
		if err != nil {
			return nil, err
		}
		for _, f := range files { // ReadDir sorts by name; names carry the file's number
			if !f.IsDir() {
				out = append(out, filepath.Join(t.dir, f.Name()))
			}
		}
	}
	return out, nil
}

func concatFiles(out string, parts []string) error {
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	for _, p := range parts {
		in, err := os.Open(p)
		if err != nil {
			f.Close()
			return err
		}
		_, err = io.Copy(f, in)
		in.Close()
		if err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DataFileWriter is one data file a Sink writes: Parquet, or CSV for an
// export.
type DataFileWriter interface {
	Write(b arrow.RecordBatch) error
	// Size is about what the file holds now.
	Size() int64
	// Close finishes the file and returns its size.
	Close() (int64, error)
	// Abort closes and removes an unfinished file.
	Abort()
}

// CreateFile creates the data file at path for batches of schema, in the
// statement's format.
func (w *WriteSpec) CreateFile(path string, schema *arrow.Schema) (DataFileWriter, error) {
	if w.Export != nil && !w.Export.Parquet {
		return createCSVExport(path, schema, w.Export.CSV)
	}
	return CreateParquet(path, schema, w.Options)
}

// csvExport writes rows as MySQL's SELECT ... INTO OUTFILE does.
type csvExport struct {
	path   string
	f      *os.File
	buf    *bufio.Writer
	opts   CSVExport
	quote  []bool // per column: enclosed by OPTIONALLY ENCLOSED BY
	size   int64
	line   []byte
	fieldS int // the byte escaped as the field separator, or -1
	lineS  int // the first byte of the line terminator, or -1
	esc    int // the escape byte, or -1
}

func createCSVExport(path string, schema *arrow.Schema, opts CSVExport) (*csvExport, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("creating %s: %w", path, err)
	}
	c := &csvExport{path: path, f: f, buf: bufio.NewWriterSize(f, 1<<20), opts: opts, fieldS: -1, lineS: -1, esc: -1}
	for _, fd := range schema.Fields() {
		t := fd.Type
		if et, ok := t.(arrow.ExtensionType); ok {
			t = et.StorageType()
		}
		switch t.ID() {
		case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.DATE32, arrow.TIMESTAMP, arrow.TIME64:
			c.quote = append(c.quote, true) // MySQL's string results, temporal ones included
		default:
			c.quote = append(c.quote, !opts.OptEnclosed)
		}
	}
	switch {
	case opts.Enclosed != "":
		c.fieldS = int(opts.Enclosed[0])
	case opts.FieldsTerminated != "":
		c.fieldS = int(opts.FieldsTerminated[0])
	}
	if opts.LinesTerminated != "" {
		c.lineS = int(opts.LinesTerminated[0])
	}
	if opts.Escaped != "" {
		c.esc = int(opts.Escaped[0])
	}
	return c, nil
}

func (c *csvExport) Write(b arrow.RecordBatch) error {
	cols := b.Columns()
	for r := 0; r < int(b.NumRows()); r++ {
		c.line = append(c.line[:0], c.opts.LinesStarting...)
		for k, col := range cols {
			if k > 0 {
				c.line = append(c.line, c.opts.FieldsTerminated...)
			}
			c.field(col, r, c.opts.Enclosed != "" && c.quote[k])
		}
		c.line = append(c.line, c.opts.LinesTerminated...)
		n, err := c.buf.Write(c.line)
		c.size += int64(n)
		if err != nil {
			return fmt.Errorf("writing %s: %w", c.path, err)
		}
	}
	return nil
}

// field appends row r of col: NULL as \N (the word NULL without an
// escape character), never enclosed; other values enclosed when asked,
// with the escape character before itself, the field separator (the
// enclosing character, or the field terminator's first byte), the line
// terminator's first byte and NUL (written as escape + '0'), the last
// two only in fields not enclosed.
func (c *csvExport) field(col arrow.Array, r int, enclose bool) {
	if ext, ok := col.(array.ExtensionArray); ok {
		col = ext.Storage()
	}
	text, null := format.Value(col, r)
	if null || col.DataType().ID() == arrow.NULL {
		if c.esc >= 0 {
			c.line = append(c.line, byte(c.esc), 'N')
		} else {
			c.line = append(c.line, "NULL"...)
		}
		return
	}
	if bc, ok := col.(*array.Boolean); ok {
		text = "0"
		if bc.Value(r) {
			text = "1"
		}
	}
	if enclose {
		c.line = append(c.line, c.opts.Enclosed...)
	}
	for i := 0; i < len(text); i++ {
		ch := int(text[i])
		if c.esc >= 0 && (ch == c.esc || ch == c.fieldS || (!enclose && (ch == c.lineS || ch == 0))) {
			c.line = append(c.line, byte(c.esc))
			if ch == 0 {
				ch = '0'
			}
		}
		c.line = append(c.line, byte(ch))
	}
	if enclose {
		c.line = append(c.line, c.opts.Enclosed...)
	}
}

func (c *csvExport) Size() int64 { return c.size }

func (c *csvExport) Close() (int64, error) {
	err := c.buf.Flush()
	if err == nil {
		err = c.f.Sync()
	}
	if cerr := c.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("writing %s: %w", c.path, err)
	}
	return c.size, nil
}

func (c *csvExport) Abort() {
	c.f.Close()
	os.Remove(c.path)
}
