package hive

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
)

// CSV tables. A data file whose name ends in .csv (or .csv.gz, read
// through gzip) is CSV; a table holds CSV files or Parquet files, never
// both. CSV files are read with a tokenizer of fsql's own rather than
// encoding/csv, which cannot tell a quoted empty field (the empty
// string) from an unquoted one (NULL), the distinction fsql's own CSV
// output makes, and which allocates a string per field.
//
// The conventions are RFC 4180's and MySQL LOAD DATA's:
//
//   - Fields are separated by csv.field-delimiter (default ",") and may be
//     enclosed in csv.quote-character (default `"`), inside which a doubled
//     quote is a quote and delimiters and line breaks are text. Records end
//     at a line feed; a carriage return before it is dropped. A UTF-8 byte
//     order mark at the start is skipped.
//   - With csv.escape-character set (MySQL's ESCAPED BY, e.g. `\`), the
//     escape character takes the next character literally, and \0 \b \n \r
//     \t \Z are NUL, backspace, line feed, carriage return, tab and
//     Ctrl-Z, as in MySQL.
//   - NULL is an unquoted empty field, or an unquoted field that is exactly
//     csv.null-literal (default `\N`, what MySQL's SELECT ... INTO OUTFILE
//     writes). A quoted field is never NULL: `""` is the empty string.
//   - With csv.header (default true) the first record names the columns
//     (an empty name becomes columnN, a repeated one name_2); without it
//     the columns are column1, column2, ...
//   - Every record has as many fields as the header, else the query fails
//     naming the file and line. An empty line is skipped, except in a
//     one-column file where it is a NULL (fsql's CSV output writes a NULL
//     that way).
//
// Types are detected from the first csv.sample-rows records of each file
// (default 10000; 0 reads whole files), over the non-NULL values, the
// first that holds every one of them:
//
//	BOOLEAN   true or false, any case
//	BIGINT    integers that fit in 64 bits
//	DECIMAL   numbers with a fraction and no exponent: DECIMAL(38, the
//	          largest scale seen), when the integer digits fit too
//	DOUBLE    any other number (exponents, 39 digits or more)
//	DATE      YYYY-MM-DD
//	DATETIME  YYYY-MM-DD HH:MM:SS[.ffffff] (or T between), or a DATE
//	TIME      HH:MM:SS[.ffffff], 00:00:00 to 23:59:59.999999
//	VARCHAR   anything else, and columns with no value in the sample
//
// A number with a leading zero (007, 00.5) is text, as zip codes and
// codes are. The files of one table agree by name: a column's type is
// the one that holds the samples of every file. A value after the sample
// that its column's type does not hold fails the query, naming the file,
// line, column and value. CSV files have no statistics: nothing is pruned
// by value. A file is one split, or one per csv.split-size bytes when it
// is bigger (csv_split.go).

// CSVOptions say how CSV files are read (the csv.* settings).
type CSVOptions struct {
	// Delimiter separates fields (csv.field-delimiter). Default ','.
	Delimiter byte
	// Quote encloses fields (csv.quote-character); 0 turns quoting off.
	// Default '"'.
	Quote byte
	// Escape takes the next character literally (csv.escape-character);
	// 0, the default, has none (quotes are doubled inside quotes).
	Escape byte
	// Header says the first record names the columns (csv.header).
	// Default true.
	Header bool
	// NullLiteral is the unquoted field text that reads as NULL besides
	// the empty field (csv.null-literal). Default `\N`.
	NullLiteral string
	// SampleRows is how many records of each file type detection reads
	// (csv.sample-rows); 0 reads whole files. Default 10000.
	SampleRows int
	// SplitSize is the size of the byte ranges a bigger file is read in,
	// one task each (csv.split-size, see csv_split.go); 0 reads every
	// file whole. Default 32 MiB.
	SplitSize int64
}

// DefaultCSVOptions returns the defaults documented on each field.
func DefaultCSVOptions() CSVOptions {
	return CSVOptions{Delimiter: ',', Quote: '"', Header: true, NullLiteral: `\N`, SampleRows: 10000, SplitSize: 32 << 20}
}

func (o *CSVOptions) check() error {
	switch {
	case o.Delimiter == 0 || o.Delimiter == '\n' || o.Delimiter == '\r':
		return fmt.Errorf("csv.field-delimiter must be one character other than a line break")
	case o.Quote == o.Delimiter || o.Quote == '\n' || o.Quote == '\r':
		return fmt.Errorf("csv.quote-character must differ from the delimiter and line breaks")
	case o.Escape != 0 && (o.Escape == o.Delimiter || o.Escape == o.Quote || o.Escape == '\n' || o.Escape == '\r'):
		return fmt.Errorf("csv.escape-character must differ from the delimiter, the quote character and line breaks (a quote inside quotes is written twice without one)")
	case o.SampleRows < 0:
		return fmt.Errorf("csv.sample-rows must be 0 (whole files) or more")
	case o.SplitSize < 0:
		return fmt.Errorf("csv.split-size must be 0 (whole files) or more")
	}
	return nil
}

// ErrCSV marks a CSV file fsql cannot read as its table says: a record
// with the wrong number of fields, an unterminated quote, a value its
// column's detected type does not hold.
var ErrCSV = errs.New(errs.ErNotFormFile, "bad CSV data")

// isCSVName reports whether a data file is CSV, by its name.
func isCSVName(path string) bool {
	p := strings.ToLower(path)
	return strings.HasSuffix(p, ".csv") || strings.HasSuffix(p, ".csv.gz")
}

// csvFile is what type detection found in one file version.
type csvFile struct {
	opts   CSVOptions // the options it was read with
	states []csvState // per column, in the file's order
	ranges []csvRange // where each row group starts (csv_split.go)
}

// readCSVHeader reads a CSV file's header and samples its records for
// type detection, for the footer cache (keyed by the file's stamp).
func readCSVHeader(path string, opts CSVOptions) (*footer, error) {
	osf, stamp, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer osf.Close()
	tok, err := newCSVTokenizer(osf, path, &opts, 1)
	if err != nil {
		return nil, err
	}
	var names []string
	var states []csvState
	first := true
	rows, sampled := int64(0), false
	for opts.SampleRows == 0 || rows < int64(opts.SampleRows) {
		ok, err := tok.next()
		if err != nil {
			return nil, err
		}
		if !ok {
			break
		}
		if first {
			first = false
			names = headerNames(tok, opts.Header)
			states = make([]csvState, len(names))
			for i := range states {
				states[i].cand = allCandidates
			}
			if opts.Header {
				continue
			}
		}
		if skip, err := tok.checkWidth(len(names)); err != nil {
			return nil, err
		} else if skip {
			continue
		}
		for i := range states {
			if !tok.isNull(i) {
				states[i].observe(tok.field(i))
			}
		}
		rows++
	}
	if !tok.eof {
		sampled = true
	}
	file := &File{Path: path, Size: stamp.size, ModTime: time.Unix(0, stamp.mtime), stamp: stamp,
		csv: &csvFile{opts: opts, states: states}}
	file.NumRows = rows
	if sampled && tok.raw.n > 0 {
		// An estimate for planning: the sample's rows per byte read.
		file.NumRows = rows * stamp.size / tok.raw.n
	}
	for i, n := range names {
		file.cols = append(file.cols, columnInfo{name: n, arrow: states[i].typ(), parquet: "CSV"})
	}
	// The row groups are the file's byte ranges (csv_split.go): one, or
	// one per csv.split-size bytes of a bigger file that is not gzipped.
	ranges, counts, exact := []csvRange{{start: 0, line: 1}}, []int64{file.NumRows}, true
	if opts.SplitSize > 0 && stamp.size > opts.SplitSize && !strings.HasSuffix(strings.ToLower(path), ".gz") {
		ranges, counts, exact, err = splitCSV(io.NewSectionReader(osf, 0, stamp.size), &opts, opts.SplitSize, len(names))
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s: %w", ErrCSV, path, err)
		}
		if exact {
			file.NumRows = 0
			for _, c := range counts {
				file.NumRows += c
			}
		}
	}
	file.csv.ranges = ranges
	for g, r := range ranges {
		end := stamp.size
		if g+1 < len(ranges) {
			end = ranges[g+1].start
		}
		n := counts[g]
		if !exact {
			n = file.NumRows * (end - r.start) / max(stamp.size, 1) // the sample's estimate, by bytes
		}
		rg := RowGroup{NumRows: n, Bytes: end - r.start, Columns: make([]ColumnStats, len(names))}
		for i := range names {
			rg.Columns[i] = ColumnStats{NullCount: -1, Bytes: (end - r.start) / int64(len(names))}
		}
		file.RowGroups = append(file.RowGroups, rg)
	}
	if st, err := osf.Stat(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	} else if now := stampOf(st); now != stamp {
		return nil, checkStamp(file, now, "while its header was read")
	}
	return &footer{stamp: stamp, file: file}, nil
}

// headerNames names the columns from the first record: its fields with a
// header, column1..N without one. Names are made unique ignoring case.
func headerNames(tok *csvTokenizer, header bool) []string {
	names := make([]string, tok.numFields())
	seen := map[string]bool{}
	for i := range names {
		n := fmt.Sprintf("column%d", i+1)
		if header {
			if f := strings.TrimPrefix(string(tok.field(i)), "\ufeff"); f != "" {
				n = f
			}
		}
		base := n
		for k := 2; seen[strings.ToLower(n)]; k++ {
			n = fmt.Sprintf("%s_%d", base, k)
		}
		seen[strings.ToLower(n)] = true
		names[i] = n
	}
	return names
}

// csvColumns unites the columns of a CSV table's files by name, each typed
// to hold the samples of every file that has it.
func csvColumns(files []*File) ([]tableColumn, [][]int) {
	var cols []tableColumn
	var states []csvState
	byName := map[string]int{}
	for _, f := range files {
		for k, ci := range f.cols {
			key := strings.ToLower(ci.name)
			j, ok := byName[key]
			if !ok {
				byName[key] = len(cols)
				cols = append(cols, tableColumn{name: ci.name, file: f.Path, parquet: "CSV"})
				states = append(states, f.csv.states[k])
				continue
			}
			states[j] = states[j].join(f.csv.states[k])
		}
	}
	for j := range cols {
		cols[j].typ = states[j].typ()
	}
	return cols, indexColumns(cols, files, false)
}

// csvState is what type detection knows of one column: the types every
// value seen so far parses as, and the digits its decimals need.
type csvState struct {
	cand      uint8
	scale     int32 // most fraction digits of a value
	intDigits int32 // most integer digits of a value
	values    bool  // a non-NULL value was seen
}

const (
	candBool uint8 = 1 << iota
	candInt
	candDecimal
	candDouble
	candDate
	candDatetime
	candTime
	allCandidates = candBool | candInt | candDecimal | candDouble | candDate | candDatetime | candTime
)

func (s *csvState) observe(v []byte) {
	s.values = true
	c := s.cand
	if c&candBool != 0 && !isBool(v) {
		c &^= candBool
	}
	if c&(candInt|candDecimal|candDouble) != 0 {
		if num, ok := scanNumber(v); !ok {
			c &^= candInt | candDecimal | candDouble
		} else {
			if _, ok := parseInt(v); !ok || num.dot || num.exp {
				c &^= candInt
			}
			if num.exp || num.intDigits+num.frac > 38 {
				c &^= candDecimal
			} else {
				s.scale = max(s.scale, num.frac)
				s.intDigits = max(s.intDigits, num.intDigits)
			}
			if _, ok := parseDouble(v); !ok {
				c &^= candDouble
			}
		}
	}
	if c&(candDate|candDatetime) != 0 {
		if _, ok := parseDateBytes(v); ok {
			// a DATE is also a DATETIME at midnight
		} else {
			c &^= candDate
			if _, ok := parseDatetime(v); !ok {
				c &^= candDatetime
			}
		}
	}
	if c&candTime != 0 {
		if _, ok := parseTime(v); !ok {
			c &^= candTime
		}
	}
	s.cand = c
}

func (s csvState) join(o csvState) csvState {
	if !o.values {
		return s
	}
	if !s.values {
		return o
	}
	return csvState{cand: s.cand & o.cand, scale: max(s.scale, o.scale), intDigits: max(s.intDigits, o.intDigits), values: true}
}

// typ is the column's type: the first candidate, in the order of the
// table in the package comment.
func (s csvState) typ() arrow.DataType {
	c := s.cand
	switch {
	case !s.values:
		return arrow.BinaryTypes.String
	case c&candBool != 0:
		return arrow.FixedWidthTypes.Boolean
	case c&candInt != 0:
		return arrow.PrimitiveTypes.Int64
	case c&candDecimal != 0 && s.intDigits+s.scale <= 38:
		return &arrow.Decimal128Type{Precision: 38, Scale: s.scale}
	case c&candDouble != 0:
		return arrow.PrimitiveTypes.Float64
	case c&candDate != 0:
		return arrow.FixedWidthTypes.Date32
	case c&candDatetime != 0:
		return DatetimeType
	case c&candTime != 0:
		return TimeType
	}
	return arrow.BinaryTypes.String
}

// countingReader counts the bytes read from the file (compressed ones for
// .csv.gz).
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// csvTokenizer splits a CSV file into records of fields.
type csvTokenizer struct {
	path string
	opts *CSVOptions
	raw  *countingReader
	br   *bufio.Reader

	buf      []byte // the record's field bytes, unescaped
	ends     []int  // end of each field in buf
	quoted   []bool // the field was quoted
	null     []bool // the field reads as NULL
	line     int64  // line of the record's start, 1-based
	nextLine int64  // line of the next record
	eof      bool
	long     []byte // a line longer than the bufio buffer
}

// newCSVTokenizer reads records from f: a whole file, or (line > 1) a
// byte range of one starting at a record that starts that line.
func newCSVTokenizer(f io.Reader, path string, opts *CSVOptions, line int64) (*csvTokenizer, error) {
	t := &csvTokenizer{path: path, opts: opts, raw: &countingReader{r: f}, nextLine: line}
	var src io.Reader = t.raw
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		z, err := gzip.NewReader(t.raw)
		if err != nil {
			if err == io.EOF {
				t.eof = true
				t.br = bufio.NewReader(strings.NewReader(""))
				return t, nil
			}
			return nil, fmt.Errorf("%w: %s is not gzip data: %w", ErrCSV, path, err)
		}
		src = z
	}
	t.br = bufio.NewReaderSize(src, 256<<10)
	if b, err := t.br.Peek(3); err == nil && string(b) == "\ufeff" && line == 1 {
		t.br.Discard(3)
	}
	return t, nil
}

func (t *csvTokenizer) numFields() int    { return len(t.ends) }
func (t *csvTokenizer) isNull(i int) bool { return t.null[i] }
func (t *csvTokenizer) field(i int) []byte {
	start := 0
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.buf[start:t.ends[i]]
}

// checkWidth checks a record has n fields. A blank line is skipped (true),
// except in a one-column file, where it is a NULL.
func (t *csvTokenizer) checkWidth(n int) (skip bool, err error) {
	if len(t.ends) == n {
		return false, nil
	}
	if len(t.ends) == 1 && t.ends[0] == 0 && !t.quoted[0] {
		return true, nil
	}
	return false, fmt.Errorf("%w: %s line %d has %d fields, but the table's first record has %d; check csv.field-delimiter (now %q) and csv.quote-character",
		ErrCSV, t.path, t.line, len(t.ends), n, string(t.opts.Delimiter))
}

// readLine returns the next line without its line break; ok is false at
// the end of the file.
func (t *csvTokenizer) readLine() ([]byte, bool, error) {
	if t.eof {
		return nil, false, nil
	}
	line, err := t.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		t.long = append(t.long[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = t.br.ReadSlice('\n')
			t.long = append(t.long, line...)
		}
		line = t.long
	}
	if err == io.EOF {
		t.eof = true
		if len(line) == 0 {
			return nil, false, nil
		}
	} else if err != nil {
		return nil, false, fmt.Errorf("%w: reading %s: %w", ErrCSV, t.path, err)
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
		if n > 1 && line[n-2] == '\r' {
			line = line[:n-2]
		}
	}
	return line, true, nil
}

// next reads the next record; false at the end of the file.
func (t *csvTokenizer) next() (bool, error) {
	t.buf, t.ends, t.quoted, t.null = t.buf[:0], t.ends[:0], t.quoted[:0], t.null[:0]
	line, ok, err := t.readLine()
	if !ok || err != nil {
		return false, err
	}
	t.line = t.nextLine
	t.nextLine++
	delim, quote, esc := t.opts.Delimiter, t.opts.Quote, t.opts.Escape
	pos := 0
	for {
		if quote != 0 && pos < len(line) && line[pos] == quote {
			pos++
			for {
				i := indexEither(line[pos:], quote, esc)
				if i < 0 {
					// The quoted field goes on after the line break.
					t.buf = append(t.buf, line[pos:]...)
					t.buf = append(t.buf, '\n')
					if line, ok, err = t.readLine(); err != nil {
						return false, err
					} else if !ok {
						return false, fmt.Errorf("%w: %s line %d: a quoted field is not closed before the end of the file", ErrCSV, t.path, t.line)
					}
					t.nextLine++
					pos = 0
					continue
				}
				t.buf = append(t.buf, line[pos:pos+i]...)
				c := line[pos+i]
				pos += i + 1
				if c == esc && c != quote {
					if pos == len(line) {
						t.buf = append(t.buf, '\n') // an escaped line break
						if line, ok, err = t.readLine(); err != nil {
							return false, err
						} else if !ok {
							return false, fmt.Errorf("%w: %s line %d: a quoted field is not closed before the end of the file", ErrCSV, t.path, t.line)
						}
						t.nextLine++
						pos = 0
						continue
					}
					t.buf = append(t.buf, unescape(line[pos]))
					pos++
					continue
				}
				if pos < len(line) && line[pos] == quote {
					t.buf = append(t.buf, quote) // a doubled quote
					pos++
					continue
				}
				break
			}
			t.ends, t.quoted, t.null = append(t.ends, len(t.buf)), append(t.quoted, true), append(t.null, false)
			if pos == len(line) {
				return true, nil
			}
			if line[pos] != delim {
				return false, fmt.Errorf("%w: %s line %d, field %d: %q follows a closing quote; a quote inside a quoted field is written twice",
					ErrCSV, t.path, t.nextLine-1, len(t.ends), string(line[pos]))
			}
			pos++
			continue
		}
		// An unquoted field runs to the delimiter; with an escape
		// character it is unescaped on the way.
		start, j := pos, pos
		if esc == 0 {
			j = len(line)
			if i := bytes.IndexByte(line[pos:], delim); i >= 0 {
				j = pos + i
			}
			t.buf = append(t.buf, line[pos:j]...)
		} else {
			for j < len(line) && line[j] != delim {
				if line[j] == esc && j+1 < len(line) {
					t.buf = append(t.buf, unescape(line[j+1]))
					j += 2
					continue
				}
				t.buf = append(t.buf, line[j])
				j++
			}
		}
		raw := line[start:j]
		null := len(raw) == 0 || (t.opts.NullLiteral != "" && string(raw) == t.opts.NullLiteral)
		t.ends, t.quoted, t.null = append(t.ends, len(t.buf)), append(t.quoted, false), append(t.null, null)
		if j == len(line) {
			return true, nil
		}
		pos = j + 1
	}
}

// indexEither is the index of the first a or b (b may be 0: none).
func indexEither(s []byte, a, b byte) int {
	for i, c := range s {
		if c == a || (b != 0 && c == b) {
			return i
		}
	}
	return -1
}

// unescape is MySQL's meaning of an escaped character.
func unescape(c byte) byte {
	switch c {
	case '0':
		return 0
	case 'b':
		return '\b'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'Z':
		return 26
	}
	return c
}

// csvReader reads one CSV file's records into Arrow arrays: the records
// of the row groups (byte ranges) it was given, one run of adjacent
// ranges after another.
type csvReader struct {
	t      *Table
	f      *File
	osf    *os.File
	tok    *csvTokenizer // reads the current run
	runs   [][2]int      // runs of adjacent row groups to read, first and last, ascending
	run    int           // index of the current run
	read   int64         // bytes read by the tokenizers of earlier runs
	fields []int         // per output column: the field to read, or -1 (filled in by FileReader)
	types  []arrow.DataType
	batch  int
	opts   ScanOptions
	width  int
	done   bool
}

// openCSV opens a CSV file of table t for reading fields (per output
// column, -1 for columns FileReader fills in) of row groups rgs
// (ascending), after checking it is the version the table's snapshot
// holds.
func openCSV(t *Table, f *File, fields []int, schema *arrow.Schema, opts ScanOptions, rgs []int) (*csvReader, error) {
	osf, now, err := openFile(f.Path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s was removed after the query was planned; run the query again", ErrChanged, f.Path)
		}
		return nil, err
	}
	if err := checkStamp(f, now, "after the query was planned"); err != nil {
		osf.Close()
		return nil, err
	}
	r := &csvReader{t: t, f: f, osf: osf, fields: fields, batch: opts.BatchSize, opts: opts, width: len(f.cols)}
	for _, g := range rgs {
		if n := len(r.runs); n > 0 && r.runs[n-1][1] == g-1 {
			r.runs[n-1][1] = g
			continue
		}
		r.runs = append(r.runs, [2]int{g, g})
	}
	r.types = make([]arrow.DataType, len(fields))
	for i := range fields {
		r.types[i] = schema.Field(i).Type
	}
	if err := r.openRun(); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

// openRun starts the tokenizer of run r.run, or marks the reader done
// after the last one. A run from the file's start skips the header.
func (r *csvReader) openRun() error {
	if r.tok != nil {
		r.read += r.tok.raw.n
		r.tok = nil
	}
	if r.run >= len(r.runs) {
		r.done = true
		return nil
	}
	ranges, run := r.f.csv.ranges, r.runs[r.run]
	from, end := ranges[run[0]], r.f.Size
	if run[1]+1 < len(ranges) {
		end = ranges[run[1]+1].start
	}
	tok, err := newCSVTokenizer(io.NewSectionReader(r.osf, from.start, end-from.start), r.f.Path, &r.f.csv.opts, from.line)
	if err != nil {
		return err
	}
	r.tok = tok
	if from.start == 0 && r.f.csv.opts.Header {
		if _, err := tok.next(); err != nil {
			return err
		}
	}
	return nil
}

func (r *csvReader) bytesRead() int64 {
	if r.tok == nil {
		return r.read
	}
	return r.read + r.tok.raw.n
}

func (r *csvReader) close() error { return r.osf.Close() }

func (r *csvReader) checkUnchanged() error {
	st, err := r.osf.Stat()
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrCorrupt, r.f.Path, err)
	}
	return checkStamp(r.f, stampOf(st), "while the query read it")
}

// next reads up to a batch of records. The arrays of columns with no
// field are nil.
func (r *csvReader) next(ctx context.Context) (int, []arrow.Array, error) {
	if r.done {
		return 0, nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, err
	}
	builders := make([]array.Builder, len(r.fields))
	defer func() {
		for _, b := range builders {
			if b != nil {
				b.Release()
			}
		}
	}()
	for i, k := range r.fields {
		if k >= 0 {
			builders[i] = array.NewBuilder(r.opts.Alloc, r.types[i])
			builders[i].Reserve(r.batch)
		}
	}
	n := 0
	for n < r.batch && !r.done {
		ok, err := r.tok.next()
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			r.run++
			if err := r.openRun(); err != nil {
				return 0, nil, err
			}
			continue
		}
		if skip, err := r.tok.checkWidth(r.width); err != nil {
			return 0, nil, err
		} else if skip {
			continue
		}
		for i, k := range r.fields {
			if k < 0 {
				continue
			}
			if r.tok.isNull(k) {
				builders[i].AppendNull()
				continue
			}
			if err := appendCSVValue(builders[i], r.tok.field(k)); err != nil {
				return 0, nil, fmt.Errorf("%w: %s line %d, column %s: %w; the type was detected from the first %s of each file (csv.sample-rows): set csv.sample-rows=0 to detect it from whole files, or fix the value",
					ErrCSV, r.f.Path, r.tok.line, r.f.cols[k].name, err, sampleText(r.f.csv.opts.SampleRows))
			}
		}
		n++
	}
	if n == 0 && r.done {
		return 0, nil, io.EOF
	}
	cols := make([]arrow.Array, len(r.fields))
	for i, b := range builders {
		if b != nil {
			cols[i] = b.NewArray()
		}
	}
	return n, cols, nil
}

func sampleText(n int) string {
	if n == 0 {
		return "records"
	}
	return fmt.Sprintf("%d records", n)
}

// appendCSVValue parses one field as its builder's type.
func appendCSVValue(b array.Builder, v []byte) error {
	bad := func() error {
		s := string(v)
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		return fmt.Errorf("%q is not a %s", s, SQLTypeName(b.Type()))
	}
	switch b := b.(type) {
	case *array.StringBuilder:
		b.BinaryBuilder.Append(v)
	case *array.Int64Builder:
		x, ok := parseInt(v)
		if num, okN := scanNumber(v); !ok || !okN || num.dot || num.exp {
			return bad()
		}
		b.Append(x)
	case *array.Float64Builder:
		x, ok := parseDouble(v)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Decimal128Builder:
		x, ok := parseDecimal(v, b.Type().(*arrow.Decimal128Type))
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.BooleanBuilder:
		if !isBool(v) {
			return bad()
		}
		b.Append(v[0] == 't' || v[0] == 'T')
	case *array.Date32Builder:
		d, ok := parseDateBytes(v)
		if !ok {
			return bad()
		}
		b.Append(d)
	case *array.TimestampBuilder:
		x, ok := parseDatetime(v)
		if !ok {
			return bad()
		}
		b.Append(x)
	case *array.Time64Builder:
		x, ok := parseTime(v)
		if !ok {
			return bad()
		}
		b.Append(x)
	default:
		return fmt.Errorf("no CSV reader for %s", b.Type())
	}
	return nil
}
