package errs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"testing"

	"github.com/pingcap/tidb/pkg/parser/mysql"

	"github.com/fsql-dev/fsql/errs"
)

// TestConditionsMatchMySQL checks every number and SQLSTATE against the
// TiDB parser's copy of MySQL's error tables (mysqld_error.h and
// sql_state.h), so a typo cannot reach a client. MySQL maps a number
// without a SQLSTATE of its own to HY000.
func TestConditionsMatchMySQL(t *testing.T) {
	// Numbers missing from the parser's tables, checked against MySQL's
	// server error reference by hand (all HY000): ER_FIELD_IN_ORDER_NOT_SELECT,
	// ER_CAPACITY_EXCEEDED, ER_FIELD_IN_GROUPING_NOT_GROUP_BY.
	notInParser := map[int]bool{3065: true, 3170: true, 3602: true}
	seen := map[errs.Condition]bool{}
	for _, c := range errs.Conditions() {
		if seen[c] {
			t.Errorf("%s listed twice", c.Name)
		}
		seen[c] = true
		if !slices.Contains(errs.Kinds(), c.Kind) {
			t.Errorf("%s has no kind", c.Name)
		}
		if _, ok := mysql.MySQLErrName[uint16(c.Code)]; !ok && !notInParser[c.Code] {
			t.Errorf("%s: MySQL has no error %d", c.Name, c.Code)
		}
		want, ok := mysql.MySQLState[uint16(c.Code)]
		if !ok {
			want = mysql.DefaultMySQLState
		}
		if c.SQLState != want {
			t.Errorf("%s (%d): SQLSTATE %s, MySQL's is %s", c.Name, c.Code, c.SQLState, want)
		}
	}
	for _, k := range errs.Kinds() {
		d := k.Condition()
		if d.Kind != k {
			t.Errorf("%v: default condition %s belongs to %v", k, d.Name, d.Kind)
		}
		if !seen[d] {
			t.Errorf("%v: default condition %s is not in Conditions", k, d.Name)
		}
	}
}

func TestNewKeepsCause(t *testing.T) {
	_, statErr := os.Stat("testdata/no such folder")
	err := errs.New(errs.IO, "data folder: %w", statErr)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cause lost: %v", err)
	}
	if !errors.Is(err, errs.IO) || errors.Is(err, errs.Execution) {
		t.Errorf("kind: %v", errs.KindOf(err))
	}
	if err.Error() != "data folder: "+statErr.Error() {
		t.Errorf("message %q", err)
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Errorf("errors.As lost the *fs.PathError")
	}

	two := errs.New(errs.Execution, "%w and %w", context.Canceled, fs.ErrPermission)
	if !errors.Is(two, context.Canceled) || !errors.Is(two, fs.ErrPermission) {
		t.Errorf("one of two causes lost: %v", two)
	}
	if errs.KindOf(two) != errs.Execution {
		t.Errorf("New must keep its own kind, got %v", errs.KindOf(two))
	}
}

func TestPrefixes(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{errs.New(errs.Internal, "scan without a table"), "internal error: scan without a table"},
		{errs.New(errs.Unsupported, "TABLESAMPLE"), "not supported: TABLESAMPLE"},
		{errs.New(errs.UnknownName, "unknown column 'x'"), "unknown column 'x'"},
		{errs.Wrap(errs.Internal, "stage 2: %w", errors.New("boom")), "internal error: stage 2: boom"},
		{errs.Wrap(errs.Execution, "stage 2: %w", errs.New(errs.Internal, "boom")), "stage 2: internal error: boom"},
	} {
		if c.err.Error() != c.want {
			t.Errorf("got %q, want %q", c.err, c.want)
		}
	}
}

func TestWrapKeepsClassification(t *testing.T) {
	at := errs.Position{Line: 2, Column: 7, Offset: 20}
	inner := errs.New(errs.ErNoSuchTable, "table 'x' not found").At(at)
	for _, c := range []struct {
		name string
		err  error
		kind errs.Kind
		code int
		pos  *errs.Position
	}{
		{"kinded cause", errs.Wrap(errs.Execution, "binding: %w", inner), errs.UnknownName, 1146, &at},
		{"through fmt", errs.Wrap(errs.Execution, "scan: %w", fmt.Errorf("file f: %w", inner)), errs.UnknownName, 1146, &at},
		{"plain cause", errs.Wrap(errs.Execution, "scan: %w", errors.New("boom")), errs.Execution, 1105, nil},
		{"no cause", errs.Wrap(errs.Resources, "too big"), errs.Resources, 1041, nil},
		{"cancelled", errs.Wrap(errs.Execution, "scan: %w", context.Canceled), errs.Cancelled, 1317, nil},
		{"deadline", errs.Wrap(errs.Execution, "scan: %w", context.DeadlineExceeded), errs.Cancelled, 3024, nil},
		{"kind sentinel", errs.Wrap(errs.Execution, "x: %w", fmt.Errorf("%w: y", errs.Type)), errs.Type, 1210, nil},
		{"condition sentinel", errs.Wrap(errs.Internal, "x: %w", fmt.Errorf("%w: y", errs.ErDataOutOfRange)), errs.Execution, 1690, nil},
	} {
		if k := errs.KindOf(c.err); k != c.kind {
			t.Errorf("%s: kind %v, want %v", c.name, k, c.kind)
		}
		if !errors.Is(c.err, c.kind) {
			t.Errorf("%s: errors.Is(err, %v) is false", c.name, c.kind)
		}
		if code, _ := errs.CodeOf(c.err); code != c.code {
			t.Errorf("%s: code %d, want %d", c.name, code, c.code)
		}
		if p := errs.PositionOf(c.err); (p == nil) != (c.pos == nil) || (p != nil && *p != *c.pos) {
			t.Errorf("%s: position %v, want %v", c.name, p, c.pos)
		}
	}
	if !errors.Is(errs.Wrap(errs.Execution, "x: %w", inner), errs.ErNoSuchTable) {
		t.Errorf("errors.Is(err, ErNoSuchTable) is false")
	}
	if errors.Is(inner, errs.ErBadTableError) {
		t.Errorf("1146 matches 1051")
	}
}

func TestSentinels(t *testing.T) {
	// A package's own sentinel made with New keeps its kind under
	// fmt.Errorf wrapping and stays distinct from its kind's others.
	notParquet := errs.New(errs.ErNotFormFile, "not a parquet file")
	corrupt := errs.New(errs.ErNotFormFile, "bad parquet data")
	err := fmt.Errorf("%w: file %s", notParquet, "a.parquet")
	if !errors.Is(err, notParquet) || errors.Is(err, corrupt) {
		t.Errorf("sentinel identity lost")
	}
	if errs.KindOf(err) != errs.IO {
		t.Errorf("kind %v", errs.KindOf(err))
	}
	if at := notParquet.At(errs.Position{Line: 1, Column: 1}); at == notParquet || notParquet.Pos != nil {
		t.Errorf("At changed the sentinel")
	}
}

func TestUnclassified(t *testing.T) {
	for _, err := range []error{nil, errors.New("plain"), fmt.Errorf("x: %w", fs.ErrNotExist)} {
		if k := errs.KindOf(err); k != 0 {
			t.Errorf("KindOf(%v) = %v", err, k)
		}
		if code, state := errs.CodeOf(err); code != 1105 || state != "HY000" {
			t.Errorf("CodeOf(%v) = %d %s", err, code, state)
		}
	}
	if errs.Retryable(errors.New("plain")) || !errs.Retryable(errs.New(errs.Conflict, "file changed")) {
		t.Errorf("Retryable")
	}
}

func TestKindText(t *testing.T) {
	if s := fmt.Sprintf("%v|%s", errs.Unsupported, errs.Unsupported.String()); s != "not supported|Unsupported" {
		t.Errorf("got %s", s)
	}
	if s := errs.Kind(0).String(); s != "Kind(0)" {
		t.Errorf("zero kind %s", s)
	}
}
