// Package proctest checks, in a test, that a value computed in this
// process is the one a fresh process computes: the test binary runs
// itself again for the one test and reports the child's value. Hashes that
// cross task boundaries (the shuffle hash, bloom filters of dynamic
// filters) must agree between the processes a plan's tasks run in, so a
// per-process seed (hash/maphash) fails such a test where a test in one
// process cannot see it.
package proctest

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// childEnv names, in the child's environment, the test it runs for.
const childEnv = "FSQL_PROCTEST_CHILD"

// marker starts the line the child prints its value on.
const marker = "proctest value: "

// Agree fails t unless the test binary, started again to run only t,
// computes the same value. In that child Agree prints the value and
// returns; the test goes on as in any run. t must be a top-level test
// whose value does not depend on anything its run is given (flags,
// files, time).
func Agree(t *testing.T, value string) {
	t.Helper()
	if strings.Contains(value, "\n") {
		t.Fatalf("proctest: the value must be one line")
	}
	if os.Getenv(childEnv) == t.Name() {
		os.Stdout.WriteString(marker + value + "\n")
		return
	}
	if strings.Contains(t.Name(), "/") {
		t.Fatalf("proctest: %s is a subtest; call Agree from a top-level test", t.Name())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+t.Name())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("proctest: the child process for %s failed: %v\n%s%s", t.Name(), err, out, stderr.Bytes())
	}
	var got []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), marker); ok {
			got = append(got, v)
		}
	}
	if len(got) != 1 {
		t.Fatalf("proctest: the child process for %s printed %d values, want 1:\n%s", t.Name(), len(got), out)
	}
	if got[0] != value {
		t.Fatalf("another process computes other values:\n here: %s\nchild: %s", value, got[0])
	}
}
