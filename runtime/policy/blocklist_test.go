package policy

import (
	"reflect"
	"testing"
	"time"
)

func TestBlocklistExpiryAndRenewal(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var b Blocklist
	if b.Blocked("tm-1", t0) {
		t.Fatal("empty blocklist blocks")
	}
	if renewed := b.Block("tm-1", t0, time.Minute); renewed {
		t.Fatal("first block reported as a renewal")
	}
	if !b.Blocked("tm-1", t0.Add(59*time.Second)) || b.Blocked("tm-1", t0.Add(time.Minute)) {
		t.Fatal("block does not last exactly its duration")
	}
	// Renewed while blocked: the block runs from the renewal.
	if renewed := b.Block("tm-1", t0.Add(30*time.Second), time.Minute); !renewed {
		t.Fatal("renewal not reported")
	}
	if !b.Blocked("tm-1", t0.Add(89*time.Second)) || b.Blocked("tm-1", t0.Add(90*time.Second)) {
		t.Fatalf("renewed block ends at %v, want +90s", b.Until("tm-1").Sub(t0))
	}
	// A shorter block never shortens a longer one.
	b.Block("tm-1", t0.Add(31*time.Second), time.Second)
	if got := b.Until("tm-1").Sub(t0); got != 90*time.Second {
		t.Fatalf("shorter renewal moved the end to %v", got)
	}
	// Expired: blocking again is a new block, not a renewal.
	if renewed := b.Block("tm-1", t0.Add(2*time.Minute), time.Minute); renewed {
		t.Fatal("block after expiry reported as a renewal")
	}
	b.Expire(t0.Add(10 * time.Minute))
	if !b.Until("tm-1").IsZero() {
		t.Fatal("Expire kept an ended block")
	}
}

func TestBlocklistUsable(t *testing.T) {
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	workers := []string{"tm-0", "tm-1", "tm-2"}
	var b Blocklist
	u, all := b.Usable(workers, t0)
	if !reflect.DeepEqual(u, []bool{true, true, true}) || all {
		t.Fatalf("nothing blocked: %v %v", u, all)
	}
	b.Block("tm-1", t0, time.Minute)
	b.Block("tm-2", t0, 2*time.Minute)
	if u, all = b.Usable(workers, t0); !reflect.DeepEqual(u, []bool{true, false, false}) || all {
		t.Fatalf("two blocked: %v %v", u, all)
	}
	if got := b.BlockedAt(t0); !reflect.DeepEqual(got, []string{"tm-1", "tm-2"}) {
		t.Fatalf("BlockedAt %v", got)
	}
	// Every worker blocked: all stay usable, so scheduling goes on.
	b.Block("tm-0", t0, time.Minute)
	if u, all = b.Usable(workers, t0); !reflect.DeepEqual(u, []bool{true, true, true}) || !all {
		t.Fatalf("all blocked: %v %v", u, all)
	}
	// tm-0 and tm-1 expire first; tm-2 is blocked alone again.
	if u, all = b.Usable(workers, t0.Add(90*time.Second)); !reflect.DeepEqual(u, []bool{true, true, false}) || all {
		t.Fatalf("after expiry: %v %v", u, all)
	}
}

func TestMayBlock(t *testing.T) {
	for _, c := range []struct {
		blocked, n int
		want       bool
	}{
		{0, 1, false}, {0, 2, true}, {1, 2, false}, {0, 4, true}, {1, 4, true}, {2, 4, false}, {2, 5, false}, {2, 6, true},
	} {
		if got := MayBlock(c.blocked, c.n); got != c.want {
			t.Errorf("MayBlock(%d, %d) = %v, want %v", c.blocked, c.n, got, c.want)
		}
	}
}

func TestRestartRetry(t *testing.T) {
	c := RestartConfig{Attempts: 2, Delay: 50 * time.Millisecond}
	for _, tc := range []struct {
		retryable bool
		failures  int
		ok        bool
	}{
		{true, 1, true}, {true, 2, true}, {true, 3, false}, {false, 1, false},
	} {
		ok, d := c.Retry(tc.retryable, tc.failures)
		if ok != tc.ok || (ok && d != c.Delay) {
			t.Errorf("Retry(%v, %d) = %v, %v", tc.retryable, tc.failures, ok, d)
		}
	}
	if ok, _ := (RestartConfig{}).Retry(true, 1); ok {
		t.Error("attempts 0 retried")
	}
}
