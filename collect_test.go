package fsql_test

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql"
)

// collect runs text on eng to its last row and returns the closed rows
// (their schema and statistics stay readable) with every batch retained.
// The caller releases the batches with releaseAll; on error none is held.
func collect(ctx context.Context, eng *fsql.Engine, text string) (*fsql.Rows, []arrow.RecordBatch, error) {
	rows, err := eng.Query(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var batches []arrow.RecordBatch
	for rows.Next() {
		b := rows.RecordBatch()
		b.Retain()
		batches = append(batches, b)
	}
	if err := rows.Err(); err != nil {
		releaseAll(batches)
		return nil, nil, err
	}
	return rows, batches, nil
}

// releaseAll releases batches retained by collect.
func releaseAll(batches []arrow.RecordBatch) {
	for _, b := range batches {
		b.Release()
	}
}
