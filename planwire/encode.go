package planwire

import (
	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planwire/pb"
	"github.com/fsql-dev/fsql/shuffle"
)

// encoder writes one fragment.
type encoder struct {
	ids    NodeIDs
	seen   map[exec.Node]bool
	tables map[*hive.Table]*snapshot
}

func encodeFragment(f Fragment, ids NodeIDs) (*pb.Fragment, error) {
	if f.Root == nil {
		return nil, errs.New(errs.Internal, "encoding stage %d: no root", f.Stage)
	}
	if ids == nil {
		return nil, errs.New(errs.Internal, "encoding stage %d: no node IDs", f.Stage)
	}
	if f.Output != nil && f.Output.Child != f.Root {
		return nil, errs.New(errs.Internal, "encoding stage %d: its output exchange is not over its root", f.Stage)
	}
	var scans []*exec.Scan
	walkFragment(f.Root, func(n exec.Node) {
		if s, ok := n.(*exec.Scan); ok {
			scans = append(scans, s)
		}
	})
	tables, snaps, err := encodeTables(scans)
	if err != nil {
		return nil, err
	}
	e := &encoder{ids: ids, seen: map[exec.Node]bool{}, tables: snaps}
	m := &pb.Fragment{Version: Version, Stage: int32(f.Stage), Tables: tables}
	if m.Root, err = e.node(f.Root); err != nil {
		return nil, errs.Wrap(errs.Internal, "encoding stage %d: %w", f.Stage, err)
	}
	if f.Output != nil {
		if m.Output, err = e.exchange(f.Output); err != nil {
			return nil, errs.Wrap(errs.Internal, "encoding stage %d: %w", f.Stage, err)
		}
	}
	return m, nil
}

// walkFragment visits the nodes of one fragment: not below an exchange,
// whose child is the producer's.
func walkFragment(n exec.Node, visit func(exec.Node)) {
	visit(n)
	if _, ok := n.(*shuffle.Exchange); ok {
		return
	}
	for _, c := range n.Children() {
		walkFragment(c, visit)
	}
}

func (e *encoder) id(n exec.Node) (int32, error) {
	id := e.ids(n)
	if id < 0 {
		return 0, errs.New(errs.Internal, "node %s has no ID in the plan", n)
	}
	return int32(id), nil
}

func (e *encoder) exchange(x *shuffle.Exchange) (*pb.Exchange, error) {
	id, err := e.id(x)
	if err != nil {
		return nil, err
	}
	kind, ok := exchangeKinds[x.Kind]
	if !ok {
		return nil, errs.New(errs.Internal, "the plan wire format has no encoding for exchange kind %s", x.Kind)
	}
	keys, err := encodeExprs(x.Keys)
	if err != nil {
		return nil, err
	}
	return &pb.Exchange{Id: id, Kind: kind, Keys: keys, MaxParallelism: int32(x.MaxParallelism)}, nil
}

// node encodes n and its subtree within the fragment. Every node type of
// a physical plan is a case here; a new one must be added (see
// TestEveryNodeTypeHasAnEncoding).
func (e *encoder) node(n exec.Node) (*pb.Node, error) {
	if n == nil {
		return nil, errs.New(errs.Internal, "a plan holds a nil node")
	}
	id, err := e.id(n)
	if err != nil {
		return nil, err
	}
	out := &pb.Node{Id: id}
	if e.seen[n] {
		out.Op = &pb.Node_Ref{Ref: id}
		return out, nil
	}
	e.seen[n] = true
	switch x := n.(type) {
	case *shuffle.Exchange:
		ex, err := e.exchange(x)
		if err != nil {
			return nil, err
		}
		if x.Child == nil {
			return nil, errs.New(errs.Internal, "%s has no child", x)
		}
		schema, err := encodeFields(x.Schema())
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "%s: %w", x, err)
		}
		out.Op = &pb.Node_Input{Input: &pb.InputExchange{Exchange: ex, Schema: schema}}
	case *exec.Scan:
		m, err := e.scan(x)
		if err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Scan{Scan: m}
	case *exec.Filter:
		child, err := e.node(x.Child)
		if err != nil {
			return nil, err
		}
		cond, err := encodeExpr(x.Cond)
		if err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Filter{Filter: &pb.Filter{Child: child, Cond: cond}}
	case *exec.Project:
		child, err := e.node(x.Child)
		if err != nil {
			return nil, err
		}
		exprs, err := encodeExprs(x.Exprs)
		if err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Project{Project: &pb.Project{Child: child, Exprs: exprs, Names: x.Names}}
	case *exec.HashJoin:
		typ, err := encodeJoinType(x.Type)
		if err != nil {
			return nil, err
		}
		m := &pb.HashJoin{Type: typ}
		if m.Build, err = e.node(x.Build); err != nil {
			return nil, err
		}
		if m.Probe, err = e.node(x.Probe); err != nil {
			return nil, err
		}
		if m.BuildKeys, err = encodeExprs(x.BuildKeys); err != nil {
			return nil, err
		}
		if m.ProbeKeys, err = encodeExprs(x.ProbeKeys); err != nil {
			return nil, err
		}
		if m.Residual, err = encodeOptional(x.Residual); err != nil {
			return nil, err
		}
		if x.Output != nil && len(x.Output) == 0 {
			return nil, errs.New(errs.Internal, "a hash join emits no column")
		}
		for _, o := range x.Output {
			m.Output = append(m.Output, int32(o))
		}
		out.Op = &pb.Node_HashJoin{HashJoin: m}
	case *exec.NestedLoopJoin:
		typ, err := encodeJoinType(x.Type)
		if err != nil {
			return nil, err
		}
		m := &pb.NestedLoopJoin{Type: typ}
		if m.Build, err = e.node(x.Build); err != nil {
			return nil, err
		}
		if m.Probe, err = e.node(x.Probe); err != nil {
			return nil, err
		}
		if m.Cond, err = encodeOptional(x.Cond); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_NestedLoopJoin{NestedLoopJoin: m}
	case *exec.HashAggregate:
		mode, ok := aggModes[x.Mode]
		if !ok {
			return nil, errs.New(errs.Internal, "the plan wire format has no encoding for aggregate mode %s", x.Mode)
		}
		m := &pb.HashAggregate{Mode: mode, GroupNames: x.GroupNames}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		if m.GroupBy, err = encodeExprs(x.GroupBy); err != nil {
			return nil, err
		}
		if m.Aggs, err = encodeAggs(x.Aggs); err != nil {
			return nil, err
		}
		for _, l := range x.Seed {
			lm, err := encodeLiteral(l)
			if err != nil {
				return nil, errs.Wrap(errs.Internal, "aggregate seed: %w", err)
			}
			m.Seed = append(m.Seed, lm)
		}
		out.Op = &pb.Node_HashAggregate{HashAggregate: m}
	case *exec.Rollup:
		m := &pb.Rollup{Keys: int32(x.Keys)}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		if m.Aggs, err = encodeAggs(x.Aggs); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Rollup{Rollup: m}
	case *exec.Expand:
		m := &pb.Expand{Names: x.Names, PassNames: x.PassNames}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		for _, set := range x.Sets {
			l := &pb.IntList{}
			for _, v := range set {
				l.Values = append(l.Values, int32(v))
			}
			m.Sets = append(m.Sets, l)
		}
		if m.Exprs, err = encodeExprs(x.Exprs); err != nil {
			return nil, err
		}
		if m.Pass, err = encodeExprs(x.Pass); err != nil {
			return nil, err
		}
		if m.EmptySetOnly, err = encodeOptional(x.EmptySetOnly); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Expand{Expand: m}
	case *exec.Sort:
		m := &pb.Sort{}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		if m.Keys, err = encodeSortKeys(x.Keys); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Sort{Sort: m}
	case *exec.TopN:
		m := &pb.TopN{N: x.N, Offset: x.Offset}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		if m.Keys, err = encodeSortKeys(x.Keys); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_TopN{TopN: m}
	case *exec.Limit:
		m := &pb.Limit{N: x.N, Offset: x.Offset}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Limit{Limit: m}
	case *exec.UnionAll:
		m := &pb.UnionAll{}
		for _, in := range x.Inputs {
			c, err := e.node(in)
			if err != nil {
				return nil, err
			}
			m.Inputs = append(m.Inputs, c)
		}
		out.Op = &pb.Node_UnionAll{UnionAll: m}
	case *exec.Window:
		frame, err := encodeFrame(x.Frame)
		if err != nil {
			return nil, err
		}
		m := &pb.Window{Frame: frame, Presorted: x.Presorted}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		if m.PartitionBy, err = encodeExprs(x.PartitionBy); err != nil {
			return nil, err
		}
		if m.OrderBy, err = encodeSortKeys(x.OrderBy); err != nil {
			return nil, err
		}
		for _, f := range x.Funcs {
			t, err := encodeType(f.Type)
			if err != nil {
				return nil, errs.Wrap(errs.Internal, "window function %s: %w", f.Name, err)
			}
			arg, err := encodeOptional(f.Arg)
			if err != nil {
				return nil, err
			}
			wf := &pb.WindowFunc{Fn: f.Fn, Arg: arg, Type: t, Name: f.Name, N: f.N}
			if f.Default != nil {
				if wf.Default, err = encodeLiteral(f.Default); err != nil {
					return nil, err
				}
			}
			m.Funcs = append(m.Funcs, wf)
		}
		if x.Limit != nil {
			m.Limit = &pb.RankLimit{Fn: x.Limit.Fn, K: x.Limit.K}
		}
		out.Op = &pb.Node_Window{Window: m}
	case *exec.WindowGroupLimit:
		m := &pb.WindowGroupLimit{Limit: &pb.RankLimit{Fn: x.Limit.Fn, K: x.Limit.K}}
		var err error
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		if m.PartitionBy, err = encodeExprs(x.PartitionBy); err != nil {
			return nil, err
		}
		if m.OrderBy, err = encodeSortKeys(x.OrderBy); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_WindowGroupLimit{WindowGroupLimit: m}
	case *exec.Values:
		m := &pb.Values{Names: x.Names}
		for _, row := range x.Rows {
			es, err := encodeExprs(row)
			if err != nil {
				return nil, err
			}
			m.Rows = append(m.Rows, &pb.ExprList{Exprs: es})
		}
		for _, t := range x.Types {
			tm, err := encodeType(t)
			if err != nil {
				return nil, err
			}
			m.Types = append(m.Types, tm)
		}
		out.Op = &pb.Node_Values{Values: m}
	case *exec.MaxOneRow:
		child, err := e.node(x.Child)
		if err != nil {
			return nil, err
		}
		out.Op = &pb.Node_MaxOneRow{MaxOneRow: &pb.MaxOneRow{Child: child}}
	case *exec.DynamicFilterDataCollector:
		m := &pb.DynamicFilterDataCollector{CollectorId: int32(x.ID)}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		if m.Keys, err = encodeExprs(x.Keys); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Collector{Collector: m}
	case *exec.OrderEnforce:
		m := &pb.OrderEnforce{}
		if m.Child, err = e.node(x.Child); err != nil {
			return nil, err
		}
		for _, id := range x.After {
			m.After = append(m.After, int32(id))
		}
		out.Op = &pb.Node_OrderEnforce{OrderEnforce: m}
	case *exec.Sink:
		m := &pb.Sink{Spec: encodeWriteSpec(x.Spec), Partitions: int32(x.Partitions)}
		if m.Input, err = e.node(x.Input); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_Sink{Sink: m}
	case *exec.TableCommit:
		m := &pb.TableCommit{Spec: encodeWriteSpec(x.Spec)}
		if m.Input, err = e.node(x.Input); err != nil {
			return nil, err
		}
		out.Op = &pb.Node_TableCommit{TableCommit: m}
	default:
		return nil, errs.New(errs.Internal, "the plan wire format has no encoding for node %s (%T); add one to plan.proto, encode.go and decode.go", n, n)
	}
	return out, nil
}

func (e *encoder) scan(s *exec.Scan) (*pb.Scan, error) {
	sn := e.tables[s.Table]
	if sn == nil {
		return nil, errs.New(errs.Internal, "scan of %s has no table snapshot", s.Table.Name)
	}
	m := &pb.Scan{Table: sn.index, AllPartitions: s.Partitions == nil}
	for _, c := range s.Columns {
		m.Columns = append(m.Columns, int32(c))
	}
	for _, p := range s.Partitions {
		m.Partitions = append(m.Partitions, sn.parts[p])
	}
	var err error
	if m.Filters, err = encodeExprs(s.Filters); err != nil {
		return nil, err
	}
	for _, t := range s.DynamicFilters {
		m.DynamicFilters = append(m.DynamicFilters, &pb.DynamicFilterTarget{
			CollectorId: int32(t.CollectorID), Column: int32(t.Column), Key: int32(t.Key), Name: t.Name,
		})
	}
	return m, nil
}

func encodeSortKeys(keys []exec.SortKey) ([]*pb.SortKey, error) {
	out := make([]*pb.SortKey, len(keys))
	for i, k := range keys {
		e, err := encodeExpr(k.Expr)
		if err != nil {
			return nil, err
		}
		out[i] = &pb.SortKey{Expr: e, Desc: k.Desc, NullsFirst: k.NullsFirst}
	}
	return out, nil
}

func encodeFrame(f exec.WindowFrame) (*pb.WindowFrame, error) {
	unit, ok := frameUnits[f.Unit]
	if !ok {
		return nil, errs.New(errs.Internal, "the plan wire format has no encoding for frame unit %d", f.Unit)
	}
	m := &pb.WindowFrame{Unit: unit}
	for _, b := range []struct {
		in  exec.FrameBound
		out **pb.FrameBound
	}{{f.Start, &m.Start}, {f.End, &m.End}} {
		kind, ok := boundKinds[b.in.Kind]
		if !ok {
			return nil, errs.New(errs.Internal, "the plan wire format has no encoding for frame bound kind %d", b.in.Kind)
		}
		v, err := encodeOptional(b.in.Value)
		if err != nil {
			return nil, err
		}
		*b.out = &pb.FrameBound{Kind: kind, Rows: b.in.Rows, Value: v}
	}
	return m, nil
}

func encodeJoinType(t exec.JoinType) (pb.JoinType, error) {
	m, ok := joinTypes[t]
	if !ok {
		return 0, errs.New(errs.Internal, "the plan wire format has no encoding for join type %s", t)
	}
	return m, nil
}

// The enums, one entry per constant of the engine's types (checked by
// TestEveryEnumValueHasAnEncoding).
var (
	exchangeKinds = map[shuffle.Kind]pb.ExchangeKind{
		shuffle.Hash:      pb.ExchangeKind_EXCHANGE_KIND_HASH,
		shuffle.Broadcast: pb.ExchangeKind_EXCHANGE_KIND_BROADCAST,
		shuffle.Gather:    pb.ExchangeKind_EXCHANGE_KIND_GATHER,
		shuffle.Forward:   pb.ExchangeKind_EXCHANGE_KIND_FORWARD,
	}
	joinTypes = map[exec.JoinType]pb.JoinType{
		exec.InnerJoin:         pb.JoinType_JOIN_TYPE_INNER,
		exec.LeftJoin:          pb.JoinType_JOIN_TYPE_LEFT,
		exec.RightJoin:         pb.JoinType_JOIN_TYPE_RIGHT,
		exec.FullJoin:          pb.JoinType_JOIN_TYPE_FULL,
		exec.SemiJoin:          pb.JoinType_JOIN_TYPE_SEMI,
		exec.AntiJoin:          pb.JoinType_JOIN_TYPE_ANTI,
		exec.NullAwareAntiJoin: pb.JoinType_JOIN_TYPE_NULL_AWARE_ANTI,
		exec.MarkJoin:          pb.JoinType_JOIN_TYPE_MARK,
	}
	aggModes = map[exec.AggMode]pb.AggMode{
		exec.AggSingle:  pb.AggMode_AGG_MODE_SINGLE,
		exec.AggPartial: pb.AggMode_AGG_MODE_PARTIAL,
		exec.AggFinal:   pb.AggMode_AGG_MODE_FINAL,
	}
	frameUnits = map[exec.FrameUnit]pb.FrameUnit{
		exec.FrameRange: pb.FrameUnit_FRAME_UNIT_RANGE,
		exec.FrameRows:  pb.FrameUnit_FRAME_UNIT_ROWS,
	}
	boundKinds = map[exec.BoundKind]pb.BoundKind{
		exec.UnboundedPreceding: pb.BoundKind_BOUND_KIND_UNBOUNDED_PRECEDING,
		exec.Preceding:          pb.BoundKind_BOUND_KIND_PRECEDING,
		exec.CurrentRow:         pb.BoundKind_BOUND_KIND_CURRENT_ROW,
		exec.Following:          pb.BoundKind_BOUND_KIND_FOLLOWING,
		exec.UnboundedFollowing: pb.BoundKind_BOUND_KIND_UNBOUNDED_FOLLOWING,
	}
)

// invert is the decoding direction of an enum map.
func invert[K, V comparable](m map[K]V) map[V]K {
	out := make(map[V]K, len(m))
	for k, v := range m {
		out[v] = k
	}
	return out
}

var (
	exchangeKindsBack = invert(exchangeKinds)
	joinTypesBack     = invert(joinTypes)
	aggModesBack      = invert(aggModes)
	frameUnitsBack    = invert(frameUnits)
	boundKindsBack    = invert(boundKinds)
)

func encodeWriteSpec(w *hive.WriteSpec) *pb.WriteSpec {
	m := &pb.WriteSpec{
		Table: w.Table, DataDir: w.DataDir, Dir: w.Dir, Work: w.Work, Id: w.ID,
		Create: w.Create, Overwrite: w.Overwrite, Static: w.Static,
		Meta:    &pb.TableMeta{Format: w.Meta.Format, Partitions: w.Meta.Partitions, CreatedBy: w.Meta.CreatedBy},
		Options: &pb.WriteOptions{Compression: w.Options.Compression, RowGroupRows: w.Options.RowGroupRows, TargetFileSize: w.Options.TargetFileSize},
	}
	for _, c := range w.Meta.Columns {
		m.Meta.Columns = append(m.Meta.Columns, &pb.MetaColumn{Name: c.Name, Type: c.Type})
	}
	if x := w.Export; x != nil {
		m.Export = &pb.ExportSpec{
			Path: x.Path, Parquet: x.Parquet, Folder: x.Folder,
			FieldsTerminated: x.CSV.FieldsTerminated, Enclosed: x.CSV.Enclosed, OptEnclosed: x.CSV.OptEnclosed,
			Escaped: x.CSV.Escaped, LinesStarting: x.CSV.LinesStarting, LinesTerminated: x.CSV.LinesTerminated,
		}
	}
	return m
}

// encodeAggs encodes a HashAggregate's or a Rollup's aggregates.
func encodeAggs(aggs []exec.AggFunc) ([]*pb.AggFunc, error) {
	var out []*pb.AggFunc
	for _, a := range aggs {
		t, err := encodeType(a.Type)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "aggregate %s: %w", a, err)
		}
		arg, err := encodeOptional(a.Arg)
		if err != nil {
			return nil, err
		}
		out = append(out, &pb.AggFunc{Fn: a.Fn, Arg: arg, Distinct: a.Distinct, Type: t, Name: a.Name})
	}
	return out, nil
}
