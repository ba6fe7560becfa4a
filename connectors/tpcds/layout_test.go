package tpcds

import (
	"bytes"
	"context"
	"hash/fnv"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// rowHashes reads every file of a fact table and counts its rows by a hash
// of all their values in the table's column order. In the partitioned layout
// the partition column comes from the folder name (NULL for the default
// partition), so both layouts hash the same full rows.
func rowHashes(t *testing.T, dir, table string) (map[[16]byte]int, int) {
	t.Helper()
	def := buildTables()[table]
	counts := map[[16]byte]int{}
	total := 0
	h := fnv.New128a()
	var scratch []byte
	var sum [16]byte
	full := make([]parquet.Value, len(def.cols))
	err := filepath.WalkDir(filepath.Join(dir, table), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		partitioned := false
		var pv parquet.Value
		if base := filepath.Base(filepath.Dir(path)); strings.Contains(base, "=") {
			k, v, _ := strings.Cut(base, "=")
			if k != def.cols[def.partKey].name {
				t.Fatalf("%s: partition folder %s", table, base)
			}
			partitioned = true
			if v != hiveNull {
				n, err := strconv.Atoi(v)
				if err != nil {
					t.Fatalf("%s: partition folder %s", table, base)
				}
				pv = parquet.Int32Value(int32(n))
			}
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r := parquet.NewReader(f)
		// The stored columns are the table's, minus the partition column.
		var names []string
		for i, c := range def.cols {
			if !partitioned || i != def.partKey {
				names = append(names, c.name)
			}
		}
		cols := r.Schema().Columns()
		if len(cols) != len(names) {
			t.Fatalf("%s: %d columns in %s, want %d", table, len(cols), path, len(names))
		}
		for i, c := range cols {
			if c[0] != names[i] {
				t.Fatalf("%s: column %d is %s, want %s", table, i, c[0], names[i])
			}
		}
		buf := make([]parquet.Row, 512)
		for {
			n, err := r.ReadRows(buf)
			for _, row := range buf[:n] {
				for _, v := range row {
					c := v.Column()
					if partitioned && c >= def.partKey {
						c++
					}
					full[c] = v
				}
				if partitioned {
					full[def.partKey] = pv
				}
				h.Reset()
				for _, v := range full {
					if v.IsNull() {
						scratch = append(scratch[:0], 0xff)
					} else {
						scratch = append(scratch[:0], byte(v.Kind()))
						scratch = v.AppendBytes(scratch)
						scratch = append(scratch, byte(len(scratch)))
					}
					h.Write(scratch)
				}
				h.Sum(sum[:0])
				counts[sum]++
				total++
			}
			if err != nil {
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts, total
}

// compareLayouts checks that every fact table has the same multiset of rows
// in the partitioned data set a and the flat data set b, and that the
// dimension files are byte-identical.
func compareLayouts(t *testing.T, a, b string, dims []string) {
	t.Helper()
	for _, table := range factTables {
		ca, na := rowHashes(t, a, table)
		cb, nb := rowHashes(t, b, table)
		if na == 0 || na != nb {
			t.Fatalf("%s: %d rows partitioned, %d flat", table, na, nb)
		}
		for k, n := range ca {
			if cb[k] != n {
				t.Fatalf("%s: a row appears %d times partitioned, %d times flat", table, n, cb[k])
			}
		}
	}
	for _, d := range dims {
		x, err := os.ReadFile(filepath.Join(a, d, "part-0.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		y, err := os.ReadFile(filepath.Join(b, d, "part-0.parquet"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("dimension %s differs between the layouts", d)
		}
	}
}

// TestLayoutsSameRows: the partitioned and the flat layout of one scale and
// seed hold the same rows (here: the window's partitions of every fact
// table), so one set of golden answers serves both.
func TestLayoutsSameRows(t *testing.T) {
	a := shared(t, "window")
	b := filepath.Join(t.TempDir(), "flat")
	if err := generate(context.Background(), Options{Scale: 0.01, Out: b, Partitioned: false, Seed: testSeed}, windowSubset()); err != nil {
		t.Fatal(err)
	}
	compareLayouts(t, a, b, []string{"item", "store"})
}

// TestLayoutsSameRowsFull compares the layouts on the whole scale-0.01 data
// set (every table, every partition). It writes about 11,000 files, so it
// runs only with TPCDS_FULL_TEST=1. With TPCDS_PARTITIONED_DIR and
// TPCDS_FLAT_DIR it compares two existing data sets instead (for instance
// the golden scale's, written by `fsql gen tpcds` in both layouts).
func TestLayoutsSameRowsFull(t *testing.T) {
	a, b := os.Getenv("TPCDS_PARTITIONED_DIR"), os.Getenv("TPCDS_FLAT_DIR")
	if a == "" || b == "" {
		if os.Getenv("TPCDS_FULL_TEST") == "" {
			t.Skip("TPCDS_FULL_TEST not set")
		}
		a, b = filepath.Join(t.TempDir(), "p"), filepath.Join(t.TempDir(), "f")
		ctx := context.Background()
		if err := generate(ctx, Options{Scale: 0.01, Out: a, Partitioned: true, Seed: testSeed}, subset{}); err != nil {
			t.Fatal(err)
		}
		if err := generate(ctx, Options{Scale: 0.01, Out: b, Partitioned: false, Seed: testSeed}, subset{}); err != nil {
			t.Fatal(err)
		}
	}
	var dims []string
	for _, n := range TableNames() {
		if buildTables()[n].partKey < 0 {
			dims = append(dims, n)
		}
	}
	compareLayouts(t, a, b, dims)
}
