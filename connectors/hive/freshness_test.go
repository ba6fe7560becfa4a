package hive

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// A view keeps the table it loaded; the next view (the next query) sees
// a file added since, and reuses the footer of the file that did not
// change.
func TestSnapshotSeesAddedFile(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "t", "y=1", "000000_0"), qtyGroup, qtyRows(12, 0))
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := mustTable(t, cat, "t")
	writeParquet(t, filepath.Join(dir, "t", "y=2", "000000_0"), qtyGroup, qtyRows(12, 100))
	writeParquet(t, filepath.Join(dir, "new_table", "a"), qtyGroup, qtyRows(1, 0))

	if again := mustTable(t, cat, "t"); again != first || again.NumRows() != 12 {
		t.Fatalf("the same view changed its table: %d rows", again.NumRows())
	}
	snap, err := cat.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	next := mustTable(t, snap, "t")
	rows, sum, err := scanQty(next)
	if err != nil || rows != 24 || next.NumRows() != 24 || sum != 66+12*100+66 {
		t.Fatalf("next view: %d rows (footers %d), sum %d, %v; want 24", rows, next.NumRows(), sum, err)
	}
	if next.Partitions[0].Files[0] != first.Partitions[0].Files[0] {
		t.Error("the unchanged file's footer was read again instead of reused")
	}
	if _, err := snap.Table("new_table"); err != nil {
		t.Errorf("a table folder added after Open: %v", err)
	}
	// Rows of the old view are still the old view's.
	if rows, _, err := scanQty(first); err != nil || rows != 12 {
		t.Fatalf("old view: %d rows, %v", rows, err)
	}
}

// A file rewritten in place with the same number of row groups but other
// rows: the next view reads its new footer; a view planned before fails
// rather than read new pages with old row counts.
func TestRewriteInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t", "part-0")
	writeParquet(t, path, qtyGroup, qtyRows(2000, 0))
	cat, _ := Open(dir)
	old := mustTable(t, cat, "t")
	writeParquet(t, path, qtyGroup, qtyRows(5692, 0)) // truncates and rewrites the same file
	if len(old.Partitions[0].Files[0].RowGroups) != 1 {
		t.Fatal("want one row group per version")
	}

	snap, _ := cat.Snapshot()
	tb := mustTable(t, snap, "t")
	if rows, _, err := scanQty(tb); err != nil || rows != 5692 || tb.NumRows() != 5692 {
		t.Fatalf("after the rewrite: %d rows (footers %d), %v; want 5692", rows, tb.NumRows(), err)
	}
	_, _, err := scanQty(old)
	wantErr(t, "old view", err, ErrChanged, []string{path, "after the query was planned", "run the query again"})
	// Counting rows reads no page, but the count must be the file's.
	_, err = old.OpenFile(old.Partitions[0], old.Partitions[0].Files[0], ScanOptions{})
	wantErr(t, "count only", err, ErrChanged, []string{path})
}

// Replaced (rename over it) or removed between planning and reading.
func TestChangedBeforeReading(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "t", "a"), filepath.Join(dir, "t", "b")
	writeParquet(t, a, qtyGroup, qtyRows(10, 0))
	writeParquet(t, b, qtyGroup, qtyRows(10, 0))
	cat, _ := Open(dir)
	tb := mustTable(t, cat, "t")
	tmp := filepath.Join(dir, "t", ".a.tmp")
	writeParquet(t, tmp, qtyGroup, qtyRows(11, 0))
	if err := os.Rename(tmp, a); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(b); err != nil {
		t.Fatal(err)
	}
	p := tb.Partitions[0]
	_, err := tb.OpenFile(p, p.Files[0], ScanOptions{Columns: []int{0}})
	wantErr(t, "replaced", err, ErrChanged, []string{a, "after the query was planned"})
	_, err = tb.OpenFile(p, p.Files[1], ScanOptions{Columns: []int{0}})
	wantErr(t, "removed", err, ErrChanged, []string{b, "removed"})
}

// A file appended to while it is read: the reader's last call fails
// instead of ending as if the file were whole.
func TestChangedWhileReading(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t", "a")
	writeParquet(t, path, qtyGroup, qtyRows(5000, 0))
	cat, _ := Open(dir)
	tb := mustTable(t, cat, "t")
	r, err := tb.OpenFile(tb.Partitions[0], tb.Partitions[0].Files[0], ScanOptions{Columns: []int{0}, BatchSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	rec, err := r.Next(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rec.Release()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("appended"))
	f.Close()
	for {
		rec, err := r.Next(context.Background())
		if err == io.EOF {
			t.Fatal("a file that changed while it was read ended without an error")
		}
		if err != nil {
			wantErr(t, "appended", err, ErrChanged, []string{path, "while the query read it"})
			return
		}
		rec.Release()
	}
}

// Size and modification time cannot tell a rewrite that keeps both (same
// size, modification time set back). Refresh makes the next view read
// every footer again.
func TestRefreshRereadsFooters(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "t", "a")
	writeParquet(t, path, qtyGroup, qtyRows(100, 0))
	st, _ := os.Stat(path)
	cat, _ := Open(dir)
	if max := mustTable(t, cat, "t").Partitions[0].Files[0].RowGroups[0].Columns[0].Max; max != int32(99) {
		t.Fatalf("max %v", max)
	}
	writeParquet(t, path, qtyGroup, qtyRows(100, 1000))
	if err := os.Chtimes(path, time.Now(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if st2, _ := os.Stat(path); st2.Size() != st.Size() {
		t.Fatalf("the rewrite changed the size (%d, then %d): the test needs one that keeps it", st.Size(), st2.Size())
	}
	snap, _ := cat.Snapshot()
	if max := mustTable(t, snap, "t").Partitions[0].Files[0].RowGroups[0].Columns[0].Max; max != int32(99) {
		t.Fatalf("a file with its old size and modification time got a new footer (max %v): update doc.go's freshness rule", max)
	}
	if err := cat.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Refresh read the footer again already: the next view finds it warm.
	if f := cat.footers.table(filepath.Join(dir, "t"))[path]; f == nil || f.file.RowGroups[0].Columns[0].Max != int32(1099) {
		t.Fatalf("Refresh did not reload the footer: %+v", f)
	}
	snap, _ = cat.Snapshot()
	if max := mustTable(t, snap, "t").Partitions[0].Files[0].RowGroups[0].Columns[0].Max; max != int32(1099) {
		t.Fatalf("after Refresh: max %v, want 1099", max)
	}
	// Cancelled, Refresh still drops the cache but reads nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := cat.Refresh(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Refresh: %v", err)
	}
	if n := len(cat.footers.table(filepath.Join(dir, "t"))); n != 0 {
		t.Fatalf("cancelled Refresh left %d footers", n)
	}
}

// Files removed from a table leave the footer cache with the next load.
func TestFooterCacheForgetsRemovedFiles(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"a", "b", "c"} {
		writeParquet(t, filepath.Join(dir, "t", f), qtyGroup, qtyRows(1, 0))
	}
	cat, _ := Open(dir)
	mustTable(t, cat, "t")
	os.Remove(filepath.Join(dir, "t", "b"))
	snap, _ := cat.Snapshot()
	if n := mustTable(t, snap, "t").NumRows(); n != 2 {
		t.Fatalf("%d rows", n)
	}
	if n := len(cat.footers.table(filepath.Join(dir, "t"))); n != 2 {
		t.Fatalf("cache holds %d footers, want 2", n)
	}
}

// Views of one catalog load concurrently (go test -race).
func TestConcurrentSnapshots(t *testing.T) {
	dir := t.TempDir()
	writePartitioned(t, dir)
	cat, _ := Open(dir)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			snap, err := cat.Snapshot()
			if err != nil {
				t.Error(err)
				return
			}
			if tb, err := snap.Table("sales"); err != nil || tb.NumRows() != 25 {
				t.Errorf("sales: %v", err)
			}
			if i%3 == 0 {
				if err := cat.Refresh(context.Background()); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
}
