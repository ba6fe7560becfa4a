package sltcorpus

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Kind tells the records of a script apart.
type Kind int

// The record kinds.
const (
	// KindStatement is `statement ok` or `statement error` and one SQL
	// statement.
	KindStatement Kind = iota
	// KindQuery is a query with its expected result.
	KindQuery
	// KindHashThreshold sets the number of values above which results
	// are written hashed (the value is in Threshold).
	KindHashThreshold
	// KindHalt stops the script.
	KindHalt
)

// SortMode is how a query's values are ordered before comparing.
type SortMode int

// The sort modes of the corpus.
const (
	NoSort SortMode = iota
	RowSort
	ValueSort
)

// Record is one record of a script.
type Record struct {
	Kind Kind
	Line int // 1-based line of the record's header, for messages

	// Conditions: `skipif ENGINE` and `onlyif ENGINE` lines before it.
	SkipIf, OnlyIf []string

	SQL         string
	ExpectError bool // KindStatement: `statement error`

	Types string   // KindQuery: one letter per column (I, R, T)
	Sort  SortMode // KindQuery
	Label string   // KindQuery: results equal to other queries of the label
	// Expected result of a query: either Values (one per line) or, when
	// Hashed, Count values hashing to Hash.
	Values []string
	Hashed bool
	Count  int
	Hash   string

	Threshold int // KindHashThreshold
}

// Applies reports whether the record runs on engine (the name used in
// skipif and onlyif lines, e.g. "mysql").
func (r *Record) Applies(engine string) bool {
	for _, e := range r.SkipIf {
		if strings.EqualFold(e, engine) {
			return false
		}
	}
	for _, e := range r.OnlyIf {
		if !strings.EqualFold(e, engine) {
			return false
		}
	}
	return true
}

// Script is a parsed sqllogictest file.
type Script struct {
	Name    string
	Records []*Record
}

// ParseFile reads and parses the script at path.
func ParseFile(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Parse(path, f)
}

// Parse parses a script; name is used in error messages.
func Parse(name string, r io.Reader) (*Script, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), "\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	s := &Script{Name: name}
	var skip, only []string
	for i := 0; i < len(lines); {
		t := strings.TrimSpace(lines[i])
		if t == "" || strings.HasPrefix(t, "#") {
			i++
			continue
		}
		f := strings.Fields(t)
		rec := &Record{Line: i + 1}
		switch f[0] {
		case "skipif", "onlyif":
			if len(f) < 2 {
				return nil, fmt.Errorf("%s:%d: %s without an engine name", name, i+1, f[0])
			}
			if f[0] == "skipif" {
				skip = append(skip, f[1])
			} else {
				only = append(only, f[1])
			}
			i++
			continue
		case "halt":
			rec.Kind = KindHalt
			i++
		case "hash-threshold":
			if len(f) != 2 {
				return nil, fmt.Errorf("%s:%d: want hash-threshold N", name, i+1)
			}
			n, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, fmt.Errorf("%s:%d: hash-threshold %q is not a number", name, i+1, f[1])
			}
			rec.Kind, rec.Threshold = KindHashThreshold, n
			i++
		case "statement":
			if len(f) < 2 || (f[1] != "ok" && f[1] != "error") {
				return nil, fmt.Errorf("%s:%d: want statement ok or statement error", name, i+1)
			}
			rec.Kind, rec.ExpectError = KindStatement, f[1] == "error"
			var sql []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
				sql = append(sql, lines[i])
			}
			rec.SQL = strings.Join(sql, "\n")
		case "query":
			if len(f) < 2 {
				return nil, fmt.Errorf("%s:%d: query without types", name, i+1)
			}
			rec.Kind, rec.Types = KindQuery, f[1]
			if len(f) > 2 {
				switch f[2] {
				case "nosort":
				case "rowsort":
					rec.Sort = RowSort
				case "valuesort":
					rec.Sort = ValueSort
				default:
					return nil, fmt.Errorf("%s:%d: unknown sort mode %q", name, i+1, f[2])
				}
			}
			if len(f) > 3 {
				rec.Label = f[3]
			}
			var sql []string
			for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "" && strings.TrimSpace(lines[i]) != "----"; i++ {
				sql = append(sql, lines[i])
			}
			rec.SQL = strings.Join(sql, "\n")
			if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
				for i++; i < len(lines) && strings.TrimSpace(lines[i]) != ""; i++ {
					rec.Values = append(rec.Values, strings.TrimSpace(lines[i]))
				}
			}
			if len(rec.Values) == 1 {
				if n, h, ok := hashLine(rec.Values[0]); ok {
					rec.Hashed, rec.Count, rec.Hash, rec.Values = true, n, h, nil
				}
			}
		default:
			return nil, fmt.Errorf("%s:%d: unknown record %q", name, i+1, t)
		}
		rec.SkipIf, rec.OnlyIf, skip, only = skip, only, nil, nil
		s.Records = append(s.Records, rec)
	}
	return s, nil
}

// hashLine parses "N values hashing to H".
func hashLine(l string) (int, string, bool) {
	f := strings.Fields(l)
	if len(f) != 5 || f[1] != "values" || f[2] != "hashing" || f[3] != "to" {
		return 0, "", false
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, "", false
	}
	return n, f[4], true
}
