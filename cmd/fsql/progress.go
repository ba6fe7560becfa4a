package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/fsql-dev/fsql"
)

// Both bars are drawn by github.com/schollz/progressbar on stderr, and
// only when stderr is a terminal: a pipe or a file gets plain lines (the
// generator) or nothing (queries).

// barOptions are what every bar of fsql shares: ANSI line clearing, no
// time prediction (stages are not equal work), the elapsed time shown.
func barOptions(w io.Writer, width int, description string) []progressbar.Option {
	return []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(width),
		progressbar.OptionSetDescription(description),
		progressbar.OptionUseANSICodes(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(0),
		progressbar.OptionSetTheme(progressbar.Theme{Saucer: "#", SaucerPadding: ".", BarStart: "[", BarEnd: "]"}),
	}
}

// progressBar turns the generator's one-line-per-table progress into a
// single bar redrawn in place:
//
//	tpcds: last store_returns  45% [###########.............] (11/24) [7s]
type progressBar struct {
	w   io.Writer
	bar *progressbar.ProgressBar
	buf []byte
}

func newProgressBar(w io.Writer, total int) *progressBar {
	opts := append(barOptions(w, 24, "tpcds:"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetRenderBlankState(true))
	return &progressBar{w: w, bar: progressbar.NewOptions(total, opts...)}
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
		p.bar.Describe("tpcds: last " + tableOf(line))
		p.bar.Add(1)
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

// Finish ends the bar's line.
func (p *progressBar) Finish() {
	p.bar.Exit()
	fmt.Fprintln(p.w)
}

// progressDelay is how long a query runs before its bar appears: quick
// queries should not flash one.
const progressDelay = time.Second

// progressTick is how often a shown bar is redrawn.
const progressTick = 150 * time.Millisecond

// queryProgress draws a running query's progress on stderr: the share
// of its work done (fsql.Progress.Fraction), the stages and tasks
// finished and the bytes read:
//
//	33% [######..............] stage 2/3, 1/2 tasks, 12.5 MB read, 3s
//
// It appears once the query ran progressDelay and disappears (its line
// cleared) when Stop is called, before the result is printed.
type queryProgress struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// startQueryProgress starts the bar's goroutine for rows; start is when
// the statement began (planning counts towards the delay).
func startQueryProgress(w io.Writer, rows *fsql.Rows, start time.Time) *queryProgress {
	q := &queryProgress{stop: make(chan struct{}), done: make(chan struct{})}
	go q.run(w, rows, start)
	return q
}

func (q *queryProgress) run(w io.Writer, rows *fsql.Rows, start time.Time) {
	defer close(q.done)
	select {
	case <-q.stop:
		return
	case <-time.After(time.Until(start.Add(progressDelay))):
	}
	// The bar counts in thousandths of the work; it never reaches the
	// end while the query runs, so the library never finishes it.
	const scale = 1000
	opts := append(barOptions(w, 20, ""), progressbar.OptionSetElapsedTime(false), progressbar.OptionShowDescriptionAtLineEnd())
	bar := progressbar.NewOptions(scale, opts...)
	tick := time.NewTicker(progressTick)
	defer tick.Stop()
	for {
		p := rows.Progress()
		bar.Describe(describeProgress(p, time.Since(start)))
		bar.Set(min(int(p.Fraction*scale), scale-1))
		select {
		case <-q.stop:
			bar.Exit()
			bar.Clear()
			return
		case <-tick.C:
		}
	}
}

// Stop removes the bar and returns once it is gone, so what is printed
// next starts on a clean line. It is safe to call more than once.
func (q *queryProgress) Stop() {
	if q == nil {
		return
	}
	q.once.Do(func() { close(q.stop) })
	<-q.done
}

// describeProgress is the text after the bar.
func describeProgress(p fsql.Progress, took time.Duration) string {
	stage := min(p.StagesDone+1, p.StagesTotal)
	return fmt.Sprintf("stage %d/%d, %d/%d tasks, %s read, %.0fs", stage, p.StagesTotal, p.TasksDone, p.TasksTotal,
		humanBytes(p.BytesRead), took.Seconds())
}

// humanBytes spells a byte count in decimal units: 512 B, 12.5 MB.
func humanBytes(n int64) string {
	const unit = 1000
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), 0
	for f >= unit && i < 5 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", f, "kMGTP"[i-1])
}
