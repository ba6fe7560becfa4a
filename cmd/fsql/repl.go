package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
)

const (
	prompt     = "fsql> "
	contPrompt = "   -> "
)

// repl reads statements from in until EOF or \q. A statement ends at a
// line whose last character is ';'; errors are printed and reading
// continues. Ctrl-C cancels the statement that is running, not the
// session. Prompts are printed only for a terminal (interactive); when a
// script is piped in, the session fails at the end if any statement did.
func repl(p *printer, in io.Reader, out, stderr io.Writer, interactive bool) error {
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var buf strings.Builder
	failed := 0
	showPrompt := func(s string) {
		if interactive {
			fmt.Fprint(out, s)
		}
	}
	showPrompt(prompt)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		if buf.Len() == 0 {
			switch trimmed {
			case `\q`, "quit", "exit":
				return nil
			case "":
				showPrompt(prompt)
				continue
			}
		}
		buf.WriteString(line)
		buf.WriteByte('\n')
		if !strings.HasSuffix(trimmed, ";") {
			showPrompt(contPrompt)
			continue
		}
		if !runInteractive(p, buf.String(), stderr) {
			failed++
		}
		buf.Reset()
		showPrompt(prompt)
	}
	if strings.TrimSpace(buf.String()) != "" && !runInteractive(p, buf.String(), stderr) {
		failed++
	}
	showPrompt("\n")
	if err := sc.Err(); err != nil {
		return err
	}
	if failed > 0 && !interactive {
		return fmt.Errorf("%d of the statements read from standard input failed", failed)
	}
	return nil
}

// isTerminal reports whether the stream (stdin, stderr) is a terminal,
// where a person types or watches.
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// runInteractive runs the statements typed so far and reports whether
// they all succeeded; Ctrl-C while they run cancels them and returns to
// the prompt.
func runInteractive(p *printer, text string, stderr io.Writer) bool {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := p.script(ctx, text); err != nil {
		fmt.Fprintf(stderr, "fsql: %s\n", message(err))
		return false
	}
	return true
}
