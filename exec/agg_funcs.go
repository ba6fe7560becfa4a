package exec

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/internal/mempool"
)

// aggState holds one aggregate function's running state for every group
// of a hash aggregate (or every peer group of a window), in typed slices
// indexed by group id. Updates take a whole batch: the group id of each row
// and the argument column, so the inner loops are typed and branch-light.
type aggState interface {
	// grow makes room for groups [0, n).
	grow(n int)
	// update folds raw argument values in (arg is nil for count_star).
	update(gids []int32, arg arrow.Array) error
	// merge folds partial-state columns (as produced by partial) in.
	merge(gids []int32, cols []arrow.Array) error
	// combine folds the state of group src into group dst.
	combine(dst, src int)
	// final returns the result of groups [0, n).
	final(alloc memory.Allocator, n int) (arrow.Array, error)
	// partial returns the state columns of groups [0, n).
	partial(alloc memory.Allocator, n int) ([]arrow.Array, error)
}

// aggStateTypes is the partial-state layout of fn over an argument of type
// arg with result type res; it fixes the columns AggPartial emits.
func aggStateTypes(fn string, arg, res arrow.DataType) ([]arrow.DataType, []string, error) {
	switch normAggFn(fn) {
	case "count", "count_star":
		return []arrow.DataType{arrow.PrimitiveTypes.Int64}, []string{"count"}, nil
	case "sum":
		return []arrow.DataType{sumStateType(arg, res)}, []string{"sum"}, nil
	case "avg":
		return []arrow.DataType{sumStateType(arg, nil), arrow.PrimitiveTypes.Int64}, []string{"sum", "count"}, nil
	case "min", "max":
		return []arrow.DataType{arg}, []string{normAggFn(fn)}, nil
	case "stddev_samp", "var_samp", "stddev_pop", "var_pop":
		f := arrow.PrimitiveTypes.Float64
		return []arrow.DataType{arrow.PrimitiveTypes.Int64, f, f}, []string{"count", "mean", "m2"}, nil
	case "bit_and", "bit_or", "bit_xor":
		return []arrow.DataType{arrow.PrimitiveTypes.Uint64}, []string{normAggFn(fn)}, nil
	case "group_concat":
		return []arrow.DataType{arrow.BinaryTypes.Binary}, []string{"entries"}, nil
	}
	return nil, nil, fmt.Errorf("%w: the aggregate function %s (SHOW BUILTINS lists the aggregates fsql has)", ErrNotImplemented, fn)
}

func normAggFn(fn string) string {
	fn = strings.ToLower(fn)
	switch fn {
	case "stddev", "std":
		return "stddev_pop" // MySQL's synonyms of the population forms
	case "variance":
		return "var_pop"
	case "any_value":
		// Any value of the group will do; the minimum is one, and it is
		// deterministic and mergeable.
		return "min"
	}
	return fn
}

// sumStateType: exact sums are kept as decimal(38, s) of the argument's
// scale (integers are scale 0); floating sums as float64.
func sumStateType(arg, res arrow.DataType) arrow.DataType {
	if arg == nil {
		return arrow.PrimitiveTypes.Float64
	}
	switch a := arg.(type) {
	case *arrow.Decimal128Type:
		return &arrow.Decimal128Type{Precision: 38, Scale: a.Scale}
	}
	if isIntegerType(arg) {
		if r, ok := res.(*arrow.Decimal128Type); ok && r.Scale == 0 {
			return r
		}
		return &arrow.Decimal128Type{Precision: 38, Scale: 0}
	}
	return arrow.PrimitiveTypes.Float64
}

func isIntegerType(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.UINT8, arrow.UINT16, arrow.UINT32, arrow.UINT64:
		return true
	}
	return false
}

// newAggStateOf makes the state of aggregate f; in is the argument type
// (raw modes) or the first state column's type (final mode). GROUP_CONCAT
// reads its separator and DISTINCT flag from its argument expression,
// which every mode keeps.
func newAggStateOf(f AggFunc, in arrow.DataType) (aggState, error) {
	if normAggFn(f.Fn) == "group_concat" {
		sep, distinct, ok := expr.GroupConcatParams(f.Arg)
		if !ok {
			return nil, fmt.Errorf("%w: group_concat over %v, not a group_concat_arg expression", ErrInternal, f.Arg)
		}
		return &groupConcatState{sep: sep, distinct: distinct}, nil
	}
	return newAggState(f.Fn, in, f.Type)
}

// newAggState makes the state of fn. in is the argument type (raw modes)
// or the first state column's type (final mode), res the result type.
func newAggState(fn string, in, res arrow.DataType) (aggState, error) {
	if in != nil && in.ID() == arrow.NULL {
		return newNullArgState(normAggFn(fn), res)
	}
	switch f := normAggFn(fn); f {
	case "count", "count_star":
		return &countState{star: f == "count_star"}, nil
	case "sum", "avg":
		if d, ok := sumStateType(in, res).(*arrow.Decimal128Type); ok {
			return &decSumState{scale: d.Scale, avg: f == "avg", res: res}, nil
		}
		if !arrow.IsFloating(in.ID()) && !isIntegerType(in) {
			// Strings and booleans are converted by the binder
			// (expr.AggregateArg), under the one rule for numbers.
			return nil, fmt.Errorf("%w: %s of a %s value: CAST the argument to DECIMAL or DOUBLE", ErrNotImplemented, strings.ToUpper(f), hive.SQLTypeName(in))
		}
		return &floatSumState{avg: f == "avg", res: res}, nil
	case "min", "max":
		return newMinMax(in, f == "max")
	case "stddev_samp", "var_samp", "stddev_pop", "var_pop":
		if !isNumeric(in) {
			return nil, fmt.Errorf("%w: %s of a %s value: CAST the argument to DECIMAL or DOUBLE", ErrNotImplemented, strings.ToUpper(f), hive.SQLTypeName(in))
		}
		return &varState{fn: f}, nil
	case "bit_and", "bit_or", "bit_xor":
		if !isIntegerType(in) {
			return nil, fmt.Errorf("%w: %s of a %s value: CAST the argument to SIGNED or UNSIGNED", ErrNotImplemented, strings.ToUpper(f), hive.SQLTypeName(in))
		}
		return &bitState{fn: f}, nil
	}
	return nil, fmt.Errorf("%w: the aggregate function %s (SHOW BUILTINS lists the aggregates fsql has)", ErrNotImplemented, fn)
}

// newNullArgState is the state of fn over an argument of the NULL type
// (sum(NULL), max(CASE WHEN ... THEN NULL END)): every row is NULL, so
// raw rows never change the state and the result is NULL (0 for count).
// The state columns keep the layout aggStateTypes gives, so the final
// phase merges them with the ordinary states.
func newNullArgState(fn string, res arrow.DataType) (aggState, error) {
	switch fn {
	case "count", "count_star":
		return &countState{star: fn == "count_star"}, nil
	case "sum", "avg":
		return nullArg{&floatSumState{avg: fn == "avg", res: res}}, nil
	case "min", "max":
		return nullArg{&nullMinMaxState{}}, nil
	case "stddev_samp", "var_samp", "stddev_pop", "var_pop":
		return nullArg{&varState{fn: fn}}, nil
	case "bit_and", "bit_or", "bit_xor":
		return nullArg{&bitState{fn: fn}}, nil
	}
	return nil, fmt.Errorf("%w: the aggregate function %s (SHOW BUILTINS lists the aggregates fsql has)", ErrNotImplemented, fn)
}

// nullArg wraps a state whose raw argument is of the NULL type.
type nullArg struct{ aggState }

func (nullArg) update([]int32, arrow.Array) error { return nil }

// nullMinMaxState is min/max/any_value of the NULL type: always NULL.
type nullMinMaxState struct{}

func (nullMinMaxState) grow(int)                           {}
func (nullMinMaxState) update([]int32, arrow.Array) error  { return nil }
func (nullMinMaxState) merge([]int32, []arrow.Array) error { return nil }
func (nullMinMaxState) combine(int, int)                   {}
func (nullMinMaxState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	return array.MakeArrayOfNull(alloc, arrow.Null, n), nil
}
func (s nullMinMaxState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	a, err := s.final(alloc, n)
	return []arrow.Array{a}, err
}

func isNumeric(dt arrow.DataType) bool {
	return isIntegerType(dt) || arrow.IsFloating(dt.ID()) || dt.ID() == arrow.DECIMAL128
}

// validity returns the validity bitmap and offset of a, or nil when a has
// no NULLs, so loops test one bit instead of calling through an interface.
// An array of the NULL type gets an all-zero bitmap (expr.Validity).
func validity(a arrow.Array) ([]byte, int) { return expr.Validity(a) }

func isValid(bits []byte, off, i int) bool { return bits == nil || bitutil.BitIsSet(bits, off+i) }

func growSlice[T any](s []T, n int) []T {
	if len(s) >= n {
		return s
	}
	if cap(s) >= n {
		return s[:n]
	}
	ns := make([]T, n, max(n, 2*cap(s)))
	copy(ns, s)
	return ns
}

// ---- count ----

type countState struct {
	star   bool
	counts []int64
}

func (s *countState) grow(n int) { s.counts = growSlice(s.counts, n) }

func (s *countState) update(gids []int32, arg arrow.Array) error {
	if s.star || arg == nil {
		for _, g := range gids {
			s.counts[g]++
		}
		return nil
	}
	bits, off := validity(arg)
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.counts[g]++
		}
	}
	return nil
}

func (s *countState) merge(gids []int32, cols []arrow.Array) error {
	v := arrow.GetValues[int64](cols[0].Data(), 1)
	bits, off := validity(cols[0])
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.counts[g] += v[i]
		}
	}
	return nil
}

func (s *countState) combine(dst, src int) { s.counts[dst] += s.counts[src] }

func (s *countState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	return fixedArray(alloc, arrow.PrimitiveTypes.Int64, s.counts[:n], nil), nil
}

func (s *countState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	a, err := s.final(alloc, n)
	return []arrow.Array{a}, err
}

// ---- exact sum / avg ----

// decSumState sums integers or decimals exactly in 128 bits at the
// argument's scale; avg also counts.
type decSumState struct {
	scale    int32
	avg      bool
	res      arrow.DataType
	cells    []decSum
	overflow bool
	ibuf     []int64
}

// decSum is one group's sum and count side by side: a row of a table
// larger than the cache costs one miss, not one in a sums array and
// another in a counts array (q78's sums were 9% of its profile).
type decSum struct {
	sum decimal128.Num
	n   int64
}

func (s *decSumState) grow(n int) {
	s.cells = growSlice(s.cells, n)
}

// add adds v, counting cnt values, with a check for 128-bit
// wraparound: two operands of the same sign must give a result of that
// sign.
func (s *decSumState) add(g int32, v decimal128.Num, cnt int64) {
	c := &s.cells[g]
	old := c.sum
	r := old.Add(v)
	if (old.HighBits() < 0) == (v.HighBits() < 0) && (r.HighBits() < 0) != (v.HighBits() < 0) {
		s.overflow = true
	}
	c.sum = r
	c.n += cnt
}

func (s *decSumState) update(gids []int32, arg arrow.Array) error {
	bits, off := validity(arg)
	if arg.DataType().ID() == arrow.DECIMAL128 {
		v := arrow.GetValues[decimal128.Num](arg.Data(), 1)
		for i, g := range gids {
			if isValid(bits, off, i) {
				s.add(g, v[i], 1)
			}
		}
		return nil
	}
	if arg.DataType().ID() == arrow.UINT64 {
		v := arrow.GetValues[uint64](arg.Data(), 1)
		for i, g := range gids {
			if isValid(bits, off, i) {
				s.add(g, decimal128.FromU64(v[i]), 1)
			}
		}
		return nil
	}
	s.ibuf = intKeys(arg, s.ibuf)
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.add(g, decimal128.FromI64(s.ibuf[i]), 1)
		}
	}
	return nil
}

func (s *decSumState) merge(gids []int32, cols []arrow.Array) error {
	v := arrow.GetValues[decimal128.Num](cols[0].Data(), 1)
	bits, off := validity(cols[0])
	var cnt []int64
	if s.avg {
		cnt = arrow.GetValues[int64](cols[1].Data(), 1)
	}
	for i, g := range gids {
		if !isValid(bits, off, i) {
			continue
		}
		if s.avg {
			s.add(g, v[i], cnt[i])
		} else {
			s.add(g, v[i], 1)
		}
	}
	return nil
}

func (s *decSumState) combine(dst, src int) {
	s.add(int32(dst), s.cells[src].sum, s.cells[src].n)
}

var maxDec38 = decimal128.GetMaxValue(38)

func (s *decSumState) overflowErr() error {
	return fmt.Errorf("%w: decimal sum overflows 38 digits; cast the argument to DOUBLE to sum it approximately", ErrExecution)
}

func (s *decSumState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	if s.overflow {
		return nil, s.overflowErr()
	}
	cells := s.cells[:n]
	nb, nulls := decSumValidity(alloc, cells)
	vb := mempool.Buffer(alloc, 16*n)
	sums := arrow.Decimal128Traits.CastFromBytes(vb.Bytes())
	for g := range cells {
		sums[g] = cells[g].sum
	}
	sum := newFixedArray(&arrow.Decimal128Type{Precision: 38, Scale: s.scale}, n, nb, vb, nulls)
	if !s.avg {
		return []arrow.Array{sum}, nil
	}
	cb := mempool.Buffer(alloc, 8*n)
	counts := arrow.Int64Traits.CastFromBytes(cb.Bytes())
	for g := range cells {
		counts[g] = cells[g].n
	}
	return []arrow.Array{sum, newFixedArray(arrow.PrimitiveTypes.Int64, n, nil, cb, 0)}, nil
}

// final writes each group's value straight into the result's buffers
// (q78 finishes 2M groups: the Go slices it filled and then copied,
// zeroed three times over, were 7% of its CPU samples).
func (s *decSumState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	if s.overflow {
		return nil, s.overflowErr()
	}
	cells := s.cells[:n]
	switch r := s.res.(type) {
	case *arrow.Float64Type:
		vb := mempool.Buffer(alloc, 8*n)
		out := arrow.Float64Traits.CastFromBytes(vb.Bytes())
		for g := range cells {
			c := cells[g].n
			out[g] = 0
			if c > 0 {
				out[g] = expr.DecimalToFloat(cells[g].sum, s.scale)
				if s.avg {
					out[g] /= float64(c)
				}
			}
		}
		nb, nulls := decSumValidity(alloc, cells)
		return newFixedArray(r, n, nb, vb, nulls), nil
	case *arrow.Decimal128Type:
		vb := mempool.Buffer(alloc, 16*n)
		out := arrow.Decimal128Traits.CastFromBytes(vb.Bytes())
		for g := range cells {
			c := cells[g].n
			out[g] = decimal128.Num{}
			if c <= 0 {
				continue
			}
			v := cells[g].sum
			var err error
			if s.avg {
				v, err = avgDecimal(v, s.scale, c, r.Scale)
			} else if s.scale != r.Scale {
				v, err = rescaleDecimal(v, s.scale, r.Scale)
			}
			if err == nil && !v.FitsInPrecision(r.Precision) {
				err = fmt.Errorf("%w: %s result %s does not fit %s", ErrExecution, map[bool]string{true: "avg", false: "sum"}[s.avg], v.ToString(r.Scale), r)
			}
			if err != nil {
				vb.Release()
				return nil, err
			}
			out[g] = v
		}
		nb, nulls := decSumValidity(alloc, cells)
		return newFixedArray(r, n, nb, vb, nulls), nil
	case *arrow.Int64Type:
		vb := mempool.Buffer(alloc, 8*n)
		out := arrow.Int64Traits.CastFromBytes(vb.Bytes())
		for g := range cells {
			c := cells[g].n
			out[g] = 0
			if c <= 0 {
				continue
			}
			v, err := rescaleDecimal(cells[g].sum, s.scale, 0)
			if err != nil {
				vb.Release()
				return nil, err
			}
			if s.avg {
				v, _ = avgDecimal(cells[g].sum, s.scale, c, 0)
			}
			if v.HighBits() != 0 && v.HighBits() != -1 {
				vb.Release()
				return nil, fmt.Errorf("%w: sum overflows BIGINT", ErrExecution)
			}
			out[g] = int64(v.LowBits())
		}
		nb, nulls := decSumValidity(alloc, cells)
		return newFixedArray(r, n, nb, vb, nulls), nil
	}
	return nil, fmt.Errorf("%w: an exact SUM/AVG with the result type %s: CAST the argument to DECIMAL or DOUBLE", ErrNotImplemented, hive.SQLTypeName(s.res))
}

// decSumValidity is countValidity over sums' counts.
func decSumValidity(alloc memory.Allocator, cells []decSum) (*memory.Buffer, int) {
	nulls := 0
	for g := range cells {
		if cells[g].n <= 0 {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	nb := mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(len(cells)))))
	bits := nb.Bytes()
	clear(bits)
	for g := range cells {
		if cells[g].n > 0 {
			bits[g>>3] |= 1 << (g & 7)
		}
	}
	return nb, nulls
}

// countValidity is the validity bitmap of the groups whose count is
// positive and the number of the others, or nil, 0 when every group has
// one.
func countValidity(alloc memory.Allocator, counts []int64) (*memory.Buffer, int) {
	nulls := 0
	for _, c := range counts {
		if c <= 0 {
			nulls++
		}
	}
	if nulls == 0 {
		return nil, 0
	}
	nb := mempool.Buffer(alloc, int(bitutil.BytesForBits(int64(len(counts)))))
	bits := nb.Bytes()
	clear(bits)
	for g, c := range counts {
		if c > 0 {
			bits[g>>3] |= 1 << (g & 7)
		}
	}
	return nb, nulls
}

// rescaleDecimal changes the scale of v, rounding half away from zero when
// it drops digits.
func rescaleDecimal(v decimal128.Num, from, to int32) (decimal128.Num, error) {
	if from == to {
		return v, nil
	}
	if to > from {
		m := decimal128.GetScaleMultiplier(int(to - from))
		if lim, _ := maxDec38.Div(m); v.Abs().Greater(lim) {
			return v, fmt.Errorf("%w: decimal value overflows 38 digits", ErrExecution)
		}
		return v.Mul(m), nil
	}
	return divRound(v, decimal128.GetScaleMultiplier(int(from-to))), nil
}

// divRound divides rounding half away from zero. A divisor that fits in
// 64 bits (a count, a power of ten up to 10^19) divides in machine words
// (divRound64); decimal128's Div goes through big.Int, which was a tenth
// of q39's CPU (an AVG per group).
func divRound(v, d decimal128.Num) decimal128.Num {
	if q, ok := divRound64(v, d); ok {
		return q
	}
	q, r := v.Div(d)
	r2 := r.Abs().Mul(decimal128.FromI64(2))
	if r2.GreaterEqual(d.Abs()) {
		if (v.Sign() < 0) != (d.Sign() < 0) {
			q = q.Sub(decimal128.FromI64(1))
		} else {
			q = q.Add(decimal128.FromI64(1))
		}
	}
	return q
}

// divRound64 is divRound when |d| fits in 64 bits and is not zero: the
// 128-bit magnitude of v divides by |d| in two long-division steps
// (bits.Div64), the remainder rounds half away from zero, and the sign
// is that of v times d. ok is false when d does not fit.
func divRound64(v, d decimal128.Num) (decimal128.Num, bool) {
	neg := false
	if d.Sign() < 0 {
		d, neg = d.Negate(), true
	}
	if d.HighBits() != 0 || d.LowBits() == 0 {
		return decimal128.Num{}, false
	}
	if v.Sign() < 0 {
		v, neg = v.Negate(), !neg
	}
	du, hi, lo := d.LowBits(), uint64(v.HighBits()), v.LowBits()
	qhi, r := hi/du, hi%du
	qlo, r := bits.Div64(r, lo, du)
	if r >= du-r { // 2r >= du, without overflow
		var c uint64
		qlo, c = bits.Add64(qlo, 1, 0)
		qhi += c
	}
	q := decimal128.New(int64(qhi), qlo)
	if neg {
		q = q.Negate()
	}
	return q, true
}

// avgDecimal is sum/count at scale to, rounded half away from zero. Sums
// near 38 digits would overflow 128 bits when scaled up, so those go
// through big.Int.
func avgDecimal(sum decimal128.Num, from int32, count int64, to int32) (decimal128.Num, error) {
	up := to - from
	if up >= 0 && up <= 10 && sum.Abs().Less(decimal128.GetScaleMultiplier(int(37-up))) {
		return divRound(sum.Mul(decimal128.GetScaleMultiplier(int(up))), decimal128.FromI64(count)), nil
	}
	b := sum.BigInt()
	c := big.NewInt(count)
	if up >= 0 {
		b.Mul(b, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(up)), nil))
	} else {
		c.Mul(c, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-up)), nil))
	}
	q, r := new(big.Int).QuoRem(b, c, new(big.Int))
	r.Abs(r).Lsh(r, 1)
	if r.Cmp(new(big.Int).Abs(c)) >= 0 {
		if b.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if q.BitLen() > 126 {
		return decimal128.Num{}, fmt.Errorf("%w: avg result overflows 38 digits", ErrExecution)
	}
	return decimal128.FromBigInt(q), nil
}

// ---- floating sum / avg ----

type floatSumState struct {
	avg    bool
	res    arrow.DataType
	sums   []float64
	counts []int64
	fbuf   []float64
}

func (s *floatSumState) grow(n int) {
	s.sums = growSlice(s.sums, n)
	s.counts = growSlice(s.counts, n)
}

func (s *floatSumState) update(gids []int32, arg arrow.Array) error {
	s.fbuf = toFloat64s(arg, s.fbuf)
	bits, off := validity(arg)
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.sums[g] += s.fbuf[i]
			s.counts[g]++
		}
	}
	return nil
}

func (s *floatSumState) merge(gids []int32, cols []arrow.Array) error {
	v := arrow.GetValues[float64](cols[0].Data(), 1)
	bits, off := validity(cols[0])
	var cnt []int64
	if s.avg {
		cnt = arrow.GetValues[int64](cols[1].Data(), 1)
	}
	for i, g := range gids {
		if !isValid(bits, off, i) {
			continue
		}
		s.sums[g] += v[i]
		if s.avg {
			s.counts[g] += cnt[i]
		} else {
			s.counts[g]++
		}
	}
	return nil
}

func (s *floatSumState) combine(dst, src int) {
	s.sums[dst] += s.sums[src]
	s.counts[dst] += s.counts[src]
}

func (s *floatSumState) valid(n int) []bool {
	valid := make([]bool, n)
	for g := range valid {
		valid[g] = s.counts[g] > 0
	}
	return valid
}

func (s *floatSumState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	sum := fixedArray(alloc, arrow.PrimitiveTypes.Float64, s.sums[:n], s.valid(n))
	if !s.avg {
		return []arrow.Array{sum}, nil
	}
	return []arrow.Array{sum, fixedArray(alloc, arrow.PrimitiveTypes.Int64, s.counts[:n], nil)}, nil
}

func (s *floatSumState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	out := make([]float64, n)
	for g := range out {
		out[g] = s.sums[g]
		if s.avg && s.counts[g] > 0 {
			out[g] /= float64(s.counts[g])
		}
	}
	return fixedArray(alloc, arrow.PrimitiveTypes.Float64, out, s.valid(n)), nil
}

// toFloat64s converts a numeric column to float64 (NULL rows hold junk).
func toFloat64s(a arrow.Array, dst []float64) []float64 {
	n := a.Len()
	dst = growSlice(dst[:0], n)
	d := a.Data()
	switch t := a.DataType().(type) {
	case *arrow.Float64Type:
		copy(dst, arrow.GetValues[float64](d, 1))
	case *arrow.Float32Type:
		for i, v := range arrow.GetValues[float32](d, 1) {
			dst[i] = float64(v)
		}
	case *arrow.Decimal128Type:
		for i, v := range arrow.GetValues[decimal128.Num](d, 1) {
			dst[i] = expr.DecimalToFloat(v, t.Scale)
		}
	case *arrow.Uint64Type:
		for i, v := range arrow.GetValues[uint64](d, 1) {
			dst[i] = float64(v)
		}
	default:
		for i, v := range intKeys(a, nil) {
			dst[i] = float64(v)
		}
	}
	return dst
}

// ---- variance / standard deviation (Welford, merged with Chan et al.) ----

type varState struct {
	fn    string
	n     []int64
	mean  []float64
	m2    []float64
	fbuf  []float64
	cbuf  []int64
	mbuf  []float64
	m2buf []float64
}

func (s *varState) grow(n int) {
	s.n = growSlice(s.n, n)
	s.mean = growSlice(s.mean, n)
	s.m2 = growSlice(s.m2, n)
}

func (s *varState) update(gids []int32, arg arrow.Array) error {
	s.fbuf = toFloat64s(arg, s.fbuf)
	bits, off := validity(arg)
	for i, g := range gids {
		if !isValid(bits, off, i) {
			continue
		}
		x := s.fbuf[i]
		s.n[g]++
		d := x - s.mean[g]
		s.mean[g] += d / float64(s.n[g])
		s.m2[g] += d * (x - s.mean[g])
	}
	return nil
}

func (s *varState) mergeOne(g int, n int64, mean, m2 float64) {
	if n == 0 {
		return
	}
	if s.n[g] == 0 {
		s.n[g], s.mean[g], s.m2[g] = n, mean, m2
		return
	}
	na, nb := float64(s.n[g]), float64(n)
	tot := na + nb
	d := mean - s.mean[g]
	s.mean[g] += d * nb / tot
	s.m2[g] += m2 + d*d*na*nb/tot
	s.n[g] += n
}

func (s *varState) merge(gids []int32, cols []arrow.Array) error {
	ns := arrow.GetValues[int64](cols[0].Data(), 1)
	means := arrow.GetValues[float64](cols[1].Data(), 1)
	m2s := arrow.GetValues[float64](cols[2].Data(), 1)
	bits, off := validity(cols[0])
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.mergeOne(int(g), ns[i], means[i], m2s[i])
		}
	}
	return nil
}

func (s *varState) combine(dst, src int) { s.mergeOne(dst, s.n[src], s.mean[src], s.m2[src]) }

func (s *varState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	return []arrow.Array{
		fixedArray(alloc, arrow.PrimitiveTypes.Int64, s.n[:n], nil),
		fixedArray(alloc, arrow.PrimitiveTypes.Float64, s.mean[:n], nil),
		fixedArray(alloc, arrow.PrimitiveTypes.Float64, s.m2[:n], nil),
	}, nil
}

func (s *varState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	out := make([]float64, n)
	valid := make([]bool, n)
	pop := s.fn == "var_pop" || s.fn == "stddev_pop"
	for g := range out {
		cnt := s.n[g]
		switch {
		case pop && cnt >= 1:
			out[g] = s.m2[g] / float64(cnt)
		case !pop && cnt >= 2:
			out[g] = s.m2[g] / float64(cnt-1)
		default:
			continue
		}
		valid[g] = true
		if strings.HasPrefix(s.fn, "stddev") {
			out[g] = math.Sqrt(out[g])
		}
	}
	return fixedArray(alloc, arrow.PrimitiveTypes.Float64, out, valid), nil
}

// ---- min / max ----

func newMinMax(dt arrow.DataType, isMax bool) (aggState, error) {
	switch dt.ID() {
	case arrow.INT8:
		return &minMaxState[int8]{dt: dt, isMax: isMax}, nil
	case arrow.INT16:
		return &minMaxState[int16]{dt: dt, isMax: isMax}, nil
	case arrow.INT32, arrow.DATE32, arrow.TIME32:
		return &minMaxState[int32]{dt: dt, isMax: isMax}, nil
	case arrow.INT64, arrow.DATE64, arrow.TIMESTAMP, arrow.TIME64, arrow.DURATION:
		return &minMaxState[int64]{dt: dt, isMax: isMax}, nil
	case arrow.UINT8:
		return &minMaxState[uint8]{dt: dt, isMax: isMax}, nil
	case arrow.UINT16:
		return &minMaxState[uint16]{dt: dt, isMax: isMax}, nil
	case arrow.UINT32:
		return &minMaxState[uint32]{dt: dt, isMax: isMax}, nil
	case arrow.UINT64:
		return &minMaxState[uint64]{dt: dt, isMax: isMax}, nil
	case arrow.FLOAT32:
		return &minMaxState[float32]{dt: dt, isMax: isMax}, nil
	case arrow.FLOAT64:
		return &minMaxState[float64]{dt: dt, isMax: isMax}, nil
	case arrow.DECIMAL128:
		return &decMinMaxState{dt: dt, isMax: isMax}, nil
	case arrow.BOOL:
		return &boolMinMaxState{inner: minMaxState[uint8]{dt: arrow.PrimitiveTypes.Uint8, isMax: isMax}}, nil
	case arrow.STRING, arrow.LARGE_STRING, arrow.BINARY, arrow.LARGE_BINARY, arrow.STRING_VIEW, arrow.BINARY_VIEW:
		return &strMinMaxState{dt: dt, isMax: isMax}, nil
	case arrow.EXTENSION:
		if c := expr.CollationOf(dt); c != nil {
			return &strMinMaxState{dt: dt, isMax: isMax, coll: c}, nil
		}
	}
	return nil, fmt.Errorf("%w: MIN/MAX of a %s value: CAST it to a string, number or date first", ErrNotImplemented, hive.SQLTypeName(dt))
}

type fixedOrdered interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

type minMaxState[T fixedOrdered] struct {
	dt    arrow.DataType
	isMax bool
	vals  []T
	seen  []bool
}

func (s *minMaxState[T]) grow(n int) {
	s.vals = growSlice(s.vals, n)
	s.seen = growSlice(s.seen, n)
}

func (s *minMaxState[T]) update(gids []int32, arg arrow.Array) error {
	v := arrow.GetValues[T](arg.Data(), 1)
	bits, off := validity(arg)
	for i, g := range gids {
		if !isValid(bits, off, i) {
			continue
		}
		if !s.seen[g] {
			s.vals[g], s.seen[g] = v[i], true
		} else if s.isMax {
			if cmp.Less(s.vals[g], v[i]) {
				s.vals[g] = v[i]
			}
		} else if cmp.Less(v[i], s.vals[g]) {
			s.vals[g] = v[i]
		}
	}
	return nil
}

func (s *minMaxState[T]) merge(gids []int32, cols []arrow.Array) error {
	return s.update(gids, cols[0])
}

func (s *minMaxState[T]) combine(dst, src int) {
	if !s.seen[src] {
		return
	}
	if !s.seen[dst] || (s.isMax && cmp.Less(s.vals[dst], s.vals[src])) || (!s.isMax && cmp.Less(s.vals[src], s.vals[dst])) {
		s.vals[dst], s.seen[dst] = s.vals[src], true
	}
}

func (s *minMaxState[T]) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	return fixedArray(alloc, s.dt, s.vals[:n], s.seen[:n]), nil
}

func (s *minMaxState[T]) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	a, err := s.final(alloc, n)
	return []arrow.Array{a}, err
}

type decMinMaxState struct {
	dt    arrow.DataType
	isMax bool
	vals  []decimal128.Num
	seen  []bool
}

func (s *decMinMaxState) grow(n int) {
	s.vals = growSlice(s.vals, n)
	s.seen = growSlice(s.seen, n)
}

func (s *decMinMaxState) put(g int, v decimal128.Num) {
	if !s.seen[g] {
		s.vals[g], s.seen[g] = v, true
		return
	}
	c := v.Cmp(s.vals[g])
	if (s.isMax && c > 0) || (!s.isMax && c < 0) {
		s.vals[g] = v
	}
}

func (s *decMinMaxState) update(gids []int32, arg arrow.Array) error {
	v := arrow.GetValues[decimal128.Num](arg.Data(), 1)
	bits, off := validity(arg)
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.put(int(g), v[i])
		}
	}
	return nil
}

func (s *decMinMaxState) merge(gids []int32, cols []arrow.Array) error {
	return s.update(gids, cols[0])
}

func (s *decMinMaxState) combine(dst, src int) {
	if s.seen[src] {
		s.put(dst, s.vals[src])
	}
}

func (s *decMinMaxState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	return fixedArray(alloc, s.dt, s.vals[:n], s.seen[:n]), nil
}

func (s *decMinMaxState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	a, err := s.final(alloc, n)
	return []arrow.Array{a}, err
}

// strMinMaxState is MIN/MAX of strings: byte order, or the order of an
// explicit collation (coll), whose key of each group's value is kept.
type strMinMaxState struct {
	dt    arrow.DataType
	isMax bool
	coll  *expr.Collation
	vals  []string
	keys  []string // collation keys of vals, when coll is set
	seen  []bool
	kbuf  []byte
}

func (s *strMinMaxState) grow(n int) {
	s.vals = growSlice(s.vals, n)
	s.seen = growSlice(s.seen, n)
	if s.coll != nil {
		s.keys = growSlice(s.keys, n)
	}
}

func (s *strMinMaxState) put(g int, v string) {
	if s.coll != nil {
		s.kbuf = s.coll.Key(s.kbuf[:0], v)
		k := string(s.kbuf)
		if !s.seen[g] || (s.isMax && k > s.keys[g]) || (!s.isMax && k < s.keys[g]) {
			s.vals[g], s.keys[g], s.seen[g] = strings.Clone(v), k, true
		}
		return
	}
	if !s.seen[g] {
		// Clone: v points into an input buffer that is released later.
		s.vals[g], s.seen[g] = strings.Clone(v), true
		return
	}
	if (s.isMax && v > s.vals[g]) || (!s.isMax && v < s.vals[g]) {
		s.vals[g] = strings.Clone(v)
	}
}

func (s *strMinMaxState) update(gids []int32, arg arrow.Array) error {
	vb, err := varBytes(arg)
	if err != nil {
		return err
	}
	bits, off := validity(arg)
	for i, g := range gids {
		if isValid(bits, off, i) {
			s.put(int(g), vb(i))
		}
	}
	return nil
}

func (s *strMinMaxState) merge(gids []int32, cols []arrow.Array) error {
	return s.update(gids, cols[0])
}

// combine folds group src into dst. The values it moves are the state's
// own (cloned when they came in), and so are their collation keys: a
// window's segment tree combines each row's frame from O(log n) nodes,
// and cloning or re-keying every time made a sliding string MIN/MAX
// allocate per node visited.
func (s *strMinMaxState) combine(dst, src int) {
	if !s.seen[src] {
		return
	}
	if s.coll != nil {
		k := s.keys[src]
		if !s.seen[dst] || (s.isMax && k > s.keys[dst]) || (!s.isMax && k < s.keys[dst]) {
			s.vals[dst], s.keys[dst], s.seen[dst] = s.vals[src], k, true
		}
		return
	}
	v := s.vals[src]
	if !s.seen[dst] || (s.isMax && v > s.vals[dst]) || (!s.isMax && v < s.vals[dst]) {
		s.vals[dst], s.seen[dst] = v, true
	}
}

func (s *strMinMaxState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	return stringArray(alloc, s.dt, s.vals[:n], s.seen[:n])
}

func (s *strMinMaxState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	a, err := s.final(alloc, n)
	return []arrow.Array{a}, err
}

// stringArray builds a string-like array of type dt from Go strings.
func stringArray(alloc memory.Allocator, dt arrow.DataType, vals []string, valid []bool) (arrow.Array, error) {
	if expr.CollationOf(dt) != nil {
		s, err := stringArray(alloc, arrow.BinaryTypes.String, vals, valid)
		if err != nil {
			return nil, err
		}
		return expr.Collated(dt, s), nil
	}
	b := array.NewBuilder(alloc, dt)
	defer b.Release()
	b.Reserve(len(vals))
	switch x := b.(type) {
	case *array.StringBuilder:
		x.AppendValues(vals, valid)
	case *array.LargeStringBuilder:
		x.AppendValues(vals, valid)
	case *array.StringViewBuilder:
		x.AppendStringValues(vals, valid)
	case *array.BinaryBuilder:
		x.AppendStringValues(vals, valid)
	case *array.BinaryViewBuilder:
		x.AppendStringValues(vals, valid)
	default:
		return nil, fmt.Errorf("%w: aggregate values of the type %s: CAST the argument to a string or number", ErrNotImplemented, hive.SQLTypeName(dt))
	}
	return b.NewArray(), nil
}

// boolMinMaxState orders FALSE before TRUE by running the uint8 state over
// the booleans as 0/1 bytes.
type boolMinMaxState struct {
	inner minMaxState[uint8]
}

func (s *boolMinMaxState) grow(n int) { s.inner.grow(n) }

func (s *boolMinMaxState) bytes(arg arrow.Array) arrow.Array {
	b := arg.(*array.Boolean)
	vals := make([]uint8, b.Len())
	for i := range vals {
		if b.Value(i) {
			vals[i] = 1
		}
	}
	valid := make([]bool, b.Len())
	for i := range valid {
		valid[i] = expr.IsValid(b, i)
	}
	return fixedArray(memory.DefaultAllocator, arrow.PrimitiveTypes.Uint8, vals, valid)
}

func (s *boolMinMaxState) update(gids []int32, arg arrow.Array) error {
	a := s.bytes(arg)
	defer a.Release()
	return s.inner.update(gids, a)
}

func (s *boolMinMaxState) merge(gids []int32, cols []arrow.Array) error {
	return s.update(gids, cols[0])
}

func (s *boolMinMaxState) combine(dst, src int) { s.inner.combine(dst, src) }

func (s *boolMinMaxState) final(alloc memory.Allocator, n int) (arrow.Array, error) {
	vals := make([]bool, n)
	for g := range vals {
		vals[g] = s.inner.vals[g] == 1
	}
	return boolArray(alloc, vals, s.inner.seen[:n]), nil
}

func (s *boolMinMaxState) partial(alloc memory.Allocator, n int) ([]arrow.Array, error) {
	a, err := s.final(alloc, n)
	return []arrow.Array{a}, err
}
