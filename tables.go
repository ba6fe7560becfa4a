package fsql

import (
	"context"

	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec/expr"
)

// ErrNoTable is wrapped by Columns for a name that is not a table.
var ErrNoTable = hive.ErrNoTable

// Tables lists the data directory's tables as they are now (one folder
// listing), sorted, as spelled on disk.
func (e *Engine) Tables() ([]string, error) {
	snap, err := e.catalog.Snapshot()
	if err != nil {
		return nil, errs.Wrap(errs.IO, "%w", err)
	}
	return snap.TableNames(), nil
}

// Column is one column of a table, as Columns lists it.
type Column struct {
	Name string
	Type arrow.DataType
	// TypeName is Type as SQL spells it (BIGINT, DECIMAL(7,2), VARCHAR).
	TypeName string
	// Partition says the column comes from the Hive folders
	// (key=value/), not from the files.
	Partition bool
}

// Columns lists the columns of table name (case-insensitive): the files'
// columns in file order, then the partition columns. The first look at a
// table lists its folders and reads its footers, as a query's would.
// An unknown name is an error wrapping ErrNoTable that lists the tables.
func (e *Engine) Columns(ctx context.Context, name string) ([]Column, error) {
	if err := ctx.Err(); err != nil {
		return nil, classify(err)
	}
	snap, err := e.catalog.Snapshot()
	if err != nil {
		return nil, errs.Wrap(errs.IO, "%w", err)
	}
	t, err := snap.Table(name)
	if err != nil {
		return nil, errs.Wrap(errs.UnknownName, "%w", err)
	}
	cols := make([]Column, t.Schema.NumFields())
	for i, f := range t.Schema.Fields() {
		cols[i] = Column{Name: f.Name, Type: f.Type, TypeName: expr.TypeName(f.Type), Partition: i >= t.NumFileColumns}
	}
	return cols, nil
}
