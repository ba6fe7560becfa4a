package spill_test

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/spill"
)

// rowsOf renders rows [from, to) of b, one string per row.
func rowsOf(b arrow.RecordBatch, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		var row []string
		for _, c := range b.Columns() {
			row = append(row, c.ValueStr(i))
		}
		out = append(out, strings.Join(row, "|"))
	}
	return out
}

// arrowFiles lists the spill files under dir.
func arrowFiles(t *testing.T, dir string) []string {
	t.Helper()
	got, err := filepath.Glob(filepath.Join(dir, spill.Prefix+"*", "*.arrow"))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestPartWriter writes three partitions in small pieces, interleaved,
// into one file: each partition reads back its own rows in order, the
// pieces gathered into few records, and the file goes when the last
// partition is removed.
func TestPartWriter(t *testing.T) {
	for _, comp := range []spill.Compression{spill.LZ4, spill.None} {
		t.Run(comp.String(), func(t *testing.T) {
			alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer alloc.AssertSize(t, 0)
			dir := t.TempDir()
			m := spill.NewManager(spill.Config{Dirs: []string{dir}, Compression: comp})
			defer m.Close()
			schema := batch(t, alloc, 0, 1)
			schema.Release()
			pw, err := m.CreateParts("test", schema.Schema(), 4, spill.PartRecordBytes)
			if err != nil {
				t.Fatal(err)
			}
			want := make([][]string, 4)
			// Pieces of 10 rows: row block k goes to partition k%3
			// (partition 3 gets none).
			for k := 0; k < 300; k++ {
				p := k % 3
				piece := batch(t, alloc, 10*k, 10)
				if err := pw.Write(p, piece); err != nil {
					t.Fatal(err)
				}
				want[p] = append(want[p], rowsOf(piece, 0, 10)...)
				piece.Release()
			}
			files, err := pw.Finish()
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 4 || files[3] != nil {
				t.Fatalf("%d files, the empty partition's %v", len(files), files[3])
			}
			if st := m.Stats(); st.Files != 1 || st.Rows != 3000 {
				t.Fatalf("stats %+v, want one file of 3000 rows", st)
			}
			for p, f := range files[:3] {
				// 100 pieces of a few hundred bytes each gather into a
				// few records.
				if f.Rows() != 1000 || f.Records() > 10 {
					t.Fatalf("partition %d: %d rows in %d records", p, f.Rows(), f.Records())
				}
				r, err := f.Open(alloc)
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				for {
					b, err := r.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if _, ok := b.Column(3).(*expr.CollatedArray); !ok {
						t.Fatalf("collated column read back as %T", b.Column(3))
					}
					got = append(got, rowsOf(b, 0, int(b.NumRows()))...)
					b.Release()
				}
				if _, err := r.At(f.Records()); err == nil {
					t.Fatal("a record past the partition's was read")
				}
				r.Close()
				if strings.Join(got, "\n") != strings.Join(want[p], "\n") {
					t.Fatalf("partition %d: read back %d rows differing from the %d written", p, len(got), len(want[p]))
				}
			}
			if n := len(arrowFiles(t, dir)); n != 1 {
				t.Fatalf("%d files on disk, want 1", n)
			}
			files[0].Remove()
			files[0].Remove() // twice counts once
			files[1].Remove()
			if n := len(arrowFiles(t, dir)); n != 1 {
				t.Fatalf("%d files on disk with a partition still to read, want 1", n)
			}
			files[2].Remove()
			if left := arrowFiles(t, dir); len(left) != 0 {
				t.Fatalf("left %v after every partition was removed", left)
			}
		})
	}
}

// TestPartWriterBounds: a record never gathers past the writer's record
// size (what its reader may hold), and what the writer holds over all
// partitions stays under PartPendingBytes.
func TestPartWriterBounds(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	m := spill.NewManager(spill.Config{Dirs: []string{t.TempDir()}})
	defer m.Close()
	for _, c := range []struct {
		record int64
		most   int // rows a record may hold: pieces of 10 rows, about 40 bytes each
	}{
		{0, 10},       // every piece is a record of its own
		{2 << 10, 70}, // 2 KiB: about 5 pieces
		{1 << 30, 8192},
	} {
		first := batch(t, alloc, 0, 1)
		pw, err := m.CreateParts("bounds", first.Schema(), 16, c.record)
		first.Release()
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 400; k++ {
			piece := batch(t, alloc, 10*k, 10)
			err := pw.Write(k%16, piece)
			piece.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
		files, err := pw.Finish()
		if err != nil {
			t.Fatal(err)
		}
		for p, f := range files {
			r, err := f.Open(alloc)
			if err != nil {
				t.Fatal(err)
			}
			for {
				b, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if int(b.NumRows()) > c.most {
					t.Errorf("record size %d: partition %d has a record of %d rows, want at most %d", c.record, p, b.NumRows(), c.most)
				}
				b.Release()
			}
			r.Close()
			f.Remove()
		}
	}
}

// TestPartWriterAbort leaves nothing on disk and holds no buffer.
func TestPartWriterAbort(t *testing.T) {
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	dir := t.TempDir()
	m := spill.NewManager(spill.Config{Dirs: []string{dir}})
	defer m.Close()
	in := batch(t, alloc, 0, 20000)
	defer in.Release()
	pw, err := m.CreateParts("abort", in.Schema(), 2, spill.PartRecordBytes)
	if err != nil {
		t.Fatal(err)
	}
	// Enough rows that records were written, and some still gathered.
	if err := pw.Write(0, in); err != nil {
		t.Fatal(err)
	}
	small := in.NewSlice(0, 5)
	if err := pw.Write(1, small); err != nil {
		t.Fatal(err)
	}
	small.Release()
	if len(arrowFiles(t, dir)) != 1 {
		t.Fatal("no file written before the abort")
	}
	pw.Abort()
	pw.Abort()
	if left := arrowFiles(t, dir); len(left) != 0 {
		t.Fatalf("left %v after Abort", left)
	}
	if _, err := pw.Finish(); err == nil {
		t.Fatal("Finish after Abort succeeded")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
}
