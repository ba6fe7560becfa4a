package hive

import (
	"fmt"
	"os"
	"sync"
)

// footerCache keeps the footers of every table a view of the data
// directory has loaded, so the next query's view re-lists the folders but
// reads only the footers of files that are new or changed. An entry is
// used only while its file's stamp (size and modification time) is the
// one seen when the footer was read; each load replaces the table's
// entries with those of its listing, so files deleted from the table drop
// out of the cache.
type footerCache struct {
	mu     sync.Mutex
	tables map[string]map[string]*footer // table folder -> file path -> footer
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
	return &footerCache{tables: map[string]map[string]*footer{}}
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
