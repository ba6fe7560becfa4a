package hive

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// ageFolders sets the modification time of dir and of every folder under
// it an hour back, as for data written long before the query: only such
// folders are trusted by their time (racyWindow).
func ageFolders(t testing.TB, dir string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.Walk(dir, func(path string, fi os.FileInfo, err error) error {
		if err == nil && fi.IsDir() {
			err = os.Chtimes(path, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func snapTable(t *testing.T, cat *Catalog, name string) *Table {
	t.Helper()
	snap, err := cat.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	return mustTable(t, snap, name)
}

// A view whose listing finds the same files with the same stamps gets the
// table the last view built; any change the stamps or folder times show
// makes the next view build a new table with it.
func TestListingCacheSeesEveryChange(t *testing.T) {
	dir := t.TempDir()
	tdir := filepath.Join(dir, "t")
	writeParquet(t, filepath.Join(tdir, "y=1", "a"), qtyGroup, qtyRows(12, 0))
	writeParquet(t, filepath.Join(tdir, "y=2", "a"), qtyGroup, qtyRows(12, 100))
	ageFolders(t, dir)
	cat, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	first := mustTable(t, cat, "t")
	if n := len(cat.footers.listings(tdir)); n != 3 {
		t.Fatalf("%d folder listings kept, want 3 (the table folder and two partitions)", n)
	}
	if again := snapTable(t, cat, "t"); again != first {
		t.Fatal("nothing changed, yet the next view built its table again")
	}

	check := func(what string, rows int64, parts int) {
		t.Helper()
		tb := snapTable(t, cat, "t")
		n, _, err := scanQty(tb)
		if err != nil || n != rows || tb.NumRows() != rows || len(tb.Partitions) != parts {
			t.Fatalf("%s: %d rows read, %d in footers, %d partitions, %v; want %d rows, %d partitions",
				what, n, tb.NumRows(), len(tb.Partitions), err, rows, parts)
		}
		ageFolders(t, dir)
		snapTable(t, cat, "t") // keeps the aged listings for the next step
	}
	// A file rewritten in place leaves its folder's time alone.
	writeParquet(t, filepath.Join(tdir, "y=1", "a"), qtyGroup, qtyRows(30, 0))
	check("rewritten in place", 42, 2)
	// A file added to a partition.
	writeParquet(t, filepath.Join(tdir, "y=2", "b"), qtyGroup, qtyRows(5, 0))
	check("file added", 47, 2)
	// A partition added.
	writeParquet(t, filepath.Join(tdir, "y=3", "a"), qtyGroup, qtyRows(1, 0))
	check("partition added", 48, 3)
	// A file removed, its folder's time set back to what the listing saw:
	// the stat of the listed file fails and the folder is read again.
	ydir := filepath.Join(tdir, "y=2")
	st, _ := os.Stat(ydir)
	if err := os.Remove(filepath.Join(ydir, "b")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(ydir, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	check("file removed", 43, 3)
	// A partition removed.
	if err := os.RemoveAll(filepath.Join(tdir, "y=3")); err != nil {
		t.Fatal(err)
	}
	check("partition removed", 42, 2)
}

// A file added to a folder whose time is then set back to what the last
// listing saw is what folder times cannot show; Refresh forgets the kept
// listings, so the next view reads every folder again.
func TestRefreshForgetsListings(t *testing.T) {
	dir := t.TempDir()
	ydir := filepath.Join(dir, "t", "y=1")
	writeParquet(t, filepath.Join(ydir, "a"), qtyGroup, qtyRows(12, 0))
	ageFolders(t, dir)
	cat, _ := Open(dir)
	mustTable(t, cat, "t")
	st, _ := os.Stat(ydir)
	writeParquet(t, filepath.Join(ydir, "b"), qtyGroup, qtyRows(3, 0))
	if err := os.Chtimes(ydir, st.ModTime(), st.ModTime()); err != nil {
		t.Fatal(err)
	}
	if n := snapTable(t, cat, "t").NumRows(); n != 12 {
		t.Fatalf("%d rows before Refresh; the test no longer shows what folder times miss", n)
	}
	if err := cat.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := snapTable(t, cat, "t").NumRows(); n != 15 {
		t.Fatalf("%d rows after Refresh, want 15", n)
	}
}

// A folder changed within racyWindow of its listing is not kept: a change
// in the same clock tick would leave its time as the listing saw it.
func TestRecentFoldersAreNotKept(t *testing.T) {
	dir := t.TempDir()
	tdir := filepath.Join(dir, "t")
	writeParquet(t, filepath.Join(tdir, "y=1", "a"), qtyGroup, qtyRows(12, 0))
	ageFolders(t, dir)
	writeParquet(t, filepath.Join(tdir, "y=2", "a"), qtyGroup, qtyRows(12, 0)) // y=2 and t are new
	cat, _ := Open(dir)
	mustTable(t, cat, "t")
	kept := cat.footers.listings(tdir)
	if len(kept) != 1 || kept[filepath.Join(tdir, "y=1")] == nil {
		t.Fatalf("kept listings %v, want only y=1", kept)
	}
}

// Folders holding symlinks are read at every view: a link's target can
// change without its folder changing.
func TestFoldersWithLinksAreNotKept(t *testing.T) {
	dir := t.TempDir()
	writeParquet(t, filepath.Join(dir, "data", "a"), qtyGroup, qtyRows(12, 0))
	writeParquet(t, filepath.Join(dir, "data", "b"), qtyGroup, qtyRows(3, 0))
	if err := os.MkdirAll(filepath.Join(dir, "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "t", "x")
	if err := os.Symlink(filepath.Join(dir, "data", "a"), link); err != nil {
		t.Fatal(err)
	}
	ageFolders(t, dir)
	cat, _ := Open(dir)
	if n := mustTable(t, cat, "t").NumRows(); n != 12 {
		t.Fatalf("%d rows", n)
	}
	if n := len(cat.footers.listings(filepath.Join(dir, "t"))); n != 0 {
		t.Fatalf("%d listings kept of a folder with a link", n)
	}
	// Retarget the link and set the folder's time back: still seen.
	st, _ := os.Stat(filepath.Join(dir, "t"))
	os.Remove(link)
	if err := os.Symlink(filepath.Join(dir, "data", "b"), link); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(dir, "t"), st.ModTime(), st.ModTime())
	if n := snapTable(t, cat, "t").NumRows(); n != 3 {
		t.Fatalf("%d rows after retargeting the link, want 3", n)
	}
}
