package answers

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Column is one output column of an answer. Type is one of int64, float64,
// decimal(p,s), string, date and bool.
type Column struct {
	Name string
	Type string
}

// Answer is a query result in comparable form.
type Answer struct {
	Columns []Column
	Rows    [][]Value
	// Ordered says the query has a top-level ORDER BY, so row order matters
	// (up to ties, see OrderKeys).
	Ordered bool
	// OrderKeys are the 0-based output columns the ORDER BY sorts on, in
	// order. Rows equal on all of them form a run whose order is unspecified.
	// Empty with Ordered set means one run: the order is not checked.
	OrderKeys []int
}

// Value is one field. Which field holds the value depends on the column type:
// Int for int64, bool (0 or 1) and date (days since 1970-01-01), Float for
// float64, Dec for decimal (unscaled, at the column's scale), Str for string.
type Value struct {
	Null  bool
	Int   int64
	Float float64
	Dec   *big.Int
	Str   string
}

// Null returns a NULL value.
func Null() Value { return Value{Null: true} }

// Int returns an int64 value.
func Int(v int64) Value { return Value{Int: v} }

// Float returns a float64 value.
func Float(v float64) Value { return Value{Float: v} }

// Decimal returns a decimal value from its unscaled integer.
func Decimal(unscaled *big.Int) Value { return Value{Dec: new(big.Int).Set(unscaled)} }

// String returns a string value.
func String(v string) Value { return Value{Str: v} }

// Bool returns a bool value.
func Bool(v bool) Value {
	if v {
		return Value{Int: 1}
	}
	return Value{Int: 0}
}

// Date returns a date value from days since 1970-01-01.
func Date(days int64) Value { return Value{Int: days} }

// DateOf returns the date value of t's calendar date (in t's location).
func DateOf(t time.Time) Value {
	d := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	return Value{Int: d.Unix() / 86400}
}

// kind is the parsed form of a column type.
type kind uint8

const (
	kindInt kind = iota
	kindFloat
	kindDecimal
	kindString
	kindDate
	kindBool
)

type colType struct {
	kind             kind
	precision, scale int
}

// DecimalType returns the type string of a decimal column.
func DecimalType(precision, scale int) string {
	return fmt.Sprintf("decimal(%d,%d)", precision, scale)
}

func parseType(t string) (colType, error) {
	switch t {
	case "int64":
		return colType{kind: kindInt}, nil
	case "float64":
		return colType{kind: kindFloat}, nil
	case "string":
		return colType{kind: kindString}, nil
	case "date":
		return colType{kind: kindDate}, nil
	case "bool":
		return colType{kind: kindBool}, nil
	}
	if strings.HasPrefix(t, "decimal(") && strings.HasSuffix(t, ")") {
		ps := strings.Split(t[len("decimal("):len(t)-1], ",")
		if len(ps) == 2 {
			p, err1 := strconv.Atoi(strings.TrimSpace(ps[0]))
			s, err2 := strconv.Atoi(strings.TrimSpace(ps[1]))
			if err1 == nil && err2 == nil && p > 0 && s >= 0 && s <= p {
				return colType{kind: kindDecimal, precision: p, scale: s}, nil
			}
		}
	}
	return colType{}, fmt.Errorf("answers: unknown column type %q", t)
}

func (a *Answer) types() ([]colType, error) {
	ts := make([]colType, len(a.Columns))
	for i, c := range a.Columns {
		t, err := parseType(c.Type)
		if err != nil {
			return nil, err
		}
		ts[i] = t
	}
	return ts, nil
}

// format renders v as it appears in the file (NULL is \N).
func format(t colType, v Value) string {
	if v.Null {
		return `\N`
	}
	switch t.kind {
	case kindInt:
		return strconv.FormatInt(v.Int, 10)
	case kindFloat:
		return strconv.FormatFloat(v.Float, 'g', -1, 64)
	case kindDecimal:
		return formatDecimal(v.Dec, t.scale)
	case kindString:
		return escape(v.Str)
	case kindDate:
		return time.Unix(v.Int*86400, 0).UTC().Format("2006-01-02")
	case kindBool:
		if v.Int != 0 {
			return "true"
		}
		return "false"
	}
	return "?"
}

func formatDecimal(u *big.Int, scale int) string {
	if u == nil {
		u = new(big.Int)
	}
	s := new(big.Int).Abs(u).String()
	if scale > 0 {
		if len(s) <= scale {
			s = strings.Repeat("0", scale-len(s)+1) + s
		}
		s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	}
	if u.Sign() < 0 {
		s = "-" + s
	}
	return s
}

func parseDecimal(s string, scale int) (*big.Int, error) {
	neg := strings.HasPrefix(s, "-")
	body := strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	intPart, frac, _ := strings.Cut(body, ".")
	if len(frac) > scale {
		return nil, fmt.Errorf("decimal %q has more than %d fractional digits", s, scale)
	}
	digits := intPart + frac + strings.Repeat("0", scale-len(frac))
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return nil, fmt.Errorf("bad decimal %q", s)
	}
	u, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return nil, fmt.Errorf("bad decimal %q", s)
	}
	if neg {
		u.Neg(u)
	}
	return u, nil
}

func parseValue(t colType, s string) (Value, error) {
	if s == `\N` {
		return Null(), nil
	}
	switch t.kind {
	case kindInt:
		n, err := strconv.ParseInt(s, 10, 64)
		return Int(n), err
	case kindFloat:
		f, err := strconv.ParseFloat(s, 64)
		return Float(f), err
	case kindDecimal:
		u, err := parseDecimal(s, t.scale)
		return Value{Dec: u}, err
	case kindString:
		str, err := unescape(s)
		return String(str), err
	case kindDate:
		d, err := time.Parse("2006-01-02", s)
		if err != nil {
			return Value{}, err
		}
		return DateOf(d), nil
	case kindBool:
		switch s {
		case "true":
			return Bool(true), nil
		case "false":
			return Bool(false), nil
		}
		return Value{}, fmt.Errorf("bad bool %q", s)
	}
	return Value{}, fmt.Errorf("bad type")
}

func escape(s string) string {
	if !strings.ContainsAny(s, "\t\n\r\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(s) {
			return "", fmt.Errorf("dangling backslash in %q", s)
		}
		switch s[i] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case '\\':
			b.WriteByte('\\')
		default:
			return "", fmt.Errorf("bad escape \\%c in %q", s[i], s)
		}
	}
	return b.String(), nil
}
