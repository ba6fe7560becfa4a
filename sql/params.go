package sql

import (
	sqldriver "database/sql/driver"
	"fmt"
	"math"
	"reflect"
	"sort"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	driver "github.com/pingcap/tidb/pkg/parser/test_driver"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// Decimal is an exact decimal parameter value written as text, such as
// "12.50": it binds as DECIMAL with the digits written (DECIMAL(4,2)
// here), as the literal 12.50 would.
type Decimal string

// bindParams checks that the statement has one argument per ? marker and
// converts each argument to a typed constant. Parameters are values,
// never SQL text: a string argument is a string however it is spelled.
func (b *Binder) bindParams(markers []*driver.ParamMarkerExpr) ([]expr.Expr, error) {
	args := b.env.Params
	if len(markers) != len(args) {
		where := ""
		if len(markers) > 0 {
			where = " (the first " + b.at(markers[0].Offset) + ")"
		}
		given := plural(len(args), "argument was", "arguments were")
		return nil, errs.New(errs.ErWrongArguments, "the statement has %s%s but %s given; pass one argument per ?, in order",
			plural(len(markers), "parameter marker (?)", "parameter markers (?)"), where, given)
	}
	// MySQL numbers markers in the order they are written; the parser
	// leaves Order unset outside PREPARE, and the tree is not walked in
	// text order everywhere.
	sort.SliceStable(markers, func(i, j int) bool { return markers[i].Offset < markers[j].Offset })
	b.markerIndex = make(map[*driver.ParamMarkerExpr]int, len(markers))
	for i, m := range markers {
		b.markerIndex[m] = i
	}
	out := make([]expr.Expr, len(args))
	for i, a := range args {
		e, err := ParamValue(a)
		if err != nil {
			return nil, b.atPos(errs.New(errs.ErWrongArguments, "argument %d (for the ? %s): %w", i+1, b.at(markers[i].Offset), err), markers[i].Offset)
		}
		out[i] = e
	}
	return out, nil
}

// param is the value of marker m.
func (b *Binder) param(m *driver.ParamMarkerExpr) (expr.Expr, error) {
	i, ok := b.markerIndex[m]
	if !ok || i >= len(b.params) {
		return nil, errs.New(errs.Internal, "parameter marker %s was not numbered", b.at(m.Offset))
	}
	return b.params[i], nil
}

// ParamValue converts a Go value to the constant a ? stands for:
//
//	nil                                   NULL
//	bool                                  1 or 0 (BIGINT, as TRUE and FALSE are in MySQL)
//	int, int8..int64, uint8..uint64       BIGINT (a uint64 above 2^63-1 fails)
//	float32, float64                      DOUBLE (NaN and infinities fail)
//	string, []byte                        VARCHAR
//	Decimal ("12.50")                     DECIMAL of the digits written
//	time.Time                             DATETIME: its wall clock in its location, to the microsecond
//	driver.Valuer                         its Value(), converted as above
//
// and named types whose underlying type is one of these (type ID int64).
// A nil pointer is NULL, another pointer the value it points to. Anything
// else fails naming its Go type.
func ParamValue(v any) (expr.Expr, error) {
	if v == nil {
		return expr.Null(arrow.Null), nil
	}
	switch x := v.(type) {
	case Decimal:
		return decimalLiteral(string(x))
	case time.Time:
		// Its wall clock in its own location, as MySQL drivers send a
		// time.Time: fsql's session time zone is UTC.
		if x.Nanosecond()%1000 != 0 {
			return nil, errs.New(errs.ErWrongArguments, "time %s has digits below a microsecond, which DATETIME does not hold: round it (t.Round(time.Microsecond))", x.Format(time.RFC3339Nano))
		}
		if x.Year() < 1 || x.Year() > 9999 {
			return nil, errs.New(errs.ErWrongArguments, "time %s is outside DATETIME's years 1 to 9999", x.Format(time.RFC3339Nano))
		}
		wall := time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), time.UTC)
		return expr.NewLiteral(arrow.Timestamp(wall.UnixMicro()), expr.DatetimeType), nil
	case sqldriver.Valuer:
		dv, err := x.Value()
		if err != nil {
			return nil, errs.Wrap(errs.ErWrongArguments, "%T.Value(): %w", v, err)
		}
		if _, again := dv.(sqldriver.Valuer); again {
			return nil, errs.New(errs.ErWrongArguments, "%T.Value() returned another driver.Valuer (%T)", v, dv)
		}
		return ParamValue(dv)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer:
		if rv.IsNil() {
			return expr.Null(arrow.Null), nil
		}
		return ParamValue(rv.Elem().Interface())
	case reflect.Bool:
		n := int64(0)
		if rv.Bool() {
			n = 1
		}
		return expr.NewLiteral(n, arrow.PrimitiveTypes.Int64), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return expr.NewLiteral(rv.Int(), arrow.PrimitiveTypes.Int64), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		u := rv.Uint()
		if u > math.MaxInt64 {
			return nil, errs.New(errs.ErWrongArguments, "%d is above BIGINT's maximum (fsql has no unsigned integers)", u)
		}
		return expr.NewLiteral(int64(u), arrow.PrimitiveTypes.Int64), nil
	case reflect.Float32, reflect.Float64:
		f := rv.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, errs.New(errs.ErWrongArguments, "%v is not a number SQL can hold", f)
		}
		return expr.NewLiteral(f, arrow.PrimitiveTypes.Float64), nil
	case reflect.String:
		return expr.NewLiteral(rv.String(), arrow.BinaryTypes.String), nil
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return expr.NewLiteral(string(rv.Bytes()), arrow.BinaryTypes.String), nil
		}
	}
	return nil, errs.New(errs.ErWrongArguments, "fsql cannot pass a %T as a parameter (use nil, bool, an integer, a float, string, []byte, Decimal or time.Time)", v)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
