package tpcds

import (
	"bytes"
	"context"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/parquet-go/parquet-go"
)

// The tests share two small data sets, generated once:
//
//   - flat: scale 0.01, the unpartitioned layout, of the tables in
//     testTables, all dates. The content tests (foreign keys, pricing,
//     calibration, sort order) read it; few files keep it cheap.
//   - window: scale 0.01, the partitioned layout, all fact tables but only
//     the partitions dated in [winFrom, winTo] and the NULL partition. Every
//     partition is a file, and file-system work per file dominates at small
//     scales, so the layout tests look at one busy month.
//
// Set TPCDS_FULL_TEST=1 to also compare the two layouts on every table and
// every partition (TestLayoutsSameRowsFull; slow).
var testTables = map[string]bool{
	"store_sales": true, "store_returns": true, "web_sales": true,
	"item": true, "customer": true, "date_dim": true, "store": true, "customer_address": true,
}

// factTables are the partitioned tables.
var factTables = []string{"inventory", "store_sales", "catalog_sales", "web_sales", "store_returns", "catalog_returns", "web_returns"}

const (
	testSeed = 7
	winFrom  = 2451849 // 2000-11-01
	winTo    = 2451878 // 2000-11-30
)

// windowSubset is the window data set: the fact tables and two dimensions.
func windowSubset() subset {
	tabs := map[string]bool{"item": true, "store": true}
	for _, f := range factTables {
		tabs[f] = true
	}
	return subset{tables: tabs, from: winFrom, to: winTo}
}

var (
	sharedOnce sync.Once
	sharedRoot string
	sharedErr  error
)

// shared generates the shared data sets and returns the folder of the one
// named (flat or window).
func shared(t *testing.T, name string) string {
	t.Helper()
	sharedOnce.Do(func() {
		sharedRoot, sharedErr = os.MkdirTemp("", "tpcds-test-")
		if sharedErr != nil {
			return
		}
		ctx := context.Background()
		sharedErr = generate(ctx, Options{Scale: 0.01, Out: filepath.Join(sharedRoot, "flat"), Partitioned: false, RowGroupRows: 4096, Seed: testSeed}, subset{tables: testTables})
		if sharedErr == nil {
			sharedErr = generate(ctx, Options{Scale: 0.01, Out: filepath.Join(sharedRoot, "window"), Partitioned: true, Seed: testSeed, Workers: 4}, windowSubset())
		}
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return filepath.Join(sharedRoot, name)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedRoot != "" {
		_ = os.RemoveAll(sharedRoot)
	}
	os.Exit(code)
}

type rowMap map[string]parquet.Value

// readTable reads every file of a table; the Hive partition value is added
// as a column (NULL for the default partition).
func readTable(t *testing.T, dir, table string) []rowMap {
	t.Helper()
	var out []rowMap
	err := filepath.WalkDir(filepath.Join(dir, table), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r := parquet.NewReader(f)
		cols := r.Schema().Columns()
		var pk string
		var pv parquet.Value
		if base := filepath.Base(filepath.Dir(path)); strings.Contains(base, "=") {
			k, v, _ := strings.Cut(base, "=")
			pk = k
			if v != hiveNull {
				n, _ := strconv.Atoi(v)
				pv = parquet.Int32Value(int32(n))
			}
		}
		buf := make([]parquet.Row, 256)
		for {
			n, err := r.ReadRows(buf)
			for _, row := range buf[:n] {
				m := rowMap{}
				for _, v := range row {
					m[cols[v.Column()][0]] = v.Clone()
				}
				if pk != "" {
					m[pk] = pv
				}
				out = append(out, m)
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
	return out
}

// TestDeterministicAcrossWorkers regenerates the window data set with one
// worker; every file must have the same bytes as with four.
func TestDeterministicAcrossWorkers(t *testing.T) {
	a := shared(t, "window")
	b := filepath.Join(t.TempDir(), "b")
	if err := generate(context.Background(), Options{Scale: 0.01, Out: b, Partitioned: true, Seed: testSeed, Workers: 1}, windowSubset()); err != nil {
		t.Fatal(err)
	}
	n := 0
	err := filepath.WalkDir(a, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(a, path)
		x, _ := os.ReadFile(path)
		y, err := os.ReadFile(filepath.Join(b, rel))
		if err != nil {
			t.Fatalf("%s missing in second run", rel)
		}
		if !bytes.Equal(x, y) {
			t.Fatalf("%s differs between 1 and 4 workers", rel)
		}
		n++
		return nil
	})
	if err != nil || n < 100 {
		t.Fatalf("compared %d files, err %v", n, err)
	}
}

func TestPartitionLayout(t *testing.T) {
	dir := shared(t, "window")
	ents, err := os.ReadDir(filepath.Join(dir, "store_sales"))
	if err != nil {
		t.Fatal(err)
	}
	sawNull := false
	for _, e := range ents {
		k, v, ok := strings.Cut(e.Name(), "=")
		if !ok || k != "ss_sold_date_sk" {
			t.Fatalf("bad partition folder %q", e.Name())
		}
		if v == hiveNull {
			sawNull = true
		} else if n, _ := strconv.Atoi(v); n < winFrom || n > winTo {
			t.Fatalf("partition %s outside the generated window", v)
		}
		if _, err := os.Stat(filepath.Join(dir, "store_sales", e.Name(), "part-0.parquet")); err != nil {
			t.Fatal(err)
		}
	}
	if !sawNull || len(ents) != winTo-winFrom+2 {
		t.Fatalf("%d partitions, NULL partition %v", len(ents), sawNull)
	}
	// The partition column is not stored in the files.
	f, err := os.Open(filepath.Join(dir, "store_sales", ents[0].Name(), "part-0.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range pf.Schema().Columns() {
		if c[0] == "ss_sold_date_sk" {
			t.Fatal("partition column stored in the file")
		}
	}
	if got := len(pf.Schema().Columns()); got != 22 {
		t.Fatalf("store_sales file has %d columns, want 22", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "item", "part-0.parquet")); err != nil {
		t.Fatal(err)
	}
	// Inventory has no NULL partition.
	if _, err := os.Stat(filepath.Join(dir, "inventory", "inv_date_sk="+hiveNull)); !os.IsNotExist(err) {
		t.Fatalf("inventory NULL partition: %v", err)
	}
}

func keySet(rows []rowMap, col string) map[int32]bool {
	s := map[int32]bool{}
	for _, r := range rows {
		if v := r[col]; !v.IsNull() {
			s[v.Int32()] = true
		}
	}
	return s
}

func TestForeignKeys(t *testing.T) {
	dir := shared(t, "flat")
	items := keySet(readTable(t, dir, "item"), "i_item_sk")
	custs := keySet(readTable(t, dir, "customer"), "c_customer_sk")
	dates := keySet(readTable(t, dir, "date_dim"), "d_date_sk")
	stores := keySet(readTable(t, dir, "store"), "s_store_sk")
	addrs := keySet(readTable(t, dir, "customer_address"), "ca_address_sk")
	check := func(rows []rowMap, col string, dim map[int32]bool) {
		t.Helper()
		nulls := 0
		for _, r := range rows {
			v := r[col]
			if v.IsNull() {
				nulls++
				continue
			}
			if !dim[v.Int32()] {
				t.Fatalf("%s = %d has no dimension row", col, v.Int32())
			}
		}
		if nulls == len(rows) {
			t.Fatalf("%s is all NULL", col)
		}
	}
	ss := readTable(t, dir, "store_sales")
	for _, c := range []struct {
		col string
		dim map[int32]bool
	}{{"ss_item_sk", items}, {"ss_customer_sk", custs}, {"ss_sold_date_sk", dates}, {"ss_store_sk", stores}, {"ss_addr_sk", addrs}} {
		check(ss, c.col, c.dim)
	}
	ws := readTable(t, dir, "web_sales")
	check(ws, "ws_item_sk", items)
	check(ws, "ws_ship_date_sk", dates)
	check(ws, "ws_bill_customer_sk", custs)

	// Returns refer to real sales lines: same ticket, item and customer.
	type key struct{ ticket, item int32 }
	sales := map[key]rowMap{}
	for _, r := range ss {
		sales[key{r["ss_ticket_number"].Int32(), r["ss_item_sk"].Int32()}] = r
	}
	sr := readTable(t, dir, "store_returns")
	if len(sr) < len(ss)/20 || len(sr) > len(ss)/5 {
		t.Fatalf("%d returns for %d sales", len(sr), len(ss))
	}
	for _, r := range sr {
		s, ok := sales[key{r["sr_ticket_number"].Int32(), r["sr_item_sk"].Int32()}]
		if !ok {
			t.Fatalf("return of ticket %d item %d has no sale", r["sr_ticket_number"].Int32(), r["sr_item_sk"].Int32())
		}
		if c, sc := r["sr_customer_sk"], s["ss_customer_sk"]; !c.IsNull() && !sc.IsNull() && c.Int32() != sc.Int32() {
			t.Fatal("return customer differs from the sale's")
		}
		if d, sd := r["sr_returned_date_sk"], s["ss_sold_date_sk"]; !d.IsNull() && !sd.IsNull() && d.Int32() <= sd.Int32() {
			t.Fatal("return before the sale")
		}
	}
}

// TestShipDateNullWithoutSoldDate: a catalog or web line without a sold
// date has no ship date (NULL, as in dsdgen's data), not the key 0, which
// no date_dim row has. Only the NULL-date partitions are generated, at a
// scale where they hold lines.
func TestShipDateNullWithoutSoldDate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nulls")
	only := subset{tables: map[string]bool{"catalog_sales": true, "web_sales": true}, from: 1, to: 1}
	if err := generate(context.Background(), Options{Scale: 0.2, Out: dir, Seed: testSeed}, only); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ table, sold, ship string }{
		{"catalog_sales", "cs_sold_date_sk", "cs_ship_date_sk"},
		{"web_sales", "ws_sold_date_sk", "ws_ship_date_sk"},
	} {
		lines := 0
		for _, r := range readTable(t, dir, c.table) {
			if !r[c.sold].IsNull() {
				t.Fatalf("%s: %s = %d outside the NULL partition", c.table, c.sold, r[c.sold].Int32())
			}
			lines++
			if v := r[c.ship]; !v.IsNull() {
				t.Fatalf("%s: a line without %s has %s = %d", c.table, c.sold, c.ship, v.Int32())
			}
		}
		if lines == 0 {
			t.Fatalf("%s: no line without %s at scale 0.2, nothing checked", c.table, c.sold)
		}
	}
}

func TestPricingRelations(t *testing.T) {
	dir := shared(t, "flat")
	get := func(r rowMap, c string) (int64, bool) {
		v := r[c]
		if v.IsNull() {
			return 0, false
		}
		return int64(v.Int32()), true
	}
	checked := 0
	for _, r := range readTable(t, dir, "web_sales") {
		q, ok1 := get(r, "ws_quantity")
		sp, ok2 := get(r, "ws_sales_price")
		lp, ok3 := get(r, "ws_list_price")
		ext, ok4 := get(r, "ws_ext_sales_price")
		extl, ok5 := get(r, "ws_ext_list_price")
		disc, ok6 := get(r, "ws_ext_discount_amt")
		np, ok7 := get(r, "ws_net_paid")
		cp, ok8 := get(r, "ws_coupon_amt")
		tax, ok9 := get(r, "ws_ext_tax")
		npt, ok10 := get(r, "ws_net_paid_inc_tax")
		wc, ok11 := get(r, "ws_ext_wholesale_cost")
		prof, ok12 := get(r, "ws_net_profit")
		if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7 && ok8 && ok9 && ok10 && ok11 && ok12) {
			continue
		}
		checked++
		switch {
		case ext != sp*q:
			t.Fatal("ext_sales_price != sales_price * quantity")
		case extl != lp*q:
			t.Fatal("ext_list_price != list_price * quantity")
		case disc != extl-ext:
			t.Fatal("ext_discount_amt != ext_list_price - ext_sales_price")
		case np != ext-cp:
			t.Fatal("net_paid != ext_sales_price - coupon_amt")
		case npt != np+tax:
			t.Fatal("net_paid_inc_tax != net_paid + ext_tax")
		case prof != np-wc:
			t.Fatal("net_profit != net_paid - ext_wholesale_cost")
		case sp > lp || lp > 30000:
			t.Fatal("prices out of range")
		}
	}
	if checked < 1000 {
		t.Fatalf("only %d complete rows", checked)
	}
}

func TestDateDim(t *testing.T) {
	dir := shared(t, "flat")
	rows := readTable(t, dir, "date_dim")
	if len(rows) != 73049 {
		t.Fatalf("%d date_dim rows", len(rows))
	}
	by := map[int32]rowMap{}
	for _, r := range rows {
		by[r["d_date_sk"].Int32()] = r
	}
	// 2000-01-01 was a Saturday; d_month_seq 1200 is January 2000.
	r := by[2451545]
	if r["d_year"].Int32() != 2000 || r["d_moy"].Int32() != 1 || r["d_dom"].Int32() != 1 ||
		r["d_dow"].Int32() != 6 || string(r["d_day_name"].ByteArray()) != "Saturday" ||
		r["d_month_seq"].Int32() != 1200 || string(r["d_quarter_name"].ByteArray()) != "2000Q1" ||
		r["d_date"].Int32() != 10957 || string(r["d_weekend"].ByteArray()) != "Y" {
		t.Fatalf("2000-01-01 row wrong: %v", r)
	}
	if first := by[2415022]; first["d_year"].Int32() != 1900 || first["d_dom"].Int32() != 2 || first["d_week_seq"].Int32() != 1 {
		t.Fatal("first date_dim row is not 1900-01-02")
	}
}

func TestValueCalibration(t *testing.T) {
	dir := shared(t, "flat")
	items := readTable(t, dir, "item")
	cats := map[string]int{}
	nulls := 0
	for _, r := range items {
		if r["i_category"].IsNull() {
			nulls++
			continue
		}
		cats[string(r["i_category"].ByteArray())]++
	}
	if len(cats) != 10 || cats["Books"] == 0 || cats["Electronics"] == 0 {
		t.Fatalf("categories %v", cats)
	}
	ss := readTable(t, dir, "store_sales")
	n := 0
	for _, r := range ss {
		if r["ss_quantity"].IsNull() {
			n++
		}
	}
	if frac := float64(n) / float64(len(ss)); math.Abs(frac-0.045) > 0.01 {
		t.Fatalf("ss_quantity NULL fraction %.3f, want about 0.045", frac)
	}
}

func TestRowCountScaling(t *testing.T) {
	w1, w01, w10 := newWorld(1, 0), newWorld(0.01, 0), newWorld(10, 0)
	sum := func(c *channel) (n int64) {
		for _, x := range c.tickets {
			n += x
		}
		return
	}
	if got := sum(w1.ch["store"]); got < 239990 || got > 240010 {
		t.Fatalf("store tickets at scale 1: %d", got)
	}
	if got := sum(w01.ch["store"]); got < 2390 || got > 2410 {
		t.Fatalf("store tickets at scale 0.01: %d", got)
	}
	if w1.rows("customer") != 100000 || w1.rows("item") != 18000 || w1.rows("inventory") != 11745000 {
		t.Fatalf("scale-1 sizes: customer %d item %d inventory %d", w1.rows("customer"), w1.rows("item"), w1.rows("inventory"))
	}
	for _, fixed := range []string{"date_dim", "time_dim", "income_band", "household_demographics", "customer_demographics"} {
		if w01.rows(fixed) != w1.rows(fixed) || w10.rows(fixed) != w1.rows(fixed) {
			t.Fatalf("%s is not fixed", fixed)
		}
	}
	if !(w10.rows("customer") > w1.rows("customer") && w10.rows("customer") < 10*w1.rows("customer")) {
		t.Fatal("customer does not grow sub-linearly")
	}
	// November/December peak.
	c := w1.ch["store"]
	nov := c.tickets[julian(1999, 11, 15)-salesFirstSK]
	mar := c.tickets[julian(1999, 3, 15)-salesFirstSK]
	if nov < 2*mar {
		t.Fatalf("no November peak: %d vs %d", nov, mar)
	}
}

// TestUnpartitionedSorted: flat files are sorted by the date key, NULL
// dates last, in row groups of RowGroupRows.
func TestUnpartitionedSorted(t *testing.T) {
	out := shared(t, "flat")
	for _, c := range []struct{ table, col string }{{"store_sales", "ss_sold_date_sk"}, {"web_sales", "ws_sold_date_sk"}} {
		rows := readTable(t, out, c.table)
		prev := int32(0)
		seenNull := false
		for _, r := range rows {
			v := r[c.col]
			if v.IsNull() {
				seenNull = true
				continue
			}
			if seenNull || v.Int32() < prev {
				t.Fatalf("%s is not sorted by %s", c.table, c.col)
			}
			prev = v.Int32()
		}
		// web_sales has too few NULL dates to get any at scale 0.01.
		if !seenNull && c.table == "store_sales" {
			t.Fatal("no NULL sale dates")
		}
		f, _ := os.Open(filepath.Join(out, c.table, "part-0.parquet"))
		defer f.Close()
		st, _ := f.Stat()
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			t.Fatal(err)
		}
		if len(pf.RowGroups()) < 2 {
			t.Fatalf("%d row groups", len(pf.RowGroups()))
		}
		for _, rg := range pf.RowGroups()[:len(pf.RowGroups())-1] {
			if rg.NumRows() != 4096 {
				t.Fatalf("row group of %d rows, want 4096", rg.NumRows())
			}
		}
	}
}

func TestRejectsBadOptions(t *testing.T) {
	if err := Generate(context.Background(), Options{Scale: 0.001, Out: t.TempDir() + "/x"}); err == nil {
		t.Fatal("scale 0.001 accepted")
	}
	if len(TableNames()) != 24 {
		t.Fatal("not 24 tables")
	}
}

func BenchmarkGenerate(b *testing.B) {
	for i := 0; i < b.N; i++ {
		out := filepath.Join(b.TempDir(), "ds")
		if err := generate(context.Background(), Options{Scale: 0.01, Out: out, Partitioned: true}, subset{tables: testTables}); err != nil {
			b.Fatal(err)
		}
	}
}

// TestGenerateFromEnv generates a full data set when TPCDS_OUT is set (for
// timing runs: TPCDS_OUT=/some/dir TPCDS_SCALE=1 go test -run FromEnv).
func TestGenerateFromEnv(t *testing.T) {
	out := os.Getenv("TPCDS_OUT")
	if out == "" {
		t.Skip("TPCDS_OUT not set")
	}
	scale := 1.0
	if s := os.Getenv("TPCDS_SCALE"); s != "" {
		scale, _ = strconv.ParseFloat(s, 64)
	}
	if err := Generate(context.Background(), Options{Scale: scale, Out: out, Partitioned: true, Progress: os.Stderr}); err != nil {
		t.Fatal(err)
	}
}
