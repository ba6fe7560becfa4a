package hive

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// openFile opens path and returns its stamp, taken from the open file.
// The caller closes the file.
func openFile(path string) (*os.File, fileStamp, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fileStamp{}, fmt.Errorf("%w: opening %s: %w", ErrCorrupt, path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fileStamp{}, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	return f, stampOf(st), nil
}

// parquetMagic opens and ends every Parquet file; encryptedMagic ends one
// whose footer is encrypted.
const (
	parquetMagic   = "PAR1"
	encryptedMagic = "PARE"
)

// checkMagic tells a Parquet file from anything else by its first and last
// four bytes, before the footer parser sees it: a text file in a table
// folder must say "not Parquet" and never have its bytes quoted back.
func checkMagic(f *os.File, path string, size int64) error {
	notParquet := fmt.Errorf("%w: %s is not a Parquet file (%d bytes, without the PAR1 marker at its start and end); every file in a table folder must be Parquet except hidden ones (names starting with . or _) and .crc checksums: move it out or rename it",
		ErrNotParquet, path, size)
	// The smallest Parquet file is the magic, a 4-byte footer length and
	// the magic again, around a footer of at least a few bytes.
	if size < 12 {
		return notParquet
	}
	var head, tail [4]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return fmt.Errorf("%w: reading %s: %w", ErrCorrupt, path, err)
	}
	if _, err := f.ReadAt(tail[:], size-4); err != nil {
		return fmt.Errorf("%w: reading %s: %w", ErrCorrupt, path, err)
	}
	switch {
	case string(head[:]) == parquetMagic && string(tail[:]) == encryptedMagic:
		return fmt.Errorf("%w: %s is an encrypted Parquet file; fsql reads only plaintext footers", ErrUnsupported, path)
	case string(head[:]) != parquetMagic || string(tail[:]) != parquetMagic:
		return notParquet
	}
	return nil
}

// parseFooter parses the footer of an open file that passed checkMagic.
func parseFooter(f *os.File, path string, size int64) (*parquet.File, error) {
	pf, err := safeOpen(f, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a readable Parquet file: %w", ErrCorrupt, path, err)
	}
	return pf, nil
}

// safeOpen guards parquet-go's footer parsing: a damaged file must become an
// error, never a panic in the caller's goroutine.
func safeOpen(f *os.File, size int64) (pf *parquet.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			pf, err = nil, fmt.Errorf("footer parse failed: %v", r)
		}
	}()
	return parquet.OpenFile(f, size, parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
}

// readFooter reads the footer of one data file into a File with
// statistics, stamped with the size and modification time the file had
// while the footer was read.
func readFooter(path string) (*footer, error) {
	osf, stamp, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer osf.Close()
	if err := checkMagic(osf, path, stamp.size); err != nil {
		return nil, err
	}
	pf, err := parseFooter(osf, path, stamp.size)
	if err != nil {
		return nil, err
	}
	md := pf.Metadata()
	cols, err := schemaColumns(md, path)
	if err != nil {
		return nil, err
	}
	out := &File{Path: path, Size: stamp.size, ModTime: time.Unix(0, stamp.mtime), NumRows: md.NumRows, stamp: stamp, cols: cols}
	leaves := numLeaves(cols)
	var total int64
	for ri, rg := range md.RowGroups {
		if len(rg.Columns) != leaves {
			return nil, fmt.Errorf("%w: %s: row group %d has %d column chunks, the schema has %d leaf columns", ErrCorrupt, path, ri, len(rg.Columns), leaves)
		}
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("%w: %s: row group %d has a negative row count", ErrCorrupt, path, ri)
		}
		g := RowGroup{NumRows: rg.NumRows, Columns: make([]ColumnStats, len(cols))}
		for i := range cols {
			ci := &cols[i]
			if ci.unreadable != nil {
				// No statistics: nothing reads the column. Its bytes
				// still count towards the row group's.
				cs := ColumnStats{NullCount: -1}
				for _, c := range rg.Columns[ci.leaf : ci.leaf+ci.leaves] {
					cs.Bytes += c.MetaData.TotalCompressedSize
				}
				g.Columns[i] = cs
				g.Bytes += cs.Bytes
				continue
			}
			cm := &rg.Columns[ci.leaf].MetaData
			if cm.Type != ci.phys {
				return nil, fmt.Errorf("%w: %s: column %s is %s in row group %d but %s in the schema", ErrCorrupt, path, ci.name, cm.Type, ri, ci.phys)
			}
			g.Columns[i] = columnStats(*ci, cm)
			g.Bytes += cm.TotalCompressedSize
		}
		total += rg.NumRows
		out.RowGroups = append(out.RowGroups, g)
	}
	if total != md.NumRows {
		return nil, fmt.Errorf("%w: %s: footer says %d rows but its row groups hold %d", ErrCorrupt, path, md.NumRows, total)
	}
	// A writer still at work (or a copy in progress) changes the file
	// under the parser; a footer read across two versions is no footer.
	if st, err := osf.Stat(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	} else if now := stampOf(st); now != stamp {
		return nil, checkStamp(out, now, "while its footer was read")
	}
	return &footer{stamp: stamp, file: out}, nil
}

// columnStats converts the footer statistics of one chunk. Only min_value /
// max_value are trusted for strings, byte-array decimals, fixed-length
// bytes and unsigned integers: the deprecated min/max fields were computed
// in signed order, wrong for them. INT96 statistics are never used (their
// order was never defined).
func columnStats(ci columnInfo, cm *format.ColumnMetaData) ColumnStats {
	st := &cm.Statistics
	cs := ColumnStats{NullCount: st.NullCount, Bytes: cm.TotalCompressedSize}
	known := len(st.MinValue) > 0 || len(st.MaxValue) > 0 || len(st.Min) > 0 || len(st.Max) > 0 || st.NullCount > 0
	if !ci.optional {
		cs.NullCount = 0
	} else if !known && cm.NumValues > 0 {
		cs.NullCount = -1
	}
	lo, hi := st.MinValue, st.MaxValue
	if lo == nil || hi == nil {
		switch {
		case ci.kind == kindString, ci.kind == kindDecBytes, ci.kind == kindFixed, ci.kind == kindUUID, ci.unsigned:
			return cs
		}
		lo, hi = st.Min, st.Max
	}
	if lo == nil || hi == nil {
		return cs
	}
	mn, ok1 := decodeStat(ci, lo, false)
	mx, ok2 := decodeStat(ci, hi, true)
	if ok1 && ok2 {
		cs.HasMinMax, cs.Min, cs.Max = true, mn, mx
	}
	return cs
}

// decodeStat decodes one PLAIN-encoded statistics value as a Go value of
// the column's Arrow type. A maximum of nanoseconds scaled to microseconds
// rounds up, a minimum down, so the range still holds every value.
func decodeStat(ci columnInfo, b []byte, isMax bool) (any, bool) {
	switch ci.kind {
	case kindInt32, kindDecInt32, kindInt32To64:
		if len(b) != 4 {
			return nil, false
		}
		v := int32(binary.LittleEndian.Uint32(b))
		switch {
		case ci.kind == kindDecInt32:
			return decimal128.FromI64(int64(v)), true
		case ci.kind == kindInt32To64 && ci.unsigned:
			return int64(uint32(v)), true
		case ci.kind == kindInt32To64:
			return arrow.Time64(int64(v) * ci.mul), true
		case ci.arrow.ID() == arrow.DATE32:
			return arrow.Date32(v), true
		}
		return v, true
	case kindInt64, kindDecInt64:
		if len(b) != 8 {
			return nil, false
		}
		v := int64(binary.LittleEndian.Uint64(b))
		if ci.kind == kindDecInt64 {
			return decimal128.FromI64(v), true
		}
		switch {
		case ci.mul > 0:
			v *= ci.mul
		case ci.div > 0:
			q := v / ci.div
			if r := v % ci.div; r != 0 && (r > 0) == isMax {
				if isMax {
					q++
				} else {
					q--
				}
			}
			v = q
		}
		switch ci.arrow.ID() {
		case arrow.UINT64:
			return uint64(v), true
		case arrow.TIMESTAMP:
			return arrow.Timestamp(v), true
		case arrow.TIME64:
			return arrow.Time64(v), true
		}
		return v, true
	case kindDouble:
		if len(b) != 8 {
			return nil, false
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(b))
		return v, !math.IsNaN(v)
	case kindFloat:
		if len(b) != 4 {
			return nil, false
		}
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))
		return v, !math.IsNaN(v)
	case kindBool:
		if len(b) != 1 {
			return nil, false
		}
		return b[0] != 0, true
	case kindString, kindFixed:
		return string(b), true
	case kindUUID:
		if len(b) != 16 {
			return nil, false
		}
		return string(appendUUID(nil, b)), true
	case kindDecBytes:
		if len(b) == 0 || len(b) > 16 {
			return nil, false
		}
		return decimalFromBigEndian(b), true
	}
	return nil, false
}

// decimalFromBigEndian reads a big-endian two's-complement integer of up to
// 16 bytes, the DECIMAL encoding of byte-array columns.
func decimalFromBigEndian(b []byte) decimal128.Num {
	if len(b) > 16 {
		// Cannot fit; callers check, but never index out of range.
		return decimal128.FromBigInt(new(big.Int).SetBytes(b[len(b)-16:]))
	}
	var hi, lo uint64
	neg := len(b) > 0 && b[0]&0x80 != 0
	if neg {
		hi, lo = math.MaxUint64, math.MaxUint64
	}
	for _, c := range b {
		hi = hi<<8 | lo>>56
		lo = lo<<8 | uint64(c)
	}
	return decimal128.New(int64(hi), lo)
}
