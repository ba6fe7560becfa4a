package exec

import (
	"errors"
	"testing"
)

func TestMemoryBudget(t *testing.T) {
	m := NewMemoryBudget(100)
	if err := m.Reserve("join", 60); err != nil {
		t.Fatal(err)
	}
	err := m.Reserve("sort", 50)
	if !errors.Is(err, ErrResourcesExhausted) {
		t.Fatalf("want ErrResourcesExhausted, got %v", err)
	}
	if m.Used() != 60 {
		t.Fatalf("a failed reservation must take nothing: used %d", m.Used())
	}
	m.Release(60)
	if err := m.Reserve("sort", 100); err != nil {
		t.Fatal(err)
	}
	if m.Peak() != 100 {
		t.Fatalf("peak %d", m.Peak())
	}
	var unlimited *MemoryBudget
	if err := unlimited.Reserve("x", 1<<40); err != nil {
		t.Fatal(err)
	}
}
