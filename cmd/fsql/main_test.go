package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/tpcds"
	"github.com/fsql-dev/fsql/internal/format"
)

func runArgs(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, out, _ := runArgs(t, args...)
		if code != 0 || !strings.Contains(out, "fsql bench tpcds") || !strings.Contains(out, "parallelism.default") {
			t.Errorf("%v: code %d, output %q", args, code, out)
		}
	}
	// Every key with its default and its meaning.
	_, out, _ := runArgs(t, "help")
	for _, st := range fsql.DefaultConfig().Settings() {
		v := st.Value
		if v == "" {
			v = "''"
		}
		if !strings.Contains(out, "  "+st.Key+" = "+v+"\n      "+st.Doc+"\n") {
			t.Errorf("fsql help does not list %s = %s (%s)", st.Key, st.Value, st.Doc)
		}
	}
}

// TestSetInScript: SET lasts for the rest of an -e script (one session),
// and prints nothing.
func TestSetInScript(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := runArgs(t, "--data", dir, "--format", "csv", "-e",
		"set `execution.memory.query-budget` = '3mb'; show variables like '%query-budget'; set `execution.memory.query-budget` = default; show variables like '%query-budget'")
	want := "Variable_name,Value\nexecution.memory.query-budget,3mb\nVariable_name,Value\nexecution.memory.query-budget,8gb\n"
	if code != 0 || out != want {
		t.Errorf("code %d, stderr %q, output %q, want %q", code, stderr, out, want)
	}
	// A mistyped --set key names the closest keys.
	_, _, stderr = runArgs(t, "--data", dir, "--set", "paralelism.default=2", "-e", "select 1")
	if !strings.Contains(stderr, "did you mean parallelism.default?") {
		t.Errorf("stderr %q", stderr)
	}
}

// TestErrorsAreOneLine checks that every command-line mistake exits 1 with
// a single "fsql: ..." line on stderr that says what is wrong.
func TestErrorsAreOneLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "missing.sql")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bogus"}, "-bogus"},
		{[]string{"--data", dir, "--set", "nope=1", "-e", "select 1"}, `unknown config key "nope"`},
		{[]string{"--data", dir, "--set", "parallelism.default", "-e", "select 1"}, "key=value"},
		{[]string{"--data", dir, "--format", "xml", "-e", "select 1"}, `unknown output format "xml"`},
		{[]string{"--data", filepath.Join(dir, "nope"), "-e", "select 1"}, "does not exist"},
		{[]string{"--data", dir, "-f", file}, "missing.sql"},
		{[]string{"--data", dir, "-e", "select 1", "-f", file}, "not both"},
		{[]string{"--data", dir, "-e", "select 1", "extra"}, `unexpected argument "extra"`},
		{[]string{"bench"}, "fsql bench tpcds"},
		{[]string{"bench", "tpcds", "--runs", "0"}, "--runs"},
		{[]string{"bench", "tpcds", "--query-dir", filepath.Join(dir, "q")}, "--query-dir"},
	} {
		code, _, stderr := runArgs(t, c.args...)
		if code != 1 {
			t.Errorf("%v: exit code %d, want 1", c.args, code)
		}
		if !strings.HasPrefix(stderr, "fsql: ") || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: stderr %q, want one fsql: line mentioning %q", c.args, stderr, c.want)
		}
	}
}

func TestLoadBenchQueries(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "q3.sql"), []byte("select 3;\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "q14a.sql"), []byte("-- note\nselect 14\n"), 0o644)
	qs, err := loadBenchQueries(dir, "3, q14a")
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || qs[0].name != "q3" || qs[0].text != "select 3" || qs[1].text != "-- note\nselect 14" {
		t.Errorf("got %+v %+v", qs[0], qs[1])
	}
	if _, err := loadBenchQueries(dir, "7"); err == nil || !strings.Contains(err.Error(), "q7.sql") {
		t.Errorf("missing query: %v", err)
	}
	// all: every numbered query, in numeric order.
	os.WriteFile(filepath.Join(dir, "q14b.sql"), []byte("select 15\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "q20.sql"), []byte("select 20\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "qnotes.sql"), []byte("select 0\n"), 0o644)
	qs, err = loadBenchQueries(dir, "all")
	var names []string
	for _, q := range qs {
		names = append(names, q.name)
	}
	if err != nil || strings.Join(names, ",") != "q3,q14a,q14b,q20" {
		t.Errorf("all: %v, %v", names, err)
	}
}

func TestPrintBench(t *testing.T) {
	qs := []*benchQuery{
		{name: "q3", times: []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}, rows: 10},
		{name: "q7", times: []time.Duration{4 * time.Millisecond, 6 * time.Millisecond}, rows: 100},
	}
	var out bytes.Buffer
	if err := printBench(&out, qs); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"q3", "2.0", "q7", "5.0", "total", "7.0"} {
		if !strings.Contains(got, want) {
			t.Errorf("bench table lacks %q:\n%s", want, got)
		}
	}
}

func TestBenchMatrix(t *testing.T) {
	if m, err := parseModes("blocking, ALL_EXCHANGES_HYBRID_FULL,hybrid-selective"); err != nil || strings.Join(m, ",") != "ALL_EXCHANGES_BLOCKING,ALL_EXCHANGES_HYBRID_FULL,ALL_EXCHANGES_HYBRID_SELECTIVE" {
		t.Errorf("parseModes: %v %v", m, err)
	}
	if _, err := parseModes("pipelined"); err == nil || !strings.Contains(err.Error(), "PIPELINED") {
		t.Errorf("parseModes of an unknown mode: %v", err)
	}
	if s, err := parseSlots("1,2, 4"); err != nil || fmt.Sprint(s) != "[1 2 4]" {
		t.Errorf("parseSlots: %v %v", s, err)
	}
	if _, err := parseSlots("0"); err == nil {
		t.Error("parseSlots accepted 0 slots")
	}
	// Two cells of 2 slots: the multi-stage set's totals and the ratio
	// to blocking; the 20-query set is not complete, so not totalled.
	var qs []*benchQuery
	for _, n := range multiStageQueries {
		qs = append(qs, &benchQuery{name: "q" + n})
	}
	qs = append(qs, &benchQuery{name: "q3"})
	cell := func(mode string, d time.Duration) *benchCell {
		c := &benchCell{mode: mode, slots: 2, times: map[string][]time.Duration{}, peak: map[string]int64{"q4": 3 << 20}, err: map[string]error{}}
		for _, q := range qs {
			c.times[q.name] = []time.Duration{d, 3 * d, d}
		}
		return c
	}
	cells := []*benchCell{cell("ALL_EXCHANGES_BLOCKING", 100*time.Millisecond), cell("ALL_EXCHANGES_HYBRID_FULL", 90*time.Millisecond)}
	var out bytes.Buffer
	if err := printMatrix(&out, cells, qs); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"all 8 (s)", "multi-stage set (s)", "2 slots blocking", "2 slots hybrid-full", "0.80", "0.70", "0.90x", "3\n", "q78"} {
		if !strings.Contains(got, strings.ReplaceAll(want, "\\n", "\n")) {
			t.Errorf("matrix output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "20-query set") {
		t.Errorf("an incomplete 20-query set was totalled:\n%s", got)
	}
}

func TestSetFlags(t *testing.T) {
	var s setFlags
	if err := s.Set("parallelism.default=3"); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("novalue"); err == nil {
		t.Error("Set accepted a flag without =")
	}
}

func TestDefaultDataDir(t *testing.T) {
	d, err := defaultDataDir(0.01, false)
	if err != nil {
		t.Skip("no user cache dir:", err)
	}
	v := strconv.Itoa(tpcds.GeneratorVersion)
	if filepath.Base(d) != "tpcds-sf0.01-g"+v || filepath.Base(filepath.Dir(d)) != "fsql" {
		t.Errorf("default data dir %s", d)
	}
	if d, _ := defaultDataDir(1, false); filepath.Base(d) != "tpcds-sf1-g"+v {
		t.Errorf("scale 1 dir %s", d)
	}
	if d, _ := defaultDataDir(1, true); filepath.Base(d) != "tpcds-sf1-flat-g"+v {
		t.Errorf("scale 1 flat dir %s", d)
	}
}

// TestPromptContinuesAfterErrors feeds the prompt a multi-line statement
// that fails, then \q: the error is printed and the session goes on until
// \q.
func TestPromptContinuesAfterErrors(t *testing.T) {
	var out, errOut bytes.Buffer
	in := strings.NewReader("select\n  1;\n\nselect 2;\n\\q\nselect 3;\n")
	eng, err := fsql.Open(t.TempDir(), fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	p := &printer{eng: eng, sess: eng.Session(), out: &out, stderr: &errOut, show: show{format: format.Table}}
	s := &session{p: p, in: newScanReader(in, &out), interactive: true}
	// The engine over an empty folder fails both statements (or, once
	// it runs queries, fails on no table); the session must go on.
	if err := s.run(); err != nil {
		t.Fatalf("interactive session failed: %v", err)
	}
	if got := strings.Count(out.String(), prompt); got != 4 {
		t.Errorf("%d prompts, want 4: %q", got, out.String())
	}
	if !strings.Contains(out.String(), contPrompt) {
		t.Errorf("no continuation prompt: %q", out.String())
	}
	if n := strings.Count(errOut.String(), "fsql: "); n > 2 {
		t.Errorf("stderr %q: statement after \\q ran", errOut.String())
	}
}

// TestPipedScriptFails checks that statements piped in print no prompts
// and that a failing one makes the run exit 1.
func TestPipedScriptFails(t *testing.T) {
	var out, errOut bytes.Buffer
	code := run([]string{"--data", t.TempDir()}, strings.NewReader("select * from nope;\n"), &out, &errOut)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if strings.Contains(out.String(), prompt) {
		t.Errorf("prompt printed for piped input: %q", out.String())
	}
}

func TestIsPlan(t *testing.T) {
	plan := arrow.NewSchema([]arrow.Field{{Name: "plan", Type: arrow.BinaryTypes.String}}, nil)
	notPlan := arrow.NewSchema([]arrow.Field{{Name: "plan", Type: arrow.PrimitiveTypes.Int64}}, nil)
	two := arrow.NewSchema([]arrow.Field{{Name: "plan", Type: arrow.BinaryTypes.String}, {Name: "x", Type: arrow.BinaryTypes.String}}, nil)
	if !isPlan(plan) || isPlan(notPlan) || isPlan(two) {
		t.Error("isPlan misjudges EXPLAIN output")
	}
}

func TestMessage(t *testing.T) {
	if got := message(fmt.Errorf("query: %w", context.Canceled)); got != "cancelled" {
		t.Errorf("message(cancelled) = %q", got)
	}
	if got := message(errors.New("line 1 column 8\nnear x ")); got != "line 1 column 8 near x" {
		t.Errorf("message kept the newline: %q", got)
	}
}

func TestMedian(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x))
		}
		return d
	}
	if median(ms(5, 1, 3)) != 3 || median(ms(4, 1, 3, 2)) != 2 {
		t.Error("median is wrong")
	}
}

func TestProgressBarCountsTables(t *testing.T) {
	var out strings.Builder
	bar := newProgressBar(&out, 4)
	io.WriteString(bar, "tpcds: item   100 rows  (0.1s)\ntpcds: sto")
	io.WriteString(bar, "re  12 rows  (0.2s)\n")
	bar.Finish()
	s := out.String()
	for _, want := range []string{"(1/4)", "(2/4)", "last store", "tpcds:", "[######......"} {
		if !strings.Contains(s, want) {
			t.Fatalf("bar output %q lacks %q", s, want)
		}
	}
	if !strings.HasSuffix(s, "\n") {
		t.Errorf("bar output %q does not end its line", s)
	}
}

// TestEngineErrorForm checks the one form of an engine error on stderr:
// MySQL number, SQLSTATE, kind, then the message with its position.
func TestEngineErrorForm(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "q.sql")
	if err := os.WriteFile(script, []byte("select 1;\n\nselect 1\nfrm t;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data", dir, "-e", "select 1 frm t"}, `fsql: ERROR 1064 (42000) Syntax: syntax error at line 1 column 14 near "t"` + "\n"},
		{[]string{"--data", dir, "-e", "select x\nfrom nope"}, "fsql: ERROR 1146 (42S02) UnknownName: unknown table 'nope' at line 2 column 6"},
		{[]string{"--data", dir, "-e", "select 1; select (select 1 union all select 2)"}, "fsql: ERROR 1242 (21000) Execution: statement 2 (line 1): a scalar subquery returned more than one row"},
		{[]string{"--data", dir, "-f", script}, `fsql: ERROR 1064 (42000) Syntax: ` + script + `: syntax error at line 4 column 5 near "t;"`},
	} {
		code, _, stderr := runArgs(t, c.args...)
		if code != 1 || !strings.HasPrefix(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit code %d, stderr %q, want 1 and %q", c.args, code, stderr, c.want)
		}
	}
}
