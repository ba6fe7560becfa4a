package planwire

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planwire/pb"
)

// Arrow types by wire ID; DECIMAL128, COLLATED, TIMESTAMP, TIME32 and
// TIME64 carry parameters and are handled apart.
var typesByID = map[pb.TypeID]arrow.DataType{
	pb.TypeID_TYPE_ID_NULL:         arrow.Null,
	pb.TypeID_TYPE_ID_BOOL:         arrow.FixedWidthTypes.Boolean,
	pb.TypeID_TYPE_ID_INT8:         arrow.PrimitiveTypes.Int8,
	pb.TypeID_TYPE_ID_INT16:        arrow.PrimitiveTypes.Int16,
	pb.TypeID_TYPE_ID_INT32:        arrow.PrimitiveTypes.Int32,
	pb.TypeID_TYPE_ID_INT64:        arrow.PrimitiveTypes.Int64,
	pb.TypeID_TYPE_ID_UINT8:        arrow.PrimitiveTypes.Uint8,
	pb.TypeID_TYPE_ID_UINT16:       arrow.PrimitiveTypes.Uint16,
	pb.TypeID_TYPE_ID_UINT32:       arrow.PrimitiveTypes.Uint32,
	pb.TypeID_TYPE_ID_UINT64:       arrow.PrimitiveTypes.Uint64,
	pb.TypeID_TYPE_ID_FLOAT32:      arrow.PrimitiveTypes.Float32,
	pb.TypeID_TYPE_ID_FLOAT64:      arrow.PrimitiveTypes.Float64,
	pb.TypeID_TYPE_ID_STRING:       arrow.BinaryTypes.String,
	pb.TypeID_TYPE_ID_LARGE_STRING: arrow.BinaryTypes.LargeString,
	pb.TypeID_TYPE_ID_BINARY:       arrow.BinaryTypes.Binary,
	pb.TypeID_TYPE_ID_LARGE_BINARY: arrow.BinaryTypes.LargeBinary,
	pb.TypeID_TYPE_ID_DATE32:       arrow.FixedWidthTypes.Date32,
	pb.TypeID_TYPE_ID_DATE64:       arrow.FixedWidthTypes.Date64,
}

var idsByType = func() map[arrow.Type]pb.TypeID {
	m := map[arrow.Type]pb.TypeID{}
	for id, t := range typesByID {
		m[t.ID()] = id
	}
	return m
}()

func encodeType(t arrow.DataType) (*pb.DataType, error) {
	if t == nil {
		return nil, errs.New(errs.Internal, "a plan holds an expression without a type")
	}
	if c := expr.CollationOf(t); c != nil {
		return &pb.DataType{Id: pb.TypeID_TYPE_ID_COLLATED, Collation: c.Name()}, nil
	}
	switch x := t.(type) {
	case *arrow.Decimal128Type:
		return &pb.DataType{Id: pb.TypeID_TYPE_ID_DECIMAL128, Precision: x.Precision, Scale: x.Scale}, nil
	case *arrow.TimestampType:
		return &pb.DataType{Id: pb.TypeID_TYPE_ID_TIMESTAMP, TimeUnit: pb.TimeUnit(x.Unit), TimeZone: x.TimeZone}, nil
	case *arrow.Time32Type:
		return &pb.DataType{Id: pb.TypeID_TYPE_ID_TIME32, TimeUnit: pb.TimeUnit(x.Unit)}, nil
	case *arrow.Time64Type:
		return &pb.DataType{Id: pb.TypeID_TYPE_ID_TIME64, TimeUnit: pb.TimeUnit(x.Unit)}, nil
	}
	if id, ok := idsByType[t.ID()]; ok && arrow.TypeEqual(typesByID[id], t) {
		return &pb.DataType{Id: id}, nil
	}
	return nil, errs.New(errs.Internal, "the plan wire format has no encoding for Arrow type %s", t)
}

func decodeType(m *pb.DataType) (arrow.DataType, error) {
	if m == nil {
		return nil, errs.New(errs.Internal, "a type is missing")
	}
	switch m.Id {
	case pb.TypeID_TYPE_ID_DECIMAL128:
		if m.Precision < 1 || m.Precision > 38 || m.Scale < 0 || m.Scale > m.Precision {
			return nil, errs.New(errs.Internal, "DECIMAL(%d, %d) is not a valid decimal type", m.Precision, m.Scale)
		}
		return &arrow.Decimal128Type{Precision: m.Precision, Scale: m.Scale}, nil
	case pb.TypeID_TYPE_ID_COLLATED:
		c, err := expr.LookupCollation(m.Collation)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "%w", err)
		}
		return c.Type(), nil
	case pb.TypeID_TYPE_ID_TIMESTAMP, pb.TypeID_TYPE_ID_TIME32, pb.TypeID_TYPE_ID_TIME64:
		unit := arrow.TimeUnit(m.TimeUnit)
		if m.TimeUnit < pb.TimeUnit_TIME_UNIT_SECOND || m.TimeUnit > pb.TimeUnit_TIME_UNIT_NANOSECOND {
			return nil, errs.New(errs.Internal, "unknown time unit %d", m.TimeUnit)
		}
		switch m.Id {
		case pb.TypeID_TYPE_ID_TIMESTAMP:
			return timestampType(unit, m.TimeZone), nil
		case pb.TypeID_TYPE_ID_TIME32:
			if unit != arrow.Second && unit != arrow.Millisecond {
				return nil, errs.New(errs.Internal, "TIME32 in %s", unit)
			}
			return &arrow.Time32Type{Unit: unit}, nil
		}
		if unit != arrow.Microsecond && unit != arrow.Nanosecond {
			return nil, errs.New(errs.Internal, "TIME64 in %s", unit)
		}
		return &arrow.Time64Type{Unit: unit}, nil
	}
	if t, ok := typesByID[m.Id]; ok {
		return t, nil
	}
	return nil, errs.New(errs.Internal, "unknown type ID %d", m.Id)
}

// timestampType is the timestamp type of unit and zone, the engine's own
// DATETIME and TIMESTAMP objects for theirs (the engine compares some
// types by identity; every other field of the type is in its String).
func timestampType(unit arrow.TimeUnit, zone string) arrow.DataType {
	t := &arrow.TimestampType{Unit: unit, TimeZone: zone}
	for _, known := range []arrow.DataType{expr.DatetimeType, expr.TimestampType} {
		if arrow.TypeEqual(t, known) {
			return known
		}
	}
	return t
}

func encodeFields(s *arrow.Schema) ([]*pb.Field, error) {
	out := make([]*pb.Field, s.NumFields())
	for i, f := range s.Fields() {
		if f.HasMetadata() {
			return nil, errs.New(errs.Internal, "field %s has metadata, which the plan wire format does not carry", f.Name)
		}
		t, err := encodeType(f.Type)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "field %s: %w", f.Name, err)
		}
		out[i] = &pb.Field{Name: f.Name, Type: t, Nullable: f.Nullable}
	}
	return out, nil
}

func decodeFields(ms []*pb.Field) (*arrow.Schema, error) {
	fs := make([]arrow.Field, len(ms))
	for i, m := range ms {
		t, err := decodeType(m.Type)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "field %s: %w", m.Name, err)
		}
		fs[i] = arrow.Field{Name: m.Name, Type: t, Nullable: m.Nullable}
	}
	return arrow.NewSchema(fs, nil), nil
}

func encodeExpr(e expr.Expr) (*pb.Expr, error) {
	switch x := e.(type) {
	case *expr.Column:
		t, err := encodeType(x.Type)
		if err != nil {
			return nil, err
		}
		return &pb.Expr{Kind: &pb.Expr_Column{Column: &pb.Column{Index: int32(x.Index), Type: t, Name: x.Name}}}, nil
	case *expr.Literal:
		l, err := encodeLiteral(x)
		if err != nil {
			return nil, err
		}
		return &pb.Expr{Kind: &pb.Expr_Literal{Literal: l}}, nil
	case *expr.Call:
		t, err := encodeType(x.Type)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "%s: %w", x, err)
		}
		c := &pb.Call{Fn: x.Fn, Type: t, Implicit: expr.IsImplicitCast(x)}
		for _, a := range x.Args {
			m, err := encodeExpr(a)
			if err != nil {
				return nil, err
			}
			c.Args = append(c.Args, m)
		}
		return &pb.Expr{Kind: &pb.Expr_Call{Call: c}}, nil
	case nil:
		return nil, errs.New(errs.Internal, "a plan holds a nil expression")
	}
	return nil, errs.New(errs.Internal, "the plan wire format has no encoding for expression %s (%T); add one to plan.proto and expr.go", e, e)
}

// encodeOptional encodes e, or nothing for nil.
func encodeOptional(e expr.Expr) (*pb.Expr, error) {
	if e == nil {
		return nil, nil
	}
	return encodeExpr(e)
}

func encodeExprs(es []expr.Expr) ([]*pb.Expr, error) {
	out := make([]*pb.Expr, len(es))
	for i, e := range es {
		m, err := encodeExpr(e)
		if err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

func encodeLiteral(l *expr.Literal) (*pb.Literal, error) {
	t, err := encodeType(l.Type)
	if err != nil {
		return nil, err
	}
	m := &pb.Literal{Type: t}
	switch v := l.Value.(type) {
	case nil:
	case bool:
		m.Value = &pb.Literal_BoolValue{BoolValue: v}
	case int8:
		m.Value = &pb.Literal_Int8Value{Int8Value: int32(v)}
	case int16:
		m.Value = &pb.Literal_Int16Value{Int16Value: int32(v)}
	case int32:
		m.Value = &pb.Literal_Int32Value{Int32Value: v}
	case int64:
		m.Value = &pb.Literal_Int64Value{Int64Value: v}
	case float64:
		m.Value = &pb.Literal_Float64Value{Float64Value: v}
	case string:
		m.Value = &pb.Literal_StringValue{StringValue: v}
	case decimal128.Num:
		m.Value = &pb.Literal_DecimalValue{DecimalValue: &pb.Decimal128{High: v.HighBits(), Low: v.LowBits()}}
	case arrow.Date32:
		m.Value = &pb.Literal_Date32Value{Date32Value: int32(v)}
	case uint64:
		m.Value = &pb.Literal_Uint64Value{Uint64Value: v}
	case arrow.Timestamp:
		m.Value = &pb.Literal_TimestampValue{TimestampValue: int64(v)}
	case arrow.Time64:
		m.Value = &pb.Literal_Time64Value{Time64Value: int64(v)}
	default:
		return nil, errs.New(errs.Internal, "the plan wire format has no encoding for a literal of Go type %T (%s)", v, l)
	}
	return m, nil
}

func decodeLiteral(m *pb.Literal) (*expr.Literal, error) {
	t, err := decodeType(m.Type)
	if err != nil {
		return nil, err
	}
	var v any
	switch x := m.Value.(type) {
	case nil:
	case *pb.Literal_BoolValue:
		v = x.BoolValue
	case *pb.Literal_Int8Value:
		v = int8(x.Int8Value)
	case *pb.Literal_Int16Value:
		v = int16(x.Int16Value)
	case *pb.Literal_Int32Value:
		v = x.Int32Value
	case *pb.Literal_Int64Value:
		v = x.Int64Value
	case *pb.Literal_Float64Value:
		v = x.Float64Value
	case *pb.Literal_StringValue:
		v = x.StringValue
	case *pb.Literal_DecimalValue:
		if x.DecimalValue == nil {
			return nil, errs.New(errs.Internal, "a decimal literal without its value")
		}
		v = decimal128.New(x.DecimalValue.High, x.DecimalValue.Low)
	case *pb.Literal_Date32Value:
		v = arrow.Date32(x.Date32Value)
	case *pb.Literal_Uint64Value:
		v = x.Uint64Value
	case *pb.Literal_TimestampValue:
		v = arrow.Timestamp(x.TimestampValue)
	case *pb.Literal_Time64Value:
		v = arrow.Time64(x.Time64Value)
	default:
		return nil, errs.New(errs.Internal, "unknown literal value %T", x)
	}
	// Built as the binder left it, not through NewLiteral: the value's Go
	// type is what the wire says, with nothing converted.
	return &expr.Literal{Value: v, Type: t}, nil
}

func decodeExpr(m *pb.Expr) (expr.Expr, error) {
	if m == nil {
		return nil, errs.New(errs.Internal, "an expression is missing")
	}
	switch x := m.Kind.(type) {
	case *pb.Expr_Column:
		if x.Column == nil {
			break
		}
		t, err := decodeType(x.Column.Type)
		if err != nil {
			return nil, err
		}
		return expr.NewColumn(int(x.Column.Index), t, x.Column.Name), nil
	case *pb.Expr_Literal:
		if x.Literal == nil {
			break
		}
		return decodeLiteral(x.Literal)
	case *pb.Expr_Call:
		c := x.Call
		if c == nil {
			break
		}
		t, err := decodeType(c.Type)
		if err != nil {
			return nil, err
		}
		args, err := decodeExprs(c.Args)
		if err != nil {
			return nil, err
		}
		// The same binders as the original: the kernel is resolved again.
		call, err := expr.Rebind(c.Fn, t, c.Implicit, args)
		if err != nil {
			return nil, errs.New(errs.Internal, "decoding a call: %w", err)
		}
		return call, nil
	}
	return nil, errs.New(errs.Internal, "an expression of unknown kind %T", m.Kind)
}

func decodeOptional(m *pb.Expr) (expr.Expr, error) {
	if m == nil {
		return nil, nil
	}
	return decodeExpr(m)
}

func decodeExprs(ms []*pb.Expr) ([]expr.Expr, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	out := make([]expr.Expr, len(ms))
	for i, m := range ms {
		e, err := decodeExpr(m)
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}
