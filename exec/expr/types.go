package expr

import (
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
)

// maxDecimalPrecision is the widest decimal fsql (like MySQL's 65 is wider,
// but Arrow's Decimal128 stops here) can hold.
const maxDecimalPrecision = 38

var (
	tBool    = arrow.FixedWidthTypes.Boolean
	tInt64   = arrow.PrimitiveTypes.Int64
	tInt32   = arrow.PrimitiveTypes.Int32
	tFloat64 = arrow.PrimitiveTypes.Float64
	tString  = arrow.BinaryTypes.String
	tDate    = arrow.FixedWidthTypes.Date32
	tNull    = arrow.Null
	tUint64  = arrow.PrimitiveTypes.Uint64
	tBinary  = arrow.BinaryTypes.Binary
)

func isInt(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return true
	}
	return false
}

func isFloat(t arrow.DataType) bool {
	return t.ID() == arrow.FLOAT64 || t.ID() == arrow.FLOAT32
}

func isDecimal(t arrow.DataType) bool { return t.ID() == arrow.DECIMAL128 }

// isUint reports BIGINT UNSIGNED (Arrow uint64), which fsql has for the
// results of BIT_AND/BIT_OR/BIT_XOR and CAST(... AS UNSIGNED). Arithmetic
// reads it as DECIMAL(20,0).
func isUint(t arrow.DataType) bool { return t.ID() == arrow.UINT64 }

func isNumeric(t arrow.DataType) bool { return isInt(t) || isFloat(t) || isDecimal(t) || isUint(t) }

func isString(t arrow.DataType) bool {
	return t.ID() == arrow.STRING || t.ID() == arrow.LARGE_STRING
}

func isNullType(t arrow.DataType) bool { return t.ID() == arrow.NULL }

// isText reports a string with or without an explicit collation.
func isText(t arrow.DataType) bool { return isString(t) || CollationOf(t) != nil }

// plainType is t with an explicit collation dropped.
func plainType(t arrow.DataType) arrow.DataType {
	if CollationOf(t) != nil {
		return tString
	}
	return t
}

// collatedCommon applies MySQL's rule for explicit collations to a common
// type: two different explicit collations are an error; one explicit
// collation is the collation of a string result (a number or date result
// leaves it no part).
func collatedCommon(a, b, common arrow.DataType) (arrow.DataType, error) {
	ca, cb := CollationOf(a), CollationOf(b)
	if ca != nil && cb != nil && ca != cb {
		return nil, fmt.Errorf("%w: illegal mix of collations %s and %s", ErrType, ca.name, cb.name)
	}
	c := ca
	if c == nil {
		c = cb
	}
	if c != nil && isString(common) {
		return c.typ, nil
	}
	return common, nil
}

// intBits is the width of an integer type.
func intBits(t arrow.DataType) int {
	switch t.ID() {
	case arrow.INT8, arrow.BOOL:
		return 8
	case arrow.INT16:
		return 16
	case arrow.INT32:
		return 32
	}
	return 64
}

func intOfBits(bits int) arrow.DataType {
	switch bits {
	case 8:
		return arrow.PrimitiveTypes.Int8
	case 16:
		return arrow.PrimitiveTypes.Int16
	case 32:
		return tInt32
	}
	return tInt64
}

func decType(p, s int32) *arrow.Decimal128Type {
	if p > maxDecimalPrecision {
		p = maxDecimalPrecision
	}
	if s > p {
		s = p
	}
	if p < 1 {
		p = 1
	}
	return &arrow.Decimal128Type{Precision: p, Scale: s}
}

// asDecimal is the decimal type MySQL treats an exact numeric as when it
// meets a decimal: an int64 holds 19 digits, an int32 10.
func asDecimal(t arrow.DataType) (*arrow.Decimal128Type, bool) {
	switch t.ID() {
	case arrow.DECIMAL128:
		return t.(*arrow.Decimal128Type), true
	case arrow.INT64:
		return decType(19, 0), true
	case arrow.INT32:
		return decType(10, 0), true
	case arrow.INT16:
		return decType(5, 0), true
	case arrow.INT8:
		return decType(3, 0), true
	case arrow.BOOL:
		return decType(1, 0), true
	case arrow.UINT64:
		return decType(20, 0), true
	}
	return nil, false
}

// CommonType is the type two values are converted to before they are
// compared, unioned or coalesced: integers widen to the widest integer, an
// integer meeting a decimal becomes a decimal wide enough for both, two
// decimals keep the larger scale and the larger number of integer digits,
// anything meeting a float becomes float64, a string meeting a date is read
// as a date, the NULL type takes the other side's type, and a string
// meeting a number becomes float64 (MySQL compares such pairs as doubles;
// for CASE/COALESCE results fsql instead keeps the string).
func CommonType(a, b arrow.DataType) (arrow.DataType, error) {
	if CollationOf(a) != nil || CollationOf(b) != nil {
		t, err := CommonType(plainType(a), plainType(b))
		if err != nil {
			return nil, err
		}
		return collatedCommon(a, b, t)
	}
	switch {
	case arrow.TypeEqual(a, b):
		return a, nil
	case isNullType(a):
		return b, nil
	case isNullType(b):
		return a, nil
	}
	aNum := isNumeric(a) || a.ID() == arrow.BOOL
	bNum := isNumeric(b) || b.ID() == arrow.BOOL
	switch {
	case aNum && bNum:
		if isFloat(a) || isFloat(b) {
			return tFloat64, nil
		}
		if isDecimal(a) || isDecimal(b) || isUint(a) || isUint(b) {
			da, _ := asDecimal(a)
			db, _ := asDecimal(b)
			s := max(da.Scale, db.Scale)
			ints := max(da.Precision-da.Scale, db.Precision-db.Scale)
			return decType(min(ints+s, maxDecimalPrecision), s), nil
		}
		return intOfBits(max(intBits(a), intBits(b))), nil
	case isString(a) && isString(b):
		return tString, nil
	case isString(a) && b.ID() == arrow.DATE32, a.ID() == arrow.DATE32 && isString(b):
		return tDate, nil
	case isString(a) && isDatetime(b):
		return b, nil
	case isDatetime(a) && isString(b):
		return a, nil
	case isString(a) && isTime(b):
		return b, nil
	case isTime(a) && isString(b):
		return a, nil
	case isTemporal(a) && isTemporal(b):
		// DATE meets DATETIME, or DATETIME meets TIMESTAMP: compared as
		// DATETIME (the same instant in fsql's UTC session).
		return DatetimeType, nil
	case isString(a) && bNum, aNum && isString(b):
		return tFloat64, nil
	}
	return nil, fmt.Errorf("%w: no common type for %s and %s", ErrType, typeSQL(a), typeSQL(b))
}

// resultCommonType is the type of a CASE, IF or COALESCE whose branches
// have types a and b. It differs from CommonType in one way, as MySQL's
// does: a string meeting anything else yields a string.
func resultCommonType(a, b arrow.DataType) (arrow.DataType, error) {
	if (isText(a) || isText(b)) && !isNullType(a) && !isNullType(b) {
		return collatedCommon(a, b, tString)
	}
	return CommonType(a, b)
}

// AggregateArg converts the argument of aggregate fn to the type the
// aggregate reads. SUM, AVG and the statistical aggregates read a string
// as a number under the one rule of number.go (an implicit CAST to DOUBLE:
// a value that is not a number is an error naming it, never a silent 0)
// and a boolean as 0 or 1; COUNT, MIN and MAX take the argument as it is
// (MIN and MAX of strings compare strings).
func AggregateArg(fn string, arg Expr) (Expr, error) {
	switch fn {
	case "sum", "avg", "stddev", "std", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		switch t := arg.DataType(); {
		case isText(t):
			return coerce(arg, tFloat64)
		case t.ID() == arrow.BOOL:
			return coerce(arg, tInt64)
		}
	case "bit_and", "bit_or", "bit_xor":
		// MySQL reads the argument as a 64-bit integer: exact values and
		// doubles round to one, strings under the rule for numbers, a
		// negative BIGINT as its two's complement.
		switch t := arg.DataType(); {
		case isUint(t), isInt(t), isNullType(t):
			return arg, nil
		case isText(t), t.ID() == arrow.BOOL, isFloat(t), isDecimal(t):
			return coerce(arg, tInt64)
		}
		return nil, fmt.Errorf("%w: %s(%s) is not defined", ErrType, fn, typeSQL(arg.DataType()))
	}
	return arg, nil
}

// AggregateType is the result type of aggregate fn over an argument of
// type arg (as AggregateArg converted it), following MySQL: COUNT is BIGINT; SUM of an exact number is
// DECIMAL(38, its scale); AVG of an exact number adds 4 to the scale
// (div_precision_increment); SUM and AVG of a float, and the statistical
// aggregates, are DOUBLE; MIN and MAX keep the argument's type; BIT_AND,
// BIT_OR and BIT_XOR are BIGINT UNSIGNED; GROUP_CONCAT is VARCHAR.
func AggregateType(fn string, arg arrow.DataType) (arrow.DataType, error) {
	switch fn {
	case "count", "count_star":
		return tInt64, nil
	case "min", "max", "any_value", "first", "last":
		if arg == nil {
			return nil, fmt.Errorf("%w: %s needs an argument", ErrType, fn)
		}
		return arg, nil
	case "sum", "avg":
		if arg == nil {
			return nil, fmt.Errorf("%w: %s needs an argument", ErrType, fn)
		}
		if d, ok := asDecimal(arg); ok {
			if fn == "sum" {
				return decType(maxDecimalPrecision, d.Scale), nil
			}
			return decType(maxDecimalPrecision, min(d.Scale+4, maxDecimalPrecision)), nil
		}
		if isFloat(arg) || isNullType(arg) {
			return tFloat64, nil
		}
		return nil, fmt.Errorf("%w: %s(%s) is not defined", ErrType, fn, typeSQL(arg))
	case "stddev", "std", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		if arg == nil {
			return nil, fmt.Errorf("%w: %s needs an argument", ErrType, fn)
		}
		if isNumeric(arg) || isNullType(arg) {
			return tFloat64, nil
		}
		return nil, fmt.Errorf("%w: %s(%s) is not defined", ErrType, fn, typeSQL(arg))
	case "bit_and", "bit_or", "bit_xor":
		if arg != nil && (isInt(arg) || isUint(arg) || isNullType(arg)) {
			return tUint64, nil
		}
		return nil, fmt.Errorf("%w: %s(%s) is not defined", ErrType, fn, typeSQL(arg))
	case "group_concat":
		return tString, nil
	}
	return nil, fmt.Errorf("%w: aggregate function %s", ErrUnsupported, fn)
}

// typeSQL spells a type the way a MySQL user knows it, for messages and
// EXPLAIN.
func typeSQL(t arrow.DataType) string {
	if t == nil {
		return "<nil>"
	}
	if c := CollationOf(t); c != nil {
		return "VARCHAR COLLATE " + c.name
	}
	switch t.ID() {
	case arrow.BOOL:
		return "BOOLEAN"
	case arrow.INT8:
		return "TINYINT"
	case arrow.INT16:
		return "SMALLINT"
	case arrow.INT32:
		return "INT"
	case arrow.INT64:
		return "BIGINT"
	case arrow.FLOAT32, arrow.FLOAT64:
		return "DOUBLE"
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		return fmt.Sprintf("DECIMAL(%d,%d)", d.Precision, d.Scale)
	case arrow.STRING, arrow.LARGE_STRING:
		return "VARCHAR"
	case arrow.DATE32:
		return "DATE"
	case arrow.TIMESTAMP:
		if isTimestampTZ(t) {
			return "TIMESTAMP"
		}
		if isDatetime(t) {
			return "DATETIME"
		}
	case arrow.UINT64:
		return "BIGINT UNSIGNED"
	case arrow.TIME64:
		return "TIME"
	case arrow.BINARY:
		return "VARBINARY"
	case arrow.NULL:
		return "NULL"
	}
	return t.String()
}
