package suggest

import (
	"slices"
	"sort"
	"strings"
)

// Max is the most names Closest returns.
const Max = 3

// Closest returns the candidates nearest to name, up to Max of them
// (alphabetically), or nil when none is near enough to be a likely typo.
// Only the nearest count: a candidate one edit away hides those two
// edits away. A dotted candidate whose last segments are name counts as
// one edit away. Duplicates (ignoring case) are returned once, spelled as
// first given.
func Closest(name string, candidates []string) []string {
	want := strings.ToLower(name)
	limit := Limit(want)
	type scored struct {
		name string
		d    int
	}
	var out []scored
	seen := map[string]bool{}
	for _, c := range candidates {
		lc := strings.ToLower(c)
		if seen[lc] || c == "" {
			continue
		}
		seen[lc] = true
		d := Distance(want, lc)
		if strings.HasSuffix(lc, "."+want) {
			d = min(d, 1)
		}
		if d > limit {
			continue
		}
		out = append(out, scored{c, d})
	}
	best := limit
	for _, s := range out {
		best = min(best, s.d)
	}
	out = slices.DeleteFunc(out, func(s scored) bool { return s.d > best })
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	if len(out) > Max {
		out = out[:Max]
	}
	if len(out) == 0 {
		return nil
	}
	names := make([]string, len(out))
	for i, s := range out {
		names[i] = s.name
	}
	return names
}

// Limit is the largest distance at which a candidate still counts as a
// typo of name.
func Limit(name string) int {
	switch n := len([]rune(name)); {
	case n <= 3:
		return 1
	case n <= 8:
		return 2
	}
	return 3
}

// Phrase renders names for a message: "" for none, else "; did you mean
// a?", "; did you mean a or b?", "; did you mean a, b or c?", each name
// passed through quote (nil leaves names as they are).
func Phrase(names []string, quote func(string) string) string {
	if len(names) == 0 {
		return ""
	}
	q := make([]string, len(names))
	for i, n := range names {
		if quote != nil {
			n = quote(n)
		}
		q[i] = n
	}
	s := q[len(q)-1]
	if len(q) > 1 {
		s = strings.Join(q[:len(q)-1], ", ") + " or " + s
	}
	return "; did you mean " + s + "?"
}

// Distance is the optimal-string-alignment distance between a and b, in
// runes: insertions, deletions, substitutions and swaps of two adjacent
// runes cost 1 each (no substring is edited twice). It is case-sensitive;
// Closest lower-cases both sides first.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	// Three rows of the dynamic-programming table: two back for swaps.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
