package querygen

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/fsql-dev/fsql/internal/slt"
)

// Dataset is a set of small tables and the schema describing them.
type Dataset struct {
	Schema *Schema
	Tables []*slt.Table
}

// Small returns a random star schema of small, NULL-rich tables for tests
// that run generated queries: a fact f Hive-partitioned by k2 (with a NULL
// partition), dimensions d1 and d2 (d2 partitioned by a string with a
// NULL partition) that some fact keys miss, and a three-row table e for
// cross joins. Values repeat, so groups, ties and duplicates are common;
// strings include the empty string and mixed case. The same seed gives
// the same tables.
func Small(seed uint64) *Dataset {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	null := func(pct int) bool { return r.IntN(100) < pct }
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	date := func() string { return fmt.Sprintf("2000-%02d-%02d", 1+r.IntN(3), 1+r.IntN(28)) }
	decimal := func(max int) string {
		n := r.IntN(2*max*100+1) - max*100
		sign := ""
		if n < 0 {
			sign, n = "-", -n
		}
		return fmt.Sprintf("%s%d.%02d", sign, n/100, n%100)
	}
	orNull := func(pct int, v string) string {
		if null(pct) {
			return "NULL"
		}
		return v
	}
	strs := []string{"a", "b", "A", "ab", "(empty)", "x y", "B", "b"}

	nd1, nd2 := 1+r.IntN(8), 1+r.IntN(6)
	d1 := &slt.Table{Name: "d1", Columns: []slt.Column{
		{Name: "k1", Type: slt.Int}, {Name: "name", Type: slt.Varchar},
		{Name: "x", Type: slt.Int}, {Name: "y", Type: slt.Decimal, Precision: 5, Scale: 2}}}
	for i := 1; i <= nd1; i++ {
		d1.Rows = append(d1.Rows, []string{fmt.Sprint(i), orNull(15, pick("n1", "n2", "n3", "N1", "(empty)")),
			orNull(15, fmt.Sprint(r.IntN(6)-2)), orNull(15, decimal(20))})
	}
	d2 := &slt.Table{Name: "d2", PartitionBy: []string{"cat"}, Columns: []slt.Column{
		{Name: "k2", Type: slt.Int}, {Name: "cat", Type: slt.Varchar},
		{Name: "day", Type: slt.Date}, {Name: "z", Type: slt.BigInt}}}
	for i := 1; i <= nd2; i++ {
		d2.Rows = append(d2.Rows, []string{fmt.Sprint(i), orNull(15, pick("p", "q", "r")),
			orNull(15, date()), orNull(15, pick("0", "1", "-1", "40", "3000000000"))})
	}
	f := &slt.Table{Name: "f", PartitionBy: []string{"k2"}, Columns: []slt.Column{
		{Name: "id", Type: slt.Int}, {Name: "k1", Type: slt.Int}, {Name: "k2", Type: slt.Int},
		{Name: "a", Type: slt.Int}, {Name: "b", Type: slt.BigInt},
		{Name: "c", Type: slt.Decimal, Precision: 7, Scale: 2}, {Name: "s", Type: slt.Varchar},
		{Name: "dt", Type: slt.Date}}}
	cs := []string{decimal(50), decimal(50), decimal(5), "0.00", decimal(50)}
	nf := 1 + r.IntN(60)
	for i := 1; i <= nf; i++ {
		k2 := orNull(10, fmt.Sprint(1+r.IntN(nd2+1)))
		if i == 1 {
			k2 = "1" // a partition key with a value, so it is typed INT
		}
		f.Rows = append(f.Rows, []string{fmt.Sprint(i), orNull(10, fmt.Sprint(1+r.IntN(nd1+2))), k2,
			orNull(15, fmt.Sprint(r.IntN(10)-3)), orNull(10, pick("0", "1", "-1", "7", "100", "2147483648", "-5000000000")),
			orNull(10, pick(cs...)), orNull(10, pick(strs...)), orNull(10, date())})
	}
	e := &slt.Table{Name: "e", Columns: []slt.Column{{Name: "v", Type: slt.Int}, {Name: "w", Type: slt.Varchar}}}
	for i := 1; i <= 3; i++ {
		e.Rows = append(e.Rows, []string{fmt.Sprint(i), orNull(30, pick("u", "v", "(empty)"))})
	}
	ds := &Dataset{Tables: []*slt.Table{f, d1, d2, e}, Schema: &Schema{Links: []Link{
		{From: "f", FromCol: "k1", To: "d1", ToCol: "k1"},
		{From: "f", FromCol: "k2", To: "d2", ToCol: "k2"},
		{From: "d1", FromCol: "x", To: "e", ToCol: "v"},
	}}}
	keys := map[string][]string{"f": {"id"}, "d1": {"k1"}, "d2": {"k2"}, "e": {"v"}}
	for _, t := range ds.Tables {
		qt := &Table{Name: t.Name, Key: keys[t.Name], Rows: int64(len(t.Rows))}
		for i, c := range t.Columns {
			col := Column{Name: c.Name, Type: map[slt.TypeName]Type{slt.Int: Int, slt.BigInt: Int, slt.Decimal: Decimal, slt.Varchar: String, slt.Date: Date}[c.Type]}
			seen := map[string]bool{}
			for _, row := range t.Rows {
				v := row[i]
				if v == "(empty)" {
					v = ""
				}
				if row[i] != "NULL" && !seen[v] {
					seen[v] = true
					col.Values = append(col.Values, v)
				}
			}
			qt.Columns = append(qt.Columns, col)
		}
		ds.Schema.Tables = append(ds.Schema.Tables, qt)
	}
	return ds
}

// SLT renders the tables in the .slt format (internal/slt), so a failing
// case can be pasted into a test file as it stands.
func (d *Dataset) SLT() string {
	var b strings.Builder
	for _, t := range d.Tables {
		var cols []string
		for _, c := range t.Columns {
			typ := map[slt.TypeName]string{slt.Int: "int", slt.BigInt: "bigint", slt.Varchar: "varchar", slt.Date: "date"}[c.Type]
			if c.Type == slt.Decimal {
				typ = fmt.Sprintf("decimal(%d,%d)", c.Precision, c.Scale)
			}
			cols = append(cols, c.Name+" "+typ)
		}
		if len(t.PartitionBy) > 0 {
			fmt.Fprintf(&b, "partitioned table %s (%s) by (%s)\n", t.Name, strings.Join(cols, ", "), strings.Join(t.PartitionBy, ", "))
		} else {
			fmt.Fprintf(&b, "table %s (%s)\n", t.Name, strings.Join(cols, ", "))
		}
		for _, row := range t.Rows {
			b.WriteString(strings.Join(row, "\t") + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}
