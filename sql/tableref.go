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
	prev := ""
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
			i = skipQuoted(src, i)
			prev = "'"
			continue
		}
		start := i
		var word string
		switch r, size := utf8.DecodeRuneInString(src[i:]); {
		case c == '`':
			i = skipQuoted(src, i)
			word = strings.ReplaceAll(strings.TrimSuffix(src[start+1:i], "`"), "``", "`")
		case r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r):
			for i < len(src) {
				r, size := utf8.DecodeRuneInString(src[i:])
				if !(r == '_' || r == '$' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
					break
				}
				i += size
			}
			word = src[start:i]
		default:
			i += size
			prev = src[start:i]
			continue
		}
		if strings.EqualFold(word, name) && takesTableName(prev) && !qualifies(src[i:]) {
			return start
		}
		prev = strings.ToLower(word)
		if c == '`' {
			prev = "`" // a quoted name is never a keyword
		}
	}
	return -1
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
