package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"

	"github.com/peterh/liner"

	"github.com/fsql-dev/fsql/internal/format"
)

const (
	prompt     = "fsql> "
	contPrompt = "   -> "
)

// errLineCleared is what a lineReader returns when Ctrl-C threw away the
// line being typed.
var errLineCleared = errors.New("line cleared")

// lineReader reads the prompt's input a line at a time.
type lineReader interface {
	// readLine shows prompt, when there is somewhere to show it, and
	// returns the next line without its end: io.EOF at the end of the
	// input (Ctrl-D), errLineCleared after Ctrl-C.
	readLine(prompt string) (string, error)
	// remember adds a statement or meta-command to the history.
	remember(lines []string)
	close() error
}

// scanReader reads lines from a pipe, a file or a terminal without line
// editing; it prints prompts to promptTo unless that is nil.
type scanReader struct {
	sc       *bufio.Scanner
	promptTo io.Writer
}

func newScanReader(in io.Reader, promptTo io.Writer) *scanReader {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	return &scanReader{sc: sc, promptTo: promptTo}
}

func (r *scanReader) readLine(prompt string) (string, error) {
	if r.promptTo != nil {
		fmt.Fprint(r.promptTo, prompt)
	}
	if r.sc.Scan() {
		return r.sc.Text(), nil
	}
	if err := r.sc.Err(); err != nil {
		return "", err
	}
	return "", io.EOF
}

func (r *scanReader) remember([]string) {}
func (r *scanReader) close() error      { return nil }

// session is one run of the prompt: statements end at a line whose last
// character is ';', lines starting with '.' or '\' at the start of a
// statement are meta-commands (meta.go). Errors are printed and reading
// goes on.
//
// Interactive (stdin is a terminal): Ctrl-C cancels the running statement
// and the prompt stays; at the prompt it clears the statement being
// typed; Ctrl-D or \q quits with status 0. Not interactive (a script on
// stdin): no prompts, Ctrl-C stops fsql (exit 130), and the run fails at
// the end if any statement did.
type session struct {
	p           *printer
	in          lineReader
	interactive bool
	// ctx is the interrupt context of a non-interactive session.
	ctx context.Context

	// lines are the lines typed of the statement not yet ended.
	lines []string

	mu     sync.Mutex
	cancel context.CancelFunc // the running statement's, interactive only
}

// defaultMaxRows bounds table output on a terminal, as DuckDB's does.
const defaultMaxRows = 40

// defaultShow is how results are shown: on a terminal bounded to
// defaultMaxRows rows (unless --max-rows says otherwise) and to its
// width, with the time after each result; a progress bar when stderr is
// a terminal. Output to a pipe or a file is complete and plain.
func defaultShow(f format.Name, maxRows int, crlf bool, stdout, stderr io.Writer) show {
	outTTY := isTerminal(stdout)
	sh := show{format: f, maxRows: maxRows, crlf: crlf, autoWidth: outTTY, timer: outTTY,
		progress: isTerminal(stderr), outTerminal: outTTY}
	if maxRows < 0 {
		sh.maxRows = 0
		if outTTY {
			sh.maxRows = defaultMaxRows
		}
	}
	return sh
}

// runPrompt runs the prompt over stdin: with line editing when stdin and
// stdout are the terminal, with plain lines otherwise. stop ends the
// interrupt context's hold on SIGINT, which an interactive session
// handles itself.
func runPrompt(ctx context.Context, stop context.CancelFunc, p *printer, stdin io.Reader, stdout, stderr io.Writer) error {
	s := &session{p: p, interactive: isTerminal(stdin), ctx: ctx}
	switch {
	case s.interactive && stdin == os.Stdin && stdout == os.Stdout && isTerminal(stdout) && liner.TerminalSupported():
		stop()
		printVersion(stdout)
		fmt.Fprintln(stdout, `End statements with ';'. .help lists the commands; \q or Ctrl-D quits.`)
		ed := newEditor(newCompleter(p.eng, func() []string { return s.lines }).complete, historyPath(), stderr)
		defer ed.close()
		s.in = ed
	case s.interactive:
		stop()
		promptTo := stderr
		if isTerminal(stdout) {
			promptTo = stdout
		}
		s.in = newScanReader(stdin, promptTo)
	default:
		s.in = newScanReader(stdin, nil)
	}
	return s.run()
}

func (s *session) run() error {
	if s.interactive {
		stop := s.forwardInterrupts()
		defer stop()
	}
	failed := 0
	for {
		pr := prompt
		if len(s.lines) > 0 {
			pr = contPrompt
		}
		line, err := s.in.readLine(pr)
		if errors.Is(err, errLineCleared) {
			s.lines = nil
			continue
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		trimmed := strings.TrimSpace(line)
		if len(s.lines) == 0 {
			if trimmed == "" {
				continue
			}
			if isMeta(trimmed) {
				s.in.remember([]string{trimmed})
				quit, err := s.meta(trimmed)
				if err != nil {
					fmt.Fprintf(s.p.stderr, "fsql: %s\n", message(err))
					failed++
				}
				if quit {
					return s.end(failed)
				}
				continue
			}
		}
		s.lines = append(s.lines, line)
		if !strings.HasSuffix(trimmed, ";") {
			continue
		}
		s.in.remember(s.lines)
		ok, err := s.statements(strings.Join(s.lines, "\n") + "\n")
		if err != nil {
			return err
		}
		if !ok {
			failed++
		}
		s.lines = nil
	}
	if s.interactive {
		// Ctrl-D: what was typed of an unfinished statement is dropped,
		// and the shell's prompt starts on a line of its own.
		fmt.Fprintln(s.p.out)
	} else if len(s.lines) > 0 && strings.TrimSpace(strings.Join(s.lines, "")) != "" {
		ok, err := s.statements(strings.Join(s.lines, "\n") + "\n")
		if err != nil {
			return err
		}
		if !ok {
			failed++
		}
	}
	return s.end(failed)
}

// end is the session's result: a script read from stdin fails if any of
// its statements did.
func (s *session) end(failed int) error {
	if failed > 0 && !s.interactive {
		return fmt.Errorf("%d of the statements and commands read from standard input failed", failed)
	}
	return nil
}

// statements runs the statements typed and reports whether they all
// succeeded; the error is for an interrupted non-interactive session,
// which ends it.
func (s *session) statements(text string) (bool, error) {
	ctx := s.ctx
	if s.interactive {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(context.Background())
		s.mu.Lock()
		s.cancel = cancel
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.cancel = nil
			s.mu.Unlock()
			cancel()
		}()
	}
	err := s.p.script(ctx, text)
	if err == nil {
		return true, nil
	}
	if !s.interactive && s.ctx.Err() != nil {
		return false, s.ctx.Err()
	}
	fmt.Fprintf(s.p.stderr, "fsql: %s\n", message(err))
	return false, nil
}

// forwardInterrupts turns SIGINT into the cancellation of the running
// statement for the whole session; between statements it is ignored (at
// the prompt the line editor reads Ctrl-C as a key).
func (s *session) forwardInterrupts() (stop func()) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range sig {
			s.mu.Lock()
			if s.cancel != nil {
				s.cancel()
			}
			s.mu.Unlock()
		}
	}()
	return func() {
		signal.Stop(sig)
		close(sig) // Stop guarantees no more sends
		<-done
	}
}

// isMeta reports whether a line is a meta-command or a quit word rather
// than the start of a statement.
func isMeta(line string) bool {
	switch strings.ToLower(strings.TrimSuffix(line, ";")) {
	case "quit", "exit":
		return true
	}
	return strings.HasPrefix(line, ".") || strings.HasPrefix(line, `\`)
}
