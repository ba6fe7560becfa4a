package planwire_test

import (
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/internal/wiretest"
	"github.com/fsql-dev/fsql/planwire"
	"github.com/fsql-dev/fsql/pruning"
)

// TestPlanTypesHoldOnlyData: no plan node type, nor any type its fields
// can hold, is a function, a channel, a lock or another runtime object
// (wiretest.CheckType). TestEveryNodeTypeHasAnEncoding keeps the list of
// node types complete; CheckPlan, run on every plan the round trips
// decode (TPC-DS included), checks what interface fields hold.
func TestPlanTypesHoldOnlyData(t *testing.T) {
	types := planwire.EncodedTypes()
	if len(types) < 20 {
		t.Fatalf("only %d plan types", len(types))
	}
	for _, typ := range types {
		if err := wiretest.CheckType(reflect.PointerTo(typ)); err != nil {
			t.Error(err)
		}
	}
}

// TestCheckTypeCatchesClosuresAndRuntimeObjects: the rules of CheckType
// refuse what plans used to hold.
func TestCheckTypeCatchesClosuresAndRuntimeObjects(t *testing.T) {
	type withClosure struct {
		Keep func(int) bool
	}
	type withCoordinator struct {
		Parts []struct{ C *pruning.Coordinator }
	}
	type withLock struct{ mu sync.Mutex }
	type withAllocator struct{ A memory.Allocator }
	type withChannel struct{ Done map[string]chan struct{} }
	type withInterface struct{ S fmt.Stringer }
	for _, v := range []any{withClosure{}, withCoordinator{}, withLock{}, withAllocator{}, withChannel{}, withInterface{}, exec.TaskContext{}} {
		err := wiretest.CheckType(reflect.TypeOf(v))
		if err == nil {
			t.Errorf("%T passes", v)
			continue
		}
		t.Log(err)
	}
}
