package fsql_test

import (
	"testing"

	"github.com/fsql-dev/fsql/internal/answers"
)

// partitionedPlanQueries are statements whose plan on the partitioned
// layout differs from the flat one beyond pruning: filter_group_keys
// semi-joins q2's weekly aggregate with the filtered weeks only where the
// sales are partitioned (q59, the same shape, is in goldenQueries, which
// run on both layouts). TestTPCDSAllQueries runs every statement flat.
var partitionedPlanQueries = []string{"q2"}

// TestTPCDSPartitionedPlans checks those statements' answers on the
// partitioned layout against the golden answers.
func TestTPCDSPartitionedPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("generates TPC-DS data")
	}
	for _, q := range partitionedPlanQueries {
		t.Run(q, func(t *testing.T) {
			want := readAnswer(t, q)
			got := queryAnswerWith(t, nil, tpcdsPartitioned(t), q)
			if err := answers.Compare(want, got); err != nil {
				t.Fatal(err)
			}
		})
	}
}
