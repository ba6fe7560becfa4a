package pruning

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/connectors/hive"
)

// ints builds an Int64 array; nil entries are NULL.
func ints(mem memory.Allocator, vals ...any) arrow.Array {
	b := array.NewInt64Builder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(int64(v.(int)))
		}
	}
	return b.NewArray()
}

func int32s(mem memory.Allocator, vals ...any) arrow.Array {
	b := array.NewInt32Builder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(int32(v.(int)))
		}
	}
	return b.NewArray()
}

func strs(mem memory.Allocator, vals ...any) arrow.Array {
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for _, v := range vals {
		if v == nil {
			b.AppendNull()
		} else {
			b.Append(v.(string))
		}
	}
	return b.NewArray()
}

// add hands one key column to the sink and releases it, as the collector does.
func add(t *testing.T, s *Collector, task, p int, a arrow.Array) {
	t.Helper()
	defer a.Release()
	if err := s.Add(task, 0, p, []arrow.Array{a}); err != nil {
		t.Fatal(err)
	}
}

// finish ends attempt 0 of task and commits it, as the runtime does.
func finish(t *testing.T, s *Collector, task, p int) {
	t.Helper()
	if err := s.Finish(task, 0, p); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(task, 0); err != nil {
		t.Fatal(err)
	}
}

func partDays(parts []*hive.Partition) string {
	var out []string
	for _, p := range parts {
		out = append(out, fmt.Sprint(p.Values[0]))
	}
	return strings.Join(out, ",")
}

func keptGroups(d *Decision, f *hive.File) string {
	if !d.FiltersFiles() {
		return "all"
	}
	got := ""
	for rg := range f.RowGroups {
		if d.KeepRowGroup(f, rg) {
			got += fmt.Sprint(rg)
		}
	}
	return got
}

// TestDegradedFilter: past MaxValues the filter becomes a bloom filter
// plus min/max that still matches every collected key, and rejects most
// others.
func TestDegradedFilter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := NewCoordinator(CoordinatorConfig{MaxValues: 100})
	sink := c.Collector(1)
	if c.Collector(1) != sink {
		t.Fatal("Collector(1) returned two objects")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	keys := map[int64]bool{}
	var all []int64
	for len(all) < 10000 {
		k := rng.Int64N(1 << 40)
		if !keys[k] {
			keys[k] = true
			all = append(all, k)
		}
	}
	// Two tasks add concurrently.
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for task := 0; task < 2; task++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := task * 500; i < len(all); i += 1000 {
				b := array.NewInt64Builder(mem)
				for j := i; j < min(i+500, len(all)); j++ {
					b.Append(all[j])
				}
				a := b.NewArray()
				b.Release()
				if err := sink.Add(task, 0, 2, []arrow.Array{a}); err != nil {
					errs[task] = err
				}
				a.Release()
			}
			errs[task] = errors.Join(errs[task], sink.Finish(task, 0, 2), sink.Commit(task, 0))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	f, err := c.Collector(1).filter(0)
	if err != nil {
		t.Fatal(err)
	}
	added := len(all)
	for _, k := range all {
		if !f.matchInt(k) {
			t.Fatalf("false negative for %d", k)
		}
	}
	if f.exact || f.bloom == nil {
		t.Fatalf("filter of %d keys with cap 100 is still exact", added)
	}
	fp, trials := 0, 100000
	for i := 0; i < trials; i++ {
		k := rng.Int64N(1 << 40)
		if !keys[k] && f.matchInt(k) {
			fp++
		}
	}
	rate := float64(fp) / float64(trials)
	t.Logf("%d keys, bloom %d bytes in %d layers, false-positive rate %.4f", added, f.bloom.bytes, len(f.bloom.layers), rate)
	if rate > 0.02 {
		t.Fatalf("false-positive rate %.4f", rate)
	}
	// min/max still rules out values beyond the keys.
	if f.matchInt(-1) || f.matchInt(1<<41) {
		t.Fatal("a degraded filter matched outside its min/max")
	}
}

func TestDegradedStrings(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := NewCoordinator(CoordinatorConfig{MaxValues: 10})
	s := c.Collector(3)
	var vals []any
	for i := 0; i < 1000; i++ {
		vals = append(vals, fmt.Sprintf("k%04d", i))
	}
	add(t, s, 0, 1, strs(mem, vals...))
	finish(t, s, 0, 1)
	f, err := c.Collector(3).filter(0)
	if err != nil {
		t.Fatal(err)
	}
	if f.exact {
		t.Fatal("still exact")
	}
	for _, v := range vals {
		if !f.matchString(v.(string)) {
			t.Fatalf("false negative %s", v)
		}
	}
	if f.matchString("a") || f.matchString("z") {
		t.Fatal("matched outside min/max")
	}
}

// TestPruneIntersection: a partition-column filter and a file-column
// filter on the same scan; keys compare by value across widths.
func TestPruneIntersection(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := testTable(t)
	c := NewCoordinator(CoordinatorConfig{})
	days := c.Collector(1) // BIGINT keys against the INT partition column
	add(t, days, 0, 2, ints(mem, 1, nil))
	add(t, days, 1, 2, ints(mem, 3, 3, 7))
	finish(t, days, 0, 2)
	finish(t, days, 1, 2)
	ids := c.Collector(2) // INT keys against the BIGINT id column
	add(t, ids, 0, 1, int32s(mem, 150, 250, nil, 155))
	finish(t, ids, 0, 1)

	targets := []Target{{CollectorID: 1, Column: colDay, Name: "day"}, {CollectorID: 2, Column: colID, Name: "id"}}
	if got := Describe(targets); got != "dynamic filter on day from collector 1, id from collector 2" {
		t.Errorf("Describe = %q", got)
	}
	if got := CollectorIDs(append(targets, Target{CollectorID: 1, Column: colID})); fmt.Sprint(got) != "[1 2]" {
		t.Errorf("CollectorIDs = %v", got)
	}
	dp, err := c.Prune(context.Background(), tb, tb.Partitions, targets)
	if err != nil {
		t.Fatal(err)
	}
	if got := partDays(dp.Partitions); got != "1,3" {
		t.Fatalf("partitions %s, want 1,3 (2 has no key, NULL never matches)", got)
	}
	if got := keptGroups(dp, tb.Partitions[0].Files[0]); got != "12" {
		t.Fatalf("row groups %s, want 12", got)
	}
	if len(dp.Ledger) != 2 || dp.Ledger[0] != (Ledger{Collector: 1, Exact: true, Keys: 3}) || dp.Ledger[1] != (Ledger{Collector: 2, Exact: true, Keys: 3}) {
		t.Fatalf("ledger %v", dp.Ledger)
	}
	// A second call (another task) gets the same decision.
	dp2, err := c.Prune(context.Background(), tb, tb.Partitions, targets)
	if err != nil || partDays(dp2.Partitions) != partDays(dp.Partitions) || keptGroups(dp2, tb.Partitions[0].Files[0]) != "12" {
		t.Fatalf("second Prune: %v", err)
	}

	// Rows: a batch of scan output columns [day, id] (any order, by name).
	schema := arrow.NewSchema([]arrow.Field{tb.Schema.Field(colDay), tb.Schema.Field(colID)}, nil)
	dayCol := int32s(mem, 1, 1, 1, 1, 1)
	idCol := ints(mem, 150, 151, 250, nil, 155)
	batch := array.NewRecordBatch(schema, []arrow.Array{dayCol, idCol}, 5)
	dayCol.Release()
	idCol.Release()
	defer batch.Release()
	mask, err := dp.FilterRows(batch, mem)
	if err != nil {
		t.Fatal(err)
	}
	defer mask.Release()
	var got []bool
	for i := 0; i < mask.Len(); i++ {
		got = append(got, mask.IsValid(i) && mask.Value(i))
	}
	if fmt.Sprint(got) != "[true false true false true]" {
		t.Fatalf("mask %v", got)
	}

	// Only the partition filter: no row-group or row filter.
	only := []Target{{CollectorID: 1, Column: colDay}}
	dp, err = c.Prune(context.Background(), tb, tb.Partitions[1:], only)
	if err != nil {
		t.Fatal(err)
	}
	if partDays(dp.Partitions) != "3" || dp.FiltersFiles() {
		t.Fatalf("partition-only pruning: %s", partDays(dp.Partitions))
	}
	if Describe(only) != "dynamic filter on #5 from collector 1" {
		t.Errorf("Describe = %q", Describe(only))
	}
}

// TestPruneStringsAndDates: exact string sets prune row groups by binary
// search between min and max; DATE keys work like integers.
func TestPruneStringsAndDates(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := testTable(t)
	c := NewCoordinator(CoordinatorConfig{})
	names := c.Collector(1)
	add(t, names, 0, 1, strs(mem, "n099x", "n250", nil))
	finish(t, names, 0, 1)
	dates := c.Collector(2)
	db := array.NewDate32Builder(mem)
	db.AppendValues([]arrow.Date32{10000 + 120, 10000 + 130}, nil)
	add(t, dates, 0, 1, db.NewArray())
	db.Release()
	finish(t, dates, 0, 1)

	dp, err := c.Prune(context.Background(), tb, tb.Partitions, []Target{{CollectorID: 1, Column: colName}})
	if err != nil {
		t.Fatal(err)
	}
	// "n099x" lies inside row group 0's [n000, n099]? No: "n099x" > "n099".
	if got := keptGroups(dp, tb.Partitions[0].Files[0]); got != "2" {
		t.Fatalf("string row groups %s, want 2", got)
	}
	dp, err = c.Prune(context.Background(), tb, tb.Partitions, []Target{{CollectorID: 2, Column: colD}})
	if err != nil {
		t.Fatal(err)
	}
	if got := keptGroups(dp, tb.Partitions[0].Files[0]); got != "1" {
		t.Fatalf("date row groups %s, want 1", got)
	}
	// Collected strings against an integer column is a planner bug.
	if _, err := c.Prune(context.Background(), tb, tb.Partitions, []Target{{CollectorID: 1, Column: colID}}); !errors.Is(err, ErrInternal) {
		t.Fatalf("kind mismatch: %v", err)
	}
}

// TestEmptyDimensionPrunesAll: a collector that finished without a key
// (no rows, or only NULL keys) leaves nothing to scan.
func TestEmptyDimensionPrunesAll(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := testTable(t)
	c := NewCoordinator(CoordinatorConfig{})
	finish(t, c.Collector(1), 0, 2)
	finish(t, c.Collector(1), 1, 2)
	nulls := c.Collector(2)
	add(t, nulls, 0, 1, ints(mem, nil, nil))
	finish(t, nulls, 0, 1)
	for _, tg := range []Target{{CollectorID: 1, Column: colDay}, {CollectorID: 1, Column: colID}, {CollectorID: 2, Column: colDay}, {CollectorID: 2, Column: colQty}} {
		dp, err := c.Prune(context.Background(), tb, tb.Partitions, []Target{tg})
		if err != nil {
			t.Fatal(err)
		}
		if len(dp.Partitions) != 0 {
			t.Fatalf("target %+v kept %d partitions of an empty dimension", tg, len(dp.Partitions))
		}
	}
}

// TestIncompleteCollector: a scan asking before every task of the
// collector finished gets an error, never an unfiltered or partial answer.
func TestIncompleteCollector(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	tb := testTable(t)
	c := NewCoordinator(CoordinatorConfig{})
	s := c.Collector(4)
	add(t, s, 0, 2, ints(mem, 1))
	finish(t, s, 0, 2)
	// A second attempt of the same task counts once: its commit is refused.
	if err := errors.Join(s.Finish(0, 1, 2), s.Commit(0, 1)); !errors.Is(err, ErrInternal) {
		t.Fatalf("second commit of task 0: %v", err)
	}
	for _, id := range []int{4, 9} {
		_, err := c.Prune(context.Background(), tb, tb.Partitions, []Target{{CollectorID: id, Column: colDay}})
		if !errors.Is(err, ErrIncomplete) || !strings.Contains(err.Error(), fmt.Sprintf("dynamic filter %d incomplete", id)) {
			t.Fatalf("collector %d: %v", id, err)
		}
	}
	// Misuse is reported, not absorbed.
	a := ints(mem, 2)
	defer a.Release()
	if err := s.Add(0, 0, 2, []arrow.Array{a}); !errors.Is(err, ErrInternal) {
		t.Fatalf("add after finish: %v", err)
	}
	if err := s.Add(1, 0, 3, []arrow.Array{a}); !errors.Is(err, ErrInternal) {
		t.Fatalf("parallelism mismatch: %v", err)
	}
	f := array.NewFloat64Builder(mem)
	f.Append(1)
	fa := f.NewArray()
	f.Release()
	defer fa.Release()
	if err := c.Collector(5).Add(0, 0, 1, []arrow.Array{fa}); !errors.Is(err, ErrUnsupported) {
		t.Fatalf("double keys: %v", err)
	}
	if SupportedKeyType(arrow.PrimitiveTypes.Float64) || !SupportedKeyType(arrow.FixedWidthTypes.Date32) {
		t.Fatal("SupportedKeyType")
	}
	finish(t, s, 1, 2)
	if _, err := c.Prune(context.Background(), tb, tb.Partitions, []Target{{CollectorID: 4, Column: colDay}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Prune(ctx, tb, tb.Partitions, []Target{{CollectorID: 4, Column: colDay}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestDenseAndSparseMasks checks the row-mask paths (dense bitmap, hash
// set, bloom) agree with the set itself.
func TestDenseAndSparseMasks(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, tc := range []struct {
		name string
		keys []any
		max  int
	}{
		{"dense", []any{5, 7, 100, -3}, 0},
		{"sparse", []any{5, 1 << 40, -(1 << 40)}, 0},
		{"bloom", []any{5, 7, 100, -3, 1 << 40}, 2},
	} {
		c := NewCoordinator(CoordinatorConfig{MaxValues: tc.max})
		add(t, c.Collector(1), 0, 1, ints(mem, tc.keys...))
		finish(t, c.Collector(1), 0, 1)
		f, err := c.Collector(1).filter(0)
		if err != nil {
			t.Fatal(err)
		}
		want := map[int64]bool{}
		for _, k := range tc.keys {
			want[int64(k.(int))] = true
		}
		var probe []any
		for v := -10; v < 110; v++ {
			probe = append(probe, v)
		}
		probe = append(probe, 1<<40, nil, -(1 << 40))
		a := ints(mem, probe...)
		out := make([]byte, (a.Len()+7)/8)
		if err := f.fillMask(a, out); err != nil {
			t.Fatal(err)
		}
		for i, v := range probe {
			got := out[i/8]&(1<<(i%8)) != 0
			exp := v != nil && want[int64(v.(int))]
			if got != exp && !(tc.name == "bloom" && got) {
				t.Fatalf("%s: value %v masked %v", tc.name, v, got)
			}
			if v == nil && got {
				t.Fatalf("%s: NULL matched", tc.name)
			}
		}
		// Slices start inside a byte of the validity bitmap or on one.
		for _, off := range []int{3, 8} {
			sl := array.NewSlice(a, int64(off), int64(a.Len()))
			out := make([]byte, (sl.Len()+7)/8)
			if err := f.fillMask(sl, out); err != nil {
				t.Fatal(err)
			}
			for i, v := range probe[off:] {
				got := out[i/8]&(1<<(i%8)) != 0
				if v == nil && got {
					t.Fatalf("%s, slice at %d: NULL matched", tc.name, off)
				}
				if v != nil && want[int64(v.(int))] && !got {
					t.Fatalf("%s, slice at %d: key %v masked out", tc.name, off, v)
				}
			}
			sl.Release()
		}
		if (tc.name == "dense") != (f.dense != nil) || (tc.name == "bloom") == f.exact {
			t.Fatalf("%s: wrong filter mode (dense %v exact %v)", tc.name, f.dense != nil, f.exact)
		}
		a.Release()
	}
}

// TestCollectorAttempts: keys are staged per attempt; only the committed
// attempt of each task reaches the filter, a discarded (failed) attempt's
// keys are dropped, a task counts once, and an attempt that did not finish
// its input cannot be committed.
func TestCollectorAttempts(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	c := NewCoordinator(CoordinatorConfig{})
	s := c.Collector(1)
	addAttempt := func(task, attempt int, a arrow.Array) {
		t.Helper()
		defer a.Release()
		if err := s.Add(task, attempt, 2, []arrow.Array{a}); err != nil {
			t.Fatal(err)
		}
	}
	addAttempt(0, 0, ints(mem, 99)) // fails before finishing: discarded
	addAttempt(0, 1, ints(mem, 1, 2))
	if err := s.Commit(0, 1); !errors.Is(err, ErrInternal) {
		t.Fatalf("commit of an unfinished attempt: %v", err)
	}
	if err := s.Finish(0, 1, 2); err != nil {
		t.Fatal(err)
	}
	s.Discard(0, 0)
	if err := s.Commit(0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.filter(0); !errors.Is(err, ErrIncomplete) {
		t.Fatalf("filter with task 1 missing: %v", err)
	}
	// Task 1 runs twice to the end; the second is discarded.
	for attempt := 0; attempt < 2; attempt++ {
		addAttempt(1, attempt, ints(mem, 3))
		if err := s.Finish(1, attempt, 2); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Commit(1, 0); err != nil {
		t.Fatal(err)
	}
	s.Discard(1, 1)
	f, err := s.filter(0)
	if err != nil {
		t.Fatal(err)
	}
	if !f.exact || f.count != 3 || !f.matchInt(1) || !f.matchInt(2) || !f.matchInt(3) || f.matchInt(99) {
		t.Fatalf("filter exact=%v count=%d; want exactly 1, 2, 3", f.exact, f.count)
	}
}

// TestFilterMaskNulls: a NULL probe key never passes, also where its value
// slot holds a key (0 here) and the probe is a slice starting inside or
// on a byte of its validity bitmap.
func TestFilterMaskNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	c := NewCoordinator(CoordinatorConfig{})
	add(t, c.Collector(1), 0, 1, ints(mem, 0, 5))
	finish(t, c.Collector(1), 0, 1)
	f, err := c.Collector(1).filter(0)
	if err != nil {
		t.Fatal(err)
	}
	var probe []any
	for i := 0; i < 70; i++ {
		switch {
		case i%3 == 0:
			probe = append(probe, nil)
		case i%2 == 0:
			probe = append(probe, 5)
		default:
			probe = append(probe, 1)
		}
	}
	a := ints(mem, probe...)
	defer a.Release()
	for _, off := range []int{0, 3, 8, 16} {
		sl := array.NewSlice(a, int64(off), int64(a.Len()))
		out := make([]byte, (sl.Len()+7)/8)
		if err := f.fillMask(sl, out); err != nil {
			t.Fatal(err)
		}
		for i, v := range probe[off:] {
			if got, want := out[i/8]&(1<<(i%8)) != 0, v == 5; got != want {
				t.Fatalf("slice at %d, row %d (%v): passes %v, want %v", off, i, v, got, want)
			}
		}
		sl.Release()
	}
}
