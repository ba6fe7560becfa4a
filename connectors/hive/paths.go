package hive

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/fsql-dev/fsql/errs"
)

// Path tables: a query may name a file, a folder or a glob instead of a
// table of the data directory, as a backquoted table name:
//
//	select * from `sales/2024.parquet`
//	select * from `events/**/*.parquet`     -- recursive; year=2024/ folders are partition columns
//	select * from `exports/users.csv`
//	select * from `exports`                 -- a folder: a table folder like any other
//
// A relative path is relative to the data directory. Absolute paths, and
// paths that lead out of the data directory (through "..", or a symlink),
// are refused unless Options.OutsideDataDir is set (the command line sets
// it; a library embedding fsql decides). A path table follows the rules
// of table folders: hidden and marker files are skipped, Parquet files
// are known by content and CSV files by name, symlinks are followed within
// the allowed tree, and freshness is the same (each query's snapshot lists
// the path again; footers are cached by file stamp).
//
// A glob matches path segments with path.Match (*, ?, [...]) and "**"
// matches any number of folders. The glob's fixed part (the folders before
// the first segment with a glob character) is the table's root; key=value
// folders between the root and the files are partition columns, and must
// nest alike for every file matched.

// ErrOutside marks a path table outside the data directory when the
// catalog does not allow those (Options.OutsideDataDir).
var ErrOutside = errs.New(errs.ErOptionPreventsStatement, "path outside the data directory")

// IsPathName reports whether a table name written in a query names a
// file, folder or glob rather than a table of the data directory: it
// holds a '/', ends in .parquet, .csv or .csv.gz, or holds a glob
// character (*, ?, [).
func IsPathName(name string) bool {
	if strings.ContainsAny(name, "/*?[") {
		return true
	}
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".parquet") || isCSVName(n)
}

func hasGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// PathTable returns the table a path names (see IsPathName), listing it
// and reading its footers at the first call to this view; every later call
// with the same name returns the same *Table. Safe for concurrent use.
func (c *Catalog) PathTable(name string) (*Table, error) {
	c.pathMu.Lock()
	e, ok := c.paths[name]
	if !ok {
		e = &entry{name: name}
		c.paths[name] = e
	}
	c.pathMu.Unlock()
	e.once.Do(func() { e.table, e.err = c.loadPath(context.Background(), name) })
	return e.table, e.err
}

// Lookup returns the table a name written in a query means: a path table
// when IsPathName says so, else a table of the data directory.
func (c *Catalog) Lookup(name string) (*Table, error) {
	if IsPathName(name) {
		return c.PathTable(name)
	}
	return c.Table(name)
}

func (c *Catalog) loadPath(ctx context.Context, name string) (*Table, error) {
	if strings.TrimSpace(name) == "" {
		return nil, fmt.Errorf("%w: empty path", ErrNoTable)
	}
	p := filepath.FromSlash(name)
	outside := c.opts.OutsideDataDir
	if filepath.IsAbs(p) {
		if !outside {
			return nil, fmt.Errorf("%w: %s is an absolute path; this engine reads only paths inside its data directory %s, written relative to it (the command line allows absolute paths; a library allows them with Options.OutsideDataDir)",
				ErrOutside, name, c.Dir)
		}
	} else {
		p = filepath.Join(c.Dir, p)
		if rel, err := filepath.Rel(c.Dir, p); !outside && (err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
			return nil, fmt.Errorf("%w: %s leads out of the data directory %s; this engine reads only paths inside it (the command line allows others; a library allows them with Options.OutsideDataDir)",
				ErrOutside, name, c.Dir)
		}
	}
	root := c.root
	if outside {
		root = string(filepath.Separator) // links may lead anywhere
	}
	l := &lister{root: root, table: name}
	if hasGlob(name) {
		// Only the name's own characters are glob syntax: the data
		// directory's path is taken as it is.
		base := c.Dir
		if filepath.IsAbs(filepath.FromSlash(name)) {
			base = string(filepath.Separator)
		}
		return c.loadGlob(ctx, l, name, base, p)
	}
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: no file or folder %s (%s; relative paths are relative to the data directory %s)", ErrNoTable, name, p, c.Dir)
		}
		return nil, fmt.Errorf("%w: %s: %w", ErrNoTable, name, err)
	}
	if st.IsDir() {
		raws, _, _, err := listTable(root, name, p, nil, nil)
		if err != nil {
			return nil, err
		}
		if len(raws) == 0 {
			return nil, fmt.Errorf("%w: table %s has no data files under %s", ErrCorrupt, name, p)
		}
		return c.buildTable(ctx, name, p, p, raws)
	}
	if _, err := l.resolve(p); err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is neither a file nor a folder (%s)", ErrCorrupt, p, st.Mode().Type())
	}
	raw := rawPartition{dir: filepath.Dir(p), files: []listedFile{{path: p, stamp: stampOf(st)}}}
	return c.buildTable(ctx, name, filepath.Dir(p), p, []rawPartition{raw})
}

// loadGlob lists the files the glob name matches under base (the data
// directory, or the root for an absolute name) and makes a table of them;
// key names its footers in the cache.
func (c *Catalog) loadGlob(ctx context.Context, l *lister, name, base, key string) (*Table, error) {
	segs := strings.Split(filepath.ToSlash(name), "/")
	fixed := 0
	for fixed < len(segs) && !hasGlob(segs[fixed]) {
		fixed++
	}
	base = filepath.Join(base, filepath.FromSlash(strings.Join(segs[:fixed], "/")))
	pats := segs[fixed:]
	depth := len(pats) // folders below the base a match can sit in, plus one
	for _, p := range pats {
		if p == "**" {
			depth = -1
			continue
		}
		if strings.Contains(p, "**") {
			return nil, fmt.Errorf("%w: glob %s: ** must be a whole path segment (dir/**/x.parquet)", ErrNoTable, name)
		}
		if _, err := path.Match(p, ""); err != nil {
			return nil, fmt.Errorf("%w: glob %s: bad pattern %q: %w", ErrNoTable, name, p, err)
		}
	}
	real, err := l.resolve(base)
	if err != nil {
		return nil, err
	}
	byDir := map[string]*rawPartition{}
	g := &globWalk{l: l, pats: pats, depth: depth, byDir: byDir}
	if err := g.walk(base, real, nil, nil); err != nil {
		return nil, err
	}
	if len(byDir) == 0 {
		return nil, fmt.Errorf("%w: no data file matches %s (under %s; hidden files and files starting with _ are skipped)", ErrNoTable, name, base)
	}
	raws := make([]rawPartition, 0, len(byDir))
	for _, r := range byDir {
		sort.Slice(r.files, func(i, j int) bool { return r.files[i].path < r.files[j].path })
		raws = append(raws, *r)
	}
	sort.Slice(raws, func(i, j int) bool { return raws[i].dir < raws[j].dir })
	return c.buildTable(ctx, name, base, key, raws)
}

type globWalk struct {
	l     *lister
	pats  []string
	depth int // -1: no limit (the glob has **)
	byDir map[string]*rawPartition
}

// walk lists dir (rel: its segments below the glob's base) and descends
// into its folders, adding the files that match.
func (g *globWalk) walk(dir, real string, rel []string, above *chain) error {
	for c := above; c != nil; c = c.up {
		if c.real == real {
			return fmt.Errorf("%w: %s: folder %s leads back to %s through a symlink (a cycle)", ErrCorrupt, g.l.table, dir, real)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("listing %s: %w", dir, err)
	}
	here := &chain{real: real, up: above}
	for _, e := range ents {
		name := e.Name()
		if skipped(name) {
			continue
		}
		p := filepath.Join(dir, name)
		r := filepath.Join(real, name)
		var fi fs.FileInfo
		if e.Type()&fs.ModeSymlink != 0 {
			if r, err = g.l.resolve(p); err != nil {
				return err
			}
			fi, err = os.Stat(r)
		} else {
			fi, err = e.Info()
		}
		if err != nil {
			return fmt.Errorf("listing %s: %w", dir, err)
		}
		segs := append(append([]string(nil), rel...), name)
		switch {
		case fi.IsDir():
			if g.depth < 0 || len(segs) < g.depth {
				if err := g.walk(p, r, segs, here); err != nil {
					return err
				}
			}
		case fi.Mode().IsRegular() && matchSegments(g.pats, segs):
			raw := g.byDir[dir]
			if raw == nil {
				raw = &rawPartition{dir: dir}
				for _, s := range rel {
					if k, v, ok := strings.Cut(s, "="); ok && k != "" {
						raw.keys = append(raw.keys, unescapePath(k))
						raw.values = append(raw.values, unescapePath(v))
					}
				}
				g.byDir[dir] = raw
			}
			raw.files = append(raw.files, listedFile{path: p, stamp: stampOf(fi)})
		}
	}
	return nil
}

// matchSegments matches path segments against glob segments; "**" matches
// any number of segments.
func matchSegments(pats, segs []string) bool {
	if len(pats) == 0 {
		return len(segs) == 0
	}
	if pats[0] == "**" {
		for i := 0; i <= len(segs); i++ {
			if matchSegments(pats[1:], segs[i:]) {
				return true
			}
		}
		return false
	}
	if len(segs) == 0 {
		return false
	}
	ok, _ := path.Match(pats[0], segs[0])
	return ok && matchSegments(pats[1:], segs[1:])
}
