package tpcds

import (
	"embed"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// The reference statistics measured on dsdgen's scale-1 output. They define
// the schema (summary.psv lists every column in spec order with its type)
// and calibrate the generated values.
//
//go:embed stats/*.psv stats/query_zips.txt
var statsFS embed.FS

type colStat struct {
	typ      string
	min, max string
	nullFrac float64
	avg      float64
}

// valueList is a weighted list of values of one column, NULL included.
type valueList struct {
	vals  []string
	null  []bool
	cum   []uint64
	total uint64
}

// sample picks a value with the measured frequencies.
func (v *valueList) sample(r *rng) (string, bool) {
	x := r.next() % v.total
	i := sort.Search(len(v.cum), func(i int) bool { return v.cum[i] > x })
	return v.vals[i], v.null[i]
}

// nonNull returns the non-NULL values in descending frequency order.
func (v *valueList) nonNull() []string {
	var out []string
	for i, s := range v.vals {
		if !v.null[i] {
			out = append(out, s)
		}
	}
	return out
}

type statSet struct {
	rowCounts map[string]int64
	order     []string // table names in file order
	cols      map[string][]string
	summary   map[string]colStat // "table.column"
	values    map[string]*valueList
	monthly   map[string][]int64 // table -> rows per month index (year*12+month-1) - baseMonth
	perTicket []int64            // index = lines per ticket
	queryZips []string
}

var (
	statsOnce sync.Once
	theStats  *statSet
)

func stats() *statSet {
	statsOnce.Do(func() { theStats = loadStats() })
	return theStats
}

func readPSV(name string) [][]string {
	b, err := statsFS.ReadFile("stats/" + name)
	if err != nil {
		panic("tpcds: embedded statistics missing: " + err.Error())
	}
	var out [][]string
	for i, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if i == 0 || line == "" {
			continue
		}
		out = append(out, strings.Split(line, "|"))
	}
	return out
}

const baseYear = 1998

func loadStats() *statSet {
	s := &statSet{
		rowCounts: map[string]int64{},
		cols:      map[string][]string{},
		summary:   map[string]colStat{},
		values:    map[string]*valueList{},
		monthly:   map[string][]int64{},
	}
	for _, f := range readPSV("row_counts.psv") {
		n, _ := strconv.ParseInt(f[1], 10, 64)
		s.rowCounts[f[0]] = n
	}
	for _, f := range readPSV("summary.psv") {
		if _, ok := s.cols[f[0]]; !ok {
			s.order = append(s.order, f[0])
		}
		s.cols[f[0]] = append(s.cols[f[0]], f[1])
		nf, _ := strconv.ParseFloat(f[6], 64)
		avg, _ := strconv.ParseFloat(f[7], 64)
		s.summary[f[0]+"."+f[1]] = colStat{typ: f[2], min: f[3], max: f[4], nullFrac: nf / 100, avg: avg}
	}
	for _, f := range readPSV("value_counts.psv") {
		key := f[0] + "." + f[1]
		v := s.values[key]
		if v == nil {
			v = &valueList{}
			s.values[key] = v
		}
		n, _ := strconv.ParseUint(f[3], 10, 64)
		v.vals = append(v.vals, f[2])
		v.null = append(v.null, f[2] == "NULL")
		v.total += n
		v.cum = append(v.cum, v.total)
	}
	for _, f := range readPSV("monthly_rows.psv") {
		if f[0] == "store_sales_per_ticket" {
			k, _ := strconv.Atoi(f[1])
			n, _ := strconv.ParseInt(f[2], 10, 64)
			for len(s.perTicket) <= k {
				s.perTicket = append(s.perTicket, 0)
			}
			s.perTicket[k] = n
			continue
		}
		y, _ := strconv.Atoi(f[1])
		m, _ := strconv.Atoi(f[2])
		n, _ := strconv.ParseInt(f[3], 10, 64)
		idx := (y-baseYear)*12 + m - 1
		for len(s.monthly[f[0]]) <= idx {
			s.monthly[f[0]] = append(s.monthly[f[0]], 0)
		}
		s.monthly[f[0]][idx] = n
	}
	b, _ := statsFS.ReadFile("stats/query_zips.txt")
	s.queryZips = strings.Fields(string(b))
	return s
}

// vl returns the value list of table.column, or nil.
func (s *statSet) vl(table, col string) *valueList { return s.values[table+"."+col] }
