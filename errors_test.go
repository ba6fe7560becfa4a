package fsql_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsql-dev/fsql"
)

// The error model as a library user sees it: only package fsql's names
// and the standard library.

// A data folder that does not exist is fs.ErrNotExist, an I/O error,
// both from Open and from a query after the folder went away.
func TestMissingDataFolderIsNotExist(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	_, err := fsql.Open(missing, fsql.DefaultConfig())
	checkNotExist(t, "Open", err)

	dir := filepath.Join(t.TempDir(), "data")
	writeRows(t, filepath.Join(dir, "two", "part-0.parquet"), []bigRow{{1, 10, "a"}, {2, 20, "b"}})
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	_, err = drain(context.Background(), eng, "select * from two")
	checkNotExist(t, "query", err)
	_, err = eng.Tables()
	checkNotExist(t, "Tables", err)
}

func checkNotExist(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: %v is not fs.ErrNotExist", what, err)
	}
	if k := fsql.KindOf(err); k != fsql.ErrIO {
		t.Errorf("%s: kind %v, want %v", what, k, fsql.ErrIO)
	}
	var e *fsql.Error
	if !errors.As(err, &e) {
		t.Errorf("%s: %v is not an *fsql.Error", what, err)
	}
}

// Each kind a query can fail with, its MySQL number and SQLSTATE.
func TestErrorKindsAndCodes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	writeRows(t, filepath.Join(dir, "two", "part-0.parquet"), []bigRow{{1, 10, "a"}, {2, 20, "b"}})
	eng, err := fsql.Open(dir, fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		q     string
		kind  fsql.Kind
		code  int
		state string
	}{
		{"select * from no_such_table", fsql.ErrUnknownName, 1146, "42S02"},
		{"select zz from two", fsql.ErrUnknownName, 1054, "42S22"},
		{"select k from two where sum(v) > 1", fsql.ErrSemantic, 1111, "HY000"},
		{"select k from two union select k, v from two", fsql.ErrSemantic, 1222, "21000"},
		{"select (select k from two)", fsql.ErrExecution, 1242, "21000"},
		{"select 9223372036854775807 + k from two", fsql.ErrExecution, 1690, "22003"},
	} {
		_, err := drain(context.Background(), eng, c.q)
		if err == nil {
			t.Errorf("%s: no error", c.q)
			continue
		}
		if !errors.Is(err, c.kind) || fsql.KindOf(err) != c.kind {
			t.Errorf("%s: %q is of kind %v, want %v", c.q, err, fsql.KindOf(err), c.kind)
		}
		if code, state := fsql.CodeOf(err); code != c.code || state != c.state {
			t.Errorf("%s: %q has code %d (%s), want %d (%s)", c.q, err, code, state, c.code, c.state)
		}
		var e *fsql.Error
		if !errors.As(err, &e) || e.Kind != c.kind {
			t.Errorf("%s: %q is not an *fsql.Error of kind %v", c.q, err, c.kind)
		}
	}
	for _, c := range []struct {
		q            string
		kind         fsql.Kind
		code         int
		line, column int
	}{
		{"select k\nfrom two\nwhere k = = 1", fsql.ErrSyntax, 1064, 3, 11},
		{"select k,\n  zz from two", fsql.ErrUnknownName, 1054, 2, 3},
		{"select k from two t where t.k = u.k", fsql.ErrUnknownName, 1054, 1, 33}, // MySQL: unknown column u.k
	} {
		_, err := drain(context.Background(), eng, c.q)
		p := fsql.PositionOf(err)
		if code, _ := fsql.CodeOf(err); fsql.KindOf(err) != c.kind || code != c.code || p == nil || p.Line != c.line || p.Column != c.column {
			t.Errorf("%q: %v (kind %v, code %d, at %v), want %v %d at line %d column %d", c.q, err, fsql.KindOf(err), code, p, c.kind, c.code, c.line, c.column)
		}
	}
	_, err = drain(context.Background(), eng, "select * from nope")
	if !errors.Is(err, fsql.ErrNoTable) {
		t.Errorf("unknown table: %v does not wrap ErrNoTable", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = drain(ctx, eng, "select * from two")
	if !errors.Is(err, context.Canceled) || fsql.KindOf(err) != fsql.ErrCancelled {
		t.Errorf("cancelled: %v is of kind %v", err, fsql.KindOf(err))
	}
	if code, _ := fsql.CodeOf(err); code != 1317 {
		t.Errorf("cancelled: code %d, want 1317", code)
	}
	if fsql.Retryable(err) {
		t.Errorf("cancelled: %v is retryable", err)
	}
}
