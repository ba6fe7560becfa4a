package answers

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// ErrFormat is returned (wrapped) by Read for a malformed answer file.
var ErrFormat = errors.New("answers: malformed answer file")

const (
	hdrColumns   = "# columns:"
	hdrOrdered   = "# ordered:"
	hdrOrderKeys = "# order-keys:"
	hdrRows      = "# rows:"
)

// Write writes a in the text format described in the package comment.
func (a *Answer) Write(w io.Writer) error {
	ts, err := a.types()
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	// Column names may hold commas, colons and spaces (DuckDB names an
	// expression column after its text), so entries are tab-separated and a
	// name ends at its last colon.
	bw.WriteString(hdrColumns)
	for _, c := range a.Columns {
		fmt.Fprintf(bw, "\t%s:%s", escape(c.Name), c.Type)
	}
	fmt.Fprintf(bw, "\n%s %t\n", hdrOrdered, a.Ordered)
	keys := make([]string, len(a.OrderKeys))
	for i, k := range a.OrderKeys {
		keys[i] = strconv.Itoa(k)
	}
	fmt.Fprintf(bw, "%s %s\n", hdrOrderKeys, strings.Join(keys, ","))
	fmt.Fprintf(bw, "%s %d\n", hdrRows, len(a.Rows))
	for r, row := range a.Rows {
		if len(row) != len(ts) {
			return fmt.Errorf("answers: row %d has %d values, want %d", r+1, len(row), len(ts))
		}
		for i, v := range row {
			if i > 0 {
				bw.WriteByte('\t')
			}
			bw.WriteString(format(ts[i], v))
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// Read parses an answer written by Write.
func Read(r io.Reader) (*Answer, error) {
	a := &Answer{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<16), 1<<26)
	line := 0
	var ts []colType
	nrows := -1
	sawColumns := false
	for sc.Scan() {
		line++
		s := sc.Text()
		if strings.HasPrefix(s, "#") {
			if err := a.header(s, &ts, &nrows, &sawColumns); err != nil {
				return nil, fmt.Errorf("%w: line %d: %w", ErrFormat, line, err)
			}
			continue
		}
		if !sawColumns {
			return nil, fmt.Errorf("%w: line %d: row before the columns header", ErrFormat, line)
		}
		fields := strings.Split(s, "\t")
		if len(ts) == 0 && s == "" {
			fields = nil
		}
		if len(fields) != len(ts) {
			return nil, fmt.Errorf("%w: line %d: %d fields, want %d", ErrFormat, line, len(fields), len(ts))
		}
		row := make([]Value, len(ts))
		for i, f := range fields {
			v, err := parseValue(ts[i], f)
			if err != nil {
				return nil, fmt.Errorf("%w: line %d, column %d: %w", ErrFormat, line, i+1, err)
			}
			row[i] = v
		}
		a.Rows = append(a.Rows, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if !sawColumns {
		return nil, fmt.Errorf("%w: no columns header", ErrFormat)
	}
	if nrows >= 0 && nrows != len(a.Rows) {
		return nil, fmt.Errorf("%w: header says %d rows, file has %d", ErrFormat, nrows, len(a.Rows))
	}
	for _, k := range a.OrderKeys {
		if k < 0 || k >= len(ts) {
			return nil, fmt.Errorf("%w: order key %d out of range", ErrFormat, k)
		}
	}
	return a, nil
}

func (a *Answer) header(s string, ts *[]colType, nrows *int, sawColumns *bool) error {
	switch {
	case strings.HasPrefix(s, hdrColumns):
		*sawColumns = true
		rest := strings.TrimPrefix(s, hdrColumns)
		if strings.TrimSpace(rest) == "" {
			return nil
		}
		for _, e := range strings.Split(strings.TrimPrefix(rest, "\t"), "\t") {
			i := strings.LastIndexByte(e, ':')
			if i < 0 {
				return fmt.Errorf("column %q has no type", e)
			}
			name, err := unescape(e[:i])
			if err != nil {
				return err
			}
			t, err := parseType(e[i+1:])
			if err != nil {
				return err
			}
			a.Columns = append(a.Columns, Column{Name: name, Type: e[i+1:]})
			*ts = append(*ts, t)
		}
	case strings.HasPrefix(s, hdrOrdered):
		b, err := strconv.ParseBool(strings.TrimSpace(strings.TrimPrefix(s, hdrOrdered)))
		if err != nil {
			return err
		}
		a.Ordered = b
	case strings.HasPrefix(s, hdrOrderKeys):
		rest := strings.TrimSpace(strings.TrimPrefix(s, hdrOrderKeys))
		if rest == "" {
			return nil
		}
		for _, k := range strings.Split(rest, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(k))
			if err != nil {
				return err
			}
			a.OrderKeys = append(a.OrderKeys, n)
		}
	case strings.HasPrefix(s, hdrRows):
		n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(s, hdrRows)))
		if err != nil {
			return err
		}
		*nrows = n
	}
	// Other comment lines are free-form notes.
	return nil
}
