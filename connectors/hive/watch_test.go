//go:build linux

package hive

import (
	"os"
	"path/filepath"
	"testing"
)

// watchedTable makes a data directory with table t of three partitions
// (12 rows each, qty 0..11, 100..111, 200..211), lowers the size that
// opens a notifier to three folders, and returns a catalog that has
// listed t once. tmp/data is the data directory.
func watchedTable(t *testing.T) (data, tdir string, cat *Catalog) {
	t.Helper()
	prev := minWatchedFolders
	minWatchedFolders = 3
	t.Cleanup(func() { minWatchedFolders = prev })
	data = filepath.Join(t.TempDir(), "data")
	tdir = filepath.Join(data, "t")
	for i, y := range []string{"y=1", "y=2", "y=3"} {
		writeParquet(t, filepath.Join(tdir, y, "a"), qtyGroup, qtyRows(12, 100*i))
	}
	ageFolders(t, data)
	if !localFileSystem(data) {
		t.Skipf("%s is not on a file system fsql watches", data)
	}
	cat, err := Open(data)
	if err != nil {
		t.Fatal(err)
	}
	mustTable(t, cat, "t")
	return data, tdir, cat
}

// served reports whether the next view of t would be the last listing's
// table, unchecked.
func served(cat *Catalog, tdir string) bool { return cat.footers.watch.lookup(tdir) != nil }

// A table whose folders had no event is served to the next views as it
// is, after reads of every file too (the scans' own reads are no change).
func TestWatchedTableIsServed(t *testing.T) {
	_, tdir, cat := watchedTable(t)
	first := snapTable(t, cat, "t")
	for range 3 {
		if !served(cat, tdir) {
			t.Fatal("nothing changed, yet the table is not served")
		}
		tb := snapTable(t, cat, "t")
		if tb != first {
			t.Fatal("a served view built its table again")
		}
		if n, _, err := scanQty(tb); err != nil || n != 36 {
			t.Fatalf("read %d rows, %v; want 36", n, err)
		}
	}
}

// Every change an event shows is seen by the next view, including a
// rewrite that keeps size and modification time (which stamps alone
// cannot see) and a data directory swapped for another.
func TestWatchedTableSeesEveryChange(t *testing.T) {
	for _, tc := range []struct {
		name        string
		change      func(t *testing.T, data, tdir string)
		rows, sum   int64
		parts       int
		servedAfter bool // the listing after the change is served again
	}{
		{"file added", func(t *testing.T, _, tdir string) {
			writeParquet(t, filepath.Join(tdir, "y=2", "b"), qtyGroup, qtyRows(5, 1000))
		}, 41, 3798 + 5010, 3, true},
		{"partition added", func(t *testing.T, _, tdir string) {
			writeParquet(t, filepath.Join(tdir, "y=4", "a"), qtyGroup, qtyRows(1, 7))
		}, 37, 3798 + 7, 4, true},
		{"file removed", func(t *testing.T, _, tdir string) {
			must(t, os.Remove(filepath.Join(tdir, "y=3", "a")))
			writeParquet(t, filepath.Join(tdir, "y=3", "b"), qtyGroup, qtyRows(2, 0))
			must(t, os.Remove(filepath.Join(tdir, "y=3", "b")))
		}, 24, 66 + 1266, 2, true},
		{"partition removed", func(t *testing.T, _, tdir string) {
			must(t, os.RemoveAll(filepath.Join(tdir, "y=2")))
		}, 24, 66 + 2466, 2, true},
		{"rewritten in place", func(t *testing.T, _, tdir string) {
			writeParquet(t, filepath.Join(tdir, "y=1", "a"), qtyGroup, qtyRows(30, 0))
		}, 54, 435 + 1266 + 2466, 3, true},
		{"replaced by rename", func(t *testing.T, _, tdir string) {
			writeParquet(t, filepath.Join(tdir, "y=1", ".tmp"), qtyGroup, qtyRows(3, 0))
			must(t, os.Rename(filepath.Join(tdir, "y=1", ".tmp"), filepath.Join(tdir, "y=1", "a")))
		}, 27, 3 + 1266 + 2466, 3, true},
		{"data directory swapped", func(t *testing.T, data, _ string) {
			must(t, os.Rename(data, data+".old"))
			writeParquet(t, filepath.Join(data, "t", "y=9", "a"), qtyGroup, qtyRows(4, 0))
			ageFolders(t, data)
		}, 4, 6, 1, true},
		{"written through another hard link", func(t *testing.T, _, tdir string) {
			other := filepath.Join(filepath.Dir(tdir), "elsewhere")
			must(t, os.Link(filepath.Join(tdir, "y=1", "a"), other))
			f, err := os.OpenFile(other, os.O_WRONLY, 0)
			must(t, err)
			must(t, f.Truncate(0))
			must(t, f.Close())
			writeParquet(t, other, qtyGroup, qtyRows(2, 0)) // in place: the same file
		}, 26, 1 + 1266 + 2466, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, tdir, cat := watchedTable(t)
			if !served(cat, tdir) {
				t.Fatal("the table is not served before the change")
			}
			tc.change(t, data, tdir)
			if served(cat, tdir) {
				t.Fatal("the table is still served after the change")
			}
			tb := snapTable(t, cat, "t")
			n, sum, err := scanQty(tb)
			if err != nil || n != tc.rows || sum != tc.sum || tb.NumRows() != tc.rows || len(tb.Partitions) != tc.parts {
				t.Fatalf("read %d rows summing to %d (%d in footers, %d partitions), %v; want %d rows summing to %d, %d partitions",
					n, sum, tb.NumRows(), len(tb.Partitions), err, tc.rows, tc.sum, tc.parts)
			}
			if got := served(cat, filepath.Join(data, "t")); got != tc.servedAfter {
				t.Fatalf("served after the change was listed: %v, want %v", got, tc.servedAfter)
			}
		})
	}
}

// A reader that finds a file changed (a change no event showed) makes the
// next view list the table again.
func TestChangedFileEndsServing(t *testing.T) {
	_, tdir, cat := watchedTable(t)
	tb := snapTable(t, cat, "t")
	if !served(cat, tdir) {
		t.Fatal("the table is not served")
	}
	tb.noteChanged(ErrChanged)
	if served(cat, tdir) {
		t.Fatal("still served after a reader found a file changed")
	}
}

// Refresh forgets the served tables too.
func TestRefreshEndsServing(t *testing.T) {
	_, tdir, cat := watchedTable(t)
	must(t, cat.Refresh(t.Context()))
	// Refresh lists the table again; serving resumes from that listing,
	// never from one before it.
	if s := cat.footers.watch.served[tdir]; s != nil && s.mark.epoch == 0 {
		t.Fatal("a table listed before Refresh is still served")
	}
}

// A lost event queue makes every table suspect.
func TestOverflowEndsServing(t *testing.T) {
	_, tdir, cat := watchedTable(t)
	w := cat.footers.watch
	w.mu.Lock()
	w.epoch++ // what drain does on IN_Q_OVERFLOW
	w.mu.Unlock()
	if served(cat, tdir) {
		t.Fatal("served after events were lost")
	}
	snapTable(t, cat, "t")
	if !served(cat, tdir) {
		t.Fatal("not served again after the table was listed anew")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
