package fsql

import (
	"context"
	"io"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/runtime"
	"github.com/fsql-dev/fsql/sql"
)

// RegisterTable makes the rows r yields a table held in memory called
// name, for the engine's lifetime: every query reads it as a table of
// the data directory, INSERT and REPLACE write it, DROP TABLE removes
// it. The rows are copied (r and its batches stay the caller's); the
// columns are r's schema's, and must be of the types fsql's tables hold
// (BOOLEAN, INT32, INT64, UINT64, FLOAT64, DECIMAL128, STRING, BINARY,
// DATE32, microsecond TIMESTAMP without a zone or in UTC, microsecond
// TIME64: cast others first). The name must be new: neither an
// in-memory table nor a folder of the data directory.
func (e *Engine) RegisterTable(name string, r array.RecordReader) error {
	if err := checkMemoryName(name); err != nil {
		return classify(err)
	}
	return classify(e.mem.Register(name, r))
}

// RegisterRecordBatch is RegisterTable of one record batch.
func (e *Engine) RegisterRecordBatch(name string, b arrow.RecordBatch) error {
	r, err := array.NewRecordReader(b.Schema(), []arrow.RecordBatch{b})
	if err != nil {
		return classify(errs.Wrap(errs.Semantic, "registering table %s: %w", name, err))
	}
	defer r.Release()
	return e.RegisterTable(name, r)
}

// checkMemoryName refuses names the binder could not read back as a
// table (paths, hidden names).
func checkMemoryName(name string) error {
	return sql.CheckTableName(name)
}

// createMemory runs CREATE TABLE t (col type, ...): an empty in-memory
// table.
func (e *Engine) createMemory(ctx context.Context, c *sql.MemoryCreate) (*Rows, error) {
	if _, err := e.mem.Create(c.Def, c.IfNotExists); err != nil {
		return nil, err
	}
	return e.affectedRows(ctx, 0), nil
}

// writeMemory runs INSERT or REPLACE into an in-memory table: query, the
// physical plan of the rows (the table's columns, cast to its types),
// runs to its end, and only then are its rows checked against the
// columns and committed, in one step (memtable.Store.Write). The rows
// come from the result stage, which hands each row over exactly once
// whatever attempts the stages under it ran, so the write commits once;
// a failed or cancelled statement changes nothing.
func (e *Engine) writeMemory(ctx context.Context, res resources, st *sql.Statement, query exec.Node) (*Rows, error) {
	w := st.Write
	if st.Explain {
		graph, err := runtime.BuildJobGraph(query)
		if err != nil {
			return nil, err
		}
		what := "INSERT INTO"
		if w.Overwrite {
			what = "REPLACE INTO"
		}
		return e.textRows(ctx, what+" in-memory table "+w.Table+" the rows of:\n"+graph.Explain()), nil
	}
	run, err := runtime.Run(ctx, query, e.runConfig(res, exec.NewQueryStats(), exec.NewMemoryBudget(res.cfg.MemoryBudget)))
	if err != nil {
		return nil, err
	}
	defer run.Close()
	var batches []arrow.RecordBatch
	defer func() {
		for _, b := range batches {
			b.Release()
		}
	}()
	for {
		b, err := run.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if b.NumRows() == 0 {
			b.Release()
			continue
		}
		batches = append(batches, b)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	n, err := e.mem.Write(w.Table, batches, w.Overwrite)
	if err != nil {
		return nil, err
	}
	return e.affectedRows(ctx, n), nil
}
