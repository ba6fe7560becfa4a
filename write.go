package fsql

import (
	"context"
	"io"
	"os"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planner"
	"github.com/fsql-dev/fsql/runtime"
	"github.com/fsql-dev/fsql/sql"
)

// write runs a write statement (CREATE TABLE ... AS SELECT, INSERT,
// REPLACE) to its end before returning, as a MySQL client's statement
// does: the Rows it returns hold one row, rows_affected, and the table
// is published (or, on an error, exactly as it was) when write returns.
// query is the physical plan of the rows to write.
func (e *Engine) write(ctx context.Context, res resources, st *sql.Statement, query exec.Node) (*Rows, error) {
	w := st.Write
	if w.Memory {
		return e.writeMemory(ctx, res, st, query)
	}
	if w.Create && w.IfNotExists {
		if _, err := os.Lstat(w.Dir); err == nil {
			return e.affectedRows(ctx, 0), nil
		}
	}
	opts := res.cfg.Write
	if w.Compression != "" {
		opts.Compression = w.Compression
	}
	opts, err := opts.Normalized()
	if err != nil {
		return nil, err
	}
	spec := &hive.WriteSpec{
		Table: w.Table, DataDir: e.dir, Dir: w.Dir, ID: hive.NewWriteID(),
		Create: w.Create, Overwrite: w.Overwrite, Static: w.Static, Meta: w.Meta(), Options: opts,
		Export: w.Export,
	}
	root := planner.PlanWrite(query, spec, len(w.Partitions), planner.PhysicalConfig{MaxParallelism: res.cfg.KeyGroups()})
	if st.Explain {
		graph, err := runtime.BuildJobGraph(root)
		if err != nil {
			return nil, err
		}
		return e.textRows(ctx, graph.Explain()), nil
	}
	tx, err := hive.BeginWrite(spec)
	if err != nil {
		return nil, err
	}
	// After a commit there is nothing left to remove; otherwise this
	// removes every staged file.
	defer tx.Abort()
	run, err := runtime.Run(ctx, root, e.runConfig(res, exec.NewQueryStats(), exec.NewMemoryBudget(res.cfg.MemoryBudget)))
	if err != nil {
		return nil, err
	}
	defer run.Close()
	var rows int64
	for {
		b, err := run.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		rows += b.Column(0).(*array.Int64).Value(0)
		b.Release()
	}
	return e.affectedRows(ctx, rows), nil
}

// drop runs DROP TABLE: every table must be one fsql created (checked
// for all before any is removed).
func (e *Engine) drop(ctx context.Context, d *sql.DropTarget) (*Rows, error) {
	for _, name := range d.Memory {
		if _, ok := e.mem.Def(name); !ok {
			return nil, errs.New(errs.ErBadTableError, "unknown table '%s' (dropped meanwhile)", name)
		}
	}
	for i, dir := range d.Dirs {
		if _, ok, err := hive.ReadTableMeta(dir); err != nil {
			return nil, err
		} else if !ok {
			return nil, errs.New(errs.Unsupported, "DROP TABLE %s: fsql drops only tables it created (their folder holds %s/); remove other folders yourself", d.Names[i], hive.MarkerDir)
		}
	}
	for _, name := range d.Memory {
		if err := e.mem.Drop(name); err != nil {
			return nil, err
		}
	}
	for i, dir := range d.Dirs {
		if err := hive.DropTable(e.dir, d.Names[i], dir); err != nil {
			return nil, err
		}
	}
	return e.affectedRows(ctx, 0), nil
}

// affectedRows is a write statement's result.
func (e *Engine) affectedRows(ctx context.Context, n int64) *Rows {
	bld := array.NewInt64Builder(e.alloc)
	bld.Append(n)
	a := bld.NewArray()
	bld.Release()
	batch := array.NewRecordBatch(exec.TableCommitSchema, []arrow.Array{a}, 1)
	a.Release()
	sent := false
	return &Rows{
		schema: exec.TableCommitSchema,
		ctx:    ctx,
		next: func(context.Context) (arrow.RecordBatch, error) {
			if sent {
				return nil, io.EOF
			}
			sent = true
			batch.Retain()
			return batch, nil
		},
		close: func() { batch.Release() },
	}
}
