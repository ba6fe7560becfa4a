package expr

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"
)

// padCompare is the definition of a PAD SPACE comparison over weights:
// the shorter string is read as if padded with spaces.
func padCompare(c *Collation, a, b string) int {
	wa, wb := weights(c, a), weights(c, b)
	for i := 0; i < max(len(wa), len(wb)); i++ {
		x, y := rune(' '), rune(' ')
		if i < len(wa) {
			x = wa[i]
		}
		if i < len(wb) {
			y = wb[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

func weights(c *Collation, s string) []rune {
	var out []rune
	for _, r := range s {
		w, _ := c.weight(r)
		out = append(out, w)
	}
	return out
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// Byte order of keys is the collation's order, checked against the
// definition on random strings over an alphabet that stresses padding
// (space, tab, letters that fold).
func TestCollationKeyOrder(t *testing.T) {
	alphabet := []rune{' ', '\t', 'a', 'A', 'b', 'ß', 's', 'S', 'Ä', '~', 'é', '日', '😀'}
	rnd := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		n := rnd.IntN(6)
		rs := make([]rune, n)
		for i := range rs {
			rs[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		return string(rs)
	}
	for _, name := range []string{"utf8mb4_bin", "utf8mb4_general_ci", "utf8mb4_0900_bin"} {
		c, err := LookupCollation(name)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 20000; i++ {
			a, b := gen(), gen()
			want := padCompare(c, a, b)
			if !c.pad {
				want = bytes.Compare([]byte(string(weights(c, a))), []byte(string(weights(c, b))))
			}
			got := bytes.Compare(c.Key(nil, a), c.Key(nil, b))
			if sign(got) != sign(want) {
				t.Fatalf("%s: %q vs %q: keys say %d, the definition %d", name, a, b, got, want)
			}
		}
	}
}

func TestGeneralCIWeights(t *testing.T) {
	c, _ := LookupCollation("UTF8MB4_GENERAL_CI")
	eq := func(a, b string) bool { return bytes.Equal(c.Key(nil, a), c.Key(nil, b)) }
	for _, p := range [][2]string{{"a", "A"}, {"Ä", "a"}, {"ß", "s"}, {"ÿ", "Y"}, {"ı", "I"}, {"İ", "i"}, {"ſ", "s"},
		{"ŀ", "Ŀ"}, {"abc  ", "ABC"}, {"日本", "日本"}, {"😀", "🙂"}} {
		if !eq(p[0], p[1]) {
			t.Errorf("%q and %q differ under general_ci", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"æ", "a"}, {"ð", "d"}, {"ø", "o"}, {"đ", "d"}, {"ł", "l"}, {"œ", "o"}, {"a\t", "a"}} {
		if eq(p[0], p[1]) {
			t.Errorf("%q and %q are equal under general_ci", p[0], p[1])
		}
	}
	if w, ok := generalCIWeight('µ'); !ok || w != 0x39C {
		t.Errorf("µ weighs %04X, want 039C (Greek capital mu)", w)
	}
	if err := c.check("Жук"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Cyrillic: want ErrUnsupported, got %v", err)
	}
	if err := c.check("\xff"); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("invalid UTF-8: want ErrInvalidValue, got %v", err)
	}
	if _, err := LookupCollation("utf8mb4_0900_ai_ci"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("0900_ai_ci must not be accepted: %v", err)
	}
}

func TestCollatedExpressions(t *testing.T) {
	ci, _ := LookupCollation("utf8mb4_general_ci")
	bin, _ := LookupCollation("utf8mb4_bin")
	b := batchOf(t, []any{"a", "B ", nil, "á"})
	x := col(b, 0)
	xc := cast(t, x, ci.Type())
	for _, c := range []struct {
		e    Expr
		want string
	}{
		{call(t, "=", xc, str("A")), "true false NULL true"},
		{call(t, "<", xc, str("b")), "true false NULL true"},
		{call(t, "in", xc, str("b"), str("x")), "false true NULL false"},
		{call(t, "like", xc, str("_")), "true false NULL true"},
		{call(t, "case", call(t, "isnull", x), str("z"), xc), "a B  z á"},
		{call(t, "=", call(t, "coalesce", xc, str("Z")), str("z")), "false false true false"},
		{call(t, "=", cast(t, x, bin.Type()), str("B")), "false true NULL false"},
	} {
		got, err := evalRows(t, c.e, b)
		if err != nil {
			t.Errorf("%s: %v", c.e, err)
			continue
		}
		if g := joinRows(got); g != c.want {
			t.Errorf("%s = %s, want %s", c.e, g, c.want)
		}
	}
	if _, err := NewCall("=", xc, cast(t, x, bin.Type())); !errors.Is(err, ErrType) {
		t.Errorf("two explicit collations: want ErrType, got %v", err)
	}
	if _, err := NewCall("upper", xc); !errors.Is(err, ErrUnsupported) {
		t.Errorf("upper of a collated string: want ErrUnsupported, got %v", err)
	}
	if _, err := NewCast(i64(5), ci.Type()); !errors.Is(err, ErrType) {
		t.Errorf("COLLATE of a number: want ErrType, got %v", err)
	}
}

func joinRows(rs []string) string {
	var b bytes.Buffer
	for i, r := range rs {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(r)
	}
	return b.String()
}
