package hive

import (
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// The parts of Parquet's FileMetaData fsql reads (parquet.thrift), decoded
// by compactReader. Everything else (key-value metadata, sorting columns,
// page and bloom filter offsets, encoding statistics, size and geospatial
// statistics, column orders) is skipped: fsql reads none of it.
//
// Schema elements are decoded into parquet-go's format.SchemaElement, so
// the type mapping (types.go) reads the same structure whichever decoder
// produced it; the row groups, read for every file of every table, are
// fsql's own smaller structs.

// fileMeta is a decoded footer.
type fileMeta struct {
	schema    []format.SchemaElement
	numRows   int64
	rowGroups []rowGroupMeta
	// encrypted is set when the footer carries an encryption algorithm (a
	// plaintext footer of an encrypted file, whose columns fsql cannot
	// read).
	encrypted bool
}

type rowGroupMeta struct {
	numRows int64
	columns []chunkMeta
}

// chunkMeta is one column chunk's metadata: where its pages are, how they
// are compressed, and its statistics.
type chunkMeta struct {
	typ            format.Type
	codec          format.CompressionCodec
	numValues      int64
	compressed     int64 // total_compressed_size: the chunk's bytes in the file
	dataPageOffset int64
	dictPageOffset int64 // 0: no dictionary page
	stats          chunkStats
	// external is the file_path of a chunk stored in another file, and
	// encrypted says the chunk is encrypted; fsql reads neither.
	external  string
	encrypted bool
	hasMeta   bool
}

// chunkStats are a chunk's statistics as written. Min and max alias the
// footer's bytes until columnStats converts them.
type chunkStats struct {
	max, min           []byte // deprecated, signed order
	maxValue, minValue []byte // column order
	hasMax, hasMin     bool
	hasMaxV, hasMinV   bool
	nullCount          int64
}

// errThrift marks a footer or page header that does not decode; callers
// wrap it with ErrCorrupt and the file's name.
var errThrift = errors.New("malformed thrift metadata")

// decodeFileMeta decodes a FileMetaData struct that fills b exactly.
func decodeFileMeta(b []byte) (*fileMeta, error) {
	r := &compactReader{b: b}
	md := &fileMeta{}
	var haveSchema, haveRows, haveGroups bool
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 2: // schema
			n, elem := r.listHeader(typ)
			if elem != tStruct && n > 0 {
				r.failf("schema elements have wire type %d", elem)
				return
			}
			md.schema = make([]format.SchemaElement, n)
			for i := 0; i < n && r.err == nil; i++ {
				decodeSchemaElement(r, &md.schema[i])
			}
			haveSchema = true
		case 3: // num_rows
			md.numRows, haveRows = r.integer(typ), true
		case 4: // row_groups
			n, elem := r.listHeader(typ)
			if elem != tStruct && n > 0 {
				r.failf("row groups have wire type %d", elem)
				return
			}
			md.rowGroups = make([]rowGroupMeta, n)
			for i := 0; i < n && r.err == nil; i++ {
				decodeRowGroup(r, &md.rowGroups[i])
			}
			haveGroups = true
		case 8: // encryption_algorithm
			md.encrypted = true
			r.skip(typ)
		default:
			r.skip(typ)
		}
	})
	switch {
	case r.err != nil:
		return nil, fmt.Errorf("%w: %w", errThrift, r.err)
	case r.pos != len(b):
		return nil, fmt.Errorf("%w: %d bytes after the file metadata", errThrift, len(b)-r.pos)
	case !haveSchema || !haveRows || !haveGroups:
		return nil, fmt.Errorf("%w: the file metadata lacks its schema, row count or row groups", errThrift)
	}
	return md, nil
}

func decodeSchemaElement(r *compactReader, el *format.SchemaElement) {
	var haveName bool
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 1:
			el.Type = thrift.New(format.Type(r.int32Field(typ)))
		case 2:
			el.TypeLength = thrift.New(r.int32Field(typ))
		case 3:
			el.RepetitionType = thrift.New(format.FieldRepetitionType(r.int32Field(typ)))
		case 4:
			el.Name, haveName = r.str(typ), true
		case 5:
			el.NumChildren = thrift.New(r.int32Field(typ))
		case 6:
			el.ConvertedType = thrift.New(deprecated.ConvertedType(r.int32Field(typ)))
		case 7:
			el.Scale = thrift.New(r.int32Field(typ))
		case 8:
			el.Precision = thrift.New(r.int32Field(typ))
		case 9:
			el.FieldID = r.int32Field(typ)
		case 10:
			if r.expectStruct(typ) {
				el.LogicalType = decodeLogicalType(r)
			}
		default:
			r.skip(typ)
		}
	})
	if !haveName && r.err == nil {
		r.failf("schema element without a name")
	}
}

// unknownLogicalType stands for a logical type newer than fsql, so the
// column is refused by name rather than read as its physical type.
type unknownLogicalType struct{ id int16 }

func (u *unknownLogicalType) FieldID() int16 { return u.id }
func (u *unknownLogicalType) String() string { return fmt.Sprintf("logical type #%d", u.id) }

// decodeLogicalType decodes the LogicalType union: one field, whose id
// says the type.
func decodeLogicalType(r *compactReader) format.LogicalType {
	var lt format.LogicalType
	r.readStruct(func(id int16, typ byte) {
		if typ != tStruct {
			r.failf("logical type member has wire type %d", typ)
			return
		}
		switch id {
		case 1:
			lt.Value = &format.StringType{}
		case 2:
			lt.Value = &format.MapType{}
		case 3:
			lt.Value = &format.ListType{}
		case 4:
			lt.Value = &format.EnumType{}
		case 5:
			d := &format.DecimalType{}
			r.readStruct(func(id int16, typ byte) {
				switch id {
				case 1:
					d.Scale = r.int32Field(typ)
				case 2:
					d.Precision = r.int32Field(typ)
				default:
					r.skip(typ)
				}
			})
			lt.Value = d
			return
		case 6:
			lt.Value = &format.DateType{}
		case 7, 8:
			adjusted, unit := decodeTimeType(r)
			if id == 7 {
				lt.Value = &format.TimeType{IsAdjustedToUTC: adjusted, Unit: unit}
			} else {
				lt.Value = &format.TimestampType{IsAdjustedToUTC: adjusted, Unit: unit}
			}
			return
		case 10:
			t := &format.IntType{}
			r.readStruct(func(id int16, typ byte) {
				switch id {
				case 1:
					t.BitWidth = int8(r.integer(typ))
				case 2:
					t.IsSigned = r.boolField(typ)
				default:
					r.skip(typ)
				}
			})
			lt.Value = t
			return
		case 11:
			lt.Value = &format.NullType{}
		case 12:
			lt.Value = &format.JsonType{}
		case 13:
			lt.Value = &format.BsonType{}
		case 14:
			lt.Value = &format.UUIDType{}
		case 15:
			lt.Value = &format.Float16Type{}
		case 16:
			lt.Value = &format.VariantType{}
		case 17:
			lt.Value = &format.GeometryType{}
		case 18:
			lt.Value = &format.GeographyType{}
		default:
			lt.Value = &unknownLogicalType{id: id}
		}
		r.skipStruct()
	})
	return lt
}

// decodeTimeType reads TimeType and TimestampType: isAdjustedToUTC, then
// the unit union.
func decodeTimeType(r *compactReader) (bool, format.TimeUnit) {
	var adjusted bool
	var unit format.TimeUnit
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 1:
			adjusted = r.boolField(typ)
		case 2:
			if !r.expectStruct(typ) {
				return
			}
			r.readStruct(func(id int16, typ byte) {
				switch id {
				case 1:
					unit.Value = &format.MilliSeconds{}
				case 2:
					unit.Value = &format.MicroSeconds{}
				case 3:
					unit.Value = &format.NanoSeconds{}
				}
				r.skip(typ)
			})
		default:
			r.skip(typ)
		}
	})
	return adjusted, unit
}

func decodeRowGroup(r *compactReader, rg *rowGroupMeta) {
	var haveRows bool
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 1: // columns
			n, elem := r.listHeader(typ)
			if elem != tStruct && n > 0 {
				r.failf("column chunks have wire type %d", elem)
				return
			}
			rg.columns = make([]chunkMeta, n)
			for i := 0; i < n && r.err == nil; i++ {
				decodeColumnChunk(r, &rg.columns[i])
			}
		case 3: // num_rows
			rg.numRows, haveRows = r.integer(typ), true
		default:
			r.skip(typ)
		}
	})
	if !haveRows && r.err == nil {
		r.failf("row group without a row count")
	}
}

func decodeColumnChunk(r *compactReader, c *chunkMeta) {
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 1: // file_path
			c.external = r.str(typ)
		case 3: // meta_data
			if r.expectStruct(typ) {
				decodeColumnMeta(r, c)
			}
		case 8, 9: // crypto_metadata, encrypted_column_metadata
			c.encrypted = true
			r.skip(typ)
		default:
			r.skip(typ)
		}
	})
}

func decodeColumnMeta(r *compactReader, c *chunkMeta) {
	const (
		haveType = 1 << iota
		haveCodec
		haveValues
		haveSize
		haveOffset
		haveAll = haveType | haveCodec | haveValues | haveSize | haveOffset
	)
	var have int
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 1:
			c.typ, have = format.Type(r.int32Field(typ)), have|haveType
		case 4:
			c.codec, have = format.CompressionCodec(r.int32Field(typ)), have|haveCodec
		case 5:
			c.numValues, have = r.integer(typ), have|haveValues
		case 7:
			c.compressed, have = r.integer(typ), have|haveSize
		case 9:
			c.dataPageOffset, have = r.integer(typ), have|haveOffset
		case 11:
			c.dictPageOffset = r.integer(typ)
		case 12:
			if r.expectStruct(typ) {
				decodeStatistics(r, &c.stats)
			}
		default:
			r.skip(typ)
		}
	})
	if have != haveAll && r.err == nil {
		r.failf("column metadata lacks its type, codec, value count, size or data page offset")
	}
	c.hasMeta = true
}

func decodeStatistics(r *compactReader, s *chunkStats) {
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 1:
			s.max, s.hasMax = r.binary(typ), true
		case 2:
			s.min, s.hasMin = r.binary(typ), true
		case 3:
			s.nullCount = r.integer(typ)
		case 5:
			s.maxValue, s.hasMaxV = r.binary(typ), true
		case 6:
			s.minValue, s.hasMinV = r.binary(typ), true
		default:
			r.skip(typ)
		}
	})
}

// Page types and the page header (parquet.thrift PageHeader), decoded for
// every page read.
const (
	pageData       = 0
	pageIndex      = 1
	pageDictionary = 2
	pageDataV2     = 3
)

type pageHeader struct {
	typ          int32
	uncompressed int32
	compressed   int32
	crc          int32
	hasCRC       bool

	// Data pages (v1 and v2) and dictionary pages.
	numValues int32
	encoding  format.Encoding
	// v1: the definition level encoding (RLE or BIT_PACKED).
	defEncoding format.Encoding
	// v2: the level sections' lengths, the NULL count, and whether the
	// values section is compressed.
	numNulls     int32
	defLength    int32
	repLength    int32
	isCompressed bool
	hasData      bool // the header of its type was present
}

// decodePageHeader decodes one page header from the start of b and
// returns its length in bytes.
func decodePageHeader(b []byte, h *pageHeader) (int, error) {
	*h = pageHeader{isCompressed: true}
	r := &compactReader{b: b}
	var have int
	r.readStruct(func(id int16, typ byte) {
		switch id {
		case 1:
			h.typ, have = r.int32Field(typ), have|1
		case 2:
			h.uncompressed, have = r.int32Field(typ), have|2
		case 3:
			h.compressed, have = r.int32Field(typ), have|4
		case 4:
			h.crc, h.hasCRC = r.int32Field(typ), true
		case 5: // data_page_header
			if r.expectStruct(typ) {
				h.hasData = true
				r.readStruct(func(id int16, typ byte) {
					switch id {
					case 1:
						h.numValues = r.int32Field(typ)
					case 2:
						h.encoding = format.Encoding(r.int32Field(typ))
					case 3:
						h.defEncoding = format.Encoding(r.int32Field(typ))
					default:
						r.skip(typ)
					}
				})
			}
		case 7: // dictionary_page_header
			if r.expectStruct(typ) {
				h.hasData = true
				r.readStruct(func(id int16, typ byte) {
					switch id {
					case 1:
						h.numValues = r.int32Field(typ)
					case 2:
						h.encoding = format.Encoding(r.int32Field(typ))
					default:
						r.skip(typ)
					}
				})
			}
		case 8: // data_page_header_v2
			if r.expectStruct(typ) {
				h.hasData = true
				r.readStruct(func(id int16, typ byte) {
					switch id {
					case 1:
						h.numValues = r.int32Field(typ)
					case 2:
						h.numNulls = r.int32Field(typ)
					case 4:
						h.encoding = format.Encoding(r.int32Field(typ))
					case 5:
						h.defLength = r.int32Field(typ)
					case 6:
						h.repLength = r.int32Field(typ)
					case 7:
						h.isCompressed = r.boolField(typ)
					default:
						r.skip(typ)
					}
				})
			}
		default:
			r.skip(typ)
		}
	})
	switch {
	case r.err != nil:
		return 0, fmt.Errorf("%w: page header: %w", errThrift, r.err)
	case have != 7:
		return 0, fmt.Errorf("%w: page header lacks its type or sizes", errThrift)
	case h.compressed < 0 || h.uncompressed < 0 || h.numValues < 0 || h.numNulls < 0 || h.defLength < 0 || h.repLength < 0:
		return 0, fmt.Errorf("%w: page header with a negative size or count", errThrift)
	}
	return r.pos, nil
}
