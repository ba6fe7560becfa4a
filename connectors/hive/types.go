package hive

import (
	"fmt"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// Types fsql gives the Parquet and CSV columns it reads. MySQL's DATETIME
// is a timestamp without a time zone, its TIMESTAMP an instant shown in
// UTC; both hold microseconds, MySQL's finest precision.
var (
	// DatetimeType is MySQL DATETIME: wall-clock microseconds, no zone
	// (Parquet TIMESTAMP with isAdjustedToUTC=false).
	DatetimeType = &arrow.TimestampType{Unit: arrow.Microsecond}
	// TimestampType is MySQL TIMESTAMP: microseconds since the epoch in
	// UTC (Parquet TIMESTAMP with isAdjustedToUTC=true, and INT96).
	TimestampType = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}
	// TimeType is MySQL TIME: microseconds since midnight (Parquet TIME).
	TimeType = arrow.FixedWidthTypes.Time64us
)

// decodeKind says how the values of one Parquet column become Arrow values.
type decodeKind int

const (
	kindInt32     decodeKind = iota // INT32 → Int32 or Date32
	kindInt64                       // INT64 → Int64, Uint64 (same bits), Timestamp or Time64 (scaled by mul/div)
	kindDouble                      // DOUBLE → Float64
	kindFloat                       // FLOAT → Float64
	kindBool                        // BOOLEAN → Boolean
	kindString                      // BYTE_ARRAY → String
	kindDecInt32                    // DECIMAL on INT32 → Decimal128
	kindDecInt64                    // DECIMAL on INT64 → Decimal128
	kindDecBytes                    // DECIMAL on FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY (big-endian) → Decimal128
	kindInt32To64                   // INT32 → Int64 (UINT_32, read unsigned) or Time64 (TIME millis, ×1000)
	kindInt96                       // INT96 (Impala, Hive and Spark timestamps) → Timestamp µs UTC
	kindFixed                       // FIXED_LEN_BYTE_ARRAY without a logical type → String of the raw bytes
	kindUUID                        // UUID (FIXED[16]) → String in the 8-4-4-4-12 hex form
	kindFloat16                     // FLOAT16 (FIXED[2]) → Float64
)

// columnInfo is what the reader needs to know about one top-level column
// of one file.
type columnInfo struct {
	name     string
	arrow    arrow.DataType
	phys     format.Type
	kind     decodeKind
	optional bool
	// unsigned: the column's statistics are in unsigned order, so only the
	// new min_value/max_value fields are trusted (the deprecated min/max
	// were written in signed order).
	unsigned bool
	// mul and div scale INT32/INT64 values to microseconds (TIMESTAMP and
	// TIME in millis or nanos); 0 means as stored. div must divide exactly
	// unless the table truncates nanoseconds (Options.TruncateNanos).
	mul, div int64
	// typeLength is the width of a FIXED_LEN_BYTE_ARRAY value.
	typeLength int
	// leaf is the index of the column's first column chunk in a row group;
	// leaves is how many it spans (more than one for a nested column).
	leaf, leaves int
	// parquet describes the Parquet type for messages: "INT32",
	// "INT64 TIMESTAMP(isAdjustedToUTC=true,unit=MICROS)", "LIST".
	parquet string
	// unreadable is set when fsql cannot read the column (nested types,
	// INTERVAL, ...). The table still opens; reading the column fails
	// with this error.
	unreadable error
}

// schemaColumns maps the top-level columns of a Parquet schema to Arrow
// types. A column fsql cannot read (nested, or a type it does not know)
// is kept with an unreadable error, so the table opens and only queries
// reading that column fail.
func schemaColumns(schema []format.SchemaElement, path string) ([]columnInfo, error) {
	if len(schema) == 0 {
		return nil, fmt.Errorf("%w: %s has an empty schema", ErrCorrupt, path)
	}
	n, _ := schema[0].NumChildren.Get()
	if n < 0 || int(n) > len(schema)-1 {
		return nil, fmt.Errorf("%w: %s: the schema root claims %d columns in %d elements", ErrCorrupt, path, n, len(schema))
	}
	w := &schemaWalker{els: schema, path: path}
	cols := make([]columnInfo, 0, n)
	pos, leaf := 1, 0
	for range n {
		if pos >= len(schema) {
			return nil, fmt.Errorf("%w: %s: the schema ends inside column %d", ErrCorrupt, path, len(cols)+1)
		}
		el := &schema[pos]
		rep, _ := el.RepetitionType.Get()
		var ci columnInfo
		if nc, _ := el.NumChildren.Get(); nc > 0 || rep == format.Repeated {
			t, next, leaves, err := w.node(pos, 0)
			if err != nil {
				return nil, err
			}
			what := nestedKind(el)
			ci = columnInfo{name: el.Name, arrow: t, optional: true, leaf: leaf, leaves: leaves, parquet: what,
				unreadable: fmt.Errorf("%w: column %s of %s is a Parquet %s (%s); fsql does not read nested columns yet: leave it out of the query (name the other columns instead of *)",
					ErrUnsupported, el.Name, path, what, t)}
			pos = next
		} else {
			var err error
			ci, err = mapColumn(el)
			ci.leaf, ci.leaves, ci.parquet = leaf, 1, describeParquet(el)
			if err != nil {
				ci.arrow = arrow.BinaryTypes.Binary
				ci.unreadable = fmt.Errorf("%w: column %s of %s (Parquet %s): %v; leave it out of the query (name the other columns instead of *)",
					ErrUnsupported, el.Name, path, ci.parquet, err)
			}
			pos++
		}
		leaf += ci.leaves
		cols = append(cols, ci)
	}
	if pos != len(schema) {
		return nil, fmt.Errorf("%w: %s: the schema has %d elements after its last column", ErrCorrupt, path, len(schema)-pos)
	}
	return cols, nil
}

// numLeaves is the number of column chunks a row group of these columns has.
func numLeaves(cols []columnInfo) int {
	if len(cols) == 0 {
		return 0
	}
	last := cols[len(cols)-1]
	return last.leaf + last.leaves
}

// schemaWalker builds the Arrow type of a nested column, only to name it
// in messages and in the table's schema: fsql does not read such columns.
type schemaWalker struct {
	els  []format.SchemaElement
	path string
}

// node returns the Arrow type of the subtree at pos, the position after it
// and its number of leaves.
func (w *schemaWalker) node(pos, depth int) (arrow.DataType, int, int, error) {
	if pos >= len(w.els) || depth > 1000 {
		return nil, 0, 0, fmt.Errorf("%w: %s: malformed nested schema", ErrCorrupt, w.path)
	}
	el := &w.els[pos]
	rep, _ := el.RepetitionType.Get()
	nc, _ := el.NumChildren.Get()
	var t arrow.DataType
	next, leaves := pos+1, 0
	if nc > 0 {
		fields := make([]arrow.Field, 0, nc)
		for range nc {
			if next >= len(w.els) {
				return nil, 0, 0, fmt.Errorf("%w: %s: the schema ends inside group %s", ErrCorrupt, w.path, el.Name)
			}
			child := &w.els[next]
			crep, _ := child.RepetitionType.Get()
			ct, n, l, err := w.node(next, depth+1)
			if err != nil {
				return nil, 0, 0, err
			}
			fields = append(fields, arrow.Field{Name: child.Name, Type: ct, Nullable: crep != format.Required})
			next, leaves = n, leaves+l
		}
		t = arrow.StructOf(fields...)
		if len(fields) == 1 && fields[0].Type.ID() == arrow.LIST {
			inner := fields[0].Type.(*arrow.ListType).Elem()
			switch {
			case isAnnotated(el, deprecated.List):
				// LIST { repeated group list { element } } is list<element>.
				t = fields[0].Type
				if st, ok := inner.(*arrow.StructType); ok && st.NumFields() == 1 {
					t = arrow.ListOfField(st.Field(0))
				}
			case isAnnotated(el, deprecated.Map) || isAnnotated(el, deprecated.MapKeyValue):
				// MAP { repeated group key_value { key; value } }.
				if st, ok := inner.(*arrow.StructType); ok && st.NumFields() == 2 {
					t = arrow.MapOf(st.Field(0).Type, st.Field(1).Type)
				}
			}
		}
	} else {
		leaves = 1
		if ci, err := mapColumn(el); err == nil {
			t = ci.arrow
		} else {
			t = arrow.BinaryTypes.Binary
		}
	}
	if rep == format.Repeated {
		t = arrow.ListOf(t)
	}
	return t, next, leaves, nil
}

// isAnnotated reports whether a group carries the LIST or MAP annotation,
// as a logical type or a converted type.
func isAnnotated(el *format.SchemaElement, conv deprecated.ConvertedType) bool {
	switch el.LogicalType.Value.(type) {
	case *format.ListType:
		return conv == deprecated.List
	case *format.MapType:
		return conv == deprecated.Map || conv == deprecated.MapKeyValue
	}
	c, ok := el.ConvertedType.Get()
	return ok && c == conv
}

// nestedKind names a nested top-level column's Parquet kind for messages.
func nestedKind(el *format.SchemaElement) string {
	if rep, _ := el.RepetitionType.Get(); rep == format.Repeated {
		return "repeated field (a LIST)"
	}
	switch {
	case isAnnotated(el, deprecated.List):
		return "LIST"
	case isAnnotated(el, deprecated.Map), isAnnotated(el, deprecated.MapKeyValue):
		return "MAP"
	}
	return "STRUCT (group)"
}

// describeParquet names a leaf's physical and logical type for messages.
func describeParquet(el *format.SchemaElement) string {
	phys, _ := el.Type.Get()
	s := phys.String()
	if phys == format.FixedLenByteArray {
		l, _ := el.TypeLength.Get()
		s = fmt.Sprintf("FIXED_LEN_BYTE_ARRAY(%d)", l)
	}
	if lt := el.LogicalType.Value; lt != nil {
		return s + " " + lt.String()
	}
	if c, ok := el.ConvertedType.Get(); ok {
		return fmt.Sprintf("%s (converted type %s)", s, convertedName(c))
	}
	return s
}

func convertedName(c deprecated.ConvertedType) string {
	names := map[deprecated.ConvertedType]string{
		deprecated.UTF8: "UTF8", deprecated.Map: "MAP", deprecated.MapKeyValue: "MAP_KEY_VALUE",
		deprecated.List: "LIST", deprecated.Enum: "ENUM", deprecated.Decimal: "DECIMAL", deprecated.Date: "DATE",
		deprecated.TimeMillis: "TIME_MILLIS", deprecated.TimeMicros: "TIME_MICROS",
		deprecated.TimestampMillis: "TIMESTAMP_MILLIS", deprecated.TimestampMicros: "TIMESTAMP_MICROS",
		deprecated.Uint8: "UINT_8", deprecated.Uint16: "UINT_16", deprecated.Uint32: "UINT_32", deprecated.Uint64: "UINT_64",
		deprecated.Int8: "INT_8", deprecated.Int16: "INT_16", deprecated.Int32: "INT_32", deprecated.Int64: "INT_64",
		deprecated.Json: "JSON", deprecated.Bson: "BSON", deprecated.Interval: "INTERVAL",
	}
	if n, ok := names[c]; ok {
		return n
	}
	return fmt.Sprintf("#%d", c)
}

// timeScale returns the factors that turn a time unit into microseconds.
func timeScale(u format.TimeUnit) (mul, div int64, ok bool) {
	switch u.Value.(type) {
	case *format.MilliSeconds:
		return 1000, 0, true
	case *format.MicroSeconds:
		return 0, 0, true
	case *format.NanoSeconds:
		return 0, 1000, true
	}
	return 0, 0, false
}

// mapColumn maps one flat (leaf) column to its Arrow type and decoder.
// The mapping, by logical type (or the converted type older writers set):
//
//	INT(8|16|32, signed), INT32     → Int32 (INT)
//	INT(64, signed), INT64          → Int64 (BIGINT)
//	INT(8|16, unsigned)             → Int32 (values fit)
//	INT(32, unsigned)               → Int64 (values fit)
//	INT(64, unsigned)               → Uint64 (BIGINT UNSIGNED)
//	FLOAT, DOUBLE, FLOAT16          → Float64 (DOUBLE)
//	DECIMAL(p,s), p ≤ 38            → Decimal128(p,s)
//	DATE                            → Date32 (DATE)
//	TIMESTAMP(adjusted=false, unit) → Timestamp µs, no zone (DATETIME)
//	TIMESTAMP(adjusted=true, unit)  → Timestamp µs UTC (TIMESTAMP); so are
//	                                  TIMESTAMP_MILLIS/MICROS and INT96
//	TIME(unit)                      → Time64 µs (TIME)
//	STRING, ENUM, JSON, BSON,
//	BYTE_ARRAY                      → String
//	UUID                            → String, 8-4-4-4-12 lowercase hex
//	FIXED_LEN_BYTE_ARRAY            → String of the raw bytes
//	BOOLEAN                         → Boolean
//
// Milliseconds are scaled up; nanoseconds are divided down and must have
// no sub-microsecond part, unless the table truncates them.
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
	if l, ok := el.TypeLength.Get(); ok && phys == format.FixedLenByteArray {
		ci.typeLength = int(l)
	}
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
	} else if logical == nil && hasConv && conv == deprecated.Decimal {
		p, _ := el.Precision.Get()
		s, _ := el.Scale.Get()
		precision, scale, isDecimal = int(p), int(s), true
	}
	if isDecimal {
		if precision < 1 || precision > 38 || scale < 0 || scale > precision {
			return ci, fmt.Errorf("DECIMAL(%d,%d) is outside what Decimal128 holds (precision 1..38)", precision, scale)
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

	// Reduce logical and converted types to one description.
	const (
		plain = iota
		text
		date
		signedInt
		unsignedInt
		timestamp
		timeOfDay
		uuid
		float16
	)
	what, bits, adjusted := plain, 0, false
	var unit format.TimeUnit
	switch lt := logical.(type) {
	case nil:
		if hasConv {
			switch conv {
			case deprecated.UTF8, deprecated.Enum, deprecated.Json, deprecated.Bson:
				what = text
			case deprecated.Date:
				what = date
			case deprecated.Int8, deprecated.Int16, deprecated.Int32, deprecated.Int64:
				what, bits = signedInt, map[deprecated.ConvertedType]int{deprecated.Int8: 8, deprecated.Int16: 16, deprecated.Int32: 32, deprecated.Int64: 64}[conv]
			case deprecated.Uint8, deprecated.Uint16, deprecated.Uint32, deprecated.Uint64:
				what, bits = unsignedInt, map[deprecated.ConvertedType]int{deprecated.Uint8: 8, deprecated.Uint16: 16, deprecated.Uint32: 32, deprecated.Uint64: 64}[conv]
			case deprecated.TimestampMillis, deprecated.TimestampMicros:
				// The converted types are UTC-adjusted (the format's
				// compatibility rules).
				what, adjusted = timestamp, true
				unit.Value = &format.MicroSeconds{}
				if conv == deprecated.TimestampMillis {
					unit.Value = &format.MilliSeconds{}
				}
			case deprecated.TimeMillis, deprecated.TimeMicros:
				what = timeOfDay
				unit.Value = &format.MicroSeconds{}
				if conv == deprecated.TimeMillis {
					unit.Value = &format.MilliSeconds{}
				}
			default:
				return ci, fmt.Errorf("converted type %s is not supported", convertedName(conv))
			}
		}
	case *format.StringType, *format.EnumType, *format.JsonType, *format.BsonType:
		what = text
	case *format.DateType:
		what = date
	case *format.IntType:
		what, bits = signedInt, int(lt.BitWidth)
		if !lt.IsSigned {
			what = unsignedInt
		}
	case *format.TimestampType:
		what, adjusted, unit = timestamp, lt.IsAdjustedToUTC, lt.Unit
	case *format.TimeType:
		what, unit = timeOfDay, lt.Unit
	case *format.UUIDType:
		what = uuid
	case *format.Float16Type:
		what = float16
	default:
		return ci, fmt.Errorf("logical type %s is not supported", logical)
	}

	wrongPhys := func() (columnInfo, error) {
		return ci, fmt.Errorf("%s stored as %s is not valid Parquet", strings.TrimSpace(describeParquet(el)), phys)
	}
	switch what {
	case text:
		if phys != format.ByteArray {
			return wrongPhys()
		}
		ci.kind, ci.arrow = kindString, arrow.BinaryTypes.String
	case date:
		if phys != format.Int32 {
			return wrongPhys()
		}
		ci.kind, ci.arrow = kindInt32, arrow.FixedWidthTypes.Date32
	case signedInt, unsignedInt:
		switch {
		case bits != 8 && bits != 16 && bits != 32 && bits != 64:
			return ci, fmt.Errorf("INT(%d) is not a valid integer width", bits)
		case (bits == 64) != (phys == format.Int64) || (phys != format.Int32 && phys != format.Int64):
			return wrongPhys()
		}
		ci.unsigned = what == unsignedInt
		switch {
		case bits == 64 && ci.unsigned:
			ci.kind, ci.arrow = kindInt64, arrow.PrimitiveTypes.Uint64
		case bits == 64:
			ci.kind, ci.arrow = kindInt64, arrow.PrimitiveTypes.Int64
		case bits == 32 && ci.unsigned:
			ci.kind, ci.arrow = kindInt32To64, arrow.PrimitiveTypes.Int64
		default:
			ci.kind, ci.arrow = kindInt32, arrow.PrimitiveTypes.Int32
		}
	case timestamp:
		if phys != format.Int64 {
			return wrongPhys()
		}
		mul, div, ok := timeScale(unit)
		if !ok {
			return ci, fmt.Errorf("TIMESTAMP without a unit")
		}
		ci.kind, ci.mul, ci.div, ci.arrow = kindInt64, mul, div, DatetimeType
		if adjusted {
			ci.arrow = TimestampType
		}
	case timeOfDay:
		mul, div, ok := timeScale(unit)
		switch {
		case !ok:
			return ci, fmt.Errorf("TIME without a unit")
		case mul != 0 && phys == format.Int32:
			ci.kind = kindInt32To64
		case mul == 0 && phys == format.Int64:
			ci.kind = kindInt64
		default:
			return wrongPhys()
		}
		ci.mul, ci.div, ci.arrow = mul, div, TimeType
	case uuid:
		if l, _ := el.TypeLength.Get(); phys != format.FixedLenByteArray || l != 16 {
			return wrongPhys()
		}
		ci.kind, ci.arrow = kindUUID, arrow.BinaryTypes.String
	case float16:
		if l, _ := el.TypeLength.Get(); phys != format.FixedLenByteArray || l != 2 {
			return wrongPhys()
		}
		ci.kind, ci.arrow = kindFloat16, arrow.PrimitiveTypes.Float64
	default: // plain physical types
		switch phys {
		case format.Int32:
			ci.kind, ci.arrow = kindInt32, arrow.PrimitiveTypes.Int32
		case format.Int64:
			ci.kind, ci.arrow = kindInt64, arrow.PrimitiveTypes.Int64
		case format.Int96:
			ci.kind, ci.arrow = kindInt96, TimestampType
		case format.Double:
			ci.kind, ci.arrow = kindDouble, arrow.PrimitiveTypes.Float64
		case format.Float:
			ci.kind, ci.arrow = kindFloat, arrow.PrimitiveTypes.Float64
		case format.Boolean:
			ci.kind, ci.arrow = kindBool, arrow.FixedWidthTypes.Boolean
		case format.ByteArray:
			ci.kind, ci.arrow = kindString, arrow.BinaryTypes.String
		case format.FixedLenByteArray:
			l, _ := el.TypeLength.Get()
			if l < 1 {
				return ci, fmt.Errorf("FIXED_LEN_BYTE_ARRAY of %d bytes", l)
			}
			ci.kind, ci.arrow = kindFixed, arrow.BinaryTypes.String
		default:
			return ci, fmt.Errorf("physical type %s is not supported", phys)
		}
	}
	return ci, nil
}

// sameSchema checks that file b has the same columns as file a (the same
// version of one file, read twice).
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
				b[i].arrow, b[i].parquet, pathB, a[i].arrow, a[i].parquet, pathA)
		}
	}
	return nil
}

// sameType compares two mapped columns without reflection (what
// arrow.TypeEqual uses): every view of a table compares each file's
// columns with the first file's, thousands of files per query.
func sameType(a, b columnInfo) bool {
	if a.kind != b.kind || a.arrow.ID() != b.arrow.ID() || a.mul != b.mul || a.div != b.div ||
		a.leaves != b.leaves || a.optional != b.optional || (a.unreadable == nil) != (b.unreadable == nil) {
		return false
	}
	switch ta := a.arrow.(type) {
	case *arrow.Decimal128Type:
		tb := b.arrow.(*arrow.Decimal128Type)
		return ta.Precision == tb.Precision && ta.Scale == tb.Scale
	case *arrow.TimestampType:
		return ta.TimeZone == b.arrow.(*arrow.TimestampType).TimeZone
	}
	if a.unreadable != nil {
		return arrow.TypeEqual(a.arrow, b.arrow)
	}
	return true
}
