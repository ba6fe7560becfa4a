package planwire

import (
	"google.golang.org/protobuf/proto"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planwire/pb"
	"github.com/fsql-dev/fsql/pruning"
	"github.com/fsql-dev/fsql/shuffle"
)

// producer is a decoded output exchange, for the consumers that follow.
type producer struct {
	ex  *shuffle.Exchange
	msg *pb.Exchange
}

// decoder reads fragments. With producers set (a whole plan), an input
// exchange is the output exchange of an earlier fragment; without (one
// fragment), it reads an Input placeholder.
type decoder struct {
	r         Resolver
	producers map[int32]*producer

	// per fragment
	tables []*resolved
	byID   map[int32]exec.Node
	ids    map[exec.Node]int
}

func newDecoder(r Resolver, producers map[int32]*producer) *decoder {
	return &decoder{r: r, producers: producers}
}

func (d *decoder) fragment(m *pb.Fragment) (*Decoded, error) {
	if m.Version != Version {
		return nil, errs.New(errs.Internal, "plan fragment of wire format version %d; this build reads version %d", m.Version, Version)
	}
	d.tables = d.tables[:0]
	d.byID = map[int32]exec.Node{}
	d.ids = map[exec.Node]int{}
	for _, tm := range m.Tables {
		t, err := resolveTable(d.r, tm)
		if err != nil {
			return nil, err
		}
		d.tables = append(d.tables, t)
	}
	root, err := d.node(m.Root)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, "decoding stage %d: %w", m.Stage, err)
	}
	out := &Decoded{Fragment: Fragment{Stage: int(m.Stage), Root: root}, IDs: d.ids}
	if m.Output != nil {
		ex, err := d.exchange(m.Output, root)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "decoding stage %d: %w", m.Stage, err)
		}
		if err := d.record(m.Output.Id, ex); err != nil {
			return nil, err
		}
		out.Output = ex
		if d.producers != nil {
			if _, dup := d.producers[m.Output.Id]; dup {
				return nil, errs.New(errs.Internal, "two fragments write exchange %d", m.Output.Id)
			}
			d.producers[m.Output.Id] = &producer{ex: ex, msg: m.Output}
		}
	}
	return out, nil
}

// record notes n's ID.
func (d *decoder) record(id int32, n exec.Node) error {
	if id < 0 {
		return errs.New(errs.Internal, "node %s has a negative ID", n)
	}
	if _, dup := d.byID[id]; dup {
		return errs.New(errs.Internal, "two nodes of one fragment have ID %d", id)
	}
	d.byID[id] = n
	d.ids[n] = int(id)
	return nil
}

func (d *decoder) exchange(m *pb.Exchange, child exec.Node) (*shuffle.Exchange, error) {
	kind, ok := exchangeKindsBack[m.Kind]
	if !ok {
		return nil, errs.New(errs.Internal, "unknown exchange kind %d", m.Kind)
	}
	keys, err := decodeExprs(m.Keys)
	if err != nil {
		return nil, err
	}
	return &shuffle.Exchange{Kind: kind, Child: child, Keys: keys, MaxParallelism: int(m.MaxParallelism)}, nil
}

// input decodes an exchange the fragment reads: the producer's output
// exchange when the plan is decoded whole, else one over an Input.
func (d *decoder) input(id int32, m *pb.InputExchange) (exec.Node, error) {
	if m.Exchange == nil || m.Exchange.Id != id {
		return nil, errs.New(errs.Internal, "input node %d does not describe exchange %d", id, id)
	}
	schema, err := decodeFields(m.Schema)
	if err != nil {
		return nil, err
	}
	if d.producers == nil {
		return d.exchange(m.Exchange, &Input{Exchange: int(id), schema: schema})
	}
	p := d.producers[id]
	if p == nil {
		return nil, errs.New(errs.Internal, "exchange %d is read before any fragment writes it (fragments go producers first)", id)
	}
	if !proto.Equal(p.msg, m.Exchange) {
		return nil, errs.New(errs.Internal, "exchange %d is read as %s, written as %s", id, m.Exchange, p.msg)
	}
	if !p.ex.Schema().Equal(schema) {
		return nil, errs.New(errs.Internal, "exchange %d carries %s, read as %s", id, p.ex.Schema(), schema)
	}
	return p.ex, nil
}

func (d *decoder) node(m *pb.Node) (exec.Node, error) {
	if m == nil {
		return nil, errs.New(errs.Internal, "a node is missing")
	}
	if r, ok := m.Op.(*pb.Node_Ref); ok {
		n := d.byID[r.Ref]
		if n == nil || r.Ref != m.Id {
			return nil, errs.New(errs.Internal, "reference to node %d, which the fragment has not written", r.Ref)
		}
		return n, nil
	}
	n, err := d.op(m)
	if err != nil {
		return nil, err
	}
	if err := d.record(m.Id, n); err != nil {
		return nil, err
	}
	return n, nil
}

// op decodes the operator of m; children first.
func (d *decoder) op(m *pb.Node) (exec.Node, error) {
	switch x := m.Op.(type) {
	case *pb.Node_Input:
		return d.input(m.Id, x.Input)
	case *pb.Node_Scan:
		return d.scan(x.Scan)
	case *pb.Node_Filter:
		child, err := d.node(x.Filter.Child)
		if err != nil {
			return nil, err
		}
		cond, err := decodeExpr(x.Filter.Cond)
		if err != nil {
			return nil, err
		}
		return &exec.Filter{Child: child, Cond: cond}, nil
	case *pb.Node_Project:
		child, err := d.node(x.Project.Child)
		if err != nil {
			return nil, err
		}
		exprs, err := decodeExprs(x.Project.Exprs)
		if err != nil {
			return nil, err
		}
		return &exec.Project{Child: child, Exprs: exprs, Names: x.Project.Names}, nil
	case *pb.Node_HashJoin:
		j := x.HashJoin
		typ, ok := joinTypesBack[j.Type]
		if !ok {
			return nil, errs.New(errs.Internal, "unknown join type %d", j.Type)
		}
		out := &exec.HashJoin{Type: typ}
		var err error
		if out.Build, err = d.node(j.Build); err != nil {
			return nil, err
		}
		if out.Probe, err = d.node(j.Probe); err != nil {
			return nil, err
		}
		if out.BuildKeys, err = decodeExprs(j.BuildKeys); err != nil {
			return nil, err
		}
		if out.ProbeKeys, err = decodeExprs(j.ProbeKeys); err != nil {
			return nil, err
		}
		if out.Residual, err = decodeOptional(j.Residual); err != nil {
			return nil, err
		}
		for _, o := range j.Output {
			out.Output = append(out.Output, int(o))
		}
		return out, nil
	case *pb.Node_NestedLoopJoin:
		j := x.NestedLoopJoin
		typ, ok := joinTypesBack[j.Type]
		if !ok {
			return nil, errs.New(errs.Internal, "unknown join type %d", j.Type)
		}
		out := &exec.NestedLoopJoin{Type: typ}
		var err error
		if out.Build, err = d.node(j.Build); err != nil {
			return nil, err
		}
		if out.Probe, err = d.node(j.Probe); err != nil {
			return nil, err
		}
		if out.Cond, err = decodeOptional(j.Cond); err != nil {
			return nil, err
		}
		return out, nil
	case *pb.Node_HashAggregate:
		a := x.HashAggregate
		mode, ok := aggModesBack[a.Mode]
		if !ok {
			return nil, errs.New(errs.Internal, "unknown aggregate mode %d", a.Mode)
		}
		out := &exec.HashAggregate{Mode: mode, GroupNames: a.GroupNames}
		var err error
		if out.Child, err = d.node(a.Child); err != nil {
			return nil, err
		}
		if out.GroupBy, err = decodeExprs(a.GroupBy); err != nil {
			return nil, err
		}
		if out.Aggs, err = decodeAggs(a.Aggs); err != nil {
			return nil, err
		}
		for _, lm := range a.Seed {
			l, err := decodeLiteral(lm)
			if err != nil {
				return nil, err
			}
			out.Seed = append(out.Seed, l)
		}
		return out, nil
	case *pb.Node_Rollup:
		r := x.Rollup
		out := &exec.Rollup{Keys: int(r.Keys)}
		var err error
		if out.Child, err = d.node(r.Child); err != nil {
			return nil, err
		}
		if out.Aggs, err = decodeAggs(r.Aggs); err != nil {
			return nil, err
		}
		return out, nil
	case *pb.Node_Expand:
		e := x.Expand
		out := &exec.Expand{Names: e.Names, PassNames: e.PassNames}
		var err error
		if out.Child, err = d.node(e.Child); err != nil {
			return nil, err
		}
		for _, l := range e.Sets {
			set := make([]int, len(l.Values))
			for i, v := range l.Values {
				set[i] = int(v)
			}
			out.Sets = append(out.Sets, set)
		}
		if out.Exprs, err = decodeExprs(e.Exprs); err != nil {
			return nil, err
		}
		if out.Pass, err = decodeExprs(e.Pass); err != nil {
			return nil, err
		}
		if out.EmptySetOnly, err = decodeOptional(e.EmptySetOnly); err != nil {
			return nil, err
		}
		return out, nil
	case *pb.Node_Sort:
		child, err := d.node(x.Sort.Child)
		if err != nil {
			return nil, err
		}
		keys, err := decodeSortKeys(x.Sort.Keys)
		if err != nil {
			return nil, err
		}
		return &exec.Sort{Child: child, Keys: keys}, nil
	case *pb.Node_TopN:
		child, err := d.node(x.TopN.Child)
		if err != nil {
			return nil, err
		}
		keys, err := decodeSortKeys(x.TopN.Keys)
		if err != nil {
			return nil, err
		}
		return &exec.TopN{Child: child, Keys: keys, N: x.TopN.N, Offset: x.TopN.Offset}, nil
	case *pb.Node_Limit:
		child, err := d.node(x.Limit.Child)
		if err != nil {
			return nil, err
		}
		return &exec.Limit{Child: child, N: x.Limit.N, Offset: x.Limit.Offset}, nil
	case *pb.Node_UnionAll:
		out := &exec.UnionAll{}
		for _, in := range x.UnionAll.Inputs {
			c, err := d.node(in)
			if err != nil {
				return nil, err
			}
			out.Inputs = append(out.Inputs, c)
		}
		return out, nil
	case *pb.Node_Window:
		w := x.Window
		frame, err := decodeFrame(w.Frame)
		if err != nil {
			return nil, err
		}
		out := &exec.Window{Frame: frame, Presorted: w.Presorted}
		if out.Child, err = d.node(w.Child); err != nil {
			return nil, err
		}
		if out.PartitionBy, err = decodeExprs(w.PartitionBy); err != nil {
			return nil, err
		}
		if out.OrderBy, err = decodeSortKeys(w.OrderBy); err != nil {
			return nil, err
		}
		for _, f := range w.Funcs {
			t, err := decodeType(f.Type)
			if err != nil {
				return nil, err
			}
			arg, err := decodeOptional(f.Arg)
			if err != nil {
				return nil, err
			}
			wf := exec.WindowFunc{Fn: f.Fn, Arg: arg, Type: t, Name: f.Name, N: f.N}
			if f.Default != nil {
				if wf.Default, err = decodeLiteral(f.Default); err != nil {
					return nil, err
				}
			}
			out.Funcs = append(out.Funcs, wf)
		}
		if l := w.Limit; l != nil {
			out.Limit = &exec.RankLimit{Fn: l.Fn, K: l.K}
		}
		return out, nil
	case *pb.Node_WindowGroupLimit:
		w := x.WindowGroupLimit
		if w.Limit == nil {
			return nil, errs.New(errs.Internal, "plan wire: a WindowGroupLimit without its limit")
		}
		out := &exec.WindowGroupLimit{Limit: exec.RankLimit{Fn: w.Limit.Fn, K: w.Limit.K}}
		var err error
		if out.Child, err = d.node(w.Child); err != nil {
			return nil, err
		}
		if out.PartitionBy, err = decodeExprs(w.PartitionBy); err != nil {
			return nil, err
		}
		if out.OrderBy, err = decodeSortKeys(w.OrderBy); err != nil {
			return nil, err
		}
		return out, nil
	case *pb.Node_Values:
		v := x.Values
		out := &exec.Values{Names: v.Names}
		for _, row := range v.Rows {
			es, err := decodeExprs(row.Exprs)
			if err != nil {
				return nil, err
			}
			out.Rows = append(out.Rows, es)
		}
		for _, tm := range v.Types {
			t, err := decodeType(tm)
			if err != nil {
				return nil, err
			}
			out.Types = append(out.Types, t)
		}
		return out, nil
	case *pb.Node_MaxOneRow:
		child, err := d.node(x.MaxOneRow.Child)
		if err != nil {
			return nil, err
		}
		return &exec.MaxOneRow{Child: child}, nil
	case *pb.Node_Collector:
		c := x.Collector
		child, err := d.node(c.Child)
		if err != nil {
			return nil, err
		}
		keys, err := decodeExprs(c.Keys)
		if err != nil {
			return nil, err
		}
		return &exec.DynamicFilterDataCollector{ID: int(c.CollectorId), Child: child, Keys: keys}, nil
	case *pb.Node_OrderEnforce:
		o := x.OrderEnforce
		child, err := d.node(o.Child)
		if err != nil {
			return nil, err
		}
		out := &exec.OrderEnforce{Child: child}
		for _, id := range o.After {
			out.After = append(out.After, int(id))
		}
		return out, nil
	case *pb.Node_Sink:
		input, err := d.node(x.Sink.Input)
		if err != nil {
			return nil, err
		}
		spec, err := decodeWriteSpec(x.Sink.Spec)
		if err != nil {
			return nil, err
		}
		return &exec.Sink{Input: input, Spec: spec, Partitions: int(x.Sink.Partitions)}, nil
	case *pb.Node_TableCommit:
		input, err := d.node(x.TableCommit.Input)
		if err != nil {
			return nil, err
		}
		spec, err := decodeWriteSpec(x.TableCommit.Spec)
		if err != nil {
			return nil, err
		}
		return &exec.TableCommit{Input: input, Spec: spec}, nil
	}
	return nil, errs.New(errs.Internal, "node %d has an unknown operator %T", m.Id, m.Op)
}

func (d *decoder) scan(m *pb.Scan) (exec.Node, error) {
	if m.Table < 0 || int(m.Table) >= len(d.tables) {
		return nil, errs.New(errs.Internal, "a scan reads table #%d of a fragment with %d", m.Table, len(d.tables))
	}
	t := d.tables[m.Table]
	parts, err := t.scanPartitions(m.AllPartitions, m.Partitions)
	if err != nil {
		return nil, err
	}
	s := &exec.Scan{Table: t.table, Partitions: parts}
	for _, c := range m.Columns {
		s.Columns = append(s.Columns, int(c))
	}
	if s.Filters, err = decodeExprs(m.Filters); err != nil {
		return nil, err
	}
	for _, tg := range m.DynamicFilters {
		s.DynamicFilters = append(s.DynamicFilters, pruning.Target{
			CollectorID: int(tg.CollectorId), Column: int(tg.Column), Key: int(tg.Key), Name: tg.Name,
		})
	}
	return s, nil
}

func decodeFrame(m *pb.WindowFrame) (exec.WindowFrame, error) {
	var f exec.WindowFrame
	if m == nil {
		return f, errs.New(errs.Internal, "a window without its frame")
	}
	unit, ok := frameUnitsBack[m.Unit]
	if !ok {
		return f, errs.New(errs.Internal, "unknown frame unit %d", m.Unit)
	}
	f.Unit = unit
	for _, b := range []struct {
		in  *pb.FrameBound
		out *exec.FrameBound
	}{{m.Start, &f.Start}, {m.End, &f.End}} {
		if b.in == nil {
			return f, errs.New(errs.Internal, "a window frame without a bound")
		}
		kind, ok := boundKindsBack[b.in.Kind]
		if !ok {
			return f, errs.New(errs.Internal, "unknown frame bound kind %d", b.in.Kind)
		}
		v, err := decodeOptional(b.in.Value)
		if err != nil {
			return f, err
		}
		*b.out = exec.FrameBound{Kind: kind, Rows: b.in.Rows, Value: v}
	}
	return f, nil
}

func decodeSortKeys(ms []*pb.SortKey) ([]exec.SortKey, error) {
	out := make([]exec.SortKey, len(ms))
	for i, m := range ms {
		e, err := decodeExpr(m.Expr)
		if err != nil {
			return nil, err
		}
		out[i] = exec.SortKey{Expr: e, Desc: m.Desc, NullsFirst: m.NullsFirst}
	}
	return out, nil
}

func decodeWriteSpec(m *pb.WriteSpec) (*hive.WriteSpec, error) {
	if m == nil || m.Meta == nil || m.Options == nil {
		return nil, errs.New(errs.Internal, "a write node without its write spec")
	}
	w := &hive.WriteSpec{
		Table: m.Table, DataDir: m.DataDir, Dir: m.Dir, Work: m.Work, ID: m.Id,
		Create: m.Create, Overwrite: m.Overwrite, Static: m.Static,
		Meta:    hive.TableMeta{Format: m.Meta.Format, Partitions: m.Meta.Partitions, CreatedBy: m.Meta.CreatedBy},
		Options: hive.WriteOptions{Compression: m.Options.Compression, RowGroupRows: m.Options.RowGroupRows, TargetFileSize: m.Options.TargetFileSize},
	}
	for _, c := range m.Meta.Columns {
		w.Meta.Columns = append(w.Meta.Columns, hive.MetaColumn{Name: c.Name, Type: c.Type})
	}
	if x := m.Export; x != nil {
		w.Export = &hive.ExportSpec{Path: x.Path, Parquet: x.Parquet, Folder: x.Folder, CSV: hive.CSVExport{
			FieldsTerminated: x.FieldsTerminated, Enclosed: x.Enclosed, OptEnclosed: x.OptEnclosed,
			Escaped: x.Escaped, LinesStarting: x.LinesStarting, LinesTerminated: x.LinesTerminated,
		}}
	}
	if _, err := w.Meta.Schema(); err != nil {
		return nil, errs.Wrap(errs.Internal, "the write spec of table %s: %w", w.Table, err)
	}
	return w, nil
}

// decodeAggs decodes a HashAggregate's or a Rollup's aggregates.
func decodeAggs(aggs []*pb.AggFunc) ([]exec.AggFunc, error) {
	var out []exec.AggFunc
	for _, f := range aggs {
		t, err := decodeType(f.Type)
		if err != nil {
			return nil, err
		}
		arg, err := decodeOptional(f.Arg)
		if err != nil {
			return nil, err
		}
		out = append(out, exec.AggFunc{Fn: f.Fn, Arg: arg, Distinct: f.Distinct, Type: t, Name: f.Name})
	}
	return out, nil
}
