package hive

import (
	"bufio"
	"bytes"
	"io"
)

// Byte ranges of big CSV files. A CSV file larger than csv.split-size is
// read by several tasks, each a range of about that many bytes: the
// file's row groups are its ranges (one split each, see exec.Scan), and
// each range starts where a record starts.
//
// The usual rule (Hadoop's and Spark's: a range begins after the first
// line break past its offset) is wrong for CSV with quoting: a quoted
// field may hold a line break, and a task starting after it would read
// from the middle of a field, silently, or fail with a misleading error,
// and under a LIMIT may even return its rows before the task that owns
// the record sees the break. fsql instead finds the record starts once,
// when it reads the file's header and samples its types: one pass over
// the file that follows quotes, doubled quotes and escapes exactly as the
// tokenizer does, and notes the first record starting at or after every
// csv.split-size bytes with its line number (for errors), and how many
// records each range holds (the planner's row counts are then exact).
// The pass costs a sequential read of the file (it only looks for quote,
// delimiter, escape and line-break bytes, several times faster than
// parsing values), once per file version: its result is cached with the
// header. Where the pass meets something the tokenizer refuses (text after
// a closing quote, a quote never closed), it stops, and the rest of the
// file is the last range, whose reader reports the error with its line.
// Gzipped files cannot be entered in the middle and are always read whole.

var newline = []byte{'\n'}

// csvRange is where one row group of a CSV file starts.
type csvRange struct {
	start int64 // byte offset of its first record (0: the file's start, header included)
	line  int64 // line number of that record, 1-based
}

// splitCSV finds the record starts of a CSV file at about every split
// bytes (see above). It returns the ranges (the first starting at 0) and,
// when the pass reached the end of the file, the records in each range
// (a blank line is not a record unless the file has one column; the
// header is not counted).
func splitCSV(r io.Reader, opts *CSVOptions, split int64, width int) (ranges []csvRange, counts []int64, complete bool, err error) {
	const (
		field     = iota // at the start of a field
		unquoted         // in an unquoted field
		unqEsc           // after the escape character in an unquoted field
		unqEscCR         // after escape, \r in an unquoted field
		quoted           // in a quoted field
		quotedEsc        // after the escape character in a quoted field
		escCR            // after escape, \r in a quoted field
		quote            // after a quote in a quoted field: closing or doubled
		closedCR         // after a closing quote, \r
	)
	delim, q, esc := opts.Delimiter, opts.Quote, opts.Escape
	br := bufio.NewReaderSize(r, 1<<20)
	ranges = []csvRange{{start: 0, line: 1}}
	counts = []int64{0}
	var (
		pos       int64     // offset of buf[0]
		line      int64 = 1 // line of the byte being read
		recLen    int64     // bytes of the current record so far
		prev      byte      // the byte read last
		state     = field
		next      = split // the offset the next range starts at or after
		header    = opts.Header
		blankRecs = width == 1 // a blank line is a record (a NULL) in a one-column file
	)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		br.Discard(3)
		pos = 3
	}
	// endRecord closes the record whose line break is at offset at.
	endRecord := func(at int64) {
		blank := recLen == 0 || (recLen == 1 && prev == '\r')
		switch {
		case header:
			header = false
		case !blank || blankRecs:
			counts[len(counts)-1]++
		}
		recLen, state = 0, field
		line++
		if start := at + 1; start >= next {
			ranges = append(ranges, csvRange{start: start, line: line})
			counts = append(counts, 0)
			next = start + split
		}
	}
	for {
		if br.Buffered() == 0 {
			if _, err := br.Peek(1); err == io.EOF {
				break
			} else if err != nil {
				return nil, nil, false, err
			}
		}
		buf, _ := br.Peek(br.Buffered())
		for i := 0; i < len(buf); i++ {
			// Fast paths over the bytes that change nothing: the rest of
			// a line that holds no quote (no field of it opens one; an
			// escape there cannot hide its line break), and the text
			// of a quoted field up to its next quote or escape.
			switch state {
			case field, unquoted:
				if j := bytes.IndexByte(buf[i:], '\n'); j >= 0 && (q == 0 || bytes.IndexByte(buf[i:i+j], q) < 0) {
					if j > 0 {
						recLen += int64(j)
						prev = buf[i+j-1]
					}
					i += j
					endRecord(pos + int64(i))
					prev = '\n'
					continue
				}
			case quoted:
				k := bytes.IndexByte(buf[i:], q)
				if esc != 0 {
					if e := bytes.IndexByte(buf[i:], esc); e >= 0 && (k < 0 || e < k) {
						k = e
					}
				}
				if k < 0 {
					k = len(buf) - i
				}
				if k > 0 {
					seg := buf[i : i+k]
					line += int64(bytes.Count(seg, newline))
					recLen += int64(k)
					prev = seg[k-1]
					i += k - 1
					continue // on at the quote or escape, or the next buffer
				}
			}
			c := buf[i]
			at := pos + int64(i)
			switch state {
			case field:
				if q != 0 && c == q {
					state = quoted
					break
				}
				state = unquoted
				fallthrough
			case unquoted:
				switch {
				case c == '\n':
					endRecord(at)
					prev = c
					continue
				case c == delim:
					state = field
				case esc != 0 && c == esc:
					state = unqEsc
				}
			case unqEsc:
				// The tokenizer takes the next character literally only
				// inside the line: an escape before a line break is text.
				switch c {
				case '\n':
					endRecord(at)
					prev = c
					continue
				case '\r':
					state = unqEscCR
				default:
					state = unquoted
				}
			case unqEscCR:
				if c == '\n' {
					endRecord(at)
					prev = c
					continue
				}
				state = unquoted
				i-- // the \r was the escaped character; read c again
				continue
			case quoted:
				switch {
				case c == q:
					state = quote
				case esc != 0 && c == esc:
					state = quotedEsc
				case c == '\n':
					line++ // a line break inside quotes is text
				}
			case quotedEsc:
				switch c {
				case '\n':
					line++ // an escaped line break
					state = quoted
				case '\r':
					state = escCR
				default:
					state = quoted
				}
			case escCR:
				state = quoted
				if c == '\n' {
					line++
					break
				}
				i-- // \r was escaped; read c again
				continue
			case quote:
				switch c {
				case q:
					state = quoted // a doubled quote
				case delim:
					state = field
				case '\n':
					endRecord(at)
					prev = c
					continue
				case '\r':
					state = closedCR
				default:
					return ranges, counts, false, nil // text after a closing quote: the reader reports it
				}
			case closedCR:
				if c == '\n' {
					endRecord(at)
					prev = c
					continue
				}
				return ranges, counts, false, nil
			}
			recLen++
			prev = c
		}
		pos += int64(len(buf))
		br.Discard(len(buf))
	}
	switch state {
	case quoted, quotedEsc, escCR:
		return ranges, counts, false, nil // a quote never closed: the reader reports it
	}
	if recLen > 0 && !(recLen == 1 && prev == '\r') && !header {
		counts[len(counts)-1]++ // the last record has no line break
	}
	if n := len(ranges); n > 1 && ranges[n-1].start >= pos {
		ranges, counts = ranges[:n-1], counts[:n-1] // a range past the last record
	}
	return ranges, counts, true, nil
}

// ByteRanges reports whether f's row groups are byte ranges of a CSV file
// meant to be read by different tasks, each a split of its own (exec.Scan).
func (f *File) ByteRanges() bool { return f.csv != nil && len(f.RowGroups) > 1 }
