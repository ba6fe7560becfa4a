package exec

import (
	"reflect"
	"testing"
)

func TestFrameGroups(t *testing.T) {
	// Two partitions: rows 0-2 and 3-4.
	partStart := []int32{0, 0, 0, 3, 3}
	peer, start, first := rowGroups(partStart)
	if !reflect.DeepEqual(peer, []int32{0, 1, 2, 3, 4}) || !reflect.DeepEqual(start, []int32{0, 1, 2, 3, 4}) ||
		!reflect.DeepEqual(first, []bool{true, false, false, true, false}) {
		t.Fatalf("rowGroups: %v %v %v", peer, start, first)
	}
	peer, start = partGroups(partStart)
	if !reflect.DeepEqual(peer, []int32{0, 0, 0, 1, 1}) || !reflect.DeepEqual(start, []int32{0, 3}) {
		t.Fatalf("partGroups: %v %v", peer, start)
	}
}
