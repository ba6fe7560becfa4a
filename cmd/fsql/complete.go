package main

import (
	"context"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/fsql-dev/fsql"
)

// catalog is what completion asks the engine: *fsql.Engine.
type catalog interface {
	Tables() ([]string, error)
	Columns(ctx context.Context, table string) ([]fsql.Column, error)
}

// completer proposes the words Tab may complete to: meta-commands at the
// start of a statement, else SQL keywords, table names and the columns of
// the tables the statement names. Tables are listed afresh at every Tab
// (one folder listing); a table's columns are read once per session.
type completer struct {
	cat catalog
	// typed returns the earlier lines of the statement being typed.
	typed   func() []string
	columns map[string][]string // by lower-cased table name
}

func newCompleter(cat catalog, typed func() []string) *completer {
	return &completer{cat: cat, typed: typed, columns: map[string][]string{}}
}

// complete is a liner.WordCompleter: it splits line at pos (in runes)
// into what stays before the word, the candidates for the word, and what
// stays after it.
func (c *completer) complete(line string, pos int) (head string, words []string, tail string) {
	r := []rune(line)
	pos = min(max(pos, 0), len(r))
	before, tail := string(r[:pos]), string(r[pos:])
	start := len(before)
	for start > 0 {
		ch, size := lastRune(before[:start])
		if !isWordRune(ch) {
			break
		}
		start -= size
	}
	head, word := before[:start], before[start:]
	earlier := c.typed()
	if len(earlier) == 0 {
		// A meta-command's name (a backslash is not part of a word), or
		// its argument.
		h, w := head, word
		if strings.HasSuffix(h, `\`) {
			h, w = h[:len(h)-1], `\`+w
		}
		if strings.TrimSpace(h) == "" && (strings.HasPrefix(w, ".") || strings.HasPrefix(w, `\`)) {
			return h, withPrefix(metaNames, w), tail
		}
		if f := strings.Fields(head); len(f) > 0 && isMeta(f[0]) {
			return head, c.metaArgument(strings.ToLower(f[0]), word), tail
		}
	}
	statement := strings.Join(append(earlier, line), " ")
	if takesKey(strings.Join(append(earlier, head), " ")) {
		return head, settingKeys(word, strings.HasSuffix(head, "`")), tail
	}
	if i := strings.LastIndexByte(word, '.'); i >= 0 {
		qualifier, prefix := word[:i], word[i+1:]
		tables := c.namedTables(statement)
		for _, t := range tables {
			if strings.EqualFold(t, qualifier) {
				tables = []string{t}
				break
			}
		}
		var out []string
		for _, col := range c.columnsOf(tables) {
			if hasPrefixFold(col, prefix) {
				out = append(out, qualifier+"."+col)
			}
		}
		return head, dedupe(out), tail
	}
	var out []string
	if word == "" {
		// Nothing typed yet: tables after FROM or JOIN, else the columns
		// of the tables named.
		if prev := strings.Fields(head); len(prev) > 0 && takesTable(prev[len(prev)-1]) {
			return head, c.tables(""), tail
		}
		return head, dedupe(c.columnsOf(c.namedTables(statement))), tail
	}
	out = append(out, keywordsFor(word)...)
	out = append(out, c.tables(word)...)
	for _, col := range c.columnsOf(c.namedTables(statement)) {
		if hasPrefixFold(col, word) {
			out = append(out, col)
		}
	}
	return head, dedupe(out), tail
}

// metaArgument completes the argument of a meta-command.
func (c *completer) metaArgument(cmd, word string) []string {
	switch cmd {
	case `\d`, ".describe":
		return c.tables(word)
	case ".mode":
		return withPrefix([]string{"csv", "json", "table"}, word)
	case ".timer":
		return withPrefix([]string{"off", "on"}, word)
	}
	return nil
}

// tables lists the table names starting with prefix (any case).
func (c *completer) tables(prefix string) []string {
	names, err := c.cat.Tables()
	if err != nil {
		return nil
	}
	var out []string
	for _, n := range names {
		if hasPrefixFold(n, prefix) {
			out = append(out, n)
		}
	}
	return out
}

// namedTables are the tables whose names appear as words of statement.
func (c *completer) namedTables(statement string) []string {
	names, err := c.cat.Tables()
	if err != nil {
		return nil
	}
	byLower := make(map[string]string, len(names))
	for _, n := range names {
		byLower[strings.ToLower(n)] = n
	}
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(statement, func(r rune) bool { return !isWordRune(r) || r == '.' }) {
		if n, ok := byLower[strings.ToLower(w)]; ok && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	return out
}

// columnsOf lists the columns of tables, reading each table's once.
func (c *completer) columnsOf(tables []string) []string {
	var out []string
	for _, t := range tables {
		key := strings.ToLower(t)
		cols, ok := c.columns[key]
		if !ok {
			// A Tab must not hang the prompt on a slow folder.
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			list, err := c.cat.Columns(ctx, t)
			cancel()
			if err != nil {
				continue // not cached: the next Tab tries again
			}
			for _, col := range list {
				cols = append(cols, col.Name)
			}
			c.columns[key] = cols
		}
		out = append(out, cols...)
	}
	return out
}

// takesKey reports whether a setting's key comes next after before, the
// statement up to the word being completed: right after SET (and SESSION,
// LOCAL, @@session.) or after a comma of a SET statement.
func takesKey(before string) bool {
	f := strings.Fields(strings.ToLower(strings.TrimSuffix(before, "`")))
	if len(f) == 0 || f[0] != "set" {
		return false
	}
	last := f[len(f)-1]
	switch {
	case len(f) == 1, strings.HasSuffix(last, ","):
		return true
	case len(f) == 2 && (last == "session" || last == "local"):
		return true
	}
	return false
}

// settingKeys are the keys starting with prefix, written as SET needs
// them: a key with '-' in backquotes (only the closing one when the
// opening one is typed).
func settingKeys(prefix string, quoted bool) []string {
	var out []string
	for _, k := range withPrefix(fsql.ConfigKeys(), prefix) {
		switch {
		case quoted:
			k += "`"
		case strings.Contains(k, "-"):
			k = "`" + k + "`"
		}
		out = append(out, k)
	}
	return out
}

// takesTable reports whether a table name follows the keyword.
func takesTable(word string) bool {
	switch strings.ToLower(word) {
	case "from", "join", "table", "describe", "desc":
		return true
	}
	return false
}

func isWordRune(r rune) bool {
	return r == '_' || r == '$' || r == '.' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func lastRune(s string) (rune, int) {
	r := []rune(s)
	last := r[len(r)-1]
	return last, len(string(last))
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

func withPrefix(words []string, prefix string) []string {
	var out []string
	for _, w := range words {
		if hasPrefixFold(w, prefix) {
			out = append(out, w)
		}
	}
	return out
}

// dedupe sorts words and drops repeats.
func dedupe(words []string) []string {
	sort.Strings(words)
	out := words[:0]
	for i, w := range words {
		if i == 0 || w != words[i-1] {
			out = append(out, w)
		}
	}
	return out
}

// keywordsFor lists the keywords starting with word, in its case: lower
// case when word has a lower-case letter, else upper case.
func keywordsFor(word string) []string {
	lower := strings.ToLower(word) == word && strings.ToUpper(word) != word
	var out []string
	for _, k := range sqlKeywords {
		if hasPrefixFold(k, word) {
			if lower {
				k = strings.ToLower(k)
			}
			out = append(out, k)
		}
	}
	return out
}

// sqlKeywords are the words of the statements fsql runs (SELECT, SHOW,
// DESCRIBE, SET), and its aggregate and window functions.
var sqlKeywords = []string{
	"ALL", "AND", "ANALYZE", "AS", "ASC", "AVG", "BETWEEN", "BUILTINS", "BY", "CASE", "CAST",
	"COALESCE", "COLLATE", "COLUMNS", "COUNT", "CREATE", "CROSS", "CURRENT", "DATE", "DECIMAL",
	"DEFAULT", "DENSE_RANK", "DESC", "DESCRIBE", "DISTINCT", "ELSE", "END", "EXCEPT", "EXISTS",
	"EXPLAIN", "FALSE", "FIRST", "FOLLOWING", "FROM", "FULL", "GROUP", "GROUPING", "HAVING",
	"IN", "INNER", "INTERSECT", "INTERVAL", "IS", "JOIN", "LAST", "LEFT", "LIKE", "LIMIT",
	"MAX", "MIN", "NOT", "NULL", "NULLS", "OFFSET", "ON", "OR", "ORDER", "OUTER", "OVER",
	"PARTITION", "PRECEDING", "RANGE", "RANK", "RIGHT", "ROLLUP", "ROW", "ROWS", "ROW_NUMBER",
	"SELECT", "SESSION", "SET", "SHOW", "SUM", "TABLE", "TABLES", "THEN", "TRUE", "UNBOUNDED",
	"UNION", "USING", "VALUES", "VARIABLES", "WHEN", "WHERE", "WINDOW", "WITH",
}
