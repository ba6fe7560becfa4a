package spill_test

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// batch builds rows [from, from+n) of a schema with an integer, a
// string with NULLs, a decimal, a collated string and a NULL-typed column.
func batch(t *testing.T, alloc memory.Allocator, from, n int) arrow.RecordBatch {
	t.Helper()
	ib := array.NewInt64Builder(alloc)
	sb := array.NewStringBuilder(alloc)
	db := array.NewDecimal128Builder(alloc, &arrow.Decimal128Type{Precision: 12, Scale: 2})
	cb := array.NewStringBuilder(alloc)
	for i := from; i < from+n; i++ {
		ib.Append(int64(i))
		if i%7 == 0 {
			sb.AppendNull()
		} else {
			sb.Append(fmt.Sprintf("row %d", i))
		}
		db.Append(decimal128.FromI64(int64(i) * 101))
		cb.Append(strings.Repeat("x", i%5))
	}
	ia, sa, da, ca := ib.NewArray(), sb.NewArray(), db.NewArray(), cb.NewArray()
	ib.Release()
	sb.Release()
	db.Release()
	cb.Release()
	coll0, err := expr.LookupCollation("utf8mb4_general_ci")
	if err != nil {
		t.Fatal(err)
	}
	ct := coll0.Type()
	coll := expr.Collated(ct, ca)
	ca.Release()
	na := array.MakeArrayOfNull(alloc, arrow.Null, n)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: arrow.PrimitiveTypes.Int64},
		{Name: "s", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "d", Type: &arrow.Decimal128Type{Precision: 12, Scale: 2}},
		{Name: "c", Type: ct},
		{Name: "n", Type: arrow.Null, Nullable: true},
	}, nil)
	cols := []arrow.Array{ia, sa, da, coll, na}
	b := array.NewRecordBatch(schema, cols, int64(n))
	for _, c := range cols {
		c.Release()
	}
	return b
}

func TestRoundTrip(t *testing.T) {
	for _, comp := range []spill.Compression{spill.LZ4, spill.Zstd, spill.None} {
		t.Run(comp.String(), func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			dir := t.TempDir()
			m := spill.NewManager(spill.Config{Dirs: []string{dir}, Compression: comp})
			defer m.Close()
			in := batch(t, alloc, 0, 1000)
			defer in.Release()
			w, err := m.Create("test", in.Schema())
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(in); err != nil {
				t.Fatal(err)
			}
			// A slice writes only its rows.
			sl := in.NewSlice(100, 150)
			if err := w.Write(sl); err != nil {
				t.Fatal(err)
			}
			sl.Release()
			f, err := w.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if f.Rows() != 1050 || f.Records() != 2 || f.Bytes() <= 0 {
				t.Fatalf("file: %d rows, %d records, %d bytes", f.Rows(), f.Records(), f.Bytes())
			}
			r, err := f.Open(alloc)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var got []string
			for {
				b, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if !b.Schema().Equal(in.Schema()) {
					t.Fatalf("schema %v, want %v", b.Schema(), in.Schema())
				}
				if _, ok := b.Column(3).(*expr.CollatedArray); !ok {
					t.Fatalf("collated column read back as %T", b.Column(3))
				}
				for i := 0; i < int(b.NumRows()); i++ {
					var row []string
					for _, c := range b.Columns() {
						row = append(row, c.ValueStr(i))
					}
					got = append(got, strings.Join(row, "|"))
				}
				b.Release()
			}
			var want []string
			for _, rng := range [][2]int{{0, 1000}, {100, 150}} {
				for i := rng[0]; i < rng[1]; i++ {
					var row []string
					for _, c := range in.Columns() {
						row = append(row, c.ValueStr(i))
					}
					want = append(want, strings.Join(row, "|"))
				}
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("read back %d rows differing from the %d written", len(got), len(want))
			}
			st := m.Stats()
			if st.Files != 1 || st.Rows != 1050 || st.Bytes != f.Bytes() {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestFolderLifecycle(t *testing.T) {
	dirA, dirB := t.TempDir(), t.TempDir()
	m := spill.NewManager(spill.Config{Dirs: []string{dirA, dirB}})
	if len(m.Folders()) != 0 {
		t.Fatal("folders before the first file")
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int32}}, nil)
	var files []*spill.File
	for i := 0; i < 3; i++ {
		w, err := m.Create("op", schema)
		if err != nil {
			t.Fatal(err)
		}
		f, err := w.Finish()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	folders := m.Folders()
	if len(folders) != 2 {
		t.Fatalf("folders %v, want one per directory", folders)
	}
	for _, f := range folders {
		if !strings.HasPrefix(filepath.Base(f), spill.Prefix) {
			t.Fatalf("folder %s lacks the prefix", f)
		}
	}
	// A live owner's folder survives a sweep (another engine's Open).
	if removed, err := spill.Sweep([]string{dirA, dirB}); err != nil || len(removed) != 0 {
		t.Fatalf("sweep removed %v (%v) while the owner runs", removed, err)
	}
	files[0].Remove()
	if _, err := os.Stat(files[0].Path()); !os.IsNotExist(err) {
		t.Fatalf("removed file still there: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{dirA, dirB} {
		ents, _ := os.ReadDir(d)
		if len(ents) != 0 {
			t.Fatalf("%s not empty after Close: %v", d, ents)
		}
	}
	if _, err := m.Create("late", schema); !errors.Is(err, spill.ErrSpill) {
		t.Fatalf("create after close: %v", err)
	}
}

// A folder whose lock nobody holds is a crashed process's: Sweep removes
// it. The crash is simulated by writing such a folder by hand.
func TestSweepLeftovers(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, spill.Prefix+"999999-0123456789ab")
	if err := os.MkdirAll(dead, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "owner.lock"), []byte("pid 999999\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dead, "000001-sort-run.arrow"), []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	unrelated := filepath.Join(dir, "not-ours")
	if err := os.Mkdir(unrelated, 0o700); err != nil {
		t.Fatal(err)
	}
	live := spill.NewManager(spill.Config{Dirs: []string{dir}})
	defer live.Close()
	w, err := live.Create("x", arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int8}}, nil))
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	removed, err := spill.Sweep([]string{dir, filepath.Join(dir, "missing")})
	if err != nil {
		t.Fatal(err)
	}
	if len(removed) != 1 || removed[0] != dead {
		t.Fatalf("removed %v, want only %s", removed, dead)
	}
	for _, p := range append(live.Folders(), unrelated) {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s was swept: %v", p, err)
		}
	}
}

// An unusable directory fails clearly, naming it. A path under a regular
// file cannot be a directory for anyone, root included (CI runs as root,
// where a read-only mode bit stops nothing).
func TestUnwritableDirectory(t *testing.T) {
	file := filepath.Join(t.TempDir(), "plain-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(file, "spill")
	m := spill.NewManager(spill.Config{Dirs: []string{bad}})
	defer m.Close()
	_, err := m.Create("sort", arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Int8}}, nil))
	if !errors.Is(err, spill.ErrSpill) || !strings.Contains(err.Error(), bad) || !strings.Contains(err.Error(), "io.tmp.dirs") {
		t.Fatalf("want an ErrSpill naming %s and io.tmp.dirs, got %v", bad, err)
	}
}

func TestConcurrentAt(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
	defer m.Close()
	in := batch(t, alloc, 0, 100)
	defer in.Release()
	w, err := m.Create("shuffle", in.Schema())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		sl := in.NewSlice(int64(i*10), int64(i*10+10))
		if err := w.Write(sl); err != nil {
			t.Fatal(err)
		}
		sl.Release()
	}
	f, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	r, err := f.Open(alloc)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for rep := 0; rep < 20; rep++ {
				i := (g*7 + rep) % 10
				b, err := r.At(i)
				if err != nil {
					errs <- err
					return
				}
				if v := b.Column(0).(*array.Int64).Value(0); v != int64(i*10) {
					errs <- fmt.Errorf("record %d starts at %d", i, v)
				}
				b.Release()
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func TestParse(t *testing.T) {
	if got := spill.ParseDirs(" /a, /b:/c ,,"); strings.Join(got, " ") != "/a /b /c" {
		t.Fatalf("ParseDirs: %q", got)
	}
	for s, want := range map[string]spill.Compression{"LZ4": spill.LZ4, "zstd": spill.Zstd, "none": spill.None} {
		if c, err := spill.ParseCompression(s); err != nil || c != want {
			t.Fatalf("ParseCompression(%q) = %v, %v", s, c, err)
		}
	}
	if _, err := spill.ParseCompression("snappy"); err == nil {
		t.Fatal("snappy accepted")
	}
}
