package pruning

import "testing"

// TestHashesPinned: bloom filters are built by collector tasks and tested
// by scan tasks, which may run in other processes, so their hashes are
// fixed functions. The string values are XXH3-64 with seed 0 (the
// reference implementation's XXH3_64bits: "" is 0x2d06800538d394c2, "a"
// 0xe6c632b61e964e1f); integers use murmur3's 64-bit finalizer.
func TestHashesPinned(t *testing.T) {
	for s, want := range map[string]uint64{
		"":             0x2d06800538d394c2,
		"a":            0xe6c632b61e964e1f,
		"Books":        0x1ff223902732a945,
		"AAAAAAAABAAA": 0xebcd3f9bebdea9ad,
	} {
		if got := hashString(s); got != want {
			t.Errorf("hashString(%q) = %#x, want %#x", s, got, want)
		}
	}
	for v, want := range map[int64]uint64{
		0:       0,
		1:       0xb456bcfc34c2cb2c,
		-1:      0x64b5720b4b825f21,
		2451545: 0x29fe87c8bd0b392f,
		1 << 40: 0xe80f632ed2f232f6,
	} {
		if got := hashInt(v); got != want {
			t.Errorf("hashInt(%d) = %#x, want %#x", v, got, want)
		}
	}
}
