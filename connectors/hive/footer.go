package hive

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/big"
	"os"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
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

// footerTail is how much of a file's end one read takes: the footers of
// most files fit, so one read finds the length, the magic and the footer
// (two for a file bigger than this: its first four bytes too).
const footerTail = 64 << 10

// maxFooterSize bounds the footer fsql reads: a length field claiming
// more is corrupt (a footer this big would describe millions of column
// chunks), and reading it would allocate whatever the field says.
const maxFooterSize = 256 << 20

// readFooterBytes checks the PAR1 magic at both ends of the file and
// returns the footer's bytes (without its length and magic). A text file
// in a table folder must say "not Parquet" and never have its bytes
// quoted back.
func readFooterBytes(f io.ReaderAt, path string, size int64) ([]byte, error) {
	notParquet := fmt.Errorf("%w: %s is not a Parquet file (%d bytes, without the PAR1 marker at its start and end); every file in a table folder must be Parquet except hidden ones (names starting with . or _) and .crc checksums: move it out or rename it",
		ErrNotParquet, path, size)
	// The smallest Parquet file is the magic, a 4-byte footer length and
	// the magic again, around a footer of at least a few bytes.
	if size < 12 {
		return nil, notParquet
	}
	var head [4]byte
	tail := make([]byte, min(size, footerTail))
	if _, err := f.ReadAt(tail, size-int64(len(tail))); err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrCorrupt, path, err)
	}
	if int64(len(tail)) == size {
		copy(head[:], tail)
	} else if _, err := f.ReadAt(head[:], 0); err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrCorrupt, path, err)
	}
	magic := string(tail[len(tail)-4:])
	switch {
	case string(head[:]) == parquetMagic && magic == encryptedMagic:
		return nil, fmt.Errorf("%w: %s is an encrypted Parquet file; fsql reads only plaintext footers", ErrUnsupported, path)
	case string(head[:]) != parquetMagic || magic != parquetMagic:
		return nil, notParquet
	}
	n := int64(le32(tail[len(tail)-8:]))
	switch {
	case n > size-12:
		return nil, fmt.Errorf("%w: %s is not a readable Parquet file: its footer length (%d bytes) exceeds the file (%d bytes)", ErrCorrupt, path, n, size)
	case n > maxFooterSize:
		return nil, fmt.Errorf("%w: %s has a footer of %d bytes, more than the %d fsql reads", ErrUnsupported, path, n, maxFooterSize)
	case n <= int64(len(tail))-8:
		return tail[int64(len(tail))-8-n : len(tail)-8], nil
	}
	raw := make([]byte, n)
	if _, err := f.ReadAt(raw, size-8-n); err != nil {
		return nil, fmt.Errorf("%w: reading %s: %w", ErrCorrupt, path, err)
	}
	return raw, nil
}

// chunkLoc is where one column chunk's pages are, and how to read them:
// kept from the footer so the scan never parses it again.
type chunkLoc struct {
	start, length int64 // the byte range of the chunk's pages
	numValues     int64
	codec         format.CompressionCodec
}

// footerSum identifies a footer's bytes: the reader compares it with the
// file it opens, which catches a rewrite that kept size and modification
// time (and a different footer) without decoding anything.
type footerSum struct {
	length int64
	crc    uint32
}

// readFooter reads the footer of one data file into a File with
// statistics and chunk locations, stamped with the size and modification
// time the file had while the footer was read.
func readFooter(path string) (*footer, error) {
	osf, stamp, err := openFile(path)
	if err != nil {
		return nil, err
	}
	defer osf.Close()
	raw, err := readFooterBytes(osf, path, stamp.size)
	if err != nil {
		return nil, err
	}
	out, err := fileFromFooter(path, stamp, raw)
	if err != nil {
		return nil, err
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

// fileFromFooter decodes a footer's bytes into a File: its columns, row
// groups with statistics, and where every column chunk is.
func fileFromFooter(path string, stamp fileStamp, raw []byte) (*File, error) {
	md, err := decodeFileMeta(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s is not a readable Parquet file: %w", ErrCorrupt, path, err)
	}
	if md.encrypted {
		return nil, fmt.Errorf("%w: %s has encrypted columns; fsql reads only plaintext Parquet", ErrUnsupported, path)
	}
	cols, err := schemaColumns(md.schema, path)
	if err != nil {
		return nil, err
	}
	out := &File{Path: path, Size: stamp.size, ModTime: time.Unix(0, stamp.mtime), NumRows: md.numRows, stamp: stamp, cols: cols,
		footer: footerSum{length: int64(len(raw)), crc: crc32.ChecksumIEEE(raw)}}
	if md.numRows < 0 {
		return nil, fmt.Errorf("%w: %s: the footer has a negative row count", ErrCorrupt, path)
	}
	leaves := numLeaves(cols)
	dataEnd := stamp.size - 8 - int64(len(raw)) // the pages end where the footer starts
	out.RowGroups = make([]RowGroup, 0, len(md.rowGroups))
	out.chunks = make([]chunkLoc, 0, len(md.rowGroups)*leaves)
	var total int64
	for ri := range md.rowGroups {
		rg := &md.rowGroups[ri]
		if len(rg.columns) != leaves {
			return nil, fmt.Errorf("%w: %s: row group %d has %d column chunks, the schema has %d leaf columns", ErrCorrupt, path, ri, len(rg.columns), leaves)
		}
		if rg.numRows < 0 || total+rg.numRows < total {
			return nil, fmt.Errorf("%w: %s: row group %d has a bad row count (%d)", ErrCorrupt, path, ri, rg.numRows)
		}
		for li := range rg.columns {
			loc, err := locate(path, ri, &rg.columns[li], dataEnd)
			if err != nil {
				return nil, err
			}
			out.chunks = append(out.chunks, loc)
		}
		g := RowGroup{NumRows: rg.numRows, Columns: make([]ColumnStats, len(cols))}
		for i := range cols {
			ci := &cols[i]
			if ci.unreadable != nil {
				// No statistics: nothing reads the column. Its bytes
				// still count towards the row group's.
				cs := ColumnStats{NullCount: -1}
				for _, c := range rg.columns[ci.leaf : ci.leaf+ci.leaves] {
					cs.Bytes += c.compressed
				}
				g.Columns[i] = cs
				g.Bytes += cs.Bytes
				continue
			}
			cm := &rg.columns[ci.leaf]
			if cm.typ != ci.phys {
				return nil, fmt.Errorf("%w: %s: column %s is %s in row group %d but %s in the schema", ErrCorrupt, path, ci.name, cm.typ, ri, ci.phys)
			}
			g.Columns[i] = columnStats(*ci, cm)
			g.Bytes += cm.compressed
		}
		total += rg.numRows
		out.RowGroups = append(out.RowGroups, g)
	}
	if total != md.numRows {
		return nil, fmt.Errorf("%w: %s: footer says %d rows but its row groups hold %d", ErrCorrupt, path, md.numRows, total)
	}
	return out, nil
}

// locate checks a column chunk's metadata and returns where its pages
// are: from the dictionary page when there is one (writers disagree on
// whether an absent one is 0 or missing; one past the data page is a
// known writer bug), for total_compressed_size bytes, all between the
// leading magic and the footer.
func locate(path string, rg int, c *chunkMeta, dataEnd int64) (chunkLoc, error) {
	switch {
	case !c.hasMeta:
		return chunkLoc{}, fmt.Errorf("%w: %s: a column chunk of row group %d has no metadata", ErrCorrupt, path, rg)
	case c.external != "":
		return chunkLoc{}, fmt.Errorf("%w: %s: row group %d keeps a column chunk in another file (%s)", ErrUnsupported, path, rg, c.external)
	case c.encrypted:
		return chunkLoc{}, fmt.Errorf("%w: %s has encrypted columns; fsql reads only plaintext Parquet", ErrUnsupported, path)
	}
	start := c.dataPageOffset
	if c.dictPageOffset > 0 && c.dictPageOffset < start {
		start = c.dictPageOffset
	}
	if start < 4 || c.compressed < 0 || c.compressed > dataEnd-start || c.numValues < 0 {
		return chunkLoc{}, fmt.Errorf("%w: %s: a column chunk of row group %d claims bytes [%d, %d+%d), outside the file's data [4, %d)",
			ErrCorrupt, path, rg, start, start, c.compressed, dataEnd)
	}
	return chunkLoc{start: start, length: c.compressed, numValues: c.numValues, codec: c.codec}, nil
}

// columnStats converts the footer statistics of one chunk. Only min_value /
// max_value are trusted for strings, byte-array decimals, fixed-length
// bytes and unsigned integers: the deprecated min/max fields were computed
// in signed order, wrong for them. INT96 statistics are never used (their
// order was never defined).
func columnStats(ci columnInfo, cm *chunkMeta) ColumnStats {
	st := &cm.stats
	cs := ColumnStats{NullCount: st.nullCount, Bytes: cm.compressed}
	known := len(st.minValue) > 0 || len(st.maxValue) > 0 || len(st.min) > 0 || len(st.max) > 0 || st.nullCount > 0
	if !ci.optional {
		cs.NullCount = 0
	} else if !known && cm.numValues > 0 {
		cs.NullCount = -1
	}
	lo, hi, ok := st.minValue, st.maxValue, st.hasMinV && st.hasMaxV
	if !ok {
		switch {
		case ci.kind == kindString, ci.kind == kindDecBytes, ci.kind == kindFixed, ci.kind == kindUUID, ci.unsigned:
			return cs
		}
		lo, hi, ok = st.min, st.max, st.hasMin && st.hasMax
	}
	if !ok {
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
