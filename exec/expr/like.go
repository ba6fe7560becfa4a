package expr

import (
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// LIKE with % (any run of characters) and _ (one character, a UTF-8
// rune), backslash escaping the next character. Matching is binary
// (case-sensitive), consistent with fsql's byte-order string comparison;
// under an explicit COLLATE two characters match when their weights are
// equal (utf8mb4_general_ci: 'Straße' LIKE 'STRASSE' is FALSE, LIKE
// 'STRASE' is TRUE, as in MySQL).
// The pattern must be a literal; it is compiled once, with fast paths for
// exact, prefix ('abc%'), suffix ('%abc') and contains ('%abc%') patterns.
func bindLike(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 2, 2); err != nil {
		return nil, err
	}
	lit, ok := args[1].(*Literal)
	if !ok {
		return nil, argErr(fn, args, "the pattern must be a constant")
	}
	// An explicit collation on either side decides how characters match.
	ct, err := collatedCommon(args[0].DataType(), lit.Type, tString)
	if err != nil {
		return nil, argCause(fn, args, "", err)
	}
	coll := CollationOf(ct)
	v, err := coerce(args[0], ct)
	if err != nil {
		return nil, argCause(fn, args, "", err)
	}
	if lit, err = castLiteral(lit, tString); err != nil {
		return nil, err
	}
	if lit.Value == nil {
		return newCall(fn, tBool, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
			return array.MakeArrayOfNull(ctx.Alloc, tBool, n), nil
		}), v, lit), nil
	}
	if coll != nil {
		m := compileLike(coll.Fold(lit.Value.(string)))
		return newCall(fn, tBool, likeKernel(func(s string) bool { return m(coll.Fold(s)) }), v, lit), nil
	}
	m := compileLike(lit.Value.(string))
	return newCall(fn, tBool, likeKernel(m), v, lit), nil
}

type likeKernel func(string) bool

func (k likeKernel) eval(ctx *Context, c *Call, batch arrow.RecordBatch) (arrow.Array, error) {
	p, err := c.Args[0].Eval(ctx, batch)
	if err == nil {
		err = checkType(c.Args[0], p)
	}
	if err != nil {
		return nil, err
	}
	defer p.Release()
	s := Storage(p).(*array.String)
	n := s.Len()
	o := newBool(ctx.Alloc, n)
	for i := 0; i < n; i++ {
		if k(s.Value(i)) {
			o.set(i, true)
		}
	}
	o.andValidity(p)
	return o.finish(), nil
}

// likeTok is one pattern element: a literal rune, _ or %.
type likeTok struct {
	r          rune
	any, multi bool
}

func compileLike(p string) func(string) bool {
	var toks []likeTok
	for i := 0; i < len(p); {
		r, sz := utf8.DecodeRuneInString(p[i:])
		i += sz
		switch {
		case r == '\\' && i < len(p):
			r, sz = utf8.DecodeRuneInString(p[i:])
			i += sz
			toks = append(toks, likeTok{r: r})
		case r == '%':
			if len(toks) == 0 || !toks[len(toks)-1].multi {
				toks = append(toks, likeTok{multi: true})
			}
		case r == '_':
			toks = append(toks, likeTok{any: true})
		default:
			toks = append(toks, likeTok{r: r})
		}
	}
	// Fast paths: literal runs with % only at the ends.
	lead := len(toks) > 0 && toks[0].multi
	trail := len(toks) > 1 && toks[len(toks)-1].multi || (len(toks) == 1 && lead)
	inner := toks
	if lead {
		inner = inner[1:]
	}
	if trail && len(inner) > 0 {
		inner = inner[:len(inner)-1]
	}
	simple := true
	var lit strings.Builder
	for _, t := range inner {
		if t.any || t.multi {
			simple = false
			break
		}
		lit.WriteRune(t.r)
	}
	if simple {
		s := lit.String()
		switch {
		case lead && trail:
			return func(v string) bool { return strings.Contains(v, s) }
		case lead:
			return func(v string) bool { return strings.HasSuffix(v, s) }
		case trail:
			return func(v string) bool { return strings.HasPrefix(v, s) }
		default:
			return func(v string) bool { return v == s }
		}
	}
	return func(s string) bool { return likeMatch(s, toks) }
}

// likeMatch is the classic wildcard match with backtracking to the last %,
// linear in practice.
func likeMatch(s string, p []likeTok) bool {
	si, pi := 0, 0
	starPi, starSi := -1, 0
	for si < len(s) {
		r, sz := utf8.DecodeRuneInString(s[si:])
		switch {
		case pi < len(p) && !p[pi].multi && (p[pi].any || p[pi].r == r):
			si += sz
			pi++
		case pi < len(p) && p[pi].multi:
			starPi, starSi = pi, si
			pi++
		case starPi >= 0:
			_, ssz := utf8.DecodeRuneInString(s[starSi:])
			starSi += ssz
			si = starSi
			pi = starPi + 1
		default:
			return false
		}
	}
	for pi < len(p) && p[pi].multi {
		pi++
	}
	return pi == len(p)
}
