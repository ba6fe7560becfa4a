package main

import (
	"context"
	"io"

	"github.com/fsql-dev/fsql/connectors/tpcds"
)

// generateTPCDS writes the data set the way `fsql gen tpcds` does by
// default: Hive-partitioned fact tables, 122,880-row row groups, seed 1.
func generateTPCDS(ctx context.Context, dir string, scale float64, progress io.Writer) error {
	return tpcds.Generate(ctx, tpcds.Options{
		Scale:        scale,
		Out:          dir,
		Partitioned:  true,
		RowGroupRows: 122880,
		Seed:         1,
		Progress:     progress,
	})
}
