package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sltScript passes 5 records, fails 2 (a wrong value, a wrong hash) and
// skips 2 (skipif mysql, onlyif another engine); onlyif mysql runs.
const sltScript = `statement ok
CREATE TABLE t1(a INTEGER PRIMARY KEY, b VARCHAR(10))

statement ok
INSERT INTO t1 VALUES(1,'x'),(2,NULL)

skipif mysql
query I nosort
SELECT 99
----
1

onlyif sqlite
query I nosort
SELECT 98
----
1

onlyif mysql
query I nosort
SELECT 1
----
1

query IT rowsort
SELECT a, b FROM t1
----
1
x
2
NULL

query I nosort
SELECT a FROM t1 ORDER BY a
----
1
3

statement error
INSERT INTO t1 VALUES(1,'dup')

hash-threshold 1

query I valuesort
SELECT a FROM t1
----
2 values hashing to 0123456789abcdef0123456789abcdef
`

func TestSLT(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.test")
	if err := os.WriteFile(path, []byte(sltScript), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs(t, "slt", "--failures", path)
	if code != 1 || !strings.Contains(errOut, "2 records failed") {
		t.Errorf("exit %d, stderr %q: want 1 and the failure count", code, errOut)
	}
	for _, want := range []string{
		path + ": 5 passed, 2 failed, 2 skipped",
		path + ":33 wrong: got 1 2, want 1 3",
		path + ":44 wrong: 2 values hashing to 6ddb4095eb719e2a9f0a3f95677d24e0, want 0123456789abcdef0123456789abcdef",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if code, out, _ := runArgs(t, "help", "slt"); code != 0 || !strings.Contains(out, "usage: fsql slt") {
		t.Errorf("fsql help slt: %d %q", code, out)
	}
	if code, _, errOut := runArgs(t, "slt"); code != 1 || !strings.Contains(errOut, "needs the scripts") {
		t.Errorf("fsql slt without files: %d %q", code, errOut)
	}
}
