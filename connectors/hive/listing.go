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
	// prev holds the folders the table's last listing read and may keep
	// (see folderListing); read-only, nil for path tables.
	prev map[string]*folderListing
	// watch, when set, watches every folder before it is read, for the
	// table in tableDir (watch.go).
	watch    *watcher
	tableDir string
}

// folderListing is what one read of a folder found, kept so that the next
// view need not read the folder again: it is valid while the folder's
// modification time is the one it had before it was read. Adding,
// removing or renaming an entry changes a folder's modification time; a
// file rewritten in place does not, so the files of a reused listing are
// still stat'ed, one call each instead of open, read and close of the
// folder. Folders holding symlinks are never kept (a link's target can
// change without its folder changing).
type folderListing struct {
	real  string
	mtime int64    // nanoseconds since the Unix epoch
	files []string // data file paths, sorted
	subs  []string // sub-folder paths
}

// racyWindow is how long after its last change a folder is not kept: a
// change within the file system's timestamp resolution (coarse kernel
// clock ticks on Linux, whole seconds on some file systems) may leave
// the modification time the listing saw, so only folders whose last
// change is older than this are trusted by their time (what git calls
// the racy case).
const racyWindow = 2 * time.Second

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
	keep  *folderListing // set when the next view may reuse this listing
	// unwatched says an event might not show a change of this folder: it
	// was not watched, or holds a link, a file with other hard links or a
	// file on another device (watch.go).
	unwatched bool
	err       error
}

// listWorkers bounds the folders listed at once. Listing is system calls
// (open, getdents, stat), which wait on the kernel rather than the CPU, so
// more folders than cores in flight shorten it.
const listWorkers = 16

// listTable finds the leaf partition folders of the table in dir, sorted
// by folder. It lists one level of folders at a time, the folders of a
// level in parallel: a table partitioned by date has thousands of them.
// Folders unchanged since prev (the table's last listing, may be nil) are
// not read again; the folder listings the next call may reuse are
// returned. With w set every folder is watched before it is read, and
// watched reports whether an event would show every change of what was
// listed.
func listTable(root, table, dir string, prev map[string]*folderListing, w *watcher) ([]rawPartition, map[string]*folderListing, bool, error) {
	l := &lister{root: root, table: table, prev: prev, watch: w, tableDir: dir}
	real, err := l.resolve(dir)
	if err != nil {
		return nil, nil, false, err
	}
	// A table folder that is a link is not watched: the link can be
	// pointed elsewhere without an event.
	watched := l.watch != nil && real == filepath.Join(l.root, filepath.Base(dir))
	keep := map[string]*folderListing{}
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
				return nil, nil, false, r.err // the first in folder order, so messages do not depend on timing
			}
			watched = watched && !r.unwatched
			if r.keep != nil {
				keep[level[i].dir] = r.keep
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
	return out, keep, watched, nil
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
		return "", fmt.Errorf("%w: table %s: cannot follow %s: %w", ErrCorrupt, l.table, path, err)
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
	here := &chain{real: f.real, up: f.above}
	// Watched before it is read: a change from now on queues an event.
	watched := l.watch != nil && l.watch.add(l.tableDir, f.dir, true)
	if c := l.prev[f.dir]; c != nil && c.real == f.real {
		if out, ok := l.reuseListing(f, c, here); ok {
			out.unwatched = out.unwatched || !watched
			return l.partitionKeys(f, out)
		}
	}
	// The folder's time is taken before it is read: a change after that
	// moves the time on, and the next view reads the folder again.
	start := time.Now()
	dirInfo, statErr := os.Stat(f.dir)
	ents, err := os.ReadDir(f.dir)
	if err != nil {
		return listed{err: fmt.Errorf("listing table folder %s: %w", f.dir, err)}
	}
	var out listed
	links := false
	for _, e := range ents {
		name := e.Name()
		if skipped(name) {
			continue
		}
		path := filepath.Join(f.dir, name)
		var fi fs.FileInfo
		real := filepath.Join(f.real, name)
		if e.Type()&fs.ModeSymlink != 0 {
			links = true
			if real, err = l.resolve(path); err != nil {
				return listed{err: err}
			}
			fi, err = os.Stat(real)
		} else if e.Type().IsDir() {
			// No stat: a folder's size and time mean nothing here.
			out.subs = append(out.subs, folder{dir: path, real: real, above: here})
			continue
		} else {
			// Watched before it is stat'ed, as its folder was before
			// it was read.
			watched = watched && l.watchFile(path)
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
			out.unwatched = out.unwatched || !sameDevice(dirInfo, fi)
		default:
			return listed{err: fmt.Errorf("%w: table %s: %s is neither a file nor a folder (%s); remove it or rename it to start with . or _", ErrCorrupt, l.table, path, fi.Mode().Type())}
		}
	}
	if len(out.files) > 0 && len(out.subs) > 0 {
		return listed{err: fmt.Errorf("%w: folder %s holds both files (%s) and sub-folders (%s); Hive tables keep files only in the innermost partition folders",
			ErrCorrupt, f.dir, filepath.Base(out.files[0].path), filepath.Base(out.subs[0].dir))}
	}
	sort.Slice(out.files, func(i, j int) bool { return out.files[i].path < out.files[j].path })
	out.unwatched = out.unwatched || links || !watched || statErr != nil
	if statErr == nil && !links && dirInfo.IsDir() && start.Sub(dirInfo.ModTime()) > racyWindow {
		keep := &folderListing{real: f.real, mtime: dirInfo.ModTime().UnixNano(),
			files: make([]string, len(out.files)), subs: make([]string, len(out.subs))}
		for i, lf := range out.files {
			keep.files[i] = lf.path
		}
		for i, sub := range out.subs {
			keep.subs[i] = sub.dir
		}
		out.keep = keep
	}
	return l.partitionKeys(f, out)
}

// reuseListing returns the folder's listing from c when the folder's
// modification time is still c's, with every file stat'ed again (a file
// rewritten in place keeps its folder's time). Anything unexpected (a
// file gone or no longer a plain file) makes the caller read the folder.
func (l *lister) reuseListing(f folder, c *folderListing, here *chain) (listed, bool) {
	st, err := os.Stat(f.dir)
	if err != nil || !st.IsDir() || st.ModTime().UnixNano() != c.mtime {
		return listed{}, false
	}
	out := listed{keep: c, files: make([]listedFile, len(c.files))}
	for i, path := range c.files {
		out.unwatched = out.unwatched || !l.watchFile(path)
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return listed{}, false
		}
		out.files[i] = listedFile{path: path, stamp: stampOf(fi)}
		out.unwatched = out.unwatched || !sameDevice(st, fi)
	}
	if len(c.subs) > 0 {
		out.subs = make([]folder, len(c.subs))
		for i, dir := range c.subs {
			out.subs[i] = folder{dir: dir, real: filepath.Join(f.real, filepath.Base(dir)), above: here}
		}
	}
	return out, true
}

// watchFile watches a file of the table before it is stat'ed; false when
// the listing has no watcher or the watch could not be added.
func (l *lister) watchFile(path string) bool {
	return l.watch != nil && l.watch.add(l.tableDir, path, false)
}

// sameDevice reports whether file sits on folder's device, so on a file
// system localFileSystem accepted for the folder.
func sameDevice(folder, file fs.FileInfo) bool {
	if folder == nil {
		return false
	}
	d, _, _, ok := fileIdentity(folder)
	f, _, _, ok2 := fileIdentity(file)
	return ok && ok2 && d == f
}

// partitionKeys gives out's sub-folders the partition keys and values of
// their names.
func (l *lister) partitionKeys(f folder, out listed) listed {
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
