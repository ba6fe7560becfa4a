package policy

import (
	"reflect"
	"testing"
)

func TestFindSkew(t *testing.T) {
	kg := []int64{10, 0, 12, 100, 9, 11, 0, 50}
	got, med := FindSkew(kg, 4, 20)
	if !reflect.DeepEqual(got, []int{3, 7}) || med != 11 {
		t.Errorf("findSkew = %v, median %d; want [3 7], 11", got, med)
	}
	if got, _ := FindSkew(kg, 4, 60); !reflect.DeepEqual(got, []int{3}) {
		t.Errorf("threshold 60: %v, want [3]", got)
	}
	if got, _ := FindSkew(kg, 0, 0); got != nil {
		t.Errorf("factor 0 (off): %v", got)
	}
}
