package fsql_test

import (
	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/internal/wiretest"
)

// wireRoundTrip is the plan hook that runs a plan decoded from its wire
// form (package planwire): every fragment and the whole plan are encoded,
// decoded against a fresh view of the catalog (new table objects,
// resolved by name and checked against the plan's snapshot), and checked
// to re-encode to the same bytes, explain the same and keep their node
// IDs (wiretest.RoundTrip).
func wireRoundTrip(root exec.Node, cat *hive.Catalog) (exec.Node, error) {
	view, err := cat.Snapshot()
	if err != nil {
		return nil, err
	}
	return wiretest.RoundTrip(root, view)
}
