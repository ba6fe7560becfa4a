package fsql_test

import (
	"testing"

	"github.com/fsql-dev/fsql/internal/querygen"
)

// FuzzExec runs what the fuzzer's bytes choose through the query
// generator (internal/querygen: every choice is a grammar rule, so nearly
// every input is a valid query) on small generated tables, executes it,
// and checks the metamorphic relations (TLP and NoREC) on it. A panic
// anywhere in planning or execution surfaces as an internal error and
// fails, as does any error other than a declined construct or a bad value,
// and any broken relation that no known defect explains. `go test` runs
// the seeds; `go test -fuzz FuzzExec -run XXX .` searches further.
func FuzzExec(f *testing.F) {
	for _, seed := range [][]byte{
		{},
		{99, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
		{0, 90, 0, 95, 50, 70, 3, 3, 3, 80, 99, 60, 2, 1, 0, 14, 15, 16},
		[]byte("a grouped query with a subquery, joins and a window"),
		{250, 250, 250, 250, 250, 250, 250, 250, 250, 250, 250, 250, 250, 250},
		{7, 93, 64, 12, 5, 99, 31, 77, 8, 66, 45, 2, 19, 88, 51, 34, 70, 3, 27, 96},
	} {
		f.Add(uint8(3), seed)
	}
	// Four datasets (the first input picks one), written and opened once
	// for the whole run: a fuzz iteration must stay in the milliseconds.
	var envs []*metaEnv
	for seed := uint64(1); seed <= 4; seed++ {
		envs = append(envs, newMetaEnv(f, seed, false))
	}
	f.Fuzz(func(t *testing.T, set uint8, data []byte) {
		m := envs[int(set)%len(envs)]
		g := querygen.New(m.ds.Schema, &querygen.BytesSource{Data: data}, querygen.Options{Limit: 10})
		m.checkQuery(g, g.Query(), newMetaStats(), func(msg string) { t.Fatal(msg) })
	})
}
