package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"time"
)

// progressBar turns the generator's one-line-per-table progress into a
// single bar redrawn in place, for a terminal:
//
//	tpcds: [###########.............] 11/24 tables, 7.9s, last store_returns
type progressBar struct {
	w     io.Writer
	total int
	done  int
	start time.Time
	buf   []byte
}

func newProgressBar(w io.Writer, total int) *progressBar {
	return &progressBar{w: w, total: total, start: time.Now()}
}

// Write counts complete lines; each is one finished table.
func (p *progressBar) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 {
			break
		}
		line := string(p.buf[:i])
		p.buf = p.buf[i+1:]
		p.done++
		p.draw(tableOf(line))
	}
	return len(b), nil
}

// tableOf picks the table name out of a line "tpcds: name  N rows (Ts)".
func tableOf(line string) string {
	f := strings.Fields(strings.TrimPrefix(line, "tpcds:"))
	if len(f) == 0 {
		return ""
	}
	return f[0]
}

func (p *progressBar) draw(last string) {
	const width = 24
	filled := width
	if p.total > 0 && p.done < p.total {
		filled = p.done * width / p.total
	}
	fmt.Fprintf(p.w, "\r\x1b[Ktpcds: [%s%s] %d/%d tables, %.1fs, last %s",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled), p.done, p.total,
		time.Since(p.start).Seconds(), last)
}

// Finish ends the bar's line.
func (p *progressBar) Finish() { fmt.Fprintln(p.w) }
