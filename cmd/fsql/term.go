package main

import (
	"os"

	"golang.org/x/term"
)

// isTerminal reports whether stream is a terminal, where a person types
// or watches. It asks the terminal driver about the stream's own file
// descriptor, so /dev/null and other character devices are not
// terminals (fsql < /dev/null runs no prompt).
func isTerminal(stream any) bool {
	f, ok := stream.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// terminalWidth is the width in columns of the terminal stream is, or 0
// when it is none or does not say.
func terminalWidth(stream any) int {
	f, ok := stream.(*os.File)
	if !ok {
		return 0
	}
	w, _, err := term.GetSize(int(f.Fd()))
	if err != nil || w <= 0 {
		return 0
	}
	return w
}
