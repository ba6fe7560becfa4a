package hive

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go/encoding/rle"
)

// TestHybridMatchesParquetGo decodes what parquet-go's RLE encoder
// writes, for levels and for dictionary indexes of every bit width, with
// long runs and noise, at lengths that end inside a bit-packed group.
func TestHybridMatchesParquetGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 8, 9, 100, 1023, 5000} {
		levels := make([]byte, n)
		for i := range levels {
			if (i/50)%2 == 0 {
				levels[i] = 1 // runs
			} else {
				levels[i] = byte(rng.IntN(2))
			}
		}
		enc := &rle.Encoding{BitWidth: 1}
		src, err := enc.EncodeLevels(nil, levels)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeLevels(nil, src, n)
		if err != nil || !bytes.Equal(got[:n], levels) {
			t.Fatalf("levels n=%d: %v %v", n, err, err)
		}
		for width := 0; width <= 32; width++ {
			idx := make([]int32, n)
			for i := range idx {
				if width > 0 && (i/40)%2 == 1 {
					idx[i] = int32(rng.Uint32() >> (32 - width))
				}
			}
			var dict rle.DictionaryEncoding
			src, err := dict.EncodeInt32(nil, idx)
			if err != nil {
				t.Fatal(err)
			}
			if len(src) == 0 {
				continue
			}
			got, err := decodeIndexes(nil, src[1:], uint(src[0]), n)
			if err != nil {
				t.Fatalf("indexes n=%d width=%d (%d): %v", n, width, src[0], err)
			}
			for i := range idx {
				if got[i] != idx[i] {
					t.Fatalf("indexes n=%d width=%d: value %d is %d, want %d", n, width, i, got[i], idx[i])
				}
			}
		}
	}
}

// TestHybridBounded: a run claiming more values than the page holds
// yields only those the page needs; a stream that ends early is an error.
func TestHybridBounded(t *testing.T) {
	huge := []byte{0xfe, 0xff, 0xff, 0xff, 0x0f, 0x01} // a run of 2^31-1 ones
	got, err := decodeLevels(nil, huge, 10)
	if err != nil || len(got) != 10 || !bytes.Equal(got, bytes.Repeat([]byte{1}, 10)) {
		t.Fatalf("levels: %v %v", got, err)
	}
	idx, err := decodeIndexes(nil, huge, 8, 10)
	if err != nil || len(idx) != 10 || idx[9] != 1 {
		t.Fatalf("indexes: %v %v", idx, err)
	}
	if _, err := decodeLevels(nil, []byte{0x04, 0x01}, 10); err == nil {
		t.Fatal("2 levels for 10: no error")
	}
	if _, err := decodeIndexes(nil, []byte{0x03}, 8, 8); err == nil {
		t.Fatal("bit-packed group past the data: no error")
	}
	if _, err := decodeLevels(nil, []byte{0x02, 0x02}, 1); err == nil {
		t.Fatal("level 2 in a flat column: no error")
	}
}
