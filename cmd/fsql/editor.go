package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/peterh/liner"
)

// editor reads the prompt's lines on a terminal with
// github.com/peterh/liner: line editing, Up and Down through a history
// kept in a file across sessions, Tab completion, Ctrl-C clearing the
// line and Ctrl-D (on an empty line) ending the input. liner reads
// os.Stdin and draws on os.Stdout, so it is used only when both are the
// terminal.
type editor struct {
	st      *liner.State
	history string    // file the history is appended to; "" keeps none
	last    string    // the newest entry, which liner does not repeat either
	warn    io.Writer // where a history file that cannot be written is reported, once
}

func newEditor(complete liner.WordCompleter, history string, warn io.Writer) *editor {
	st := liner.NewLiner()
	st.SetCtrlCAborts(true)
	st.SetTabCompletionStyle(liner.TabPrints)
	st.SetWordCompleter(complete)
	st.SetMultiLineMode(true)
	e := &editor{st: st, history: history, warn: warn}
	e.load()
	return e
}

func (e *editor) readLine(prompt string) (string, error) {
	line, err := e.st.Prompt(prompt)
	if errors.Is(err, liner.ErrPromptAborted) {
		return "", errLineCleared
	}
	return line, err
}

// remember adds a statement to the history as one entry when its lines
// can be joined by spaces without changing it; else each line is an
// entry (a line comment or a quoted line break would change meaning).
func (e *editor) remember(lines []string) {
	var entries []string
	if joinable(lines) {
		parts := make([]string, 0, len(lines))
		for _, l := range lines {
			if t := strings.TrimSpace(l); t != "" {
				parts = append(parts, t)
			}
		}
		entries = []string{strings.Join(parts, " ")}
	} else {
		for _, l := range lines {
			if strings.TrimSpace(l) != "" {
				entries = append(entries, l)
			}
		}
	}
	for _, entry := range entries {
		if entry == e.last {
			continue
		}
		e.last = entry
		e.st.AppendHistory(entry)
		e.save(entry)
	}
}

// joinable reports whether lines joined with spaces mean what they mean
// joined with line breaks: no line comment, and every line closes the
// quotes it opens.
func joinable(lines []string) bool {
	if len(lines) == 1 {
		return true
	}
	for _, l := range lines {
		if strings.Contains(l, "--") || strings.Contains(l, "#") {
			return false
		}
		for _, q := range []string{"'", `"`, "`"} {
			if strings.Count(l, q)%2 != 0 {
				return false
			}
		}
	}
	return true
}

func (e *editor) close() error { return e.st.Close() }

// historyLimit is how many entries the history file keeps; it is
// rewritten with the newest ones once it holds twice as many.
const historyLimit = liner.HistoryLimit

// historyPath is the prompt's history file: $FSQL_HISTORY when set (set
// to the empty string, no history is kept), else
// $XDG_STATE_HOME/fsql/history, else ~/.fsql_history.
func historyPath() string {
	if p, ok := os.LookupEnv("FSQL_HISTORY"); ok {
		return p
	}
	if dir := os.Getenv("XDG_STATE_HOME"); dir != "" {
		return filepath.Join(dir, "fsql", "history")
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".fsql_history")
}

// load reads the history file, and trims it when it grew past twice the
// limit (entries are appended one by one, so nothing is lost if fsql is
// killed).
func (e *editor) load() {
	if e.history == "" {
		return
	}
	f, err := os.Open(e.history)
	if err != nil {
		if !errors.Is(err, os.ErrNotExist) {
			e.disable(err)
		}
		return
	}
	lines := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		lines++
	}
	f.Seek(0, io.SeekStart)
	_, err = e.st.ReadHistory(f)
	f.Close()
	if err != nil {
		e.disable(err)
		return
	}
	if lines > 2*historyLimit {
		tmp := e.history + ".tmp"
		out, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
		if err == nil {
			_, err = e.st.WriteHistory(out)
			if cerr := out.Close(); err == nil {
				err = cerr
			}
		}
		if err == nil {
			err = os.Rename(tmp, e.history)
		}
		if err != nil {
			os.Remove(tmp)
			e.disable(err)
		}
	}
}

// save appends one entry to the history file, which only its owner may
// read: statements can hold what others should not see.
func (e *editor) save(entry string) {
	if e.history == "" {
		return
	}
	if err := os.MkdirAll(filepath.Dir(e.history), 0o700); err != nil {
		e.disable(err)
		return
	}
	f, err := os.OpenFile(e.history, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err == nil {
		_, err = fmt.Fprintln(f, entry)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		e.disable(err)
	}
}

// disable stops using the history file after saying why, once.
func (e *editor) disable(err error) {
	fmt.Fprintf(e.warn, "fsql: history file %s: %v; history is not kept (set FSQL_HISTORY to another file)\n", e.history, err)
	e.history = ""
}
