package fsql_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/parquet-go/parquet-go"

	"github.com/fsql-dev/fsql"
	"github.com/fsql-dev/fsql/internal/answers"
)

// adaptRow is the row of every synthetic table of the adaptive tests.
type adaptRow struct {
	K int64 `parquet:"k"`
	V int64 `parquet:"v"`
	A int64 `parquet:"a"`
}

// writeAdaptTable writes rows into files Parquet files of table name.
func writeAdaptTable(t testing.TB, dir, name string, files int, rows []adaptRow) {
	t.Helper()
	if err := os.MkdirAll(filepath.Join(dir, name), 0o755); err != nil {
		t.Fatal(err)
	}
	per := (len(rows) + files - 1) / files
	for f := 0; f < files; f++ {
		lo, hi := min(f*per, len(rows)), min((f+1)*per, len(rows))
		path := filepath.Join(dir, name, fmt.Sprintf("part-%d.parquet", f))
		if err := parquet.WriteFile(path, rows[lo:hi], parquet.MaxRowsPerRowGroup(50_000)); err != nil {
			t.Fatal(err)
		}
	}
}

// adaptEngine opens dir with the defaults plus the given key=value pairs.
func adaptEngine(t testing.TB, dir string, alloc memory.Allocator, kv ...string) *fsql.Engine {
	t.Helper()
	cfg := fsql.DefaultConfig()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := cfg.Set(kv[i], kv[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	eng, err := fsql.Open(dir, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if alloc != nil {
		eng = eng.WithAllocator(alloc)
	}
	return eng
}

// explainAnalyze runs EXPLAIN ANALYZE of q and returns its text.
func explainAnalyze(t testing.TB, eng *fsql.Engine, q string) string {
	t.Helper()
	rows, err := eng.Query(context.Background(), "EXPLAIN ANALYZE "+q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sb strings.Builder
	for rows.Next() {
		col := rows.RecordBatch().Column(0).(*array.String)
		for i := 0; i < col.Len(); i++ {
			sb.WriteString(col.Value(i))
			sb.WriteString("\n")
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

// answerOf runs q and returns its answer in the golden format.
func answerOf(t *testing.T, eng *fsql.Engine, q string) *answers.Answer {
	t.Helper()
	schema, batches := runQuery(t, eng, q)
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	got, err := answers.FromArrow(schema, batches)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

var stageLine = regexp.MustCompile(`(?m)^Stage (\d+) \(parallelism (\d+)\)(.*)$`)

// stageParallelism maps each stage of an EXPLAIN ANALYZE text to its
// parallelism and header line.
func stageParallelism(t testing.TB, text string) map[int]struct {
	p    int
	line string
} {
	t.Helper()
	out := map[int]struct {
		p    int
		line string
	}{}
	for _, m := range stageLine.FindAllStringSubmatch(text, -1) {
		id, _ := strconv.Atoi(m[1])
		p, _ := strconv.Atoi(m[2])
		out[id] = struct {
			p    int
			line string
		}{p, m[0]}
	}
	if len(out) == 0 {
		t.Fatalf("no stage lines in:\n%s", text)
	}
	return out
}

// maxParallelism is the largest decided parallelism of any stage.
func maxParallelism(t testing.TB, text string) int {
	n := 0
	for _, s := range stageParallelism(t, text) {
		n = max(n, s.p)
	}
	return n
}

// TestAdaptiveTPCDSSameAnswers runs the golden TPC-DS queries with the
// adaptive scheduler pushed hard (small tasks, so many tasks with byte
// cuts; a low skew threshold, so splits happen) and with it off: both
// must match DuckDB's answers.
func TestAdaptiveTPCDSSameAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	dir := tpcdsData(t)
	configs := map[string][]string{
		"adaptive-small-tasks": {
			"execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "256kb",
			"execution.batch.adaptive.skewed-join-optimization.skewed-threshold", "16kb",
			"execution.batch.adaptive.skewed-join-optimization.skewed-factor", "2",
			"table.optimizer.join.broadcast-threshold", "256kb",
		},
		"off-p2": {"execution.batch.adaptive.auto-parallelism.enabled", "false", "parallelism.default", "2"},
	}
	for name, kv := range configs {
		for _, q := range goldenQueries {
			t.Run(name+"/"+q, func(t *testing.T) {
				text, err := os.ReadFile(filepath.Join("testdata", "tpcds", "queries", q+".sql"))
				if err != nil {
					t.Fatal(err)
				}
				f, err := os.Open(filepath.Join("testdata", "tpcds", "answers", q+".ans"))
				if err != nil {
					t.Fatal(err)
				}
				want, err := answers.Read(f)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
				defer alloc.AssertSize(t, 0)
				eng := adaptEngine(t, dir, alloc, kv...)
				if err := answers.Compare(want, answerOf(t, eng, strings.TrimSpace(string(text)))); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

// adaptVolume writes table t with n rows (k: n/4 distinct keys, v, a =
// row mod 100) in 8 files.
func adaptVolume(t testing.TB, dir string, n int) {
	rows := make([]adaptRow, n)
	for i := range rows {
		rows[i] = adaptRow{K: int64(i % (n / 4)), V: int64(i), A: int64(i % 100)}
	}
	writeAdaptTable(t, dir, "t", 8, rows)
}

// TestAdaptiveParallelismGrowsWithData runs the same query over two data
// volumes: the decided parallelism grows with the data, the answers equal
// those of a fixed parallelism, and EXPLAIN ANALYZE says why.
func TestAdaptiveParallelismGrowsWithData(t *testing.T) {
	const q = "select a, count(*), sum(v) from t group by a order by a"
	const q2 = "select k, count(*) from t group by k order by k limit 5"
	var ps []int
	for _, n := range []int{40_000, 400_000} {
		dir := t.TempDir()
		adaptVolume(t, dir, n)
		eng := adaptEngine(t, dir, nil, "execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "128kb")
		text := explainAnalyze(t, eng, q2)
		if !strings.Contains(text, "adaptive, parallelism.default ignored") || !strings.Contains(text, "target 128.0KiB per task") {
			t.Errorf("EXPLAIN ANALYZE does not explain the decision:\n%s", text)
		}
		if !strings.Contains(text, "bytes per task min=") {
			t.Errorf("EXPLAIN ANALYZE does not show the key-group ranges:\n%s", text)
		}
		ps = append(ps, maxParallelism(t, text))
		off := adaptEngine(t, dir, nil, "execution.batch.adaptive.auto-parallelism.enabled", "false", "parallelism.default", "3")
		offText := explainAnalyze(t, off, q2)
		if !strings.Contains(offText, "parallelism.default (adaptive off)") {
			t.Errorf("adaptive off: EXPLAIN ANALYZE does not say parallelism.default decided:\n%s", offText)
		}
		for _, query := range []string{q, q2} {
			if err := answers.Compare(answerOf(t, off, query), answerOf(t, eng, query)); err != nil {
				t.Errorf("%d rows, %s: adaptive and fixed answers differ: %v", n, query, err)
			}
		}
	}
	if !(ps[1] > ps[0] && ps[0] >= 1) {
		t.Errorf("decided parallelism %v does not grow with the data", ps)
	}
}

// TestAdaptiveFilteredStageRunsOneTask: a filter that leaves little data
// makes every stage after the shuffle run as one task, where a fixed
// parallelism would run 4.
func TestAdaptiveFilteredStageRunsOneTask(t *testing.T) {
	dir := t.TempDir()
	adaptVolume(t, dir, 400_000)
	eng := adaptEngine(t, dir, nil, "execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "128kb", "parallelism.default", "4")
	text := explainAnalyze(t, eng, "select k, count(*) from t where v < 50 group by k")
	readers := 0
	for _, s := range stageParallelism(t, text) {
		if strings.Contains(s.line, "<- reads") {
			readers++
			if s.p != 1 {
				t.Errorf("stage fed by a selective filter runs %d tasks: %s\n%s", s.p, s.line, text)
			}
		}
	}
	if readers == 0 {
		t.Fatalf("no stage reads a shuffle:\n%s", text)
	}
	// Without the filter the same stage needs several tasks.
	text = explainAnalyze(t, eng, "select k, count(*) from t group by k")
	for _, s := range stageParallelism(t, text) {
		if strings.Contains(s.line, "<- reads") && strings.Contains(s.line, "hash") && s.p < 2 {
			t.Errorf("unfiltered stage runs %d task(s): %s", s.p, s.line)
		}
	}
}

// skewData writes fact (probe side: 300K rows, key 7 holding 25% of them)
// and dim (20K keys) into a new folder.
func skewData(t testing.TB) string {
	dir := t.TempDir()
	fact := make([]adaptRow, 300_000)
	for i := range fact {
		k := int64(i % 20_000)
		if i%4 == 0 {
			k = 7 // the hot key
		}
		fact[i] = adaptRow{K: k, V: int64(i), A: int64(i % 10)}
	}
	writeAdaptTable(t, dir, "fact", 6, fact)
	dim := make([]adaptRow, 20_000)
	for i := range dim {
		dim[i] = adaptRow{K: int64(i), V: int64(i * 3), A: int64(i % 50)}
	}
	writeAdaptTable(t, dir, "dim", 2, dim)
	return dir
}

const skewQuery = "select f.a, count(*), sum(d.v) from fact f join dim d on f.k = d.k group by f.a"

// skewSettings: small tasks, no broadcast (so the join is shuffled), and a
// skew threshold the test data exceeds.
func skewSettings(threshold string) []string {
	return []string{
		"execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "512kb",
		"table.optimizer.join.broadcast-threshold", "0",
		"execution.batch.adaptive.skewed-join-optimization.skewed-threshold", threshold,
	}
}

var spreadLine = regexp.MustCompile(`bytes per task min=(\S+) median=(\S+) max=(\S+)`)

// parseBytes reads fmtBytes' output back.
func parseBytes(t testing.TB, s string) float64 {
	t.Helper()
	mult := 1.0
	for i, u := range []string{"KiB", "MiB", "GiB"} {
		if strings.HasSuffix(s, u) {
			s, mult = strings.TrimSuffix(s, u), float64(int64(1)<<(10*(i+1)))
			break
		}
	}
	s = strings.TrimSuffix(s, "B")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("bytes %q: %v", s, err)
	}
	return f * mult
}

// joinSpread is max/median bytes per task of the stage holding the join.
func joinSpread(t testing.TB, text string) float64 {
	t.Helper()
	lines := strings.Split(text, "\n")
	// The join stage is the one whose header is followed (before the next
	// header) by a HashJoin line; find its spread line.
	var cur []string
	flush := func() float64 {
		joined := strings.Join(cur, "\n")
		if strings.Contains(joined, "HashJoin(") {
			if m := spreadLine.FindStringSubmatch(joined); m != nil {
				return parseBytes(t, m[3]) / parseBytes(t, m[2])
			}
		}
		return -1
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "Stage ") {
			if r := flush(); r >= 0 {
				return r
			}
			cur = nil
		}
		cur = append(cur, l)
	}
	if r := flush(); r >= 0 {
		return r
	}
	t.Fatalf("no join stage with a byte spread in:\n%s", text)
	return 0
}

// TestAdaptiveSkewSplit: the hot key's key group is split across tasks,
// EXPLAIN ANALYZE shows it, the join's tasks get even bytes (max/median
// under 1.5, which the unsplit plan cannot reach) and the answer is
// unchanged.
func TestAdaptiveSkewSplit(t *testing.T) {
	dir := skewData(t)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	split := adaptEngine(t, dir, alloc, skewSettings("64kb")...)
	text := explainAnalyze(t, split, skewQuery)
	if testing.Verbose() {
		t.Log(text)
	}
	if !strings.Contains(text, "skew: key group") || !strings.Contains(text, "of the probe side") {
		t.Fatalf("no skew split in EXPLAIN ANALYZE:\n%s", text)
	}
	if r := joinSpread(t, text); r >= 1.5 {
		t.Errorf("with the split, max/median bytes per join task = %.2f, want < 1.5\n%s", r, text)
	}
	unsplit := adaptEngine(t, dir, alloc, skewSettings("1gb")...)
	text2 := explainAnalyze(t, unsplit, skewQuery)
	if testing.Verbose() {
		t.Log(text2)
	}
	if strings.Contains(text2, "skew: key group") {
		t.Fatalf("split above the threshold:\n%s", text2)
	}
	if r := joinSpread(t, text2); r < 1.5 {
		t.Errorf("without the split, max/median = %.2f; the data is not skewed enough to prove anything\n%s", r, text2)
	}
	off := adaptEngine(t, dir, alloc, "execution.batch.adaptive.auto-parallelism.enabled", "false", "parallelism.default", "2", "table.optimizer.join.broadcast-threshold", "0")
	want := answerOf(t, off, skewQuery+" order by 1")
	for _, eng := range []*fsql.Engine{split, unsplit} {
		if err := answers.Compare(want, answerOf(t, eng, skewQuery+" order by 1")); err != nil {
			t.Errorf("skew split changed the answer: %v", err)
		}
	}
	// Left and semi joins split their probe side; the answers hold.
	for _, q := range []string{
		"select f.a, count(*), sum(d.v) from fact f left join dim d on f.k = d.k and d.a < 25 group by f.a order by 1",
		"select f.a, count(*) from fact f where f.k in (select k from dim where a < 25) group by f.a order by 1",
	} {
		if err := answers.Compare(answerOf(t, off, q), answerOf(t, split, q)); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

// TestAdaptiveBroadcastSwitch: a dimension estimated above the broadcast
// threshold that a filter shrinks below it is broadcast at run time; the
// fact side is not shuffled and the answer is unchanged.
func TestAdaptiveBroadcastSwitch(t *testing.T) {
	dir := skewData(t)
	alloc := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer alloc.AssertSize(t, 0)
	// dim is estimated at 20K rows * 0.1 for the equality: 2K rows, some
	// 48KB; the filter leaves 400 rows, about 10KB.
	const q = "select f.a, count(*), sum(d.v) from fact f join dim d on f.k = d.k where d.a = 3 group by f.a order by 1"
	eng := adaptEngine(t, dir, alloc, "table.optimizer.join.broadcast-threshold", "20kb",
		"execution.batch.adaptive.auto-parallelism.avg-data-volume-per-task", "512kb")
	text := explainAnalyze(t, eng, q)
	if testing.Verbose() {
		t.Log(text)
	}
	if !strings.Contains(text, "broadcast switch: inner join's build side") || !strings.Contains(text, "forward, not shuffled") ||
		!strings.Contains(text, "the join ran on its 6 tasks") {
		t.Fatalf("no run-time broadcast switch in EXPLAIN ANALYZE:\n%s", text)
	}
	off := adaptEngine(t, dir, alloc, "execution.batch.adaptive.auto-parallelism.enabled", "false", "table.optimizer.join.broadcast-threshold", "20kb")
	if strings.Contains(explainAnalyze(t, off, q), "broadcast switch") {
		t.Error("switched with adaptive scheduling off")
	}
	if err := answers.Compare(answerOf(t, off, q), answerOf(t, eng, q)); err != nil {
		t.Errorf("switch changed the answer: %v", err)
	}
	// Semi and left joins switch too: each probe row still meets the
	// whole build side once, and a preserved probe side stays where it is.
	semi := "select f.a, count(*) from fact f where f.k in (select k from dim where a = 3) group by f.a order by 1"
	if err := answers.Compare(answerOf(t, off, semi), answerOf(t, eng, semi)); err != nil {
		t.Errorf("semi: %v", err)
	}
	left := "select f.a, count(d.v) from fact f left join (select * from dim where a = 3) d on f.k = d.k group by f.a order by 1"
	if text := explainAnalyze(t, eng, left); !strings.Contains(text, "broadcast switch: left join's build side") {
		t.Errorf("the left join was not switched:\n%s", text)
	}
	if err := answers.Compare(answerOf(t, off, left), answerOf(t, eng, left)); err != nil {
		t.Errorf("left: %v", err)
	}
}
