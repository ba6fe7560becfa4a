package main

import (
	"context"
	"strings"

	"github.com/fsql-dev/fsql"
)

// statement is one statement of a script: its text, its number (from 1)
// and the line it starts on, so an error can say which one failed.
type statement struct {
	text string
	n    int
	line int
}

// splitScript splits a script into its statements, skipping empty ones.
// A syntax error anywhere fails the whole script before anything runs;
// its message gives the line and column in the script.
func splitScript(script string) ([]statement, error) {
	texts, err := fsql.SplitStatements(script)
	if err != nil {
		return nil, err
	}
	var out []statement
	at := 0 // where the previous statement ended in script
	for _, t := range texts {
		if strings.TrimSpace(t) == "" {
			continue
		}
		s := statement{text: t, n: len(out) + 1}
		// The parser gives each statement's text as written, in order,
		// so it is found after the previous one.
		if i := strings.Index(script[at:], t); i >= 0 {
			s.line = 1 + strings.Count(script[:at+i+leadingComments(t)], "\n")
			at += i + len(t)
		}
		out = append(out, s)
	}
	return out, nil
}

// splitScriptContext is splitScript that returns ctx's error as soon as
// ctx is done: the parser takes no context and reads a few MB of SQL a
// second, and Ctrl-C must end fsql at once (the parse left behind ends
// with the process).
func splitScriptContext(ctx context.Context, script string) ([]statement, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	type result struct {
		stmts []statement
		err   error
	}
	done := make(chan result, 1)
	go func() {
		stmts, err := splitScript(script)
		done <- result{stmts, err}
	}()
	select {
	case r := <-done:
		return r.stmts, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// leadingComments is the length of the comments and blanks a statement's
// text starts with, so its line is that of its first word.
func leadingComments(t string) int {
	i := 0
	for i < len(t) {
		switch rest := t[i:]; {
		case rest[0] == ' ' || rest[0] == '\t' || rest[0] == '\r' || rest[0] == '\n':
			i++
		case strings.HasPrefix(rest, "--") || rest[0] == '#':
			end := strings.IndexByte(rest, '\n')
			if end < 0 {
				return len(t)
			}
			i += end + 1
		case strings.HasPrefix(rest, "/*"):
			end := strings.Index(rest[2:], "*/")
			if end < 0 {
				return len(t)
			}
			i += 2 + end + 2
		default:
			return i
		}
	}
	return i
}
