package sltcorpus

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/internal/format"
)

// Rows renders a result's batches as the corpus does, one slice of values
// per row, each value by the letter of its column in types.
func Rows(types string, batches []arrow.RecordBatch) ([][]string, error) {
	var out [][]string
	for _, b := range batches {
		if int(b.NumCols()) != len(types) {
			return nil, fmt.Errorf("the result has %d columns, the query's types %q say %d", b.NumCols(), types, len(types))
		}
		for r := 0; r < int(b.NumRows()); r++ {
			row := make([]string, b.NumCols())
			for c, col := range b.Columns() {
				row[c] = value(types[c], col, r)
			}
			out = append(out, row)
		}
	}
	return out, nil
}

func value(letter byte, col arrow.Array, i int) string {
	text, null := format.Value(col, i)
	if null {
		return "NULL"
	}
	switch letter {
	case 'I':
		switch c := col.(type) {
		case *array.Int64:
			return strconv.FormatInt(c.Value(i), 10)
		case *array.Int32:
			return strconv.FormatInt(int64(c.Value(i)), 10)
		case *array.Float64:
			return strconv.FormatInt(int64(c.Value(i)), 10)
		case *array.Boolean:
			if c.Value(i) {
				return "1"
			}
			return "0"
		}
		return strconv.FormatInt(atoi(text), 10)
	case 'R':
		var f float64
		switch c := col.(type) {
		case *array.Float64:
			f = c.Value(i)
		case *array.Boolean:
			if c.Value(i) {
				f = 1
			}
		default:
			f, _ = strconv.ParseFloat(strings.TrimSpace(text), 64)
		}
		if f == 0 {
			f = 0 // no "-0.000"
		}
		return fmt.Sprintf("%.3f", f)
	}
	if c, ok := col.(*array.Boolean); ok {
		if c.Value(i) {
			return "1"
		}
		return "0"
	}
	if text == "" {
		return "(empty)"
	}
	// The corpus's runner prints control and non-ASCII bytes as '@'.
	b := []byte(text)
	for k, ch := range b {
		if ch < ' ' || ch > '~' {
			b[k] = '@'
		}
	}
	return string(b)
}

// atoi reads a leading integer as C's atoi does: optional sign, digits,
// anything after ignored, 0 when there are none.
func atoi(s string) int64 {
	s = strings.TrimSpace(s)
	neg := false
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for _, ch := range s {
		if ch < '0' || ch > '9' {
			break
		}
		if n > (math.MaxInt64-9)/10 {
			break
		}
		n = n*10 + int64(ch-'0')
	}
	if neg {
		return -n
	}
	return n
}

// Values orders a query's rows by its sort mode and lists the values, row
// by row.
func Values(mode SortMode, rows [][]string) []string {
	switch mode {
	case RowSort:
		rows = slices.Clone(rows)
		slices.SortFunc(rows, func(a, b []string) int { return slices.Compare(a, b) })
	}
	var vals []string
	for _, r := range rows {
		vals = append(vals, r...)
	}
	if mode == ValueSort {
		slices.Sort(vals)
	}
	return vals
}

// Hash is the corpus's hash of a result: the MD5 of every value followed
// by a newline, in hex.
func Hash(vals []string) string {
	h := md5.New()
	for _, v := range vals {
		h.Write([]byte(v))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Check compares a query's values (ordered by Values) with what the record
// expects; the error says how they differ.
func (r *Record) Check(vals []string) error {
	if r.Hashed {
		if len(vals) != r.Count {
			return fmt.Errorf("%d values, want %d", len(vals), r.Count)
		}
		if h := Hash(vals); h != r.Hash {
			return fmt.Errorf("%d values hashing to %s, want %s", len(vals), h, r.Hash)
		}
		return nil
	}
	if !slices.Equal(vals, r.Values) {
		return fmt.Errorf("got %s, want %s", strings.Join(vals, " "), strings.Join(r.Values, " "))
	}
	return nil
}
