//go:build unix

package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/parquet-go/parquet-go"
)

// The tests here run the real binary under a pseudo-terminal, as a person
// at a terminal would, and read the screen's bytes.

// shared is what the tests of this binary make once: the fsql binary and
// a small data folder, in one temporary folder that TestMain removes.
var shared struct {
	mu   sync.Mutex
	dir  string
	bin  string
	data string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.dir != "" {
		os.RemoveAll(shared.dir)
	}
	os.Exit(code)
}

// sharedDir is the folder shared lives in; call with shared.mu held.
func sharedDir(t *testing.T) string {
	t.Helper()
	if shared.dir == "" {
		dir, err := os.MkdirTemp("", "fsql-cli-test-")
		if err != nil {
			t.Fatal(err)
		}
		shared.dir = dir
	}
	return shared.dir
}

// fsqlBinary builds fsql once per test binary and returns its path and
// the test tables' folder (testTables).
func fsqlBinary(t *testing.T) (bin, data string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	data = testTables(t)
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.bin == "" {
		bin := filepath.Join(sharedDir(t), "fsql")
		if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		shared.bin = bin
	}
	return shared.bin, data
}

// testTables writes the test tables once per test binary:
//
//	item (i_item_sk bigint, i_item_desc varchar)  2,000 rows
//	nums (n bigint)                                20,000 rows; nums × nums is slow
func testTables(t *testing.T) string {
	t.Helper()
	shared.mu.Lock()
	defer shared.mu.Unlock()
	if shared.data != "" {
		return shared.data
	}
	data := filepath.Join(sharedDir(t), "data")
	type item struct {
		Sk   int64  `parquet:"i_item_sk"`
		Desc string `parquet:"i_item_desc"`
	}
	type num struct {
		N int64 `parquet:"n"`
	}
	items := make([]item, 2000)
	for i := range items {
		items[i] = item{Sk: int64(i + 1), Desc: fmt.Sprintf("item number %d", i+1)}
	}
	nums := make([]num, 20000)
	for i := range nums {
		nums[i] = num{N: int64(i)}
	}
	if err := writeParquet(filepath.Join(data, "item", "part-0.parquet"), items); err != nil {
		t.Fatal(err)
	}
	if err := writeParquet(filepath.Join(data, "nums", "part-0.parquet"), nums); err != nil {
		t.Fatal(err)
	}
	shared.data = data
	return data
}

func writeParquet[T any](path string, rows []T) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return parquet.WriteFile(path, rows)
}

// slowQuery runs for minutes (400 million pairs through a nested-loop
// join): long enough for a progress bar, always cancelled.
const slowQuery = "select count(*) from nums a, nums b where a.n + b.n < 0"

// terminal is one run of fsql under a pseudo-terminal.
type terminal struct {
	t    *testing.T
	cmd  *exec.Cmd
	ptmx *os.File
	done chan error

	mu   sync.Mutex
	out  bytes.Buffer // everything fsql drew
	mark int          // where the next expect starts looking
}

// startTerminal runs fsql with args under a 120×40 terminal, with home
// as its home folder and a clean environment (TERM=xterm).
func startTerminal(t *testing.T, home string, env []string, args ...string) *terminal {
	t.Helper()
	bin, data := fsqlBinary(t)
	cmd := exec.Command(bin, append([]string{"--data", data}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "TERM=xterm"}, env...)
	return startCmd(t, cmd)
}

func startCmd(t *testing.T, cmd *exec.Cmd) *terminal {
	t.Helper()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 120})
	if err != nil {
		t.Fatal(err)
	}
	term := &terminal{t: t, cmd: cmd, ptmx: ptmx, done: make(chan error, 1)}
	read := make(chan struct{})
	go func() {
		defer close(read)
		buf := make([]byte, 4096)
		for {
			n, err := ptmx.Read(buf)
			term.mu.Lock()
			term.out.Write(buf[:n])
			term.mu.Unlock()
			if err != nil {
				return // EIO once fsql is gone
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		term.done <- err
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
		}
		ptmx.Close()
		<-read
	})
	return term
}

// send types s.
func (term *terminal) send(s string) {
	term.t.Helper()
	if _, err := io.WriteString(term.ptmx, s); err != nil {
		term.t.Fatalf("typing %q: %v", s, err)
	}
}

// expect waits until want appears after what earlier expects matched,
// and returns what was drawn up to and including it.
func (term *terminal) expect(want string) string {
	term.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		term.mu.Lock()
		seen := term.out.String()[term.mark:]
		if i := strings.Index(seen, want); i >= 0 {
			term.mark += i + len(want)
			term.mu.Unlock()
			return seen[:i+len(want)]
		}
		term.mu.Unlock()
		if time.Now().After(deadline) {
			term.t.Fatalf("no %q on the terminal after 30 s; it shows:\n%q", want, seen)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exit waits for fsql to end and returns its exit code.
func (term *terminal) exit() int {
	term.t.Helper()
	select {
	case err := <-term.done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			term.t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		term.t.Fatalf("fsql still runs; the terminal shows:\n%q", term.out.String())
		return -1
	}
}

const (
	ctrlC   = "\x03"
	ctrlD   = "\x04"
	upArrow = "\x1b[A"
	enter   = "\r"
)

// A statement typed in one session comes back with Up in the next: the
// history is kept in $XDG_STATE_HOME/fsql/history. Ctrl-D quits with 0.
func TestPromptHistoryAcrossSessions(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, "state")
	env := []string{"XDG_STATE_HOME=" + state}
	first := startTerminal(t, home, env)
	first.expect(prompt)
	first.send("select 40 +\r")
	first.expect(contPrompt)
	first.send(" 2 as answer;\r")
	first.expect("answer")
	first.expect("42")
	first.expect(prompt)
	first.send(ctrlD)
	if code := first.exit(); code != 0 {
		t.Fatalf("Ctrl-D: exit code %d, want 0", code)
	}
	hist, err := os.ReadFile(filepath.Join(state, "fsql", "history"))
	if err != nil || string(hist) != "select 40 + 2 as answer;\n" {
		t.Fatalf("history file %q (%v), want the statement on one line", hist, err)
	}

	second := startTerminal(t, home, env)
	second.expect(prompt)
	second.send(upArrow)
	second.expect("select 40 + 2 as answer;")
	second.send(enter)
	second.expect("42")
	second.expect(prompt)
	second.send(".quit\r")
	if code := second.exit(); code != 0 {
		t.Fatalf(".quit: exit code %d, want 0", code)
	}
}

// Ctrl-C at the prompt throws the line away; Ctrl-C while a statement
// runs cancels it, and the prompt goes on. While it runs past a second,
// a progress bar is drawn on stderr, and removed before the next output.
func TestPromptCtrlCAndProgress(t *testing.T) {
	term := startTerminal(t, t.TempDir(), nil)
	term.expect(prompt)
	term.send("select 1 as nope")
	term.expect("nope")
	term.send(ctrlC)
	term.expect("^C")
	term.expect(prompt)
	term.send("select 2 as two;\r")
	if seen := term.expect("(1 row)"); strings.Contains(seen, "fsql:") || !strings.Contains(seen, "two") {
		t.Fatalf("after Ctrl-C cleared the line, the next statement printed:\n%q", seen)
	}
	term.expect(prompt)

	start := time.Now()
	term.send(slowQuery + ";\r")
	bar := term.expect(" tasks, ")
	if took := time.Since(start); took < 900*time.Millisecond {
		t.Errorf("the progress bar appeared after %v, want about a second", took)
	}
	if !strings.Contains(bar, "% [") || !strings.Contains(bar, "stage ") {
		t.Errorf("progress bar %q", bar)
	}
	term.send(ctrlC)
	term.expect("fsql: cancelled")
	term.expect(prompt)
	// EXPLAIN ANALYZE shows the progress of the query it runs.
	term.send("explain analyze " + slowQuery + ";\r")
	bar = term.expect(" tasks, ")
	if !strings.Contains(bar, "stage ") {
		t.Errorf("EXPLAIN ANALYZE progress bar %q", bar)
	}
	term.send(ctrlC)
	term.expect("fsql: cancelled")
	term.expect(prompt)
	term.send("select 3 as three;\r")
	term.expect("three")
	term.expect("(1 row)")
	term.send(ctrlD)
	if code := term.exit(); code != 0 {
		t.Fatalf("exit code %d after Ctrl-D, want 0", code)
	}
}

// Tab completes a table name after FROM and a column of the table the
// statement names.
func TestPromptTabCompletion(t *testing.T) {
	term := startTerminal(t, t.TempDir(), nil)
	term.expect(prompt)
	term.send("select count(*) from it\t")
	term.expect("from item")
	term.send(" where i_item_s\t")
	term.expect("i_item_sk")
	term.send(" <= 10;\r")
	term.expect("count(*)")
	term.expect("10")
	term.expect("(1 row)")
	// A meta-command and its argument.
	term.send(`\d nu` + "\t")
	term.expect(`\d nums`)
	term.send(enter)
	term.expect("BIGINT")
	term.send(ctrlD)
	if code := term.exit(); code != 0 {
		t.Fatalf("exit code %d, want 0", code)
	}
}

// On a terminal a long result shows its first and last rows and the
// count, with the time; .maxrows 0 shows every row.
func TestPromptBoundedOutput(t *testing.T) {
	term := startTerminal(t, t.TempDir(), nil)
	term.expect(prompt)
	term.send("select i_item_sk, i_item_desc from item order by i_item_sk;\r")
	seen := term.expect("2000 rows (40 shown)")
	for _, want := range []string{"item number 20\r\n", "…", "item number 1981\r\n", "item number 2000\r\n"} {
		if !strings.Contains(seen, want) {
			t.Errorf("bounded result lacks %q:\n%s", want, seen)
		}
	}
	if strings.Contains(seen, "item number 21\r\n") || strings.Contains(seen, "item number 1980\r\n") {
		t.Errorf("bounded result shows a middle row:\n%s", seen)
	}
	term.expect("Time: ")
	term.send(".maxrows 0\r")
	term.send("select i_item_sk from item;\r")
	term.expect("(2000 rows)")
	term.send(ctrlD)
	term.exit()
}

// A progress bar is never drawn on a pipe: with stdout on the terminal
// and stderr on a pipe, a slow query interrupted after two seconds
// leaves only the one-line message on stderr, and exit code 130.
func TestProgressNeverOnAPipe(t *testing.T) {
	bin, data := fsqlBinary(t)
	cmd := exec.Command(bin, "--data", data, "-e", slowQuery)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TERM=xterm"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	term := startCmd(t, cmd)
	time.Sleep(2500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if code := term.exit(); code != exitInterrupted {
		t.Errorf("exit code %d after SIGINT, want %d", code, exitInterrupted)
	}
	if got := stderr.String(); got != "fsql: cancelled\n" {
		t.Errorf("stderr %q, want only fsql: cancelled", got)
	}
}

// A script piped to the prompt stops at SIGINT with exit code 130, as
// -e and -f do, instead of going on with its next statement.
func TestInterruptPipedScript(t *testing.T) {
	bin, data := fsqlBinary(t)
	cmd := exec.Command(bin, "--data", data)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	cmd.Stdin = strings.NewReader(slowQuery + ";\nselect 'after' as next;\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
		t.Fatalf("fsql ended with %v, want exit code %d; stderr %q", err, exitInterrupted, stderr.String())
	}
	if stderr.String() != "fsql: cancelled\n" || strings.Contains(stdout.String(), "after") {
		t.Errorf("stdout %q, stderr %q: want only fsql: cancelled, and no later statement", stdout.String(), stderr.String())
	}
}

// fsql < /dev/null reads a script with no statement: no prompt, exit 0.
func TestDevNullIsNotATerminal(t *testing.T) {
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	var out, errOut bytes.Buffer
	if code := run([]string{"--data", t.TempDir()}, null, &out, &errOut); code != 0 || out.Len() != 0 || errOut.Len() != 0 {
		t.Errorf("fsql < /dev/null: code %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}
