package hive

import (
	"fmt"
	"os"
	"slices"
	"sync"
)

// footerCache keeps the footers of every table a view of the data
// directory has loaded, so the next query's view re-lists the folders but
// reads only the footers of files that are new or changed. An entry is
// used only while its file's stamp (size and modification time) is the
// one seen when the footer was read; each load replaces the table's
// entries with those of its listing, so files deleted from the table drop
// out of the cache.
//
// Beside the footers it keeps, per table folder, the folder listings the
// last load may reuse (folderListing: valid while a folder's modification
// time is unchanged) and the table that load built, which the next load
// returns as it is when it lists exactly the same files with the same
// stamps: a query then pays one stat per folder and per file, not a
// folder read per folder and the table's assembly (typing partitions,
// uniting every file's columns).
type footerCache struct {
	mu      sync.Mutex
	tables  map[string]map[string]*footer        // table folder -> file path -> footer
	folders map[string]map[string]*folderListing // table folder -> folder -> listing
	built   map[string]*builtTable               // table folder (path tables: their key) -> last table
	// watch serves tables whose folders had no change notification since
	// their listing (watch.go); it has its own lock.
	watch *watcher
}

// builtTable is a table as one load built it, with the listing it was
// built from.
type builtTable struct {
	raws  []rawPartition
	table *Table
}

// serves reports whether b is the table a load of these partitions would
// build: same name, folder and settings, the same partition folders with
// the same values, and the same files with the same stamps.
func (b *builtTable) serves(name, dir string, opts Options, raws []rawPartition) bool {
	t := b.table
	if t.Name != name || t.Dir != dir || t.opts != opts || len(b.raws) != len(raws) {
		return false
	}
	for i := range raws {
		x, y := &b.raws[i], &raws[i]
		if x.dir != y.dir || !slices.Equal(x.keys, y.keys) || !slices.Equal(x.values, y.values) || !slices.Equal(x.files, y.files) {
			return false
		}
	}
	return true
}

// footer is one file's parsed footer (for a CSV file: its header and
// detected types), valid for one stamp of the file.
type footer struct {
	stamp fileStamp
	file  *File
}

// matches reports whether a cached footer serves a table of this format
// read with these CSV options (a CSV file's detection depends on them).
func (f *footer) matches(format Format, opts *CSVOptions) bool {
	if format == CSV {
		return f.file.csv != nil && f.file.csv.opts == *opts
	}
	return f.file.csv == nil
}

func newFooterCache() *footerCache {
	return &footerCache{
		tables:  map[string]map[string]*footer{},
		folders: map[string]map[string]*folderListing{},
		built:   map[string]*builtTable{},
		watch:   newWatcher(),
	}
}

// listings returns the folder listings the last load of the table in dir
// kept. The map is never written after it is stored.
func (c *footerCache) listings(dir string) map[string]*folderListing {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.folders[dir]
}

func (c *footerCache) storeListings(dir string, l map[string]*folderListing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.folders[dir] = l
}

// lastBuilt returns the table the last load under key built, or nil.
func (c *footerCache) lastBuilt(key string) *builtTable {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.built[key]
}

func (c *footerCache) storeBuilt(key string, b *builtTable) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.built[key] = b
}

// table returns the cached footers of the table in dir. The map is never
// written after it is stored, so it may be read without the lock.
func (c *footerCache) table(dir string) map[string]*footer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tables[dir]
}

func (c *footerCache) store(dir string, footers map[string]*footer) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tables[dir] = footers
}

// clear drops every footer and returns the table folders that had some.
func (c *footerCache) clear() map[string]bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	had := make(map[string]bool, len(c.tables))
	for dir := range c.tables {
		had[dir] = true
	}
	c.tables = map[string]map[string]*footer{}
	c.folders = map[string]map[string]*folderListing{}
	c.built = map[string]*builtTable{}
	c.watch.forgetAll()
	return had
}

// checkStamp fails with ErrChanged when the file now has another stamp
// than the one the query was planned with.
func checkStamp(f *File, now fileStamp, when string) error {
	if now == f.stamp {
		return nil
	}
	return fmt.Errorf("%w: %s changed %s (planned with %s, now %s); run the query again",
		ErrChanged, f.Path, when, f.stamp, now)
}

// statStamp is the current stamp of path.
func statStamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return stampOf(fi), nil
}
