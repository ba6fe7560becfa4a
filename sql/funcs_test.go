package sql

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/internal/suggest"
)

// TestRegistryBinds checks that every name SHOW BUILTINS lists binds: a
// scalar reaches an expression function that exists (an arity error is
// fine here, an unknown function is not), and every query using one gets
// past the registry.
func TestRegistryBinds(t *testing.T) {
	for name, f := range builtins {
		if f.kind == scalarKind && f.bind == nil {
			t.Errorf("scalar %s has no binder", name)
		}
		if f.kind == aggregateKind && f.agg == "" {
			t.Errorf("aggregate %s names no aggregate", name)
		}
	}
	for _, row := range Builtins() {
		name, kind := row[0], row[1]
		var q string
		switch kind {
		case "scalar":
			q = "select " + name + "()"
		case "aggregate":
			q = "select " + name + "(1)"
		default:
			q = "select " + name + "() over ()"
		}
		stmts, err := Parse(q)
		if err != nil {
			continue // a keyword function the parser spells another way (EXTRACT, POSITION, ...)
		}
		_, err = NewBinder(nil).Bind(stmts[0])
		if err != nil && (strings.Contains(err.Error(), "unknown function") || strings.Contains(err.Error(), "is not supported")) {
			t.Errorf("%s: %v", q, err)
		}
	}
	// The plain scalars name expression functions NewCall has.
	for name, f := range builtins {
		if f.fn == "" {
			continue
		}
		if _, err := expr.NewCall(f.fn); errors.Is(err, expr.ErrUnsupported) {
			t.Errorf("scalar %s binds to %s: %v", name, f.fn, err)
		}
	}
}

func TestSuggestions(t *testing.T) {
	for _, c := range []struct {
		name string
		want []string
	}{
		{"sqtr", []string{"sqrt"}},
		{"SQTR", []string{"sqrt"}},
		{"group_concta", []string{"group_concat"}},
		{"lpda", []string{"lpad"}},
		{"datedif", []string{"datediff"}},
		{"foobarbaz", nil},
		{"x", nil},
	} {
		got := suggestFunctions(c.name)
		if strings.Join(got, ",") != strings.Join(c.want, ",") {
			t.Errorf("suggestFunctions(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		a, b string
		d    int
	}{{"sqtr", "sqrt", 1}, {"abc", "abc", 0}, {"", "ab", 2}, {"kitten", "sitting", 3}, {"ab", "ba", 1}} {
		if d := suggest.Distance(c.a, c.b); d != c.d {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, d, c.d)
		}
	}
	err := unknownFunction("sqtr", "sqtr(a)", &errs.Position{Line: 1, Column: 8, Offset: 7})
	if !errors.Is(err, errs.ErSpDoesNotExist) || !strings.Contains(err.Error(), "sqtr(a) at line 1 column 8; did you mean sqrt?") || errs.PositionOf(err) == nil {
		t.Errorf("unknownFunction: %v", err)
	}
}
