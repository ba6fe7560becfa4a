package hive

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/errs"
)

// A statement that writes a table (CREATE TABLE ... AS SELECT, INSERT,
// REPLACE) is one write transaction, in three steps whose files never
// meet a reader's listing until the last:
//
//  1. Begin makes the statement's staging folder, work/_fsql/txn-<id>
//     (work is the table folder for INSERT; for CREATE it is a hidden
//     folder .fsql-<id>-<name> of the data directory that becomes the
//     table folder), and holds its lock for the statement's lifetime.
//  2. Each task attempt writes into a folder of its own, txn/a<task>-<n>.
//     When the scheduler admits an attempt as its task's, CommitAttempt
//     renames that folder to txn/t<task> (one rename, so a task is
//     committed whole or not at all); every other attempt's folder is
//     removed (DiscardAttempt). A task therefore counts once whichever of
//     its attempts wins: speculation-safe by construction.
//  3. CommitWrite, once every task committed, moves the files of the
//     txn/t* folders to their partition folders and publishes them all at
//     once with the next manifest version (manifest.go); for CREATE the
//     hidden folder is then renamed to the table's name, one rename.
//
// A statement that fails or is cancelled removes its staging folder
// (AbortWrite). A crashed process leaves it behind with its lock
// released; SweepStaging, run when an engine opens the data directory,
// removes such leftovers, including files a crashed CommitWrite had moved
// but not published (it lists them in txn/commit.json first).

const (
	txnPrefix    = "txn-"
	createPrefix = ".fsql-"
	intentFile   = "commit.json"
)

// WriteSpec is where one write statement's files go: plain data, so the
// plan nodes that write (exec.Sink) and commit (exec.TableCommit) hold it
// and stay encodable.
type WriteSpec struct {
	// Table is the table's name, as the statement spelled it.
	Table string
	// DataDir is the data directory.
	DataDir string
	// Dir is the table folder as it is (or will be, for Create) named.
	Dir string
	// Work is the folder the statement builds in: Dir, or for Create a
	// hidden folder of the data directory renamed to Dir at commit.
	Work string
	// ID names the statement's staging folder and files.
	ID string
	// Create makes a new table (CREATE TABLE ... AS SELECT).
	Create bool
	// Overwrite (REPLACE INTO) replaces the table's files: all of them
	// in an unpartitioned table; in a partitioned one those of the
	// partitions the statement wrote and of its static partitions.
	Overwrite bool
	// Static are the statement's static partitions (INSERT ... PARTITION
	// (k=v)), as folder segments k=v.
	Static []string
	// Meta is the table's marker (for Create, the one to write).
	Meta TableMeta
	// Options say how files are laid out.
	Options WriteOptions
	// Export, when set, makes the statement SELECT ... INTO OUTFILE: the
	// files go to its target, not to a table (export.go).
	Export *ExportSpec
}

// TxnDir is the statement's staging folder.
func (w *WriteSpec) TxnDir() string { return filepath.Join(w.Work, MarkerDir, txnPrefix+w.ID) }

// AttemptDir is the staging folder of one task attempt.
func (w *WriteSpec) AttemptDir(task, attempt int) string {
	return filepath.Join(w.TxnDir(), fmt.Sprintf("a%d-%d", task, attempt))
}

// TaskDir is the folder of a task's committed attempt.
func (w *WriteSpec) TaskDir(task int) string {
	return filepath.Join(w.TxnDir(), fmt.Sprintf("t%d", task))
}

// FileName is the name of a task's n-th data file: the statement's ID
// keeps it apart from every other statement's files in the same folder.
func (w *WriteSpec) FileName(task, n int) string {
	ext := "parquet"
	if w.Export != nil && !w.Export.Parquet {
		ext = "csv"
	}
	return fmt.Sprintf("part-%s-%05d-%03d.%s", w.ID, task, n, ext)
}

// Write is a begun write statement: the lock that tells a running
// statement's staging folder from a crashed one's.
type Write struct {
	Spec *WriteSpec
	lock *os.File
}

// NewWriteID returns a fresh statement ID: time-ordered, with random
// bits so two engines on one directory never pick the same.
func NewWriteID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return strconv.FormatInt(time.Now().UTC().UnixMilli(), 36) + hex.EncodeToString(b[:])
}

// BeginWrite checks the target and makes the statement's staging folder.
// For Create, the table must not exist; otherwise it must be a table fsql
// created (its marker), and the folder writable. Nothing is written into
// the table folder except under _fsql.
func BeginWrite(spec *WriteSpec) (*Write, error) {
	if spec.Export != nil {
		return beginExport(spec)
	}
	if spec.Create {
		if _, err := os.Lstat(spec.Dir); err == nil {
			return nil, errs.New(errs.ErTableExistsError, "table '%s' already exists (folder %s)", spec.Table, spec.Dir)
		}
		spec.Work = filepath.Join(spec.DataDir, createPrefix+spec.ID+"-"+filepath.Base(spec.Dir))
		if err := os.MkdirAll(filepath.Join(spec.Work, MarkerDir), 0o755); err != nil {
			return nil, errs.Wrap(errs.IO, "creating table %s: %w", spec.Table, err)
		}
		if err := writeJSON(filepath.Join(spec.Work, MarkerDir, markerFile), &spec.Meta); err != nil {
			os.RemoveAll(spec.Work)
			return nil, errs.Wrap(errs.IO, "creating table %s: %w", spec.Table, err)
		}
	} else {
		spec.Work = spec.Dir
		if _, ok, err := ReadTableMeta(spec.Dir); err != nil {
			return nil, err
		} else if !ok {
			return nil, errs.New(errs.Unsupported, "writing into table %s: fsql writes only tables it created (their folder holds %s/%s), since only those publish a statement's files at once; create one with CREATE TABLE new AS SELECT * FROM %s", spec.Table, MarkerDir, markerFile, spec.Table)
		}
	}
	w := &Write{Spec: spec}
	txn := spec.TxnDir()
	if err := os.MkdirAll(txn, 0o755); err != nil {
		w.Abort()
		return nil, errs.Wrap(errs.IO, "writing table %s: cannot create the staging folder (is the table folder read-only?): %w", spec.Table, err)
	}
	lock, err := lockFile(filepath.Join(txn, lockName), false)
	if err != nil {
		w.Abort()
		return nil, errs.Wrap(errs.IO, "writing table %s: %w", spec.Table, err)
	}
	w.lock = lock
	return w, nil
}

// Abort removes what the statement staged and releases its lock. After a
// successful CommitWrite there is nothing left to remove, so Abort is
// also how every write statement ends. It is idempotent.
func (w *Write) Abort() {
	if w.Spec.Create || w.Spec.Export != nil {
		os.RemoveAll(w.Spec.Work)
	} else {
		os.RemoveAll(w.Spec.TxnDir())
	}
	if w.lock != nil {
		w.lock.Close()
		w.lock = nil
	}
}

// CommitAttempt renames the attempt's staging folder to its task's: the
// attempt's files become the task's. An attempt that wrote nothing has
// no folder.
func (w *WriteSpec) CommitAttempt(task, attempt int) error {
	err := os.Rename(w.AttemptDir(task, attempt), w.TaskDir(task))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return errs.Wrap(errs.IO, "committing task %d of the write into %s: %w", task, w.Table, err)
	}
	return nil
}

// DiscardAttempt removes an attempt's staging folder.
func (w *WriteSpec) DiscardAttempt(task, attempt int) error {
	if err := os.RemoveAll(w.AttemptDir(task, attempt)); err != nil {
		return errs.Wrap(errs.IO, "removing attempt %d of task %d of the write into %s: %w", attempt, task, w.Table, err)
	}
	return nil
}

// CommitWrite publishes the committed tasks' files: it moves them into
// the table folder and writes the next manifest version, under the
// table's lock so concurrent statements publish one after the other. For
// Create it then renames the built folder to the table's name. expect
// is the row count the committed attempts reported: the files' footers
// must hold exactly as many rows, or nothing is published. On an error
// the table is as it was (moved files are removed again).
func CommitWrite(w *WriteSpec, expect int64) (rows int64, err error) {
	if w.Export != nil {
		return commitExport(w, expect)
	}
	txn := w.TxnDir()
	var moves []string // paths under Work, "/"-separated
	tasks, err := os.ReadDir(txn)
	if errors.Is(err, fs.ErrNotExist) {
		// A retried commit (its first attempt failed after publishing)
		// finds the version it published.
		if n, ok := publishedBy(w.Dir, w.ID); ok {
			return n, nil
		}
	}
	if err != nil {
		return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
	}
	for _, t := range tasks {
		if !t.IsDir() || !strings.HasPrefix(t.Name(), "t") {
			continue
		}
		base := filepath.Join(txn, t.Name())
		err := filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(base, p)
			if err == nil {
				// The task folder, then the path the file takes in the table.
				moves = append(moves, t.Name()+"\x00"+filepath.ToSlash(rel))
			}
			return err
		})
		if err != nil {
			return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
		}
	}
	sort.Strings(moves)
	lock, err := lockFile(filepath.Join(w.Work, MarkerDir, lockName), true)
	if err != nil {
		return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
	}
	defer lock.Close()
	old, err := LatestManifest(w.Work)
	if err != nil {
		return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
	}
	rels := make([]string, len(moves))
	for i, m := range moves {
		_, rels[i], _ = strings.Cut(m, "\x00")
	}
	if err := writeJSON(filepath.Join(txn, intentFile), rels); err != nil {
		return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
	}
	now := time.Now()
	next := &Manifest{Version: old.Version + 1, Statement: w.ID, Rows: expect}
	written := map[string]bool{}
	for _, rel := range rels {
		written[path.Dir(rel)] = true
	}
	for _, f := range old.Files {
		if w.Overwrite && w.replaces(f.Path, written) {
			next.Removed = append(next.Removed, RemovedFile{Path: f.Path, RemovedAt: now.UnixNano()})
			continue
		}
		next.Files = append(next.Files, f)
	}
	// Files removed long enough ago are deleted once this version is
	// published; the others stay listed as removed.
	var expired []string
	for _, r := range old.Removed {
		if now.Sub(time.Unix(0, r.RemovedAt)) > RemovedFileRetention {
			expired = append(expired, r.Path)
			continue
		}
		next.Removed = append(next.Removed, r)
	}
	var moved []string
	undo := func() {
		for _, p := range moved {
			os.Remove(p)
		}
	}
	for i, m := range moves {
		task, rel, _ := strings.Cut(m, "\x00")
		from := filepath.Join(txn, task, filepath.FromSlash(rel))
		to := filepath.Join(w.Work, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			undo()
			return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
		}
		if err := os.Rename(from, to); err != nil {
			undo()
			return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
		}
		moved = append(moved, to)
		fi, err := os.Stat(to)
		if err != nil {
			undo()
			return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
		}
		n, err := parquetRows(to)
		if err != nil {
			undo()
			return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
		}
		rows += n
		next.Files = append(next.Files, ManifestFile{Path: rels[i], Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Rows: n})
	}
	if rows != expect {
		undo()
		return 0, errs.New(errs.Internal, "committing the write into %s: the committed files hold %d rows, the committed tasks wrote %d", w.Table, rows, expect)
	}
	if err := publishManifest(w.Work, next); err != nil {
		undo()
		return 0, errs.Wrap(errs.IO, "committing the write into %s: %w", w.Table, err)
	}
	for _, rel := range expired {
		os.Remove(filepath.Join(w.Work, filepath.FromSlash(rel)))
	}
	if w.Create {
		// One rename makes the whole table appear. It fails on a folder
		// of that name made since BeginWrite, unless it is empty.
		if err := os.Rename(w.Work, w.Dir); err != nil {
			return 0, errs.Wrap(errs.IO, "creating table %s: %w", w.Table, err)
		}
		os.RemoveAll(filepath.Join(w.Dir, MarkerDir, txnPrefix+w.ID))
		return rows, nil
	}
	os.RemoveAll(txn)
	return rows, nil
}

// replaces reports whether an overwrite removes the table file at rel:
// every file of an unpartitioned table; in a partitioned one the files of
// a partition folder the statement wrote or that lies under all its
// static partitions.
func (w *WriteSpec) replaces(rel string, written map[string]bool) bool {
	if len(w.Meta.Partitions) == 0 {
		return true
	}
	dir := path.Dir(rel)
	if written[dir] {
		return true
	}
	if len(w.Static) == 0 {
		return false
	}
	segs := strings.Split(dir, "/")
	for _, st := range w.Static {
		if !slices.Contains(segs, st) {
			return false
		}
	}
	return true
}

// publishedBy finds the manifest version statement id published in the
// table folder dir, among the newest versions (a retry comes right after
// its commit), and the rows it wrote.
func publishedBy(dir, id string) (int64, bool) {
	vs, err := manifestVersions(dir)
	if err != nil {
		return 0, false
	}
	for i := len(vs) - 1; i >= 0 && i >= len(vs)-64; i-- {
		m, err := readManifest(dir, vs[i])
		if err == nil && m.Statement == id {
			return m.Rows, true
		}
	}
	return 0, false
}

// parquetRows is the row count in a Parquet file's footer.
func parquetRows(path string) (int64, error) {
	ft, err := readFooter(path)
	if err != nil {
		return 0, err
	}
	return ft.file.NumRows, nil
}

// publishManifest writes m as its version's file: complete in a
// temporary file first, then linked to its name, which fails when another
// statement published that version (the lock makes that a bug).
func publishManifest(work string, m *Manifest) error {
	dir := filepath.Join(work, MarkerDir)
	tmp := filepath.Join(dir, fmt.Sprintf(".v%08d-%d.tmp", m.Version, time.Now().UnixNano()))
	if err := writeJSON(tmp, m); err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, filepath.Join(dir, manifestName(m.Version))); err != nil {
		return fmt.Errorf("publishing manifest version %d: %w", m.Version, err)
	}
	return syncDir(dir)
}

// writeJSON writes v to path, synced, replacing nothing: path is new.
func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	_ = d.Sync() // not every file system syncs folders; the link is what matters
	return nil
}

// errLocked is lockFile's answer when another holds the lock.
var errLocked = errors.New("locked by a running statement")

// SweepStaging removes what crashed write statements left in the data
// directory dir: hidden folders of CREATE statements and the staging
// folders of INSERT and REPLACE statements whose lock no process holds,
// with any file such a statement had moved into the table but not
// published. A running statement's folders are left alone.
func SweepStaging(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var first error
	note := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), createPrefix) {
			if !txnsLive(path) {
				note(os.RemoveAll(path))
			}
			continue
		}
		if skipped(e.Name()) {
			continue
		}
		note(sweepTable(path))
	}
	return first
}

// txnsLive reports whether a statement still runs in work: one of its
// staging folders' locks is held.
func txnsLive(work string) bool {
	txns, _ := filepath.Glob(filepath.Join(work, MarkerDir, txnPrefix+"*"))
	for _, t := range txns {
		f, err := lockFile(filepath.Join(t, lockName), false)
		if errors.Is(err, errLocked) {
			return true
		}
		if f != nil {
			f.Close()
		}
	}
	return false
}

// sweepTable removes the dead staging folders of one table folder.
func sweepTable(table string) error {
	txns, _ := filepath.Glob(filepath.Join(table, MarkerDir, txnPrefix+"*"))
	for _, t := range txns {
		f, err := lockFile(filepath.Join(t, lockName), false)
		if err != nil {
			continue // running, or not ours to judge
		}
		err = undoIntent(table, t)
		if err == nil {
			err = os.RemoveAll(t)
		}
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// undoIntent removes the files a crashed commit moved into the table but
// did not publish: those its intent lists that the newest manifest lacks.
func undoIntent(table, txn string) error {
	data, err := os.ReadFile(filepath.Join(txn, intentFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var rels []string
	if err := json.Unmarshal(data, &rels); err != nil {
		return nil // a torn intent: the commit never moved a file
	}
	m, err := LatestManifest(table)
	if err != nil {
		return err
	}
	published := map[string]bool{}
	for _, f := range m.Files {
		published[f.Path] = true
	}
	for _, rel := range rels {
		if !published[rel] {
			os.Remove(filepath.Join(table, filepath.FromSlash(rel)))
		}
	}
	return nil
}

// EscapePartitionValue spells a partition value as a Hive folder name
// does: characters Hive escapes become %XX (unescapePath undoes it).
func EscapePartitionValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0 {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// FolderValue spells a partition value (int32, int64, arrow.Date32,
// string; nil for NULL) as its folder name does, escaped. The empty
// string and the NULL folder name itself cannot be written: Hive reads
// both back as NULL.
func FolderValue(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return DefaultPartitionName, nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case arrow.Date32:
		return x.ToTime().UTC().Format(time.DateOnly), nil
	case string:
		if x == "" || x == DefaultPartitionName {
			return "", errs.New(errs.Execution, "the value %q cannot be a partition folder (Hive reads it back as NULL)", x)
		}
		return EscapePartitionValue(x), nil
	}
	return "", errs.New(errs.Unsupported, "a partition value of Go type %T", v)
}

// ParsePartitionValue reads a static partition's value written as text
// (PARTITION (`k=v`)) as the column's type t; __HIVE_DEFAULT_PARTITION__
// is NULL (nil).
func ParsePartitionValue(s string, t arrow.DataType) (any, error) {
	if s == DefaultPartitionName {
		return nil, nil
	}
	switch t.ID() {
	case arrow.INT32:
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return nil, errs.New(errs.Type, "partition value %q is not an INT", s)
		}
		return int32(n), nil
	case arrow.INT64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, errs.New(errs.Type, "partition value %q is not a BIGINT", s)
		}
		return n, nil
	case arrow.DATE32:
		d, ok := parseDate(s)
		if !ok {
			return nil, errs.New(errs.Type, "partition value %q is not a DATE (YYYY-MM-DD)", s)
		}
		return d, nil
	case arrow.STRING, arrow.LARGE_STRING:
		return s, nil
	}
	return nil, errs.New(errs.Unsupported, "a partition column of type %s", t)
}

// DropTable removes a table fsql created: one rename takes it out of the
// data directory (a hidden .fsql- name, so a crash mid-way leaves only
// what SweepStaging removes), then its files are deleted. Any other
// folder is refused.
func DropTable(dataDir, name, dir string) error {
	if _, ok, err := ReadTableMeta(dir); err != nil {
		return err
	} else if !ok {
		return errs.New(errs.Unsupported, "DROP TABLE %s: fsql drops only tables it created (their folder holds %s/%s); remove other folders yourself", name, MarkerDir, markerFile)
	}
	gone := filepath.Join(dataDir, createPrefix+NewWriteID()+"-dropped-"+filepath.Base(dir))
	if err := os.Rename(dir, gone); err != nil {
		return errs.Wrap(errs.IO, "dropping table %s: %w", name, err)
	}
	if err := os.RemoveAll(gone); err != nil {
		return errs.Wrap(errs.IO, "dropping table %s: its files are out of the data directory but not all removed (%s): %w", name, gone, err)
	}
	return nil
}
