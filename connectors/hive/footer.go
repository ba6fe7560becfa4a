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
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// decodeKind says how the values of one Parquet column become Arrow values.
type decodeKind int

const (
	kindInt32    decodeKind = iota // INT32 → Int32 or Date32
	kindInt64                      // INT64 → Int64
	kindDouble                     // DOUBLE → Float64
	kindFloat                      // FLOAT → Float64
	kindBool                       // BOOLEAN → Boolean
	kindString                     // BYTE_ARRAY → String
	kindDecInt32                   // DECIMAL on INT32 → Decimal128
	kindDecInt64                   // DECIMAL on INT64 → Decimal128
	kindDecBytes                   // DECIMAL on FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY (big-endian) → Decimal128
)

// columnInfo is what the reader needs to know about one file column.
type columnInfo struct {
	name     string
	arrow    arrow.DataType
	phys     format.Type
	kind     decodeKind
	optional bool
}

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
	out := &File{Path: path, Size: stamp.size, ModTime: time.Unix(0, stamp.mtime), NumRows: md.NumRows, stamp: stamp}
	var total int64
	for ri, rg := range md.RowGroups {
		if len(rg.Columns) != len(cols) {
			return nil, fmt.Errorf("%w: %s: row group %d has %d column chunks, the schema has %d columns", ErrCorrupt, path, ri, len(rg.Columns), len(cols))
		}
		if rg.NumRows < 0 {
			return nil, fmt.Errorf("%w: %s: row group %d has a negative row count", ErrCorrupt, path, ri)
		}
		g := RowGroup{NumRows: rg.NumRows, Columns: make([]ColumnStats, len(cols))}
		for ci := range rg.Columns {
			cm := &rg.Columns[ci].MetaData
			if cm.Type != cols[ci].phys {
				return nil, fmt.Errorf("%w: %s: column %s is %s in row group %d but %s in the schema", ErrCorrupt, path, cols[ci].name, cm.Type, ri, cols[ci].phys)
			}
			g.Columns[ci] = columnStats(cols[ci], cm)
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
	return &footer{stamp: stamp, file: out, cols: cols}, nil
}

// schemaColumns maps a flat Parquet schema to Arrow types.
func schemaColumns(md *format.FileMetaData, path string) ([]columnInfo, error) {
	if len(md.Schema) == 0 {
		return nil, fmt.Errorf("%w: %s has an empty schema", ErrCorrupt, path)
	}
	n, _ := md.Schema[0].NumChildren.Get()
	if int(n) != len(md.Schema)-1 {
		return nil, fmt.Errorf("%w: %s has nested columns; fsql reads flat tables only", ErrUnsupported, path)
	}
	cols := make([]columnInfo, 0, n)
	for _, el := range md.Schema[1:] {
		ci, err := mapColumn(&el)
		if err != nil {
			return nil, fmt.Errorf("%w: column %s of %s: %w", ErrUnsupported, el.Name, path, err)
		}
		cols = append(cols, ci)
	}
	return cols, nil
}

func mapColumn(el *format.SchemaElement) (columnInfo, error) {
	ci := columnInfo{name: el.Name}
	if nc, ok := el.NumChildren.Get(); ok && nc > 0 {
		return ci, fmt.Errorf("nested (group) columns are not supported")
	}
	phys, ok := el.Type.Get()
	if !ok {
		return ci, fmt.Errorf("no physical type")
	}
	ci.phys = phys
	rep, _ := el.RepetitionType.Get()
	switch rep {
	case format.Required:
	case format.Optional:
		ci.optional = true
	default:
		return ci, fmt.Errorf("repeated columns are not supported")
	}
	conv, hasConv := el.ConvertedType.Get()
	logical := el.LogicalType.Value
	precision, scale, isDecimal := 0, 0, false
	if d, ok := logical.(*format.DecimalType); ok && d != nil {
		precision, scale, isDecimal = int(d.Precision), int(d.Scale), true
	} else if hasConv && conv == deprecated.Decimal {
		p, _ := el.Precision.Get()
		s, _ := el.Scale.Get()
		precision, scale, isDecimal = int(p), int(s), true
	}
	_, isDate := logical.(*format.DateType)
	isDate = isDate || (hasConv && conv == deprecated.Date)
	if isDecimal {
		if precision < 1 || precision > 38 || scale < 0 || scale > precision {
			return ci, fmt.Errorf("DECIMAL(%d,%d) is outside what Decimal128 holds", precision, scale)
		}
		ci.arrow = &arrow.Decimal128Type{Precision: int32(precision), Scale: int32(scale)}
		switch phys {
		case format.Int32:
			ci.kind = kindDecInt32
		case format.Int64:
			ci.kind = kindDecInt64
		case format.FixedLenByteArray, format.ByteArray:
			if l, ok := el.TypeLength.Get(); phys == format.FixedLenByteArray && (!ok || l < 1 || l > 16) {
				return ci, fmt.Errorf("DECIMAL stored in %d-byte FIXED_LEN_BYTE_ARRAY", l)
			}
			ci.kind = kindDecBytes
		default:
			return ci, fmt.Errorf("DECIMAL stored as %s", phys)
		}
		return ci, nil
	}
	if logical != nil {
		switch lt := logical.(type) {
		case *format.DateType, *format.StringType, *format.EnumType:
		case *format.IntType:
			if !lt.IsSigned {
				return ci, fmt.Errorf("unsigned integers are not supported")
			}
		default:
			return ci, fmt.Errorf("logical type %s is not supported", logical)
		}
	} else if hasConv {
		switch conv {
		case deprecated.UTF8, deprecated.Enum, deprecated.Date, deprecated.Int8, deprecated.Int16, deprecated.Int32, deprecated.Int64:
		default:
			return ci, fmt.Errorf("converted type %d is not supported", conv)
		}
	}
	switch phys {
	case format.Int32:
		ci.kind, ci.arrow = kindInt32, arrow.PrimitiveTypes.Int32
		if isDate {
			ci.arrow = arrow.FixedWidthTypes.Date32
		}
	case format.Int64:
		ci.kind, ci.arrow = kindInt64, arrow.PrimitiveTypes.Int64
	case format.Double:
		ci.kind, ci.arrow = kindDouble, arrow.PrimitiveTypes.Float64
	case format.Float:
		ci.kind, ci.arrow = kindFloat, arrow.PrimitiveTypes.Float64
	case format.Boolean:
		ci.kind, ci.arrow = kindBool, arrow.FixedWidthTypes.Boolean
	case format.ByteArray:
		ci.kind, ci.arrow = kindString, arrow.BinaryTypes.String
	default:
		return ci, fmt.Errorf("physical type %s is not supported", phys)
	}
	if isDate && phys != format.Int32 {
		return ci, fmt.Errorf("DATE stored as %s", phys)
	}
	return ci, nil
}

// sameSchema checks that file b has the same columns as file a.
func sameSchema(a []columnInfo, pathA string, b []columnInfo, pathB string) error {
	for i := 0; i < max(len(a), len(b)); i++ {
		switch {
		case i >= len(a):
			return fmt.Errorf("%w: %s has extra column %s that %s lacks", ErrCorrupt, pathB, b[i].name, pathA)
		case i >= len(b):
			return fmt.Errorf("%w: %s lacks column %s that %s has", ErrCorrupt, pathB, a[i].name, pathA)
		case a[i].name != b[i].name:
			return fmt.Errorf("%w: %s has column %s where %s has %s (column %d)", ErrCorrupt, pathB, b[i].name, pathA, a[i].name, i+1)
		case !sameType(a[i], b[i]):
			return fmt.Errorf("%w: column %s is %s (Parquet %s) in %s but %s (Parquet %s) in %s", ErrCorrupt, a[i].name,
				b[i].arrow, b[i].phys, pathB, a[i].arrow, a[i].phys, pathA)
		}
	}
	return nil
}

// sameType compares two mapped columns without reflection (what
// arrow.TypeEqual uses): every view of a table compares each file's
// columns with the first file's, thousands of files per query.
func sameType(a, b columnInfo) bool {
	if a.kind != b.kind || a.arrow.ID() != b.arrow.ID() {
		return false
	}
	if da, ok := a.arrow.(*arrow.Decimal128Type); ok {
		db := b.arrow.(*arrow.Decimal128Type)
		return da.Precision == db.Precision && da.Scale == db.Scale
	}
	return true
}

// columnStats converts the footer statistics of one chunk. Only min_value /
// max_value are trusted for strings and byte-array decimals: the deprecated
// min/max fields were computed with signed byte order, wrong for them.
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
		if ci.kind == kindString || ci.kind == kindDecBytes {
			return cs
		}
		lo, hi = st.Min, st.Max
	}
	if lo == nil || hi == nil {
		return cs
	}
	mn, ok1 := decodeStat(ci, lo)
	mx, ok2 := decodeStat(ci, hi)
	if ok1 && ok2 {
		cs.HasMinMax, cs.Min, cs.Max = true, mn, mx
	}
	return cs
}

// decodeStat decodes one PLAIN-encoded statistics value.
func decodeStat(ci columnInfo, b []byte) (any, bool) {
	switch ci.kind {
	case kindInt32, kindDecInt32:
		if len(b) != 4 {
			return nil, false
		}
		v := int32(binary.LittleEndian.Uint32(b))
		switch {
		case ci.kind == kindDecInt32:
			return decimal128.FromI64(int64(v)), true
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
	case kindString:
		return string(b), true
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
