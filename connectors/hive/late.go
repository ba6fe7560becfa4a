package hive

import (
	"fmt"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/bitutil"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// RowFilter is a row filter the reader applies between decoding the
// columns it tests and decoding the others (late materialisation): a
// dynamic filter on a fact table's join keys keeps a few percent of the
// rows (q7 keeps 1.2% of store_sales' rows on ss_cdemo_sk), and decoding
// every other column of every row, only to drop most of them, was most
// of such a scan. The filter's own columns are tested one at a time, each
// decoded only for the rows the ones before it kept: q96 tests three keys
// of store_sales, and the first keeps 2% of the rows.
type RowFilter interface {
	// Columns are the positions in ScanOptions.Columns the filter reads,
	// in the order to test them; the reader asks once per batch, so the
	// order may change between batches.
	Columns() []int
	// Select tests the filter of the j-th column of Columns on col, which
	// holds the rows of the batch every earlier column kept (all of them
	// for j = 0), and returns the positions in col of the rows it keeps,
	// ascending; all reports that it keeps every row (keep is then
	// ignored). keep is valid until the next call.
	Select(j int, col arrow.Array) (keep []int32, all bool, err error)
	// Take returns a new array of a's rows at sel; a stays the caller's.
	Take(a arrow.Array, sel []int32) (arrow.Array, error)
}

// Filtered reports whether the batches Next returns are already filtered
// by ScanOptions.Filter (a Parquet file); otherwise the caller filters.
func (r *FileReader) Filtered() bool { return r.opts.Filter != nil && r.osf != nil }

// nextFiltered reads the next n rows: the filter's columns first, each
// for the rows the ones before it kept, then only the surviving rows of
// the others. It returns (nil, nil) when no row survives; those rows are
// skipped in every other column.
func (r *FileReader) nextFiltered(n int) (arrow.RecordBatch, error) {
	f := r.opts.Filter
	fc := f.Columns()
	cols := make([]arrow.Array, len(r.decoders))
	release := func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}
	isFilter := make([]bool, len(r.decoders))
	for _, i := range fc {
		if i < 0 || i >= len(r.decoders) || isFilter[i] {
			return nil, fmt.Errorf("row filter column #%d out of range for %d columns, or named twice", i, len(r.decoders))
		}
		isFilter[i] = true
	}
	r.rgLeft -= int64(n)
	// sel: the rows of the n kept so far, unless all.
	sel, all := r.lateSel[:0], true
	for j, i := range fc {
		a, err := r.readKept(i, n, sel, all)
		if err != nil {
			release()
			return nil, err
		}
		cols[i] = a
		keep, keepAll, err := f.Select(j, a)
		if err != nil {
			release()
			return nil, err
		}
		if keepAll {
			continue
		}
		if len(keep) == 0 {
			release()
			for k, d := range r.decoders {
				if d != nil && (!isFilter[k] || slices.Index(fc, k) > j) {
					if err := d.skip(n); err != nil {
						return nil, r.columnErr(d, err)
					}
				}
			}
			return nil, nil
		}
		if all {
			sel = append(sel, keep...)
		} else {
			for k, p := range keep {
				sel[k] = sel[p]
			}
			sel = sel[:len(keep)]
		}
		all = false
		// The columns tested so far keep only the rows kept now.
		for _, k := range fc[:j+1] {
			t, err := f.Take(cols[k], keep)
			if err != nil {
				release()
				return nil, err
			}
			cols[k].Release()
			cols[k] = t
		}
	}
	r.lateSel = sel
	m := n
	if !all {
		m = len(sel)
	}
	for i := range r.decoders {
		if isFilter[i] {
			continue
		}
		a, err := r.readKept(i, n, sel, all)
		if err != nil {
			release()
			return nil, err
		}
		cols[i] = a
	}
	rec := array.NewRecordBatch(r.schema, cols, int64(m))
	release()
	return rec, nil
}

// readKept decodes the next n rows of output column i and returns the
// rows at sel (every row when all).
func (r *FileReader) readKept(i, n int, sel []int32, all bool) (arrow.Array, error) {
	if all {
		return r.readColumn(i, n)
	}
	d := r.decoders[i]
	if d == nil {
		return r.constantArray(i, len(sel)), nil
	}
	// A selective gather pays a little per kept row to save the whole
	// decode; past half the rows kept, decoding all and taking is as
	// cheap.
	if 2*len(sel) <= n && r.widen[i] == nil && d.canSelect() {
		a, err := d.readSelected(n, sel)
		if err != nil {
			return nil, r.columnErr(d, err)
		}
		return a, nil
	}
	a, err := r.readColumn(i, n)
	if err != nil {
		return nil, err
	}
	t, err := r.opts.Filter.Take(a, sel)
	a.Release()
	return t, err
}

// skip passes over the next n rows of the chunk without building them.
func (d *columnDecoder) skip(n int) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("decoding failed: %v", p)
		}
	}()
	for n > 0 {
		if d.pos == d.rows {
			if err := d.nextPage(); err != nil {
				return err
			}
			continue
		}
		k := min(n, d.rows-d.pos)
		if d.def != nil {
			d.vpos += countOnes(d.def[d.pos : d.pos+k])
		} else {
			d.vpos += k
		}
		d.pos += k
		n -= k
	}
	return nil
}

// canSelect reports whether readSelected handles the column's kind: the
// fixed-width ones a fact table's measures and keys are.
func (d *columnDecoder) canSelect() bool {
	switch d.info.kind {
	case kindInt32, kindDouble, kindDecInt32, kindDecInt64:
		return true
	case kindInt64:
		return d.info.mul <= 0 && d.info.div <= 0
	}
	return false
}

// readSelected decodes the next n rows of the chunk but builds only the
// rows at sel (ascending, each below n): one array of len(sel) rows.
func (d *columnDecoder) readSelected(n int, sel []int32) (arr arrow.Array, err error) {
	var validity, data *memory.Buffer
	defer func() {
		if p := recover(); p != nil {
			arr, err = nil, fmt.Errorf("decoding failed: %v", p)
		}
		if err != nil {
			for _, b := range []*memory.Buffer{validity, data} {
				if b != nil {
					b.Release()
				}
			}
		}
	}()
	m := len(sel)
	var vbits []byte
	if d.info.optional {
		validity = newOut(d.alloc, int(bitutil.BytesForBits(int64(m))), false).b
		vbits = validity.Bytes()
	}
	width := 8
	if d.info.kind == kindInt32 {
		width = 4
	} else if d.info.kind == kindDecInt32 || d.info.kind == kindDecInt64 {
		width = 16
	}
	data = newOut(d.alloc, m*width, true).b
	nulls := 0
	base, si := 0, 0 // batch row of d.pos; next entry of sel
	for base < n {
		if d.pos == d.rows {
			if err := d.nextPage(); err != nil {
				return nil, err
			}
			continue
		}
		k := min(n-base, d.rows-d.pos)
		var def []byte
		if d.def != nil {
			def = d.def[d.pos : d.pos+k]
		}
		sj := si
		for sj < m && int(sel[sj]) < base+k {
			sj++
		}
		if sj > si {
			rows := sel[si:sj]
			switch d.info.kind {
			case kindInt32:
				dst := arrow.Int32Traits.CastFromBytes(data.Bytes())[si:sj]
				gatherSelected(dst, d.vals.i32, d.idx, d.vpos, def, rows, base)
			case kindInt64:
				dst := arrow.Int64Traits.CastFromBytes(data.Bytes())[si:sj]
				gatherSelected(dst, d.vals.i64, d.idx, d.vpos, def, rows, base)
			case kindDouble:
				dst := arrow.Float64Traits.CastFromBytes(data.Bytes())[si:sj]
				gatherSelected(dst, d.vals.f64, d.idx, d.vpos, def, rows, base)
			case kindDecInt32:
				s32 := grow(d.scratch32, sj-si)
				d.scratch32 = s32
				gatherSelected(s32, d.vals.i32, d.idx, d.vpos, def, rows, base)
				widenDecimals(arrow.Uint64Traits.CastFromBytes(data.Bytes())[2*si:2*sj], s32)
			case kindDecInt64:
				s64 := grow(d.scratch64, sj-si)
				d.scratch64 = s64
				gatherSelected(s64, d.vals.i64, d.idx, d.vpos, def, rows, base)
				widenDecimals(arrow.Uint64Traits.CastFromBytes(data.Bytes())[2*si:2*sj], s64)
			default:
				return nil, fmt.Errorf("selective decoding of %s", d.info.arrow)
			}
			if vbits != nil {
				for t, r := range rows {
					if def == nil || def[int(r)-base] == 1 {
						bitutil.SetBit(vbits, si+t)
					} else {
						nulls++
					}
				}
			}
		}
		if def != nil {
			d.vpos += countOnes(def)
		} else {
			d.vpos += k
		}
		d.pos += k
		base += k
		si = sj
	}
	if si != m {
		return nil, fmt.Errorf("selection past the batch's %d rows", n)
	}
	if nulls == 0 && validity != nil {
		validity.Release()
		validity = nil
	}
	bufs := []*memory.Buffer{validity, data}
	ad := array.NewData(d.info.arrow, m, bufs, nil, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	validity, data = nil, nil
	arr = array.MakeFromData(ad)
	ad.Release()
	return arr, nil
}

// gatherSelected writes the values of batch rows rows (ascending, from
// base, the batch row of def[0]) into dst, the zero value for a NULL row.
// vpos is the page's value (or index) of def[0]'s row.
func gatherSelected[T any](dst, src []T, idx []int32, vpos int, def []byte, rows []int32, base int) {
	if def == nil {
		for i, r := range rows {
			j := vpos + int(r) - base
			if idx != nil {
				j = int(idx[j])
			}
			dst[i] = src[j]
		}
		return
	}
	var zero T
	used, p := 0, 0 // present values in def[:p]
	for i, r := range rows {
		q := int(r) - base
		used += countOnes(def[p:q])
		p = q
		if def[q] != 1 {
			dst[i] = zero
			continue
		}
		j := vpos + used
		if idx != nil {
			j = int(idx[j])
		}
		dst[i] = src[j]
	}
}

// widenDecimals writes integers as Decimal128 values, low word then the
// sign-extended high word.
func widenDecimals[T int32 | int64](dst []uint64, src []T) {
	for i, v := range src {
		x := int64(v)
		dst[2*i] = uint64(x)
		dst[2*i+1] = uint64(x >> 63)
	}
}
