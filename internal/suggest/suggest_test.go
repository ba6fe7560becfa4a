package suggest

import (
	"slices"
	"testing"
)

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"abc", "", 3},
		{"", "abc", 3},
		{"abc", "abc", 0},
		{"abc", "abd", 1},   // substitution
		{"abc", "abcd", 1},  // insertion
		{"abcd", "acd", 1},  // deletion
		{"abcd", "abdc", 1}, // adjacent swap
		{"ca", "abc", 3},    // OSA, not Damerau: no edit of a swapped pair
		{"kitten", "sitting", 3},
		{"größe", "grösse", 2}, // runes, not bytes
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	cols := []string{"ss_item_sk", "ss_store_sk", "ss_sold_date_sk", "ss_quantity", "i_item_sk"}
	keys := []string{"parallelism.default", "pipeline.max-parallelism", "execution.memory.query-budget", "table.optimizer.join.broadcast-threshold"}
	for _, c := range []struct {
		name       string
		candidates []string
		want       []string
	}{
		{"ss_itme_sk", cols, []string{"ss_item_sk"}},
		{"SS_ITEM_SKK", cols, []string{"ss_item_sk"}},          // case is ignored
		{"ss_item_s", cols, []string{"ss_item_sk"}},            // only the nearest
		{"quantity", cols, nil},                                // too far
		{"x", []string{"y", "xy", "abc"}, []string{"xy", "y"}}, // ties alphabetically
		{"ab", []string{"xyz"}, nil},                           // short names attract little
		{"parallelism.defualt", keys, []string{"parallelism.default"}},
		{"query-budget", keys, []string{"execution.memory.query-budget"}}, // a dotted suffix
		{"a", []string{"b", "c", "d", "e"}, []string{"b", "c", "d"}},      // at most Max
		{"nme", []string{"name", "NAME", "nam"}, []string{"name"}},        // case duplicates once
	} {
		if got := Closest(c.name, c.candidates); !slices.Equal(got, c.want) {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPhrase(t *testing.T) {
	q := func(s string) string { return "'" + s + "'" }
	for _, c := range []struct {
		names []string
		want  string
	}{
		{nil, ""},
		{[]string{"a"}, "; did you mean 'a'?"},
		{[]string{"a", "b"}, "; did you mean 'a' or 'b'?"},
		{[]string{"a", "b", "c"}, "; did you mean 'a', 'b' or 'c'?"},
	} {
		if got := Phrase(c.names, q); got != c.want {
			t.Errorf("Phrase(%q) = %q, want %q", c.names, got, c.want)
		}
	}
	if got := Phrase([]string{"x"}, nil); got != "; did you mean x?" {
		t.Errorf("Phrase without quoting = %q", got)
	}
}
