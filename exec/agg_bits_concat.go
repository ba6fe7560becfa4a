package exec

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec/expr"
)

// sizedState is a state whose memory grows with the values it keeps
// (GROUP_CONCAT), not only with the number of groups; the hash aggregate
// reserves what it reports.
type sizedState interface {
	bytes() int64
}

// ---- bit_and / bit_or / bit_xor ----

// bitState folds 64-bit integers as BIGINT UNSIGNED, MySQL's result type:
// a negative BIGINT is its two's complement. A group without a non-NULL
// value is all ones for BIT_AND (18446744073709551615) and 0 for the
// others, never NULL, as in MySQL.
type bitState struct {
	fn   string
	vals []uint64
	ibuf []int64
}

func (s *bitState) identity() uint64 {
	if s.fn == "bit_and" {
		return math.MaxUint64
	}
	return 0
}

func (s *bitState) grow(n int) {
	old := len(s.vals)
	s.vals = growSlice(s.vals, n)
	for g := old; g < len(s.vals); g++ {
		s.vals[g] = s.identity()
	}
}

func (s *bitState) fold(g int32, v uint64) {
	switch s.fn {
	case "bit_and":
		s.vals[g] &= v
	case "bit_or":
		s.vals[g] |= v
	default:
		s.vals[g] ^= v
	}
}

func (s *bitState) update(gids []int32, arg arrow.Array) error {
	bits, off := validity(arg)
	if arg.DataType().ID() == arrow.UINT64 {
		v := arrow.GetValues[uint64](arg.Data(), 1)
		for i, g := range gids {
			if isValid(bits, off, i) {
				s.fold(g, v[i])
			}
		}
		return nil
	}
	s.ibuf = intKeys(arg, s.ibuf)
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.fold(g, uint64(s.ibuf[i]))
		}
	}
	return nil
}

func (s *bitState) merge(gids []int32, cols []arrow.Array) error { return s.update(gids, cols[0]) }

func (s *bitState) combine(dst, src int) { s.fold(int32(dst), s.vals[src]) }

func (s *bitState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	return fixedArray(alloc, arrow.PrimitiveTypes.Uint64, s.vals[:n], nil), nil
}

func (s *bitState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	a, err := s.final(alloc, n)
	return []arrow.Array{a}, err
}

// ---- group_concat ----

// groupConcatState keeps every entry of every group (see
// expr.NewGroupConcatArg for what an entry holds) and orders, de-duplicates
// and joins them at the end. The partial state of a group is its entries
// concatenated, so the final phase merges them as bytes. The result is
// not cut at group_concat_max_len: fsql returns the whole string where
// MySQL cuts it at 1024 bytes by default with a warning.
type groupConcatState struct {
	sep      string
	distinct bool
	entries  [][]gcEntry
	size     int64
}

type gcEntry struct {
	key, dkey, val string
}

func (s *groupConcatState) grow(n int) { s.entries = growSlice(s.entries, n) }

func (s *groupConcatState) bytes() int64 { return s.size }

// add appends the entries framed in b to group g.
func (s *groupConcatState) add(g int32, b []byte) error {
	for len(b) > 0 {
		key, dkey, val, rest, ok := expr.NextGroupConcatEntry(b)
		if !ok {
			return fmt.Errorf("%w: malformed group_concat entry", ErrInternal)
		}
		s.entries[g] = append(s.entries[g], gcEntry{key: string(key), dkey: string(dkey), val: string(val)})
		s.size += int64(len(key)+len(dkey)+len(val)) + 56
		b = rest
	}
	return nil
}

func (s *groupConcatState) update(gids []int32, arg arrow.Array) error {
	bin, ok := arg.(*array.Binary)
	if !ok {
		return fmt.Errorf("%w: group_concat state over %s", ErrInternal, arg.DataType())
	}
	bits, off := validity(arg)
	for i, g := range gids {
		if isValid(bits, off, i) {
			if err := s.add(g, bin.Value(i)); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *groupConcatState) merge(gids []int32, cols []arrow.Array) error {
	return s.update(gids, cols[0])
}

func (s *groupConcatState) combine(dst, src int) {
	s.entries[dst] = append(s.entries[dst], s.entries[src]...)
}

func (s *groupConcatState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	b := array.NewBinaryBuilder(alloc, arrow.BinaryTypes.Binary)
	defer b.Release()
	b.Reserve(n)
	var buf []byte
	for g := 0; g < n; g++ {
		if len(s.entries[g]) == 0 {
			b.AppendNull()
			continue
		}
		buf = buf[:0]
		for _, e := range s.entries[g] {
			buf = expr.AppendGroupConcatEntry(buf, []byte(e.key), []byte(e.dkey), []byte(e.val))
		}
		b.Append(buf)
	}
	return []arrow.Array{b.NewArray()}, nil
}

func (s *groupConcatState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	b := array.NewStringBuilder(alloc)
	defer b.Release()
	b.Reserve(n)
	var sb strings.Builder
	for g := 0; g < n; g++ {
		es := s.entries[g]
		if len(es) == 0 {
			b.AppendNull()
			continue
		}
		// Stable: rows equal on the ORDER BY keys keep their arrival order.
		slices.SortStableFunc(es, func(a, b gcEntry) int { return strings.Compare(a.key, b.key) })
		var seen map[string]struct{}
		if s.distinct {
			seen = make(map[string]struct{}, len(es))
		}
		sb.Reset()
		first := true
		for _, e := range es {
			if seen != nil {
				if _, dup := seen[e.dkey]; dup {
					continue
				}
				seen[e.dkey] = struct{}{}
			}
			if !first {
				sb.WriteString(s.sep)
			}
			first = false
			sb.WriteString(e.val)
		}
		b.Append(sb.String())
	}
	return b.NewArray(), nil
}
