package sql

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pingcap/tidb/pkg/parser/terror"

	"github.com/fsql-dev/fsql/errs"
)

// parseError makes an error of the TiDB parser an *errs.Error: a syntax
// error (ER_PARSE_ERROR, 1064, 42000) at the line and column where the
// parser stopped, or, for an error the parser numbers itself (an unknown
// collation, 1273), that number and SQLSTATE. The parser's own message is
// its only account of where it stopped ("line L column C near "rest of
// the text""), so this is the one place fsql reads an error's text: the
// boundary to a library, never between its own layers.
func parseError(text string, err error) error {
	var te *terror.Error
	if errors.As(err, &te) {
		se := terror.ToSQLError(te)
		return errs.New(parserCondition(int(se.Code), se.State), "%s", se.Message)
	}
	off, ok := syntaxErrorOffset(text, err.Error())
	if !ok {
		// A message of another shape: keep it whole, without a position.
		return errs.New(errs.ErParseError, "syntax error: %s", strings.TrimSpace(err.Error()))
	}
	pos := offsetPosition(text, off)
	if isOuterJoin(text[off:]) {
		// The parser stops at OUTER in `a FULL OUTER JOIN b` (FULL is
		// read as an alias of a). Without OUTER, `a FULL JOIN b` parses;
		// the binder rejects the alias.
		return errs.New(errs.Unsupported, "FULL OUTER JOIN (%s): it is not MySQL syntax and fsql does not run it; write the LEFT JOIN plus the right side's unmatched rows: "+
			"SELECT ... FROM a LEFT JOIN b ON a.k = b.k UNION ALL SELECT ... FROM b WHERE NOT EXISTS (SELECT 1 FROM a WHERE a.k = b.k) "+
			"(or, when rows are distinct, ... LEFT JOIN ... UNION ... RIGHT JOIN ...)", pos).At(pos)
	}
	msg := "syntax error at " + pos.String() + near(text[off:])
	if key := dashedSetKey(text); key != "" {
		msg += fmt.Sprintf("; a key with '-' is written in backquotes: SET `%s` = ...", key)
	}
	return errs.New(errs.ErParseError, "%s", msg).At(pos)
}

// parserCondition is the errs condition of a MySQL number the parser
// reports: fsql's own where it has one, else a syntax error of that
// number.
func parserCondition(code int, state string) errs.Condition {
	for _, c := range errs.Conditions() {
		if c.Code == code && c.SQLState == state && c.Kind != errs.Internal && c.Kind != errs.Execution {
			return c
		}
	}
	return errs.Condition{Kind: errs.Syntax, Code: code, SQLState: state, Name: "MySQL error " + strconv.Itoa(code)}
}

// syntaxErrorOffset finds the byte offset in text where the parser
// stopped. Its message is
//
//	line L column C near "REST"MSG LEN
//
// where REST is text from that offset on (cut at 2048 bytes, and then LEN
// is "(total length N)" with N its uncut length), MSG the reason (empty
// for a plain syntax error) and LEN otherwise empty.
func syntaxErrorOffset(text, msg string) (int, bool) {
	var line, col int
	if _, err := fmt.Sscanf(msg, "line %d column %d near ", &line, &col); err != nil {
		return 0, false
	}
	i := strings.Index(msg, ` near "`)
	if i < 0 {
		return 0, false
	}
	rest := msg[i+len(` near "`):]
	if j := strings.LastIndex(rest, "(total length "); j >= 0 && strings.HasSuffix(rest, ")") {
		n, err := strconv.Atoi(rest[j+len("(total length ") : len(rest)-1])
		if err == nil && n <= len(text) && strings.HasPrefix(rest, text[len(text)-n:][:min(n, 2048)]+`"`) {
			return len(text) - n, true
		}
		return 0, false
	}
	// REST is all of the text from the offset on: the longest suffix of
	// text that rest starts with, followed by the closing quote.
	for off := 0; off <= len(text); off++ {
		if strings.HasPrefix(rest, text[off:]+`"`) {
			return off, true
		}
	}
	return 0, false
}

// offsetPosition is the line and column (1-based, columns in characters)
// of byte offset off in text.
func offsetPosition(text string, off int) errs.Position {
	start := strings.LastIndexByte(text[:off], '\n') + 1
	return errs.Position{
		Line:   1 + strings.Count(text[:off], "\n"),
		Column: 1 + utf8.RuneCountInString(text[start:off]),
		Offset: off,
	}
}

// near quotes the start of rest (up to the end of its line, at most 40
// characters), as MySQL's "near '...'" does; at the end of the text it
// says so.
func near(rest string) string {
	if strings.TrimSpace(rest) == "" {
		return ", at the end of the statement"
	}
	s := rest
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if utf8.RuneCountInString(s) > 40 {
		r := []rune(s)
		s = string(r[:40]) + "..."
	}
	return " near " + strconv.Quote(strings.TrimRight(s, " \t\r"))
}

// isOuterJoin reports whether rest starts with OUTER JOIN.
func isOuterJoin(rest string) bool {
	f := strings.Fields(rest)
	return len(f) >= 2 && strings.EqualFold(f[0], "outer") && strings.EqualFold(f[1], "join")
}
