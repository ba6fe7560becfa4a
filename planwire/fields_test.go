package planwire

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/planwire/pb"
	"github.com/fsql-dev/fsql/pruning"
	"github.com/fsql-dev/fsql/shuffle"
)

// encoded lists, for every struct a plan is made of, the fields the wire
// format carries (encode.go, decode.go, expr.go). A field added to one of
// these structs fails TestEveryFieldHasAnEncoding until it is encoded and
// listed here; a node or expression type added to exec, exec/expr or
// shuffle fails TestEveryNodeTypeHasAnEncoding until it is listed (and
// encoded, which the round trip of planwire_test proves).
var encoded = map[reflect.Type][]string{
	reflect.TypeFor[exec.Scan]():                       {"Table", "Columns", "Partitions", "Filters", "DynamicFilters"},
	reflect.TypeFor[exec.Filter]():                     {"Child", "Cond"},
	reflect.TypeFor[exec.Project]():                    {"Child", "Exprs", "Names"},
	reflect.TypeFor[exec.HashJoin]():                   {"Type", "Build", "Probe", "BuildKeys", "ProbeKeys", "Residual", "Output"},
	reflect.TypeFor[exec.NestedLoopJoin]():             {"Type", "Build", "Probe", "Cond"},
	reflect.TypeFor[exec.HashAggregate]():              {"Child", "Mode", "GroupBy", "GroupNames", "Aggs", "Seed"},
	reflect.TypeFor[exec.Rollup]():                     {"Child", "Keys", "Aggs"},
	reflect.TypeFor[exec.Expand]():                     {"Child", "Sets", "Exprs", "Names", "Pass", "PassNames", "EmptySetOnly"},
	reflect.TypeFor[exec.Sort]():                       {"Child", "Keys"},
	reflect.TypeFor[exec.TopN]():                       {"Child", "Keys", "N", "Offset"},
	reflect.TypeFor[exec.Limit]():                      {"Child", "N", "Offset"},
	reflect.TypeFor[exec.UnionAll]():                   {"Inputs"},
	reflect.TypeFor[exec.Window]():                     {"Child", "PartitionBy", "OrderBy", "Funcs", "Frame", "Presorted", "Limit"},
	reflect.TypeFor[exec.WindowGroupLimit]():           {"Child", "PartitionBy", "OrderBy", "Limit"},
	reflect.TypeFor[exec.Values]():                     {"Rows", "Names", "Types"},
	reflect.TypeFor[exec.MaxOneRow]():                  {"Child"},
	reflect.TypeFor[exec.DynamicFilterDataCollector](): {"ID", "Child", "Keys"},
	reflect.TypeFor[exec.OrderEnforce]():               {"Child", "After"},
	reflect.TypeFor[shuffle.Exchange]():                {"Kind", "Child", "Keys", "MaxParallelism"},
	reflect.TypeFor[exec.Sink]():                       {"Input", "Spec", "Partitions"},
	reflect.TypeFor[exec.TableCommit]():                {"Input", "Spec"},
	reflect.TypeFor[hive.WriteSpec]():                  {"Table", "DataDir", "Dir", "Work", "ID", "Create", "Overwrite", "Static", "Meta", "Options", "Export"},
	reflect.TypeFor[hive.ExportSpec]():                 {"Path", "Parquet", "Folder", "CSV"},
	reflect.TypeFor[hive.CSVExport]():                  {"FieldsTerminated", "Enclosed", "OptEnclosed", "Escaped", "LinesStarting", "LinesTerminated"},
	reflect.TypeFor[hive.TableMeta]():                  {"Format", "Columns", "Partitions", "CreatedBy"},
	reflect.TypeFor[hive.MetaColumn]():                 {"Name", "Type"},
	reflect.TypeFor[hive.WriteOptions]():               {"Compression", "RowGroupRows", "TargetFileSize"},
	// Parts of nodes.
	reflect.TypeFor[exec.AggFunc]():     {"Fn", "Arg", "Distinct", "Type", "Name"},
	reflect.TypeFor[exec.WindowFunc]():  {"Fn", "Arg", "Type", "Name", "N", "Default"},
	reflect.TypeFor[exec.WindowFrame](): {"Unit", "Start", "End"},
	reflect.TypeFor[exec.FrameBound]():  {"Kind", "Rows", "Value"},
	reflect.TypeFor[exec.SortKey]():     {"Expr", "Desc", "NullsFirst"},
	reflect.TypeFor[exec.RankLimit]():   {"Fn", "K"},
	reflect.TypeFor[pruning.Target]():   {"CollectorID", "Column", "Key", "Name"},
	// Expressions. A call's kernel (impl) is not carried: the decoder
	// resolves it again through the binders.
	reflect.TypeFor[expr.Column]():  {"Index", "Type", "Name"},
	reflect.TypeFor[expr.Literal](): {"Value", "Type"},
	reflect.TypeFor[expr.Call]():    {"Fn", "Args", "Type", "impl"},
}

func TestEveryFieldHasAnEncoding(t *testing.T) {
	for typ, want := range encoded {
		var got []string
		for i := 0; i < typ.NumField(); i++ {
			got = append(got, typ.Field(i).Name)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s has fields %v; the wire format carries %v: encode the new ones (plan.proto, encode.go, decode.go) and list them here", typ, got, want)
		}
	}
}

func TestEveryNodeTypeHasAnEncoding(t *testing.T) {
	listed := map[string]bool{}
	for typ := range encoded {
		listed[typ.String()] = true
	}
	for _, name := range nodeTypes(t) {
		if !listed[name] {
			t.Errorf("plan node type %s has no wire encoding: add it to plan.proto, encode.go, decode.go and the list above", name)
		}
	}
	for _, name := range exprTypes(t) {
		if !listed["expr."+name] {
			t.Errorf("expression type expr.%s has no wire encoding: add it to plan.proto, expr.go and the list above", name)
		}
	}
}

// TestEveryEnumValueHasAnEncoding: every constant of the plan's enum
// types maps to a wire value and back.
func TestEveryEnumValueHasAnEncoding(t *testing.T) {
	check := func(dir, typ string, n int) {
		t.Helper()
		consts := enumConstants(t, dir, typ)
		if len(consts) != n {
			t.Errorf("%s has constants %v, the wire format encodes %d: add the new ones to plan.proto and encode.go", typ, consts, n)
		}
	}
	check("../exec", "JoinType", len(joinTypes))
	check("../exec", "AggMode", len(aggModes))
	check("../exec", "FrameUnit", len(frameUnits))
	check("../exec", "BoundKind", len(boundKinds))
	check("../shuffle", "Kind", len(exchangeKinds))
	for _, m := range []int{len(joinTypesBack) - len(joinTypes), len(aggModesBack) - len(aggModes), len(frameUnitsBack) - len(frameUnits), len(boundKindsBack) - len(boundKinds), len(exchangeKindsBack) - len(exchangeKinds)} {
		if m != 0 {
			t.Fatal("two engine values share a wire value")
		}
	}
	// Every Arrow type the format names decodes to a type that encodes
	// back to the same ID.
	for id, typ := range typesByID {
		m, err := encodeType(typ)
		if err != nil || m.Id != id {
			t.Errorf("type %s: %v, %v", typ, m, err)
		}
	}
	const parametric = 5                                    // DECIMAL128, COLLATED, TIMESTAMP, TIME32, TIME64
	if len(typesByID)+parametric != len(pb.TypeID_name)-1 { // - UNSPECIFIED
		t.Errorf("plan.proto names %d type IDs, expr.go decodes %d", len(pb.TypeID_name)-1, len(typesByID)+parametric)
	}
}

// TestTypesAndLiterals round-trips every type and every literal kind,
// and refuses what the format cannot carry.
func TestTypesAndLiterals(t *testing.T) {
	coll, err := expr.LookupCollation("utf8mb4_general_ci")
	if err != nil {
		t.Fatal(err)
	}
	dec := &arrow.Decimal128Type{Precision: 15, Scale: 2}
	lits := []*expr.Literal{
		expr.Null(arrow.Null), expr.Null(dec),
		expr.NewLiteral(true, nil), expr.NewLiteral(int8(-3), arrow.PrimitiveTypes.Int8),
		expr.NewLiteral(int16(300), arrow.PrimitiveTypes.Int16), expr.NewLiteral(int32(-7), arrow.PrimitiveTypes.Int32),
		expr.NewLiteral(int64(1)<<40, nil), expr.NewLiteral(2.5, nil), expr.NewLiteral("héllo", nil),
		expr.NewLiteral("12.34", dec), expr.NewLiteral(-5, &arrow.Decimal128Type{Precision: 38, Scale: 10}),
		expr.NewLiteral("2000-02-29", arrow.FixedWidthTypes.Date32), {Value: "A", Type: coll.Type()},
		expr.NewLiteral("2001-02-03 04:05:06.789", expr.DatetimeType), expr.NewLiteral("2001-02-03 04:05:06", expr.TimestampType),
		expr.NewLiteral("-12:30:00", expr.TimeType), expr.NewLiteral(uint64(1)<<63, nil), {Value: "\x00\xff", Type: arrow.BinaryTypes.Binary},
	}
	for _, l := range lits {
		m, err := encodeExpr(l)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		back, err := decodeExpr(m)
		if err != nil {
			t.Fatalf("%s: %v", l, err)
		}
		b, ok := back.(*expr.Literal)
		if !ok || b.Value != l.Value || !arrow.TypeEqual(b.Type, l.Type) || b.String() != l.String() {
			t.Errorf("%s (%T %s) came back as %v", l, l.Value, l.Type, back)
		}
	}
	// Implicit and explicit casts stay what they were.
	col := expr.NewColumn(0, arrow.PrimitiveTypes.Int32, "x")
	sum, err := expr.NewCall("+", col, expr.NewLiteral(int64(1), nil)) // casts x implicitly
	if err != nil {
		t.Fatal(err)
	}
	cast, err := expr.NewCast(col, dec)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []expr.Expr{sum, cast} {
		m, err := encodeExpr(e)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeExpr(m)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := encodeExpr(back)
		if back.String() != e.String() || again.String() != m.String() {
			t.Errorf("%s came back as %s", e, back)
		}
	}
	if c := sum.(*expr.Call); !expr.IsImplicitCast(c.Args[0]) {
		t.Fatal("the sum's cast should be implicit")
	}
	if expr.IsImplicitCast(cast) {
		t.Fatal("CAST(x AS DECIMAL) is explicit")
	}

	// Types of table columns: timestamps of any unit and zone, times.
	for _, typ := range []arrow.DataType{
		&arrow.TimestampType{Unit: arrow.Nanosecond, TimeZone: "Europe/Paris"}, &arrow.TimestampType{Unit: arrow.Millisecond},
		arrow.FixedWidthTypes.Time32ms, arrow.FixedWidthTypes.Time64ns, expr.DatetimeType, expr.TimestampType,
	} {
		m, err := encodeType(typ)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeType(m)
		if err != nil || !arrow.TypeEqual(back, typ) {
			t.Errorf("%s came back as %v, %v", typ, back, err)
		}
	}
	if back, _ := decodeType(mustType(t, expr.DatetimeType)); back != expr.DatetimeType {
		t.Error("DATETIME does not decode to the engine's own type")
	}

	// What the format cannot carry fails naming it.
	list := arrow.ListOf(arrow.PrimitiveTypes.Int64)
	if _, err := encodeExpr(expr.NewColumn(0, list, "l")); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "list") {
		t.Errorf("list column: %v", err)
	}
	if _, err := encodeExpr(&expr.Literal{Value: float32(1), Type: arrow.PrimitiveTypes.Float32}); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "float32") {
		t.Errorf("float32 literal: %v", err)
	}
	// A call whose description the binder does not give back is refused.
	bad := &pb.Expr{Kind: &pb.Expr_Call{Call: &pb.Call{Fn: "+", Type: &pb.DataType{Id: pb.TypeID_TYPE_ID_STRING},
		Args: []*pb.Expr{mustEncode(t, expr.NewLiteral(int64(1), nil)), mustEncode(t, expr.NewLiteral(int64(2), nil))}}}}
	if _, err := decodeExpr(bad); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "does not bind back") {
		t.Errorf("a call of the wrong type: %v", err)
	}
	unknown := &pb.Expr{Kind: &pb.Expr_Call{Call: &pb.Call{Fn: "no_such_function", Type: &pb.DataType{Id: pb.TypeID_TYPE_ID_INT64}}}}
	if _, err := decodeExpr(unknown); !errors.Is(err, errs.Internal) || !errors.Is(err, errs.Unsupported) {
		t.Errorf("an unknown function: %v", err)
	}
}

func mustType(t *testing.T, typ arrow.DataType) *pb.DataType {
	t.Helper()
	m, err := encodeType(typ)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func mustEncode(t *testing.T, e expr.Expr) *pb.Expr {
	t.Helper()
	m, err := encodeExpr(e)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// testNode is a node type the format does not know.
type testNode struct{ exec.Values }

// TestEncodeErrors: nodes without an encoding or an ID, and fragments of
// another version, fail rather than travel incomplete.
func TestEncodeErrors(t *testing.T) {
	ids := func(exec.Node) int { return 0 }
	if _, err := EncodeFragment(Fragment{Root: &testNode{}}, ids); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "no encoding for node") {
		t.Errorf("unknown node: %v", err)
	}
	v := &exec.Values{Names: []string{"a"}, Types: []arrow.DataType{arrow.PrimitiveTypes.Int64}}
	if _, err := EncodeFragment(Fragment{Root: v}, func(exec.Node) int { return -1 }); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "no ID") {
		t.Errorf("node without an ID: %v", err)
	}
	data, err := EncodeFragment(Fragment{Stage: 1, Root: v}, ids)
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeFragment(data, nil)
	if err != nil || d.Root.String() != v.String() || d.IDs[d.Root] != 0 || d.Stage != 1 {
		t.Fatalf("decoded %v, %v", d, err)
	}
	m := &pb.Fragment{Version: Version + 1, Root: &pb.Node{Op: &pb.Node_Values{Values: &pb.Values{}}}}
	bad, _ := marshal(m)
	if _, err := DecodeFragment(bad, nil); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "version") {
		t.Errorf("other version: %v", err)
	}
	if _, err := DecodeFragment([]byte("not protobuf"), nil); !errors.Is(err, errs.Internal) {
		t.Errorf("garbage: %v", err)
	}
	// A plan whose input is read before it is written.
	in := &shuffle.Exchange{Kind: shuffle.Gather, Child: v}
	consumer := &exec.Limit{Child: in, N: 1}
	numbering := map[exec.Node]int{consumer: 0, in: 1, v: 2}
	data, err = EncodePlan([]Fragment{{Stage: 2, Root: consumer}, {Stage: 1, Root: v, Output: in}}, func(n exec.Node) int { return numbering[n] })
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := DecodePlan(data, nil); !errors.Is(err, errs.Internal) || !strings.Contains(err.Error(), "read before") {
		t.Errorf("consumer first: %v", err)
	}
}

// TestSourceScans: the scans of the source find what they must (so they
// would find a type or constant added beside them).
func TestSourceScans(t *testing.T) {
	nodes := nodeTypes(t)
	for _, want := range []string{"exec.Scan", "exec.HashJoin", "exec.OrderEnforce", "shuffle.Exchange"} {
		if !slices.Contains(nodes, want) {
			t.Errorf("node types %v lack %s", nodes, want)
		}
	}
	exprs := exprTypes(t)
	for _, want := range []string{"Call", "Column", "Literal"} {
		if !slices.Contains(exprs, want) {
			t.Errorf("expression types %v lack %s", exprs, want)
		}
	}
	joins := enumConstants(t, "../exec", "JoinType")
	for _, want := range []string{"InnerJoin", "MarkJoin"} {
		if !slices.Contains(joins, want) {
			t.Errorf("join types %v lack %s", joins, want)
		}
	}
}
