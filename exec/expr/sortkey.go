package expr

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// GROUP_CONCAT's per-row argument. GROUP_CONCAT(DISTINCT a, b ORDER BY c
// DESC SEPARATOR ';') binds to the aggregate group_concat over one
// expression, group_concat_arg(';', TRUE, 2, a, b, c, TRUE): separator,
// DISTINCT, the number of values, the values, then each ORDER BY key
// followed by whether it is descending. It evaluates to one VARBINARY
// entry per row (NULL when a value is NULL, so the row is skipped, as in
// MySQL) holding an order-preserving key of the ORDER BY values, a key of
// the values for DISTINCT, and the concatenated values. The aggregate
// sorts entries by their key bytes, so ordering and DISTINCT need no
// knowledge of types after this point and partial states merge as bytes.

// GroupConcatParams returns the separator and DISTINCT flag of a
// group_concat_arg expression; false for any other expression.
func GroupConcatParams(e Expr) (sep string, distinct bool, ok bool) {
	c, isCall := e.(*Call)
	if !isCall || c.Fn != "group_concat_arg" || len(c.Args) < 3 {
		return "", false, false
	}
	s, ok1 := c.Args[0].(*Literal)
	d, ok2 := c.Args[1].(*Literal)
	if !ok1 || !ok2 {
		return "", false, false
	}
	sep, _ = s.Value.(string)
	distinct, _ = d.Value.(bool)
	return sep, distinct, true
}

// NewGroupConcatArg builds group_concat_arg for the values and ORDER BY
// keys of a GROUP_CONCAT.
func NewGroupConcatArg(sep string, distinct bool, values []Expr, order []Expr, desc []bool) (Expr, error) {
	args := []Expr{NewLiteral(sep, tString), NewLiteral(distinct, tBool), NewLiteral(int64(len(values)), tInt64)}
	args = append(args, values...)
	for i, k := range order {
		args = append(args, k, NewLiteral(desc[i], tBool))
	}
	return NewCall("group_concat_arg", args...)
}

var sortKeyBinders = map[string]binder{"group_concat_arg": bindGroupConcatArg, "distinct_key": bindDistinctKey}

// NewDistinctKey is the argument of COUNT(DISTINCT a, b, ...): one binary
// value per row that is equal for two rows exactly when every argument
// is (the arguments' sort keys, so a collation's equal strings agree),
// and NULL when any argument is NULL, which COUNT skips as MySQL does.
func NewDistinctKey(args ...Expr) (Expr, error) { return NewCall("distinct_key", args...) }

func bindDistinctKey(fn string, args []Expr) (Expr, error) {
	if err := arity(fn, args, 1, -1); err != nil {
		return nil, err
	}
	for _, a := range args {
		if _, err := keyEncoderFor(a.DataType()); err != nil {
			return nil, argCause("count", args, "DISTINCT ", err)
		}
	}
	return newCall(fn, tBinary, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		encs := make([]keyEncoder, len(args))
		for k, a := range args {
			enc, err := keyEncoderFor(a.DataType())
			if err != nil {
				return nil, err
			}
			encs[k] = enc
		}
		b := array.NewBinaryBuilder(ctx.Alloc, arrow.BinaryTypes.Binary)
		defer b.Release()
		b.Reserve(n)
		var key []byte
	rows:
		for i := 0; i < n; i++ {
			key = key[:0]
			for k, a := range args {
				if IsNull(a, i) {
					b.AppendNull()
					continue rows
				}
				key = encs[k](key, a, i)
			}
			b.Append(key)
		}
		return b.NewArray(), nil
	}), args...), nil
}

func bindGroupConcatArg(fn string, args []Expr) (Expr, error) {
	if len(args) < 3 {
		return nil, fmt.Errorf("%w: %s needs a separator, a DISTINCT flag and a value count", ErrType, fn)
	}
	_, distinct, ok := GroupConcatParams(&Call{Fn: fn, Args: args})
	nl, isLit := args[2].(*Literal)
	if !ok || !isLit {
		return nil, fmt.Errorf("%w: %s: the separator, DISTINCT flag and value count must be constants", ErrType, fn)
	}
	nv, _ := nl.Value.(int64)
	rest := args[3:]
	if nv < 1 || int(nv) > len(rest) || (len(rest)-int(nv))%2 != 0 {
		return nil, fmt.Errorf("%w: %s: %d values and %d remaining arguments", ErrType, fn, nv, len(rest))
	}
	conv := append([]Expr{}, args[:3]...)
	for _, v := range rest[:nv] {
		c, err := stringArg("group_concat", args, v)
		if err != nil {
			return nil, err
		}
		conv = append(conv, c)
	}
	var desc []bool
	for i := int(nv); i < len(rest); i += 2 {
		k := rest[i]
		if _, err := keyEncoderFor(k.DataType()); err != nil {
			return nil, argCause("group_concat", args, "ORDER BY ", err)
		}
		d, isLit := rest[i+1].(*Literal)
		dv, isBool := d.Value.(bool)
		if !isLit || !isBool {
			return nil, fmt.Errorf("%w: %s: the direction of ORDER BY key %s must be a Boolean constant", ErrType, fn, k)
		}
		conv = append(conv, k, d)
		desc = append(desc, dv)
	}
	nvals := int(nv)
	return newCall(fn, tBinary, arrayKernel(func(ctx *Context, args []arrow.Array, n int) (arrow.Array, error) {
		values := make([]*array.String, nvals)
		for k := range values {
			values[k] = args[3+k].(*array.String)
		}
		var keys []arrow.Array
		var encs []keyEncoder
		for k := 3 + nvals; k < len(args); k += 2 {
			enc, err := keyEncoderFor(args[k].DataType())
			if err != nil {
				return nil, err
			}
			keys = append(keys, args[k])
			encs = append(encs, enc)
		}
		b := array.NewBinaryBuilder(ctx.Alloc, arrow.BinaryTypes.Binary)
		defer b.Release()
		b.Reserve(n)
		var entry, key, dkey, val []byte
	rows:
		for i := 0; i < n; i++ {
			val, dkey = val[:0], dkey[:0]
			for _, v := range values {
				if v.IsNull(i) {
					b.AppendNull()
					continue rows
				}
				s := v.Value(i)
				val = append(val, s...)
				if distinct {
					dkey = binary.AppendUvarint(dkey, uint64(len(s)))
					dkey = append(dkey, s...)
				}
			}
			key = key[:0]
			for k, a := range keys {
				start := len(key)
				key = encs[k](key, a, i)
				if desc[k] {
					for j := start; j < len(key); j++ {
						key[j] = ^key[j]
					}
				}
			}
			entry = AppendGroupConcatEntry(entry[:0], key, dkey, val)
			b.Append(entry)
		}
		return b.NewArray(), nil
	}), conv...), nil
}

// AppendGroupConcatEntry frames one entry: key, distinct key and value,
// each length-prefixed.
func AppendGroupConcatEntry(dst, key, dkey, val []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(key)))
	dst = append(dst, key...)
	dst = binary.AppendUvarint(dst, uint64(len(dkey)))
	dst = append(dst, dkey...)
	dst = binary.AppendUvarint(dst, uint64(len(val)))
	return append(dst, val...)
}

// NextGroupConcatEntry reads the entry at the start of b and returns its
// parts and the rest of b; ok is false for malformed bytes.
func NextGroupConcatEntry(b []byte) (key, dkey, val, rest []byte, ok bool) {
	var parts [3][]byte
	for k := range parts {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return nil, nil, nil, nil, false
		}
		parts[k] = b[w : w+int(n)]
		b = b[w+int(n):]
	}
	return parts[0], parts[1], parts[2], b, true
}

// keyEncoder appends an order-preserving encoding of row i of a: byte
// order of encodings is the SQL order of values, NULL first.
type keyEncoder func(dst []byte, a arrow.Array, i int) []byte

func keyEncoderFor(t arrow.DataType) (keyEncoder, error) {
	null := func(f keyEncoder) keyEncoder {
		return func(dst []byte, a arrow.Array, i int) []byte {
			if IsNull(a, i) {
				return append(dst, 0)
			}
			return f(append(dst, 1), a, i)
		}
	}
	signed := func(v int64) []byte {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], uint64(v)^(1<<63))
		return b[:]
	}
	if c := CollationOf(t); c != nil {
		return null(func(dst []byte, a arrow.Array, i int) []byte {
			return appendEscaped(dst, string(c.Key(nil, Storage(a).(*array.String).Value(i))))
		}), nil
	}
	switch t.ID() {
	case arrow.NULL:
		return func(dst []byte, a arrow.Array, i int) []byte { return append(dst, 0) }, nil
	case arrow.BOOL:
		return null(func(dst []byte, a arrow.Array, i int) []byte {
			if a.(*array.Boolean).Value(i) {
				return append(dst, 1)
			}
			return append(dst, 0)
		}), nil
	case arrow.INT8:
		return null(func(dst []byte, a arrow.Array, i int) []byte { return append(dst, signed(int64(vals[int8](a)[i]))...) }), nil
	case arrow.INT16:
		return null(func(dst []byte, a arrow.Array, i int) []byte { return append(dst, signed(int64(vals[int16](a)[i]))...) }), nil
	case arrow.INT32, arrow.DATE32:
		return null(func(dst []byte, a arrow.Array, i int) []byte { return append(dst, signed(int64(vals[int32](a)[i]))...) }), nil
	case arrow.INT64, arrow.TIMESTAMP, arrow.TIME64:
		return null(func(dst []byte, a arrow.Array, i int) []byte { return append(dst, signed(vals[int64](a)[i])...) }), nil
	case arrow.UINT64:
		return null(func(dst []byte, a arrow.Array, i int) []byte {
			return binary.BigEndian.AppendUint64(dst, vals[uint64](a)[i])
		}), nil
	case arrow.FLOAT64:
		return null(func(dst []byte, a arrow.Array, i int) []byte {
			f := vals[float64](a)[i]
			if f == 0 {
				f = 0 // -0 and +0 are equal values: one key, so they tie and group together
			}
			u := math.Float64bits(f)
			if u&(1<<63) != 0 {
				u = ^u
			} else {
				u |= 1 << 63
			}
			return binary.BigEndian.AppendUint64(dst, u)
		}), nil
	case arrow.DECIMAL128:
		return null(func(dst []byte, a arrow.Array, i int) []byte {
			v := vals[num](a)[i]
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.HighBits())^(1<<63))
			return binary.BigEndian.AppendUint64(dst, v.LowBits())
		}), nil
	case arrow.STRING:
		return null(func(dst []byte, a arrow.Array, i int) []byte {
			return appendEscaped(dst, a.(*array.String).Value(i))
		}), nil
	}
	return nil, fmt.Errorf("by a %s value is not supported", typeSQL(t))
}

// appendEscaped writes s so that encodings compare as the strings do and
// none is a prefix of another: 0x00 becomes 0x00 0xFF, and 0x00 0x00 ends
// the string.
func appendEscaped(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			dst = append(dst, s...)
			break
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, 0, 0xff)
		s = s[i+1:]
	}
	return append(dst, 0, 0)
}

// groupConcatArgString spells group_concat_arg as the GROUP_CONCAT
// arguments it stands for.
func groupConcatArgString(c *Call, args []string) string {
	sep, distinct, _ := GroupConcatParams(c)
	nv, _ := c.Args[2].(*Literal).Value.(int64)
	var b strings.Builder
	if distinct {
		b.WriteString("DISTINCT ")
	}
	b.WriteString(strings.Join(args[3:3+nv], ", "))
	for i := 3 + int(nv); i+1 < len(args); i += 2 {
		if i == 3+int(nv) {
			b.WriteString(" ORDER BY ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(args[i])
		if d, _ := c.Args[i+1].(*Literal).Value.(bool); d {
			b.WriteString(" DESC")
		}
	}
	b.WriteString(" SEPARATOR " + NewLiteral(sep, tString).String())
	return b.String()
}
