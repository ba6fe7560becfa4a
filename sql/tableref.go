package sql

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tableOffset finds where the statement names table name as a table:
// the byte offset of the first identifier (plain or backquoted) equal to
// name, ignoring case, that follows FROM, JOIN, a comma, TABLE, DESCRIBE,
// DESC or EXPLAIN and is not a qualifier (no '.' after it); -1 when there
// is none. The parser keeps no positions for table names, so this scans
// the text as MySQL's lexer would: strings, comments and backquotes are
// skipped whole. A comma is taken as the start of a FROM item too, so an
// unknown table named like a select-list column would be found there;
// the name failed to resolve as a table, so that only misplaces a
// position, never a message.
func tableOffset(src, name string) int {
	prev, off := "", -1
	scanTokens(src, func(t sqlToken) bool {
		switch t.kind {
		case tokString:
			prev = "'"
			return true
		case tokPunct:
			prev = t.text
			return true
		}
		if strings.EqualFold(t.text, name) && takesTableName(prev) && !qualifies(src[t.end:]) {
			off = t.start
			return false
		}
		prev = strings.ToLower(t.text)
		if t.kind == tokName {
			prev = "`" // a quoted name is never a keyword
		}
		return true
	})
	return off
}

// keywordOffset is the byte offset of the first place the statement has
// words in sequence (keywords, compared ignoring case; strings, comments
// and backquoted names never match), or -1. The parser records no
// positions for clauses; this finds the keyword that starts one.
func keywordOffset(src string, words ...string) int {
	if len(words) == 0 {
		return -1
	}
	var starts []int // offsets where the words matched so far began
	matched, off := 0, -1
	scanTokens(src, func(t sqlToken) bool {
		if t.kind != tokWord || !strings.EqualFold(t.text, words[matched]) {
			matched, starts = 0, starts[:0]
			if t.kind != tokWord || !strings.EqualFold(t.text, words[0]) {
				return true
			}
		}
		starts = append(starts, t.start)
		if matched++; matched == len(words) {
			off = starts[0]
			return false
		}
		return true
	})
	return off
}

type tokenKind uint8

const (
	tokWord   tokenKind = iota // an identifier or keyword
	tokName                    // a backquoted name (text without the quotes)
	tokString                  // a quoted string
	tokPunct                   // any other character
)

type sqlToken struct {
	kind       tokenKind
	text       string
	start, end int // byte offsets in the source
}

// scanTokens calls fn with the statement's tokens in order, as MySQL's
// lexer would split them (strings, comments and backquotes whole;
// comments are skipped), until fn returns false.
func scanTokens(src string, fn func(sqlToken) bool) {
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
			continue
		case c == '#' || c == '-' && strings.HasPrefix(src[i:], "-- ") || strings.HasPrefix(src[i:], "--\t") || strings.HasPrefix(src[i:], "--\n"):
			if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
				i += j + 1
			} else {
				i = len(src)
			}
			continue
		case strings.HasPrefix(src[i:], "/*"):
			if j := strings.Index(src[i+2:], "*/"); j >= 0 {
				i += j + 4
			} else {
				i = len(src)
			}
			continue
		case c == '\'' || c == '"':
			start := i
			i = skipQuoted(src, i)
			if !fn(sqlToken{kind: tokString, text: src[start:i], start: start, end: i}) {
				return
			}
			continue
		}
		start := i
		t := sqlToken{kind: tokWord, start: start}
		switch r, size := utf8.DecodeRuneInString(src[i:]); {
		case c == '`':
			i = skipQuoted(src, i)
			t.kind, t.text = tokName, strings.ReplaceAll(strings.TrimSuffix(src[start+1:i], "`"), "``", "`")
		case r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r):
			for i < len(src) {
				r, size := utf8.DecodeRuneInString(src[i:])
				if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
					break
				}
				i += size
			}
			t.text = src[start:i]
		default:
			i += size
			t.kind, t.text = tokPunct, src[start:i]
		}
		t.end = i
		if !fn(t) {
			return
		}
	}
}

// skipQuoted returns the offset after the quoted text starting at i (a
// doubled quote is one; in strings, a backslash escapes).
func skipQuoted(src string, i int) int {
	q := src[i]
	for j := i + 1; j < len(src); j++ {
		switch {
		case src[j] == '\\' && q != '`':
			j++
		case src[j] == q:
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(src)
}

func takesTableName(prev string) bool {
	switch prev {
	case "from", "join", ",", "table", "describe", "desc", "explain", "straight_join":
		return true
	}
	return false
}

// qualifies reports whether the text after a name starts with '.' (the
// name qualifies a column or is a database).
func qualifies(rest string) bool {
	return strings.HasPrefix(strings.TrimLeft(rest, " \t\r\n"), ".")
}
