package fsql_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
)

// TestMemoryRegister: a registered record batch or reader is a table
// every query reads; the rows are copied, so the caller's batches may be
// released at once (the checked allocator sees every buffer back).
func TestMemoryRegister(t *testing.T) {
	eng, _ := writeEngine(t, 10)
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64},
		{Name: "label", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	batch := func(from, n int) arrow.RecordBatch {
		b := array.NewRecordBuilder(mem, schema)
		defer b.Release()
		for i := from; i < from+n; i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			if i%3 == 0 {
				b.Field(1).AppendNull()
			} else {
				b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("L%d", i))
			}
		}
		return b.NewRecordBatch()
	}
	one := batch(1, 5)
	if err := eng.RegisterRecordBatch("lookup", one); err != nil {
		t.Fatal(err)
	}
	one.Release()
	// A reader of several batches, larger than a row group (8192 rows),
	// so min/max skipping has something to skip.
	var parts []arrow.RecordBatch
	for i := 0; i < 4; i++ {
		parts = append(parts, batch(i*5000, 5000))
	}
	rr, err := array.NewRecordReader(schema, parts)
	if err != nil {
		t.Fatal(err)
	}
	if err := eng.RegisterTable("big", rr); err != nil {
		t.Fatal(err)
	}
	rr.Release()
	for _, p := range parts {
		p.Release()
	}
	if got, want := sorted(t, eng, "select s.id, l.label from src s join lookup l on s.id = l.k"), []string{"1\tL1", "2\tL2", "3\tNULL", "4\tL4", "5\tL5"}; !slices.Equal(got, want) {
		t.Errorf("join with the registered batch: %v, want %v", got, want)
	}
	if got, want := sorted(t, eng, "select count(*), sum(k), count(label) from big where k >= 19990"), []string{"10\t199945\t7"}; !slices.Equal(got, want) {
		t.Errorf("registered reader: %v, want %v", got, want)
	}
	cols, err := eng.Columns(context.Background(), "big")
	if err != nil || len(cols) != 2 || cols[0].TypeName != "BIGINT" {
		t.Errorf("Columns(big) = %+v, %v", cols, err)
	}
	// INSERT and REPLACE write a registered table too.
	mustExec(t, eng, "insert into lookup values (100, 'hundred')")
	if got := sorted(t, eng, "select count(*) from lookup"); !slices.Equal(got, []string{"6"}) {
		t.Errorf("after INSERT: %v", got)
	}
	// Names taken, by a table in memory or a folder, are refused.
	b2 := batch(1, 1)
	defer b2.Release()
	for _, name := range []string{"lookup", "LOOKUP", "src", "a/b.parquet", "_hidden"} {
		if err := eng.RegisterRecordBatch(name, b2); err == nil {
			t.Errorf("RegisterRecordBatch(%q) succeeded", name)
		}
	}
	// Types fsql's tables do not hold are refused, naming the column.
	odd := arrow.NewSchema([]arrow.Field{{Name: "small", Type: arrow.PrimitiveTypes.Int8}}, nil)
	ob := array.NewRecordBuilder(mem, odd)
	ob.Field(0).(*array.Int8Builder).Append(1)
	orec := ob.NewRecordBatch()
	ob.Release()
	defer orec.Release()
	if err := eng.RegisterRecordBatch("odd", orec); err == nil || !strings.Contains(err.Error(), "small") {
		t.Errorf("an int8 column: %v", err)
	}
}

// TestMemoryAttempts: an INSERT ... SELECT into an in-memory table whose
// stages run twin attempts, cancelled or failing first attempts writes
// each row exactly once.
func TestMemoryAttempts(t *testing.T) {
	for _, tc := range firstAttemptFaults {
		t.Run(tc.name, func(t *testing.T) {
			eng, _ := writeEngine(t, 3000)
			eng = withFirstAttemptFault(eng, tc.fault)
			mustExec(t, eng, "create table m (id bigint, name varchar(20), day date)")
			mustExec(t, eng, "insert into m select id, name, day from src")
			mustExec(t, eng, "insert into m select s.id + 10000, s.name, s.day from src s join src t on s.id = t.id group by s.id, s.name, s.day")
			want := []string{"6000\t6000\t39003000"}
			if got := sorted(t, eng, "select count(*), count(distinct id), sum(id) from m"); !slices.Equal(got, want) {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

// TestMemorySnapshotReaders: a query planned before a write reads the
// version it was planned with, while writers run; concurrent INSERTs all
// land; a failed statement changes nothing.
func TestMemorySnapshotReaders(t *testing.T) {
	eng, _ := writeEngine(t, 100)
	mustExec(t, eng, "create table m (id bigint)")
	mustExec(t, eng, "insert into m select id from src")
	ctx := context.Background()
	rows, err := eng.Query(ctx, "select count(*), sum(id) from m")
	if err != nil {
		t.Fatal(err)
	}
	mustExec(t, eng, "replace into m select id from src where id <= 10")
	var got []string
	for rows.Next() {
		b := rows.RecordBatch()
		got = append(got, fmt.Sprint(b.Column(0).(*array.Int64).Value(0)))
	}
	rows.Close()
	if err := rows.Err(); err != nil || !slices.Equal(got, []string{"100"}) {
		t.Errorf("query planned before REPLACE: %v %v, want [100]", got, err)
	}
	if got := sorted(t, eng, "select count(*) from m"); !slices.Equal(got, []string{"10"}) {
		t.Errorf("after REPLACE: %v", got)
	}
	// Writers in parallel with readers: each INSERT appends 100 rows; a
	// reader sees a whole number of them.
	var wg sync.WaitGroup
	errc := make(chan error, 20)
	for w := 0; w < 4; w++ {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				if _, _, err := query(eng, "insert into m select id from src"); err != nil {
					errc <- err
				}
			}
		}()
		go func() {
			defer wg.Done()
			for i := 0; i < 3; i++ {
				_, lines, err := query(eng, "select count(*) from m")
				if err != nil {
					errc <- err
					continue
				}
				var n int
				fmt.Sscan(lines[0], &n)
				if (n-10)%100 != 0 {
					errc <- fmt.Errorf("a reader saw %d rows: part of an INSERT", n)
				}
			}
		}()
	}
	wg.Wait()
	close(errc)
	for err := range errc {
		t.Error(err)
	}
	if got := sorted(t, eng, "select count(*) from m"); !slices.Equal(got, []string{"1210"}) {
		t.Errorf("after 12 concurrent INSERTs of 100 rows: %v, want 1210", got)
	}
	// A statement failing at run time (a value that does not convert)
	// writes nothing.
	if _, _, err := query(eng, "insert into m select cast(case when id = 99 then 'x' else '1' end as signed) from src"); err == nil {
		t.Error("an unconvertible value was written")
	}
	if got := sorted(t, eng, "select count(*) from m"); !slices.Equal(got, []string{"1210"}) {
		t.Errorf("after the failed INSERT: %v", got)
	}
}

// TestMemoryFolderClash: a folder made in the data directory with the
// name of an in-memory table makes the name ambiguous: reading it fails
// clearly until one of them goes.
func TestMemoryFolderClash(t *testing.T) {
	eng, dir := writeEngine(t, 10)
	mustExec(t, eng, "create table later (x int)")
	if err := os.Rename(filepath.Join(dir, "src"), filepath.Join(dir, "Later")); err != nil {
		t.Fatal(err)
	}
	_, _, err := query(eng, "select * from later")
	if err == nil || !strings.Contains(err.Error(), "both a table held in memory and the folder") {
		t.Fatalf("reading an ambiguous name: %v", err)
	}
	if !errors.Is(err, fsql.ErrSemantic) {
		t.Errorf("the ambiguous name is %v, want a semantic error", fsql.KindOf(err))
	}
	if _, _, err := query(eng, "drop table later"); err == nil {
		t.Error("DROP TABLE of an ambiguous name succeeded")
	}
	if err := os.Rename(filepath.Join(dir, "Later"), filepath.Join(dir, "src")); err != nil {
		t.Fatal(err)
	}
	mustExec(t, eng, "drop table later")
	if got := sorted(t, eng, "select count(*) from src"); !slices.Equal(got, []string{"10"}) {
		t.Errorf("src after the clash: %v", got)
	}
}

// TestMemoryWire: a plan reading an in-memory table runs from its wire
// form (the table travels as its name and chunks, resolved through a
// fresh catalog view), and a plan decoded after the table changed is
// refused rather than read from the new version.
func TestMemoryWire(t *testing.T) {
	eng, _ := writeEngine(t, 100)
	mustExec(t, eng, "create table m (id bigint, name varchar(10))")
	mustExec(t, eng, "insert into m select id, name from src")
	wired := eng.WithPlanHook(wireRoundTrip)
	if got := sorted(t, wired, "select count(*), sum(id) from m where id > 50"); !slices.Equal(got, []string{"50\t3775"}) {
		t.Errorf("from the wire: %v", got)
	}
	stale := eng.WithPlanHook(func(root exec.Node, cat *hive.Catalog) (exec.Node, error) {
		if _, _, err := query(eng, "insert into m values (1000, 'late')"); err != nil {
			return nil, err
		}
		return wireRoundTrip(root, cat)
	})
	if _, _, err := query(stale, "select count(*) from m"); !errors.Is(err, hive.ErrChanged) {
		t.Errorf("a plan decoded against a newer version: %v, want ErrChanged", err)
	}
}
