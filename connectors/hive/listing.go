package hive

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
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
// where a file sits in the table; real paths serve only to keep links
// inside the data directory and to catch cycles.
type lister struct {
	root  string // the data directory, every symlink resolved
	table string
	out   []rawPartition
}

// listTable finds the leaf partition folders of the table in dir.
func listTable(root, table, dir string) ([]rawPartition, error) {
	l := &lister{root: root, table: table}
	real, err := l.resolve(dir)
	if err != nil {
		return nil, err
	}
	if err := l.walk(dir, real, nil, nil, map[string]bool{}); err != nil {
		return nil, err
	}
	sort.Slice(l.out, func(i, j int) bool { return l.out[i].dir < l.out[j].dir })
	return l.out, nil
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

// walk lists dir (whose resolved path is real), descending into partition
// folders. onPath holds the resolved folders from the table folder down,
// so a link back up is an error, not an endless walk.
func (l *lister) walk(dir, real string, keys, values []string, onPath map[string]bool) error {
	if onPath[real] {
		return fmt.Errorf("%w: table %s: folder %s leads back to %s through a symlink (a cycle)", ErrCorrupt, l.table, dir, real)
	}
	onPath[real] = true
	defer delete(onPath, real)
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing table folder %s: %w", dir, err)
	}
	type sub struct{ name, path, real string }
	var files []listedFile
	var subs []sub
	for _, e := range ents {
		name := e.Name()
		if skipped(name) {
			continue
		}
		path := filepath.Join(dir, name)
		var fi fs.FileInfo
		subReal := filepath.Join(real, name)
		if e.Type()&fs.ModeSymlink != 0 {
			if subReal, err = l.resolve(path); err != nil {
				return err
			}
			fi, err = os.Stat(subReal)
		} else {
			fi, err = e.Info()
		}
		if err != nil {
			return fmt.Errorf("listing table folder %s: %w", dir, err)
		}
		switch {
		case fi.IsDir():
			subs = append(subs, sub{name, path, subReal})
		case fi.Mode().IsRegular():
			files = append(files, listedFile{path: path, stamp: stampOf(fi)})
		default:
			return fmt.Errorf("%w: table %s: %s is neither a file nor a folder (%s); remove it or rename it to start with . or _", ErrCorrupt, l.table, path, fi.Mode().Type())
		}
	}
	if len(files) > 0 && len(subs) > 0 {
		return fmt.Errorf("%w: folder %s holds both files (%s) and sub-folders (%s); Hive tables keep files only in the innermost partition folders",
			ErrCorrupt, dir, filepath.Base(files[0].path), subs[0].name)
	}
	if len(files) > 0 {
		sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
		l.out = append(l.out, rawPartition{keys: append([]string(nil), keys...), values: append([]string(nil), values...), dir: dir, files: files})
		return nil
	}
	for _, s := range subs {
		k, v, ok := strings.Cut(s.name, "=")
		if !ok || k == "" {
			return fmt.Errorf("%w: folder %s is not a partition folder (want key=value)", ErrCorrupt, s.path)
		}
		if err := l.walk(s.path, s.real, append(keys, unescapePath(k)), append(values, unescapePath(v)), onPath); err != nil {
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
