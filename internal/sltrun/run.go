package sltrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/sltcorpus"
)

// Engine is the name skipif and onlyif lines are matched against.
const Engine = "mysql"

// Options change how scripts run; the zero value is the defaults.
type Options struct {
	// Config is the engine's configuration (DefaultConfig when nil).
	Config *fsql.Config
	// Timeout bounds each statement (one minute when zero).
	Timeout time.Duration
	// Wrap, when set, wraps the engine before the script runs (tests
	// give it a checked allocator or a plan hook).
	Wrap func(*fsql.Engine) *fsql.Engine
}

// Failure is one record that did not pass.
type Failure struct {
	Line int
	SQL  string
	// Kind is "wrong" (a result that differs), "unsupported" (fsql
	// declined the statement as not implemented), "error" (it failed
	// otherwise) or "succeeded" (a statement error that ran).
	Kind   string
	Reason string
}

// Result is what a script did.
type Result struct {
	Path                    string
	Passed, Failed, Skipped int
	Failures                []Failure
}

// RunFile runs the script at path against a fresh engine over an empty
// data directory (a temporary folder, removed at the end).
func RunFile(ctx context.Context, path string, opts Options) (*Result, error) {
	script, err := sltcorpus.ParseFile(path)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "fsql-slt-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	cfg := fsql.DefaultConfig()
	if opts.Config != nil {
		cfg = *opts.Config
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		return nil, err
	}
	if opts.Wrap != nil {
		eng = opts.Wrap(eng)
	}
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	sess := eng.Session()
	res := &Result{Path: path}
	for _, r := range script.Records {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if r.Kind == sltcorpus.KindHashThreshold {
			continue // the expected results are already hashed past it
		}
		if !r.Applies(Engine) {
			if r.Kind != sltcorpus.KindHalt {
				res.Skipped++
			}
			continue
		}
		if r.Kind == sltcorpus.KindHalt {
			break
		}
		f := run(ctx, sess, r, timeout)
		if f == nil {
			res.Passed++
			continue
		}
		f.Line, f.SQL = r.Line, r.SQL
		res.Failed++
		res.Failures = append(res.Failures, *f)
	}
	return res, nil
}

// run runs one statement or query record; nil when it passed.
func run(ctx context.Context, sess *fsql.Session, r *sltcorpus.Record, timeout time.Duration) *Failure {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	batches, err := collect(ctx, sess, r.SQL)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	if r.Kind == sltcorpus.KindStatement {
		switch {
		case r.ExpectError && err == nil:
			return &Failure{Kind: "succeeded", Reason: "the statement succeeded; the script expects an error"}
		case !r.ExpectError && err != nil:
			return failed(err)
		}
		return nil
	}
	if err != nil {
		return failed(err)
	}
	rows, err := sltcorpus.Rows(r.Types, batches)
	if err != nil {
		return &Failure{Kind: "wrong", Reason: err.Error()}
	}
	if err := r.Check(sltcorpus.Values(r.Sort, rows)); err != nil {
		return &Failure{Kind: "wrong", Reason: err.Error()}
	}
	return nil
}

func failed(err error) *Failure {
	kind := "error"
	if errors.Is(err, fsql.ErrUnsupported) {
		kind = "unsupported"
	}
	return &Failure{Kind: kind, Reason: firstLine(err.Error())}
}

// collect runs one statement and keeps its batches.
func collect(ctx context.Context, sess *fsql.Session, q string) ([]arrow.RecordBatch, error) {
	rows, err := sess.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []arrow.RecordBatch
	for rows.Next() {
		b := rows.RecordBatch()
		b.Retain()
		out = append(out, b)
	}
	if err := rows.Err(); err != nil {
		for _, b := range out {
			b.Release()
		}
		return nil, err
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// String is the one-line summary `fsql slt` prints per file.
func (r *Result) String() string {
	return fmt.Sprintf("%s: %d passed, %d failed, %d skipped", r.Path, r.Passed, r.Failed, r.Skipped)
}
