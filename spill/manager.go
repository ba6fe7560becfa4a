package spill

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/fsql-dev/fsql/errs"
)

// ErrSpill is wrapped by every error of writing or reading spill files: a
// directory that cannot be written, a full disk, a file gone missing. It
// is of kind errs.Resources: the query could not get the room it needed,
// on disk this time; the operating system's error is kept as a cause too.
var ErrSpill = errs.New(errs.Resources, "spill error")

// Compression is the codec of the data buffers in spill files.
type Compression int

const (
	// LZ4 is LZ4 frame compression: fast, the default.
	LZ4 Compression = iota
	// Zstd compresses better and costs more CPU.
	Zstd
	// None writes buffers as they are.
	None
)

func (c Compression) String() string {
	switch c {
	case LZ4:
		return "lz4"
	case Zstd:
		return "zstd"
	case None:
		return "none"
	}
	return fmt.Sprintf("compression(%d)", int(c))
}

// ParseCompression reads lz4, zstd or none.
func ParseCompression(s string) (Compression, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "lz4", "lz4_frame":
		return LZ4, nil
	case "zstd":
		return Zstd, nil
	case "none", "uncompressed":
		return None, nil
	}
	return 0, fmt.Errorf("unknown spill compression %q: use lz4, zstd or none", s)
}

// Config is where and how a Manager writes.
type Config struct {
	// Dirs are the directories spill folders go in (io.tmp.dirs); empty
	// means os.TempDir().
	Dirs []string
	// Compression of the data buffers.
	Compression Compression
}

// ParseDirs splits io.tmp.dirs the way Flink does: by commas or by the
// platform's path-list separator (':' on Unix), blanks dropped.
func ParseDirs(s string) []string {
	var out []string
	for _, part := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == os.PathListSeparator }) {
		if p := strings.TrimSpace(part); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Stats are what a run wrote to disk.
type Stats struct {
	// Files is the number of files created.
	Files int64
	// Bytes is the number of bytes written to disk (compressed).
	Bytes int64
	// ArrowBytes is the Arrow size of what was written (exec.BatchBytes).
	ArrowBytes int64
	// Rows is the number of rows written.
	Rows int64
}

// Manager owns one run's spill files. It is safe for concurrent use.
type Manager struct {
	cfg Config

	mu      sync.Mutex
	folders []*folder // one per directory, created at its first file
	next    int       // round robin over directories
	closed  bool
	seq     int64

	files, bytes, arrowBytes, rows atomic.Int64
}

// folder is the run's folder in one directory of io.tmp.dirs.
type folder struct {
	dir  string // the configured directory
	path string // its fsql-spill-... folder, "" until created
	lock *os.File
}

// NewManager returns a manager writing under cfg.Dirs. It creates nothing
// on disk until the first Create.
func NewManager(cfg Config) *Manager {
	if len(cfg.Dirs) == 0 {
		cfg.Dirs = []string{os.TempDir()}
	}
	m := &Manager{cfg: cfg}
	for _, d := range cfg.Dirs {
		m.folders = append(m.folders, &folder{dir: d})
	}
	return m
}

// Compression is the manager's codec.
func (m *Manager) Compression() Compression { return m.cfg.Compression }

// Dirs are the directories the manager writes under.
func (m *Manager) Dirs() []string { return append([]string(nil), m.cfg.Dirs...) }

// Stats sums what every file of the run wrote so far.
func (m *Manager) Stats() Stats {
	if m == nil {
		return Stats{}
	}
	return Stats{Files: m.files.Load(), Bytes: m.bytes.Load(), ArrowBytes: m.arrowBytes.Load(), Rows: m.rows.Load()}
}

// Folders are the run's folders created so far (for tests and EXPLAIN).
func (m *Manager) Folders() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, f := range m.folders {
		if f.path != "" {
			out = append(out, f.path)
		}
	}
	return out
}

// newPath picks the next directory round robin, creating the run's
// folder there if needed, and returns a fresh file path in it.
func (m *Manager) newPath(purpose string) (path, dir string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return "", "", fmt.Errorf("%w: the query's spill files were already removed (the query ended)", ErrSpill)
	}
	f := m.folders[m.next%len(m.folders)]
	m.next++
	if f.path == "" {
		if err := f.create(); err != nil {
			return "", "", err
		}
	}
	m.seq++
	return filepath.Join(f.path, fmt.Sprintf("%06d-%s.arrow", m.seq, sanitize(purpose))), f.dir, nil
}

// sanitize keeps a purpose usable in a file name.
func sanitize(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			b[i] = '-'
		}
	}
	if len(b) > 40 {
		b = b[:40]
	}
	return string(b)
}

// Prefix starts the name of every run folder; Sweep looks for it.
const Prefix = "fsql-spill-"

// newPrefix starts the name of a folder being set up (not yet locked).
const newPrefix = ".fsql-spill-new-"

// lockName is the lock file inside a run folder.
const lockName = "owner.lock"

// create makes the run's folder in f.dir: built under a temporary name,
// locked, then renamed, so Sweep never meets a run folder without a held
// lock while its owner lives.
func (f *folder) create() error {
	if err := os.MkdirAll(f.dir, 0o755); err != nil {
		return dirErr(f.dir, err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tag := strconv.Itoa(os.Getpid()) + "-" + hex.EncodeToString(rnd[:])
	tmp := filepath.Join(f.dir, newPrefix+tag)
	if err := os.Mkdir(tmp, 0o700); err != nil {
		return dirErr(f.dir, err)
	}
	lock, err := os.OpenFile(filepath.Join(tmp, lockName), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		os.RemoveAll(tmp)
		return dirErr(f.dir, err)
	}
	if err := lockFile(lock); locksWork && err != nil {
		lock.Close()
		os.RemoveAll(tmp)
		return dirErr(f.dir, err)
	}
	fmt.Fprintf(lock, "pid %d\n", os.Getpid())
	final := filepath.Join(f.dir, Prefix+tag)
	if err := os.Rename(tmp, final); err != nil {
		lock.Close()
		os.RemoveAll(tmp)
		return dirErr(f.dir, err)
	}
	f.path, f.lock = final, lock
	return nil
}

// dirErr explains a failure to use a spill directory.
func dirErr(dir string, err error) error {
	what := "cannot create a spill folder in"
	if errors.Is(err, syscall.ENOSPC) {
		what = "no space left in"
	}
	return fmt.Errorf("%w: %s io.tmp.dirs directory %s: %w; point io.tmp.dirs at a writable directory with free space (--set io.tmp.dirs=<dir>)", ErrSpill, what, dir, err)
}

// writeErr explains a failure to write a spill file.
func writeErr(dir, path string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: no space left in io.tmp.dirs directory %s while writing %s (%w); free space there or point io.tmp.dirs at a larger disk (--set io.tmp.dirs=<dir>)", ErrSpill, dir, filepath.Base(path), err)
	}
	return fmt.Errorf("%w: writing spill file %s in io.tmp.dirs directory %s: %w", ErrSpill, filepath.Base(path), dir, err)
}

// Close removes every folder and file of the run and refuses later
// Creates. Files still open for reading are removed too (their readers
// fail or see what the kernel keeps of an unlinked file). It is
// idempotent; the first removal error is returned.
func (m *Manager) Close() error {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil
	}
	m.closed = true
	var first error
	for _, f := range m.folders {
		if f.path == "" {
			continue
		}
		if err := os.RemoveAll(f.path); err != nil && first == nil {
			first = fmt.Errorf("%w: removing spill folder %s: %w", ErrSpill, f.path, err)
		}
		f.lock.Close() // releases the lock
		f.path, f.lock = "", nil
	}
	return first
}
