package tpcds

import (
	"context"
	"os"
	"testing"
)

func TestQuick(t *testing.T) {
	out := t.TempDir() + "/ds"
	if err := Generate(context.Background(), Options{Scale: 0.01, Out: out, Partitioned: true, Progress: os.Stderr}); err != nil {
		t.Fatal(err)
	}
}
