package slt

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"
)

// NullPartition is the folder value Hive writes for a NULL partition key.
const NullPartition = "__HIVE_DEFAULT_PARTITION__"

// errValue marks a table value that does not parse as its column's type.
var errValue = errors.New("bad value")

// WriteTables writes every table into its own folder under dir, as one
// Parquet file per partition folder (one file for an unpartitioned table).
func WriteTables(dir string, tables []*Table) error {
	for _, t := range tables {
		if err := t.Write(filepath.Join(dir, t.Name)); err != nil {
			return err
		}
	}
	return nil
}

// Write writes the table into folder dir, which it creates.
func (t *Table) Write(dir string) error {
	var part []int // indexes of partition columns
	for _, p := range t.PartitionBy {
		part = append(part, t.column(p))
	}
	isPart := make([]bool, len(t.Columns))
	for _, c := range part {
		isPart[c] = true
	}
	// Group rows by partition folder, keeping first-seen order.
	var folders []string
	groups := map[string][][]string{}
	for _, row := range t.Rows {
		var elems []string
		for _, c := range part {
			v := row[c]
			if v == "NULL" {
				v = NullPartition
			} else if v == "(empty)" {
				v = NullPartition // Hive stores empty partition values as NULL too
			} else {
				v = escapePartition(v)
			}
			elems = append(elems, escapePartition(t.Columns[c].Name)+"="+v)
		}
		folder := filepath.Join(elems...)
		if _, ok := groups[folder]; !ok {
			folders = append(folders, folder)
		}
		groups[folder] = append(groups[folder], row)
	}
	if len(part) == 0 && len(folders) == 0 {
		folders, groups[""] = []string{""}, nil // an empty table still has a file
	}
	if len(folders) == 0 {
		return fmt.Errorf("partitioned table %s has no rows, so no partition folder to hold its schema", t.Name)
	}
	schema := t.parquetSchema(isPart)
	for _, folder := range folders {
		d := filepath.Join(dir, folder)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := t.writeFile(filepath.Join(d, "part-0.parquet"), schema, isPart, groups[folder]); err != nil {
			return fmt.Errorf("table %s: %w", t.Name, err)
		}
	}
	return nil
}

// escapePartition escapes what cannot appear in a folder name the way
// Hive does, as %XX.
func escapePartition(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < ' ' || strings.IndexByte(`"#%'*/:=?\{[]^`, c) >= 0 || c == 0x7f {
			fmt.Fprintf(&b, "%%%02X", c)
			continue
		}
		b.WriteByte(c)
	}
	return b.String()
}

// parquetSchema builds the file schema from a struct type made at run
// time, because parquet.Group would sort the columns by name.
func (t *Table) parquetSchema(skip []bool) *parquet.Schema {
	var fields []reflect.StructField
	for i, c := range t.Columns {
		if skip[i] {
			continue
		}
		var typ reflect.Type
		tag := c.Name
		switch c.Type {
		case Int:
			typ = reflect.TypeFor[int32]()
		case BigInt:
			typ = reflect.TypeFor[int64]()
		case Decimal:
			typ = reflect.TypeFor[int64]()
			if c.Precision <= 9 {
				typ = reflect.TypeFor[int32]()
			}
			tag += fmt.Sprintf(",decimal(%d:%d)", c.Scale, c.Precision)
		case Varchar:
			typ = reflect.TypeFor[string]()
			tag += ",string"
		case Date:
			typ = reflect.TypeFor[int32]()
			tag += ",date"
		case Double:
			typ = reflect.TypeFor[float64]()
		case Boolean:
			typ = reflect.TypeFor[bool]()
		}
		if c.Type == Varchar {
			tag += ",optional"
		} else {
			typ = reflect.PointerTo(typ)
		}
		fields = append(fields, reflect.StructField{
			Name: "F" + strconv.Itoa(i),
			Type: typ,
			Tag:  reflect.StructTag(`parquet:"` + tag + `"`),
		})
	}
	st := reflect.StructOf(fields)
	return parquet.NewSchema(t.Name, parquet.SchemaOf(reflect.New(st).Interface()))
}

func (t *Table) writeFile(path string, schema *parquet.Schema, skip []bool, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := parquet.NewWriter(f, schema)
	prows := make([]parquet.Row, 0, len(rows))
	for _, row := range rows {
		var pr parquet.Row
		leaf := 0
		for c, v := range row {
			if skip[c] {
				continue
			}
			pv, err := parquetValue(t.Columns[c], v)
			if err != nil {
				f.Close()
				return err
			}
			if pv.IsNull() {
				pr = append(pr, pv.Level(0, 0, leaf))
			} else {
				pr = append(pr, pv.Level(0, 1, leaf))
			}
			leaf++
		}
		prows = append(prows, pr)
	}
	if _, err := w.WriteRows(prows); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := w.Close(); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

// checkValue reports whether v is a valid value of column c.
func checkValue(c Column, v string) error {
	_, err := parquetValue(c, v)
	return err
}

// parquetValue converts a value as written in a file to the Parquet
// value of the column's physical type.
func parquetValue(c Column, v string) (parquet.Value, error) {
	if v == "NULL" {
		return parquet.NullValue(), nil
	}
	bad := func(want string) (parquet.Value, error) {
		return parquet.Value{}, fmt.Errorf("%w %q: want %s", errValue, v, want)
	}
	switch c.Type {
	case Int:
		n, err := strconv.ParseInt(v, 10, 32)
		if err != nil {
			return bad("a 32-bit integer")
		}
		return parquet.Int32Value(int32(n)), nil
	case BigInt:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return bad("a 64-bit integer")
		}
		return parquet.Int64Value(n), nil
	case Decimal:
		n, ok := parseDecimal(v, c.Precision, c.Scale)
		if !ok {
			return bad(fmt.Sprintf("a decimal(%d,%d)", c.Precision, c.Scale))
		}
		if c.Precision <= 9 {
			return parquet.Int32Value(int32(n)), nil
		}
		return parquet.Int64Value(n), nil
	case Varchar:
		if v == "(empty)" {
			v = ""
		}
		return parquet.ByteArrayValue([]byte(v)), nil
	case Date:
		d, err := time.Parse(time.DateOnly, v)
		if err != nil {
			return bad("a date YYYY-MM-DD")
		}
		return parquet.Int32Value(int32(d.Unix() / 86400)), nil
	case Double:
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return bad("a number")
		}
		return parquet.DoubleValue(f), nil
	case Boolean:
		switch v {
		case "true":
			return parquet.BooleanValue(true), nil
		case "false":
			return parquet.BooleanValue(false), nil
		}
		return bad("true or false")
	}
	return bad("a known type")
}

// parseDecimal returns v * 10^scale as an integer, refusing values with
// more fraction digits than scale or more digits than precision.
func parseDecimal(v string, precision, scale int) (int64, bool) {
	s := v
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" && frac == "" || len(frac) > scale {
		return 0, false
	}
	frac += strings.Repeat("0", scale-len(frac))
	digits := strings.TrimLeft(whole+frac, "0")
	if len(digits) > precision {
		return 0, false
	}
	if digits == "" {
		return 0, true
	}
	for _, r := range digits {
		if r < '0' || r > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64 {
		return 0, false
	}
	if neg {
		n = -n
	}
	return n, true
}
