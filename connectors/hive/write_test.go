package hive

import "testing"

// Partition values written by EscapePartitionValue read back unchanged.
func TestEscapePartitionValue(t *testing.T) {
	for _, v := range []string{"plain", "a/b", "x=y", "100%", "a:b", "sp ace", "new\nline", "ü", `q"'#*?\{[]^`} {
		e := EscapePartitionValue(v)
		if got := unescapePath(e); got != v {
			t.Errorf("%q escaped as %q reads back as %q", v, e, got)
		}
		for _, c := range []byte("/=:%") {
			for i := 0; i < len(e); i++ {
				if e[i] == c && c != '%' {
					t.Errorf("%q escaped as %q keeps %q", v, e, c)
				}
			}
		}
	}
}
