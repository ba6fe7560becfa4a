package runtime

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"go.uber.org/goleak"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime/policy"
	"github.com/fsql-dev/fsql/shuffle"
)

// sizedGen is a genSource that reports its stage's input as a scan does
// (SourceSize), so adaptive parallelism sizes its stage.
type sizedGen struct {
	*genSource
	bytes int64
	files int
}

func (g *sizedGen) SourceSize(context.Context, *exec.TaskContext) (int64, int, error) {
	return g.bytes, g.files, nil
}

// TestAdaptiveSiblingStagesShareTheSlots: two source stages become ready
// together on two slots. The first one's tasks claim both slots; the
// second is still spread over both (its tasks queue and take the slots
// as the first one's tasks end) instead of running as one task beside an
// idle slot. Each source reports 9 MiB: one task by Flink's rule.
func TestAdaptiveSiblingStagesShareTheSlots(t *testing.T) {
	defer goleak.VerifyNone(t)
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	src := func(name string) *sizedGen {
		return &sizedGen{genSource: &genSource{PerTask: 500, Batch: 100, Keys: 10, Sized: true, Work: time.Millisecond, Name: name}, bytes: 9 << 20, files: 4}
	}
	a := &shuffle.Exchange{Kind: shuffle.Gather, Child: src("A")}
	b := &shuffle.Exchange{Kind: shuffle.Gather, Child: src("B")}
	root := &concatNode{A: a, B: b}
	cfg := RunConfig{Parallelism: 1, Slots: 2, Alloc: mem, Adaptive: policy.DefaultAdaptiveConfig()}
	out, e, err := runToEnd(t, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	xchgReleaseAll(out)
	g := e.Graph()
	for _, r := range g.Stages {
		if r.Stage.Output == nil {
			continue // the result stage reads gathers: one task
		}
		if r.Parallelism != 2 {
			t.Errorf("stage %d (%s) ran %d tasks, want 2 (one per slot)\n%s", r.Stage.ID, r.Stage.Root, r.Parallelism, g.Explain(nil))
		}
		if !strings.Contains(r.Decision.String(), "raised to 2 of 2 slots") {
			t.Errorf("stage %d: decision %q does not say it was raised to the slots", r.Stage.ID, r.Decision)
		}
	}
	if ex := g.Explain(nil); !strings.Contains(ex, "Slot occupancy: 2 slots over ") {
		t.Errorf("EXPLAIN ANALYZE has no slot occupancy:\n%s", ex)
	}
}
