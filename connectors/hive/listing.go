package hive

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// skipped reports the names a listing passes over: what Hive, Spark and
// Hadoop leave beside data. Names starting with "." (.part-0.crc,
// .hive-staging_...) or with "_" (_SUCCESS, _temporary, _committed_...)
// unless they hold "=" (a partition folder of a column whose name starts
// with "_"), Hadoop checksums (*.crc) and files still being copied by
// `hadoop fs -put` (*._COPYING_). Spark skips the same set. Every other
// file is a data file and must be Parquet.
func skipped(name string) bool {
	return strings.HasPrefix(name, ".") ||
		(strings.HasPrefix(name, "_") && !strings.Contains(name, "=")) ||
		strings.HasSuffix(name, ".crc") || strings.HasSuffix(name, "._COPYING_")
}

// fileStamp is what tells one version of a file from another without
// reading it: size and modification time. A cached footer is valid while
// its file's stamp is unchanged, and a query fails when a file's stamp
// differs from the one its plan was made with.
type fileStamp struct {
	size  int64
	mtime int64 // nanoseconds since the Unix epoch
}

func stampOf(fi fs.FileInfo) fileStamp {
	return fileStamp{size: fi.Size(), mtime: fi.ModTime().UnixNano()}
}

func (s fileStamp) String() string {
	return fmt.Sprintf("%d bytes, modified %s", s.size, time.Unix(0, s.mtime).UTC().Format(time.RFC3339Nano))
}

// listedFile is one data file found by a listing.
type listedFile struct {
	path  string
	stamp fileStamp
}

type rawPartition struct {
	keys, values []string
	dir          string
	files        []listedFile
}

// lister walks one table folder. Paths keep the names as spelled through
// the table folder (links not resolved), so messages and EXPLAIN show
// where a file sits in the table; resolved paths serve only to keep links
// inside the data directory and to catch cycles.
type lister struct {
	root  string // the data directory, every symlink resolved
	table string
}

// folder is one folder to list: its path, its resolved path, the
// partition keys and values of the folders above it, and the resolved
// folders from the table folder down to it (to catch a link back up).
type folder struct {
	dir, real    string
	keys, values []string
	above        *chain
}

type chain struct {
	real string
	up   *chain
}

// listed is what listing one folder found.
type listed struct {
	files []listedFile
	subs  []folder
	err   error
}

// listWorkers bounds the folders listed at once. Listing is system calls
// (open, getdents, stat), which wait on the kernel rather than the CPU, so
// more folders than cores in flight shorten it.
const listWorkers = 16

// listTable finds the leaf partition folders of the table in dir, sorted
// by folder. It lists one level of folders at a time, the folders of a
// level in parallel: a table partitioned by date has thousands of them.
func listTable(root, table, dir string) ([]rawPartition, error) {
	l := &lister{root: root, table: table}
	real, err := l.resolve(dir)
	if err != nil {
		return nil, err
	}
	var out []rawPartition
	level := []folder{{dir: dir, real: real}}
	for len(level) > 0 {
		results := make([]listed, len(level))
		work := make(chan int)
		var wg sync.WaitGroup
		for w := 0; w < min(listWorkers, len(level)); w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range work {
					results[i] = l.list(level[i])
				}
			}()
		}
		for i := range level {
			work <- i
		}
		close(work)
		wg.Wait()
		var next []folder
		for i, r := range results {
			if r.err != nil {
				return nil, r.err // the first in folder order, so messages do not depend on timing
			}
			if len(r.files) > 0 {
				f := level[i]
				out = append(out, rawPartition{keys: f.keys, values: f.values, dir: f.dir, files: r.files})
			}
			next = append(next, r.subs...)
		}
		level = next
	}
	sort.Slice(out, func(i, j int) bool { return out[i].dir < out[j].dir })
	return out, nil
}

// resolve follows the symlinks of path and checks that the target stays
// inside the data directory: a link out of it would make the table read
// files the data directory does not hold, so it is refused.
func (l *lister) resolve(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err == nil {
		real, err = filepath.Abs(real)
	}
	if err != nil {
		return "", fmt.Errorf("%w: table %s: cannot follow %s: %v", ErrCorrupt, l.table, path, err)
	}
	if rel, err := filepath.Rel(l.root, real); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%w: table %s: %s is a symlink to %s, outside the data directory %s; fsql follows links only within the data directory (copy or move the data in)",
			ErrCorrupt, l.table, path, real, l.root)
	}
	return real, nil
}

// list lists one folder: its data files (a leaf partition) or its
// partition sub-folders, never both.
func (l *lister) list(f folder) listed {
	for c := f.above; c != nil; c = c.up {
		if c.real == f.real {
			return listed{err: fmt.Errorf("%w: table %s: folder %s leads back to %s through a symlink (a cycle)", ErrCorrupt, l.table, f.dir, f.real)}
		}
	}
	ents, err := os.ReadDir(f.dir)
	if err != nil {
		return listed{err: fmt.Errorf("listing table folder %s: %w", f.dir, err)}
	}
	var out listed
	here := &chain{real: f.real, up: f.above}
	for _, e := range ents {
		name := e.Name()
		if skipped(name) {
			continue
		}
		path := filepath.Join(f.dir, name)
		var fi fs.FileInfo
		real := filepath.Join(f.real, name)
		if e.Type()&fs.ModeSymlink != 0 {
			if real, err = l.resolve(path); err != nil {
				return listed{err: err}
			}
			fi, err = os.Stat(real)
		} else if e.Type().IsDir() {
			// No stat: a folder's size and time mean nothing here.
			out.subs = append(out.subs, folder{dir: path, real: real, above: here})
			continue
		} else {
			fi, err = e.Info()
		}
		if err != nil {
			return listed{err: fmt.Errorf("listing table folder %s: %w", f.dir, err)}
		}
		switch {
		case fi.IsDir():
			out.subs = append(out.subs, folder{dir: path, real: real, above: here})
		case fi.Mode().IsRegular():
			out.files = append(out.files, listedFile{path: path, stamp: stampOf(fi)})
		default:
			return listed{err: fmt.Errorf("%w: table %s: %s is neither a file nor a folder (%s); remove it or rename it to start with . or _", ErrCorrupt, l.table, path, fi.Mode().Type())}
		}
	}
	if len(out.files) > 0 && len(out.subs) > 0 {
		return listed{err: fmt.Errorf("%w: folder %s holds both files (%s) and sub-folders (%s); Hive tables keep files only in the innermost partition folders",
			ErrCorrupt, f.dir, filepath.Base(out.files[0].path), filepath.Base(out.subs[0].dir))}
	}
	sort.Slice(out.files, func(i, j int) bool { return out.files[i].path < out.files[j].path })
	for i := range out.subs {
		s := &out.subs[i]
		k, v, ok := strings.Cut(filepath.Base(s.dir), "=")
		if !ok || k == "" {
			return listed{err: fmt.Errorf("%w: folder %s is not a partition folder (want key=value)", ErrCorrupt, s.dir)}
		}
		s.keys = append(append([]string(nil), f.keys...), unescapePath(k))
		s.values = append(append([]string(nil), f.values...), unescapePath(v))
	}
	return out
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
