package expr

import (
	"encoding/binary"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Collations. fsql's strings compare byte-wise without padding, which is
// MySQL's utf8mb4_0900_bin (TiDB's default is binary too; MySQL's default
// utf8mb4_0900_ai_ci is case- and accent-insensitive). An explicit
// `COLLATE name` gives an expression the Arrow type CollatedType(name):
// the values are the same strings, and every operator that compares them
// (comparisons, IN, LIKE, CASE, GROUP BY, DISTINCT, ORDER BY, join keys,
// the shuffle hash, MIN/MAX) asks the collation. Comparison goes through
// an order-preserving byte key (Collation.Key), so byte comparison of keys
// is the collation's comparison, for hashing as much as for sorting.
//
// Implemented collations:
//   - utf8mb4_0900_bin: code point order, NO PAD (the default order).
//   - utf8mb4_bin: code point order, PAD SPACE ('a' = 'a ').
//   - utf8mb4_general_ci: MySQL's per-character weights (a = A = á,
//     ß = s, æ ≠ a), PAD SPACE. The weights are implemented for
//     U+0000-U+017F (Latin-1 and Latin Extended-A), for every block MySQL
//     leaves unweighted (compared by code point) and for characters past
//     U+FFFF (all weigh as U+FFFD). The blocks where MySQL's table folds
//     characters fsql does not reproduce (U+0180-U+05FF: Latin
//     Extended-B, IPA, Greek, Cyrillic, Armenian, Hebrew; U+1E00-U+1FFF;
//     U+2100-U+21FF; U+2400-U+24FF; U+FF00-U+FFFF) are an error naming
//     the character, never a guess.
//
// Any other collation is an error naming it; utf8mb4_0900_ai_ci in
// particular (UCA 9.0.0 weights) is not implemented.

// Collation is one implemented collation.
type Collation struct {
	name string
	pad  bool          // PAD SPACE: trailing spaces do not count
	ci   bool          // weights from generalCIWeight, else code points
	typ  *CollatedType // the Arrow type of strings with this collation
}

var collationsByName = map[string]*Collation{}

func init() {
	for _, c := range []*Collation{
		{name: "utf8mb4_0900_bin"},
		{name: "utf8mb4_bin", pad: true},
		{name: "utf8mb4_general_ci", pad: true, ci: true},
	} {
		c.typ = &CollatedType{ExtensionBase: arrow.ExtensionBase{Storage: tString}, coll: c}
		collationsByName[c.name] = c
	}
}

// LookupCollation returns the collation called name (case-insensitive);
// an unknown or unimplemented one is an error naming it.
func LookupCollation(name string) (*Collation, error) {
	c, ok := collationsByName[strings.ToLower(name)]
	if !ok {
		return nil, fmt.Errorf("%w: collation %s (fsql implements utf8mb4_0900_bin, utf8mb4_bin and utf8mb4_general_ci)", ErrUnsupported, name)
	}
	return c, nil
}

// Name is the collation's MySQL name.
func (c *Collation) Name() string { return c.name }

// Type is the Arrow type of strings with collation c.
func (c *Collation) Type() arrow.DataType { return c.typ }

// CollationOf returns the collation of type t, nil for every type but a
// CollatedType.
func CollationOf(t arrow.DataType) *Collation {
	if ct, ok := t.(*CollatedType); ok {
		return ct.coll
	}
	return nil
}

// weight returns the weight of rune r, or false when fsql does not know
// MySQL's weight for it.
func (c *Collation) weight(r rune) (rune, bool) {
	if !c.ci {
		return r, true
	}
	return generalCIWeight(r)
}

// check reports whether every character of s has a weight (and s is
// UTF-8), so Key cannot fail later: values are checked once, when they
// get the collation.
func (c *Collation) check(s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%w: %q is not valid UTF-8, so it has no %s order", ErrInvalidValue, s, c.name)
	}
	if !c.ci {
		return nil
	}
	for _, r := range s {
		if _, ok := generalCIWeight(r); !ok {
			return fmt.Errorf("%w: %s weight of %q (U+%04X) in %q: fsql implements the weights of U+0000-U+017F and of the blocks MySQL leaves unweighted; compare it with COLLATE utf8mb4_bin", ErrUnsupported, c.name, r, r, s)
		}
	}
	return nil
}

// Key appends to dst a byte string whose byte order is c's order of s:
// bytes.Compare(Key(a), Key(b)) is the collation's comparison of a and b,
// and equal keys mean equal strings under c.
//
// NO PAD: the weights, 3 bytes each. PAD SPACE: trailing spaces are
// dropped and each non-space weight w is written with the number k of
// spaces before it, as one 8-byte token: [0, k, w] when w sorts below the
// space, [2, ^k, w] when above, and the end of the string is the byte 1.
// That orders "k spaces then w" against the end of the other string (read
// as endless spaces) exactly as the padded comparison does.
func (c *Collation) Key(dst []byte, s string) []byte {
	if !c.pad {
		for _, r := range s {
			w, _ := c.weight(r)
			dst = append(dst, byte(w>>16), byte(w>>8), byte(w))
		}
		return dst
	}
	spaces := uint32(0)
	for _, r := range s {
		w, _ := c.weight(r)
		if w == ' ' {
			spaces++
			continue
		}
		if w < ' ' {
			dst = append(dst, 0)
			dst = binary.BigEndian.AppendUint32(dst, spaces)
		} else {
			dst = append(dst, 2)
			dst = binary.BigEndian.AppendUint32(dst, ^spaces)
		}
		dst = append(dst, byte(w>>16), byte(w>>8), byte(w))
		spaces = 0
	}
	return append(dst, 1)
}

// Fold maps every character of s to its weight, for LIKE: under the
// collation two characters match when their weights are equal (no
// padding: LIKE compares character by character).
func (c *Collation) Fold(s string) string {
	if !c.ci {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		w, _ := c.weight(r)
		b.WriteRune(w)
	}
	return b.String()
}

// Keys returns a Binary array holding the key of every row of a (a
// CollatedType array), NULL where a is NULL, so key encoding, hashing and
// sorting treat a collated column as plain bytes.
func Keys(alloc memory.Allocator, a arrow.Array) arrow.Array {
	c := CollationOf(a.DataType())
	s := Storage(a).(*array.String)
	b := array.NewBinaryBuilder(alloc, arrow.BinaryTypes.Binary)
	defer b.Release()
	b.Reserve(s.Len())
	var buf []byte
	for i := 0; i < s.Len(); i++ {
		if s.IsNull(i) {
			b.AppendNull()
			continue
		}
		buf = c.Key(buf[:0], s.Value(i))
		b.Append(buf)
	}
	return b.NewArray()
}

// Storage returns the plain string array under a CollatedType array (a
// itself for any other array), without a new reference.
func Storage(a arrow.Array) arrow.Array {
	if x, ok := a.(array.ExtensionArray); ok {
		return x.Storage()
	}
	return a
}

// Collated wraps a plain string array as type t (a CollatedType) and
// drops the caller's reference to storage.
func Collated(t arrow.DataType, storage arrow.Array) arrow.Array {
	out := array.NewExtensionArrayWithStorage(t.(arrow.ExtensionType), storage)
	storage.Release()
	return out
}

// CollatedType is the Arrow type of a string with an explicit collation.
// Its storage is a plain string array.
type CollatedType struct {
	arrow.ExtensionBase
	coll *Collation
}

// ArrayType implements arrow.ExtensionType.
func (t *CollatedType) ArrayType() reflect.Type { return reflect.TypeOf(CollatedArray{}) }

// ExtensionName implements arrow.ExtensionType.
func (t *CollatedType) ExtensionName() string { return "fsql.collated." + t.coll.name }

// Serialize implements arrow.ExtensionType.
func (t *CollatedType) Serialize() string { return t.coll.name }

// Deserialize implements arrow.ExtensionType.
func (t *CollatedType) Deserialize(storage arrow.DataType, data string) (arrow.ExtensionType, error) {
	c, err := LookupCollation(data)
	if err != nil {
		return nil, err
	}
	if !arrow.TypeEqual(storage, tString) {
		return nil, fmt.Errorf("%w: collated strings are stored as utf8, not %s", ErrType, storage)
	}
	return c.typ, nil
}

// ExtensionEquals implements arrow.ExtensionType.
func (t *CollatedType) ExtensionEquals(o arrow.ExtensionType) bool {
	ot, ok := o.(*CollatedType)
	return ok && ot.coll == t.coll
}

// String implements arrow.DataType.
func (t *CollatedType) String() string { return "utf8 collate " + t.coll.name }

// CollatedArray is an array of CollatedType.
type CollatedArray struct {
	array.ExtensionArrayBase
}

// ValueStr implements arrow.Array: the string itself.
func (a *CollatedArray) ValueStr(i int) string {
	if a.IsNull(i) {
		return array.NullValueStr
	}
	return a.Storage().(*array.String).Value(i)
}

// generalCIWeight is utf8mb4_general_ci's weight of r: the upper-case
// letter without its accent in Latin-1 and Latin Extended-A (ß weighs S,
// µ weighs Greek capital mu, Æ Ð Ø Þ Đ Ħ Ĳ Ŀ Ł Ŋ Œ Ŧ stay letters of
// their own), the code point itself in the blocks MySQL leaves unweighted,
// U+FFFD past U+FFFF. False for the blocks whose MySQL weights fsql does
// not reproduce.
func generalCIWeight(r rune) (rune, bool) {
	switch {
	case r < 0x180:
		return rune(latinCI[r]), true
	case r > 0xFFFF:
		return 0xFFFD, true
	case r < 0x600, r >= 0x1E00 && r < 0x2000, r >= 0x2100 && r < 0x2200,
		r >= 0x2400 && r < 0x2500, r >= 0xFF00:
		return 0, false
	}
	return r, true
}

// latinCI holds the general_ci weights of U+0000-U+017F.
var latinCI = func() [0x180]uint16 {
	var t [0x180]uint16
	for i := range t {
		t[i] = uint16(i)
	}
	set := func(lo, hi int, w uint16) {
		for r := lo; r <= hi; r++ {
			t[r] = w
		}
	}
	for r := 'a'; r <= 'z'; r++ {
		t[r] = uint16(r - 'a' + 'A')
	}
	for _, x := range []struct {
		lo, hi int
		w      uint16
	}{
		{0xB5, 0xB5, 0x39C},
		{0xC0, 0xC5, 'A'}, {0xC7, 0xC7, 'C'}, {0xC8, 0xCB, 'E'}, {0xCC, 0xCF, 'I'}, {0xD1, 0xD1, 'N'},
		{0xD2, 0xD6, 'O'}, {0xD9, 0xDC, 'U'}, {0xDD, 0xDD, 'Y'}, {0xDF, 0xDF, 'S'},
		{0xE0, 0xE5, 'A'}, {0xE6, 0xE6, 0xC6}, {0xE7, 0xE7, 'C'}, {0xE8, 0xEB, 'E'}, {0xEC, 0xEF, 'I'},
		{0xF0, 0xF0, 0xD0}, {0xF1, 0xF1, 'N'}, {0xF2, 0xF6, 'O'}, {0xF8, 0xF8, 0xD8}, {0xF9, 0xFC, 'U'},
		{0xFD, 0xFD, 'Y'}, {0xFE, 0xFE, 0xDE}, {0xFF, 0xFF, 'Y'},
		{0x100, 0x105, 'A'}, {0x106, 0x10D, 'C'}, {0x10E, 0x10F, 'D'}, {0x111, 0x111, 0x110},
		{0x112, 0x11B, 'E'}, {0x11C, 0x123, 'G'}, {0x124, 0x125, 'H'}, {0x127, 0x127, 0x126},
		{0x128, 0x131, 'I'}, {0x133, 0x133, 0x132}, {0x134, 0x135, 'J'}, {0x136, 0x137, 'K'},
		{0x139, 0x13E, 'L'}, {0x140, 0x140, 0x13F}, {0x142, 0x142, 0x141}, {0x143, 0x148, 'N'},
		{0x14B, 0x14B, 0x14A}, {0x14C, 0x151, 'O'}, {0x153, 0x153, 0x152}, {0x154, 0x159, 'R'},
		{0x15A, 0x161, 'S'}, {0x162, 0x165, 'T'}, {0x167, 0x167, 0x166}, {0x168, 0x173, 'U'},
		{0x174, 0x175, 'W'}, {0x176, 0x178, 'Y'}, {0x179, 0x17E, 'Z'}, {0x17F, 0x17F, 'S'},
	} {
		set(x.lo, x.hi, x.w)
	}
	return t
}()
