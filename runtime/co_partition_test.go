package runtime

import (
	"testing"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/exec/expr"
	"github.com/fsql-dev/fsql/shuffle"
)

// TestCoPartitionOf: which planned broadcast joins may run co-partitioned
// (runtime/co_partition.go), and with which build keys in the order of
// the probe side's hash keys. genSchema is (id int64, key int64,
// producer int32).
func TestCoPartitionOf(t *testing.T) {
	i64, i32 := arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int32
	col := func(i int, typ arrow.DataType) expr.Expr { return expr.NewColumn(i, typ, "") }
	hashOn := func(keys ...expr.Expr) *shuffle.Exchange {
		return &shuffle.Exchange{Kind: shuffle.Hash, Child: &genSource{}, Keys: keys}
	}
	bcast := func() *shuffle.Exchange { return &shuffle.Exchange{Kind: shuffle.Broadcast, Child: &genSource{}} }
	// A final aggregate grouping by its first two input columns (id,
	// key): its output starts with them.
	final := func(ex *shuffle.Exchange) exec.Node {
		return &exec.HashAggregate{Child: ex, Mode: exec.AggFinal, GroupBy: []expr.Expr{col(0, i64), col(1, i64)}, GroupNames: []string{"id", "key"}}
	}
	type want struct {
		ok   bool
		keys []int // build key columns, in hash-key order
	}
	for _, c := range []struct {
		name  string
		join  func() (*exec.HashJoin, *shuffle.Exchange)
		typ   exec.JoinType
		want  want
		probe bool // the probe exchange found is the one made
	}{
		{
			name: "probe is the hash exchange",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				return &exec.HashJoin{Build: bcast(), Probe: ex, BuildKeys: []expr.Expr{col(0, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
			want: want{true, []int{0}},
		},
		{
			name: "keys in another order than the hash keys",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(0, i64), col(1, i64))
				// build (id, key) = probe (key, id) of a final aggregate
				// over an exchange hashed on (id, key): hash key 0 (id)
				// is join key 1, whose build key is column 1.
				return &exec.HashJoin{Build: bcast(), Probe: final(ex),
					BuildKeys: []expr.Expr{col(0, i64), col(1, i64)}, ProbeKeys: []expr.Expr{col(1, i64), col(0, i64)}}, ex
			},
			want: want{true, []int{1, 0}},
		},
		{
			name: "through a projection and a filter",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				p := &exec.Project{Child: &exec.Filter{Child: ex, Cond: expr.NewLiteral(true, arrow.FixedWidthTypes.Boolean)},
					Exprs: []expr.Expr{col(2, i32), col(1, i64)}, Names: []string{"producer", "key"}}
				return &exec.HashJoin{Build: bcast(), Probe: p, BuildKeys: []expr.Expr{col(1, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
			want: want{true, []int{1}},
		},
		{
			name: "a hash key not among the join keys",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(0, i64), col(1, i64))
				return &exec.HashJoin{Build: bcast(), Probe: final(ex), BuildKeys: []expr.Expr{col(1, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
		},
		{
			name: "hashed on a computed key",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(expr.NewLiteral(int64(1), i64))
				return &exec.HashJoin{Build: bcast(), Probe: ex, BuildKeys: []expr.Expr{col(1, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
		},
		{
			name: "a build key of another hash (string against int)",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				return &exec.HashJoin{Build: bcast(), Probe: ex, BuildKeys: []expr.Expr{col(0, arrow.BinaryTypes.String)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
		},
		{
			name: "int32 build key against an int64 hash key (hashed as int64)",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				return &exec.HashJoin{Build: bcast(), Probe: ex, BuildKeys: []expr.Expr{col(2, i32)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
			want: want{true, []int{2}},
		},
		{
			name: "build side not broadcast",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				return &exec.HashJoin{Build: hashOn(col(0, i64)), Probe: ex, BuildKeys: []expr.Expr{col(0, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
		},
		{
			name: "probe side a broadcast",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := bcast()
				return &exec.HashJoin{Build: bcast(), Probe: ex, BuildKeys: []expr.Expr{col(0, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
		},
		{
			name: "through a full join's probe side",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				full := &exec.HashJoin{Type: exec.FullJoin, Build: hashOn(col(1, i64)), Probe: ex, BuildKeys: []expr.Expr{col(1, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}
				return &exec.HashJoin{Build: bcast(), Probe: full, BuildKeys: []expr.Expr{col(0, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
		},
		{
			name: "through a left join's probe side",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				left := &exec.HashJoin{Type: exec.LeftJoin, Build: bcast(), Probe: ex, BuildKeys: []expr.Expr{col(1, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}
				return &exec.HashJoin{Build: bcast(), Probe: left, BuildKeys: []expr.Expr{col(0, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}, ex
			},
			want: want{true, []int{0}},
		},
		{
			name: "the left join's build column",
			join: func() (*exec.HashJoin, *shuffle.Exchange) {
				ex := hashOn(col(1, i64))
				left := &exec.HashJoin{Type: exec.LeftJoin, Build: bcast(), Probe: ex, BuildKeys: []expr.Expr{col(1, i64)}, ProbeKeys: []expr.Expr{col(1, i64)}}
				// column 4 is the build side's key, NULL for unmatched rows.
				return &exec.HashJoin{Build: bcast(), Probe: left, BuildKeys: []expr.Expr{col(0, i64)}, ProbeKeys: []expr.Expr{col(4, i64)}}, ex
			},
		},
	} {
		for _, typ := range []exec.JoinType{exec.InnerJoin, exec.LeftJoin, exec.SemiJoin, exec.AntiJoin, exec.NullAwareAntiJoin, exec.MarkJoin, exec.RightJoin, exec.FullJoin} {
			j, ex := c.join()
			j.Type = typ
			cp := coPartitionOf(j)
			ok := c.want.ok && (typ == exec.InnerJoin || typ == exec.LeftJoin || typ == exec.SemiJoin || typ == exec.AntiJoin)
			if (cp != nil) != ok {
				t.Errorf("%s, %s join: co-partition candidate %v, want %v", c.name, typ, cp != nil, ok)
				continue
			}
			if cp == nil {
				continue
			}
			if cp.probe != ex || cp.build != j.Build {
				t.Errorf("%s, %s join: wrong exchanges", c.name, typ)
			}
			var got []int
			for _, k := range cp.keys {
				got = append(got, k.(*expr.Column).Index)
			}
			if len(got) != len(c.want.keys) {
				t.Errorf("%s, %s join: build keys %v, want %v", c.name, typ, got, c.want.keys)
				continue
			}
			for i := range got {
				if got[i] != c.want.keys[i] {
					t.Errorf("%s, %s join: build keys %v, want %v", c.name, typ, got, c.want.keys)
					break
				}
			}
		}
	}
}

// TestCoPartitionThroughForward: a probe side that comes through a
// forward edge from a stage that read a hash exchange on the join keys
// (q97's aggregates joined on their group keys) is a candidate, with the
// forward edge as via; through two forward edges it is not. A broadcast
// build side that was hash-partitioned on the same keys before it was
// broadcast (directly or through one forward edge) says so (buildHash),
// so that its tasks' pieces can be taken whole; partitioned on the keys
// in another order, or on other keys, it does not.
func TestCoPartitionThroughForward(t *testing.T) {
	i64 := arrow.PrimitiveTypes.Int64
	col := func(i int) expr.Expr { return expr.NewColumn(i, i64, "") }
	hashOn := func(keys ...expr.Expr) *shuffle.Exchange {
		return &shuffle.Exchange{Kind: shuffle.Hash, Child: &genSource{}, Keys: keys}
	}
	final := func(ex *shuffle.Exchange) exec.Node {
		return &exec.HashAggregate{Child: ex, Mode: exec.AggFinal, GroupBy: []expr.Expr{col(0), col(1)}, GroupNames: []string{"id", "key"}}
	}
	forward := func(n exec.Node) *shuffle.Exchange { return &shuffle.Exchange{Kind: shuffle.Forward, Child: n} }
	bcast := func(n exec.Node) *shuffle.Exchange { return &shuffle.Exchange{Kind: shuffle.Broadcast, Child: n} }
	join := func(build, probe exec.Node, buildKeys ...int) *exec.HashJoin {
		return &exec.HashJoin{Type: exec.AntiJoin, Build: build, Probe: probe,
			BuildKeys: []expr.Expr{col(buildKeys[0]), col(buildKeys[1])}, ProbeKeys: []expr.Expr{col(0), col(1)}}
	}

	ph := hashOn(col(0), col(1))
	fwd := forward(final(ph))
	bh := hashOn(col(0), col(1))
	bfwd := forward(final(bh))
	cp := coPartitionOf(join(bcast(bfwd), fwd, 0, 1))
	if cp == nil || cp.probe != ph || cp.via != fwd {
		t.Fatalf("through a forward edge: got %+v, want probe the hash exchange via the forward edge", cp)
	}
	if cp.buildHash != bh || cp.buildVia != bfwd {
		t.Errorf("build side hash-partitioned through a forward edge: buildHash %v via %v", cp.buildHash, cp.buildVia)
	}

	// The build stage reading the hash exchange itself.
	bh2 := hashOn(col(0), col(1))
	if cp := coPartitionOf(join(bcast(final(bh2)), fwd, 0, 1)); cp == nil || cp.buildHash != bh2 || cp.buildVia != nil {
		t.Errorf("build stage reading the hash exchange: got %+v", cp)
	}
	// Build keys in the other order than the build side's hash keys:
	// still a candidate, but its pieces' key groups are not the probe's.
	if cp := coPartitionOf(join(bcast(bfwd), fwd, 1, 0)); cp == nil || cp.buildHash != nil {
		t.Errorf("build keys swapped: got %+v, want a candidate without buildHash", cp)
	}
	// Build side partitioned on one of the keys only.
	if cp := coPartitionOf(join(bcast(forward(final(hashOn(col(0))))), fwd, 0, 1)); cp == nil || cp.buildHash != nil {
		t.Errorf("build side hashed on other keys: got %+v, want a candidate without buildHash", cp)
	}
	// Two forward edges.
	if cp := coPartitionOf(join(bcast(bfwd), forward(fwd), 0, 1)); cp != nil {
		t.Errorf("through two forward edges: got a candidate %+v", cp)
	}
}
