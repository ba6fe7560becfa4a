package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/format"
)

// fakeCatalog is a catalog of fixed tables that counts column lookups.
type fakeCatalog struct {
	cols    map[string][]string
	lookups int
}

func (f *fakeCatalog) Tables() ([]string, error) {
	var names []string
	for n := range f.cols {
		names = append(names, n)
	}
	return dedupe(names), nil
}

func (f *fakeCatalog) Columns(_ context.Context, table string) ([]fsql.Column, error) {
	f.lookups++
	for n, cols := range f.cols {
		if strings.EqualFold(n, table) {
			var out []fsql.Column
			for _, c := range cols {
				out = append(out, fsql.Column{Name: c})
			}
			return out, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", fsql.ErrNoTable, table)
}

func TestCompletion(t *testing.T) {
	cat := &fakeCatalog{cols: map[string][]string{
		"item":        {"i_item_sk", "i_item_id", "i_brand"},
		"store_sales": {"ss_item_sk", "ss_quantity"},
		"store":       {"s_store_sk"},
	}}
	var earlier []string
	c := newCompleter(cat, func() []string { return earlier })
	for _, tc := range []struct {
		earlier []string
		line    string // | marks the cursor; none: at the end
		head    string
		want    string
		tail    string
	}{
		{nil, "sel", "", "select", ""},
		{nil, "SEL", "", "SELECT", ""},
		{nil, "select * from it", "select * from ", "item", ""},
		{nil, "select * from st", "select * from ", "store store_sales", ""},
		{nil, "select * from ", "select * from ", "item store store_sales", ""},
		{nil, "select i_| from item", "select ", "i_brand i_item_id i_item_sk", " from item"},
		{nil, "select i_item_s| from item", "select ", "i_item_sk", " from item"},
		{nil, "select item.i_b| from item", "select ", "item.i_brand", " from item"},
		{nil, "select x.ss_q| from store_sales x", "select ", "x.ss_quantity", " from store_sales x"},
		{[]string{"select *", "from store_sales"}, "where ss_i", "where ", "ss_item_sk", ""},
		{nil, "select 1 from item where ", "select 1 from item where ", "i_brand i_item_id i_item_sk", ""},
		{nil, ".ti", "", ".timer", ""},
		{nil, `\`, "", `\? \d \q`, ""},
		{nil, `\d st`, `\d `, "store store_sales", ""},
		{nil, ".describe i", ".describe ", "item", ""},
		{nil, ".mode c", ".mode ", "csv", ""},
		{[]string{"select"}, ".ti", "", "", ""}, // inside a statement: not a command
		{nil, "select 'abc", "select '", "", ""},
		{nil, "sh", "", "show", ""},
		{nil, "show tab", "show ", "table tables", ""},
		{nil, "show var", "show ", "variables", ""},
		{nil, "describe st", "describe ", "store store_sales", ""},
		// SET completes the keys, a key with '-' in backquotes.
		{nil, "set paral", "set ", "parallelism.default", ""},
		{nil, "SET SESSION parallelism.d", "SET SESSION ", "parallelism.default", ""},
		{nil, "set execution.memory.q", "set ", "`execution.memory.query-budget`", ""},
		{nil, "set `execution.memory.q", "set `", "execution.memory.query-budget`", ""},
		{[]string{"set parallelism.default = 2,"}, "csv.h", "", "csv.header", ""},
		{nil, "set parallelism.default = def", "set parallelism.default = ", "default", ""},
	} {
		earlier = tc.earlier
		line, pos := tc.line, len([]rune(tc.line))
		if i := strings.Index(line, "|"); i >= 0 {
			line = line[:i] + line[i+1:]
			pos = len([]rune(tc.line[:i]))
		}
		head, words, tail := c.complete(line, pos)
		if head != tc.head || strings.Join(words, " ") != tc.want || tail != tc.tail {
			t.Errorf("%q (earlier %q): got %q + %q + %q, want %q + %q + %q", tc.line, tc.earlier, head, words, tail, tc.head, tc.want, tc.tail)
		}
	}
	before := cat.lookups
	c.complete("select i_ from item", 9)
	if cat.lookups != before {
		t.Errorf("columns of item read again: %d lookups, want %d", cat.lookups, before)
	}
}

func TestHistoryEntries(t *testing.T) {
	for _, tc := range []struct {
		lines []string
		want  bool
	}{
		{[]string{"select 1;"}, true},
		{[]string{"select", "  1;"}, true},
		{[]string{"select 1 -- one", ", 2;"}, false},
		{[]string{"select 'a", "b';"}, false},
		{[]string{"select 'a'", ", 'b';"}, true},
	} {
		if got := joinable(tc.lines); got != tc.want {
			t.Errorf("joinable(%q) = %v, want %v", tc.lines, got, tc.want)
		}
	}
}

func TestSplitScriptLines(t *testing.T) {
	script := "select 1;\n\n-- the second\n/* block */ select\n  2;\nselect 3; select 4"
	stmts, err := splitScript(script)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range stmts {
		got = append(got, fmt.Sprintf("%d@%d", s.n, s.line))
	}
	if strings.Join(got, " ") != "1@1 2@4 3@6 4@6" {
		t.Errorf("statements at %v, want 1@1 2@4 3@6 4@6", got)
	}
}

// testSession runs a script through the prompt's session over the test
// tables, as a pipe would feed it, and returns stdout and stderr.
func testSession(t *testing.T, script string) (string, string, error) {
	t.Helper()
	eng, err := fsql.Open(testTables(t), fsql.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	p := &printer{eng: eng, sess: eng.Session(), out: &out, stderr: &errOut, show: show{format: format.Table}}
	s := &session{p: p, in: newScanReader(strings.NewReader(script), nil), ctx: context.Background()}
	err = s.run()
	return out.String(), errOut.String(), err
}

func TestMetaCommands(t *testing.T) {
	out, errOut, err := testSession(t, `.tables
\d item
.maxrows 4
select i_item_sk from item order by i_item_sk;
.mode csv
select i_item_sk from item where i_item_sk < 3 order by 1;
.timer on
.mode json
select 1 as one;
.mode xml
.maxrows -1
.timer maybe
\d nope
.frobnicate
`)
	if err == nil || !strings.Contains(err.Error(), "5 of the statements and commands") {
		t.Errorf("session error %v, want 5 failures", err)
	}
	for _, want := range []string{
		"table\n-----\nitem\nnums\n(2 rows)\n",
		"column      | type    | partition\n------------+---------+----------\ni_item_sk   | BIGINT  | false\ni_item_desc | VARCHAR | false\n(2 rows)\n",
		"        1\n        2\n        …\n     1999\n     2000\n2000 rows (4 shown)\n",
		"i_item_sk\n1\n2\n",
		"{\"one\":1}\nTime: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{`unknown output format "xml"`, "usage: .maxrows N", "usage: .timer on|off", `table "nope"`, "unknown command .frobnicate"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Count(errOut, "\n") != 5 {
		t.Errorf("stderr has not one line per failure:\n%s", errOut)
	}
}

// Output to a pipe is complete: no bound, no time, CSV lines end in \n.
func TestPipedOutputIsComplete(t *testing.T) {
	data := testTables(t)
	var out, errOut bytes.Buffer
	if code := run([]string{"--data", data, "-e", "select i_item_sk from item"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("code %d: %s", code, errOut.String())
	}
	if !strings.HasSuffix(out.String(), "(2000 rows)\n") || strings.Contains(out.String(), "Time:") {
		t.Errorf("piped table output ends %q", out.String()[max(0, out.Len()-60):])
	}
	out.Reset()
	run([]string{"--data", data, "--max-rows", "2", "-e", "select i_item_sk from item order by 1"}, strings.NewReader(""), &out, &errOut)
	if !strings.HasSuffix(out.String(), "        1\n        …\n     2000\n2000 rows (2 shown)\n") {
		t.Errorf("--max-rows 2 output %q", out.String())
	}
	out.Reset()
	run([]string{"--data", data, "--format", "csv", "-e", "select 1 as a, 2 as b"}, strings.NewReader(""), &out, &errOut)
	if out.String() != "a,b\n1,2\n" {
		t.Errorf("csv %q, want LF line ends", out.String())
	}
	out.Reset()
	run([]string{"--data", data, "--format", "csv", "--crlf", "-e", "select 1 as a"}, strings.NewReader(""), &out, &errOut)
	if out.String() != "a\r\n1\r\n" {
		t.Errorf("csv --crlf %q", out.String())
	}
}

func TestCommandLineChecks(t *testing.T) {
	data := testTables(t)
	script := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(script, []byte("select 1;\n\n-- second:\nselect nope\nfrom item;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		out  string // in stdout
		err  string // in stderr
	}{
		{[]string{"--version"}, 0, "fsql ", ""},
		{[]string{"--data", data, "-e", ""}, 1, "", "-e has no statement"},
		{[]string{"--data", data, "-e", " ; "}, 1, "", "-e has no statement"},
		{[]string{"--data", data, "-f", script}, 1, "(1 row)", script + ":4: statement 2: "},
		{[]string{"--data", data, "-e", "select 1; select nope from item"}, 1, "", "statement 2 (line 1): "},
		{[]string{"--data", data, "--max-rows", "-3", "-e", "select 1"}, 1, "", "--max-rows"},
		{[]string{"help", "gen"}, 0, "usage: fsql gen tpcds", ""},
		{[]string{"gen", "tpcds", "-h"}, 0, "usage: fsql gen tpcds", ""},
		{[]string{"help", "bench"}, 0, "usage: fsql bench tpcds", ""},
		{[]string{"bench", "dpp", "--help"}, 0, "usage: fsql bench dpp", ""},
		{[]string{"help", "nope"}, 1, "", `no command "nope"`},
		{[]string{"gen", "tpcds", "--scale", "1"}, 1, "", "needs --out DIR"},
	} {
		var out, errOut bytes.Buffer
		code := run(c.args, strings.NewReader(""), &out, &errOut)
		if code != c.code || !strings.Contains(out.String(), c.out) || !strings.Contains(errOut.String(), c.err) {
			t.Errorf("%q: code %d, stdout %q, stderr %q; want %d, %q, %q", c.args, code, out.String(), errOut.String(), c.code, c.out, c.err)
		}
		if c.code != 0 && strings.Count(errOut.String(), "\n") != 1 {
			t.Errorf("%q: stderr %q is not one line", c.args, errOut.String())
		}
	}
}

// Every sub-command's help has the same shape: a usage line, a
// description, the flags; on stdout, with exit code 0.
func TestHelpStyle(t *testing.T) {
	for _, args := range [][]string{{"gen", "-h"}, {"bench", "tpcds", "-h"}, {"bench", "dpp", "-h"}} {
		var out, errOut bytes.Buffer
		if code := run(args, strings.NewReader(""), &out, &errOut); code != 0 || errOut.Len() != 0 {
			t.Errorf("%v: code %d, stderr %q", args, code, errOut.String())
		}
		text := out.String()
		if !strings.HasPrefix(text, "usage: fsql "+args[0]) || !strings.Contains(text, "\n\nflags:\n  --") {
			t.Errorf("%v help is not in the common shape:\n%s", args, text)
		}
	}
}
