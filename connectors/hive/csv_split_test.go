package hive

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// randomCSV writes n records of three text fields and a number, with the
// forms that make line starts differ from record starts: quoted fields
// holding delimiters, doubled quotes and line breaks, escapes (when esc is
// set) before line breaks and quotes, \r\n line ends, blank lines, quotes
// inside unquoted fields.
func randomCSV(rng *rand.Rand, n int, esc byte) string {
	var b strings.Builder
	b.WriteString("\ufeffa,b,c,n\n")
	pieces := []string{"x", "yy", ",", "\n", "\r\n", `""`, " ", "zz,z"}
	if esc != 0 {
		pieces = append(pieces, string(esc)+"\n", string(esc)+`"`, string(esc)+string(esc), string(esc)+"\r\n")
	}
	for i := range n {
		for range 3 {
			switch rng.IntN(4) {
			case 0: // unquoted, maybe with a quote inside
				b.WriteString([]string{"plain", "", `a"b`, `\N`, "q\"\""}[rng.IntN(5)])
			default: // quoted
				b.WriteByte('"')
				for range rng.IntN(5) {
					b.WriteString(pieces[rng.IntN(len(pieces))])
				}
				b.WriteByte('"')
			}
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%d", i)
		if rng.IntN(3) == 0 {
			b.WriteString("\r\n")
		} else {
			b.WriteString("\n")
		}
		if rng.IntN(10) == 0 {
			b.WriteString("\n") // a blank line
		}
	}
	return b.String()
}

// readRanges reads every row group of every file of tb on its own, as the
// tasks of a scan do, and returns the rows in order and the rows per
// group.
func readRanges(t *testing.T, tb *Table) (rows []string, per []int, err error) {
	t.Helper()
	cols := make([]int, len(tb.Schema.Fields()))
	for i := range cols {
		cols[i] = i
	}
	for _, p := range tb.Partitions {
		for _, f := range p.Files {
			for g := range f.RowGroups {
				r, err := tb.OpenFile(p, f, ScanOptions{Columns: cols, RowGroups: []int{g}, BatchSize: 7})
				if err != nil {
					return nil, nil, err
				}
				n := 0
				for {
					rec, err := r.Next(t.Context())
					if err != nil {
						r.Close()
						if err.Error() == "EOF" {
							break
						}
						return nil, nil, err
					}
					for i := range int(rec.NumRows()) {
						var row []string
						for c := range cols {
							row = append(row, strings.Clone(rec.Column(c).ValueStr(i))) // the batch's buffers are recycled
						}
						rows = append(rows, strings.Join(row, "|"))
					}
					n += int(rec.NumRows())
					rec.Release()
				}
				per = append(per, n)
			}
		}
	}
	return rows, per, nil
}

// A CSV file read in byte ranges gives the rows of the file read whole,
// whatever the range size: each range starts at a record, also where a
// line starts inside a quoted field, and the ranges' row counts are exact.
func TestCSVByteRanges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, esc := range []byte{0, '\\'} {
		dir := t.TempDir()
		text := randomCSV(rng, 300, esc)
		mustWrite(t, filepath.Join(dir, "t", "a.csv"), text)
		open := func(split int64) *Table {
			opts := DefaultOptions()
			opts.CSV.Escape = esc
			opts.CSV.SplitSize = split
			cat, err := OpenWith(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			return mustTable(t, cat, "t")
		}
		whole := open(0)
		if n := len(whole.Partitions[0].Files[0].RowGroups); n != 1 {
			t.Fatalf("split size 0: %d row groups", n)
		}
		want, _, err := readRanges(t, whole)
		if err != nil {
			t.Fatalf("escape %q: whole file: %v", esc, err)
		}
		if len(want) != 300 {
			t.Fatalf("escape %q: whole file: %d rows", esc, len(want))
		}
		for _, split := range []int64{1, 2, 3, 5, 17, 64, 100, 1000, int64(len(text)) / 2} {
			tb := open(split)
			f := tb.Partitions[0].Files[0]
			if !f.ByteRanges() {
				t.Fatalf("escape %q, split %d: %d row groups, want several", esc, split, len(f.RowGroups))
			}
			got, per, err := readRanges(t, tb)
			if err != nil {
				t.Fatalf("escape %q, split %d: %v", esc, split, err)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				for i := range min(len(got), len(want)) {
					if got[i] != want[i] {
						t.Fatalf("escape %q, split %d: row %d\n%q\nwant\n%q", esc, split, i, got[i], want[i])
					}
				}
				t.Fatalf("escape %q, split %d: %d rows, want %d", esc, split, len(got), len(want))
			}
			total := int64(0)
			for g, rg := range f.RowGroups {
				if rg.NumRows != int64(per[g]) {
					t.Fatalf("escape %q, split %d: row group %d counts %d rows, read %d", esc, split, g, rg.NumRows, per[g])
				}
				total += rg.Bytes
			}
			if total != f.Size || f.NumRows != 300 {
				t.Fatalf("escape %q, split %d: ranges cover %d of %d bytes, %d rows", esc, split, total, f.Size, f.NumRows)
			}
		}
	}
}

// Errors found in a range name the file's line, as when it is read whole;
// data the tokenizer refuses stops the splitting, and the error comes
// from the range that holds it.
func TestCSVByteRangeErrors(t *testing.T) {
	dir := t.TempDir()
	var late, after, open strings.Builder
	for _, b := range []*strings.Builder{&late, &after, &open} {
		b.WriteString("n,s\n")
	}
	for i := range 200 {
		fmt.Fprintf(&late, "%d,\"a\nb\"\n", i)
		fmt.Fprintf(&after, "%d,\"ab\"\n", i)
		fmt.Fprintf(&open, "%d,ab\n", i)
	}
	late.WriteString("x,y\n") // line 402, after the type sample
	after.WriteString("7,\"a\"b\n8,c\n")
	open.WriteString("3,\"c\n4,d\n5,e\n")
	mustWrite(t, filepath.Join(dir, "late", "a.csv"), late.String())
	mustWrite(t, filepath.Join(dir, "after", "a.csv"), after.String())
	mustWrite(t, filepath.Join(dir, "open", "a.csv"), open.String())
	opts := DefaultOptions()
	opts.CSV.SampleRows = 10
	opts.CSV.SplitSize = 50
	cat, err := OpenWith(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		table string
		want  string
	}{
		{"late", `a.csv line 402, column n: "x" is not a BIGINT`},
		{"after", "a.csv line 202, field 2: \"b\" follows a closing quote"},
		{"open", "a.csv line 202: a quoted field is not closed"},
	} {
		tb := mustTable(t, cat, tc.table)
		if !tb.Partitions[0].Files[0].ByteRanges() {
			t.Errorf("%s: read whole", tc.table)
		}
		_, _, err := readRanges(t, tb)
		if !errors.Is(err, ErrCSV) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.table, err, tc.want)
		}
	}
}

// A gzipped file is read whole, however big.
func TestCSVGzipNotSplit(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("n\n")
	for i := range 1000 {
		fmt.Fprintf(&b, "%d\n", i)
	}
	var gz bytes.Buffer
	z := gzip.NewWriter(&gz)
	z.Write([]byte(b.String()))
	z.Close()
	mustWrite(t, filepath.Join(dir, "t", "a.csv.gz"), gz.String())
	opts := DefaultOptions()
	opts.CSV.SplitSize = 10
	cat, err := OpenWith(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	tb := mustTable(t, cat, "t")
	if f := tb.Partitions[0].Files[0]; f.ByteRanges() || len(f.RowGroups) != 1 {
		t.Fatalf("%d row groups", len(f.RowGroups))
	}
	rows, _, err := readRanges(t, tb)
	if err != nil || len(rows) != 1000 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
}

// Any file read in byte ranges, range after range, gives the rows and the
// first error of the file read whole.
func FuzzCSVByteRanges(f *testing.F) {
	f.Add([]byte("a,b\n1,\"x\ny\"\n2,\"\"\"\n,\"\n\n3,z\r\n"), uint8(3), false)
	f.Add([]byte("\ufeff\"a\",b\n\"1\\\n2\",\\\"\n3,\"4\\\r\n\"\n"), uint8(1), true)
	f.Add([]byte("n\n1\n\n2\n\"3\n"), uint8(2), false)
	f.Fuzz(func(t *testing.T, data []byte, split uint8, escape bool) {
		dir := t.TempDir()
		mustWrite(t, filepath.Join(dir, "t", "a.csv"), string(data))
		read := func(size int64) ([]string, error) {
			opts := DefaultOptions()
			opts.CSV.SampleRows = 3
			opts.CSV.SplitSize = size
			if escape {
				opts.CSV.Escape = '\\'
			}
			cat, err := OpenWith(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			tb, err := cat.Table("t")
			if err != nil {
				return nil, err
			}
			rows, _, err := readRanges(t, tb)
			return rows, err
		}
		want, wantErr := read(0)
		got, err := read(int64(split%16) + 1)
		if fmt.Sprint(wantErr) != fmt.Sprint(err) {
			t.Fatalf("error in ranges %v, whole %v", err, wantErr)
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("rows in ranges\n%q\nwhole\n%q", got, want)
		}
	})
}
