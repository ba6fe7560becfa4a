package exec

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
)

// Sink writes its input into Parquet files of a table being written
// (CREATE TABLE ... AS SELECT, INSERT, REPLACE). Each task attempt writes
// into a staging folder of its own (hive.WriteSpec.AttemptDir); the
// runtime commits the folder of the attempt it admits as the task's and
// removes the others (AttemptStager), and TableCommit publishes the
// committed tasks' files at the end. Its input's columns are the table's
// file columns, then its partition columns: each row goes to the file of
// its partition folder (k=v/..., __HIVE_DEFAULT_PARTITION__ for NULL),
// and a file is closed for the next once it reaches the target size.
//
// A Sink's stream returns one row per attempt: the rows and files it
// wrote.
type Sink struct {
	Input Node
	Spec  *hive.WriteSpec
	// Partitions is the number of trailing input columns that are
	// partition columns (the table's, in folder order).
	Partitions int
}

// SinkSchema is the schema of a Sink's output.
var SinkSchema = arrow.NewSchema([]arrow.Field{
	{Name: "rows", Type: arrow.PrimitiveTypes.Int64},
	{Name: "files", Type: arrow.PrimitiveTypes.Int64},
}, nil)

// Schema implements Node.
func (s *Sink) Schema() *arrow.Schema { return SinkSchema }

// Children implements Node.
func (s *Sink) Children() []Node { return []Node{s.Input} }

// String implements Node.
func (s *Sink) String() string {
	part := ""
	if s.Partitions > 0 {
		names := make([]string, s.Partitions)
		in := s.Input.Schema()
		for i := range names {
			names[i] = in.Field(in.NumFields() - s.Partitions + i).Name
		}
		part = fmt.Sprintf(", partitioned by %s", strings.Join(names, ", "))
	}
	if x := s.Spec.Export; x != nil {
		format := "csv"
		if x.Parquet {
			format = "parquet, " + s.Spec.Options.Compression
		}
		return fmt.Sprintf("Sink(outfile %s, %s)", s.Spec.Table, format)
	}
	return fmt.Sprintf("Sink(table %s%s, %s)", s.Spec.Table, part, s.Spec.Options.Compression)
}

// CommitAttempt implements AttemptStager: the attempt's files become its
// task's.
func (s *Sink) CommitAttempt(task, attempt int) error { return s.Spec.CommitAttempt(task, attempt) }

// DiscardAttempt implements AttemptStager: the attempt's files are
// removed.
func (s *Sink) DiscardAttempt(task, attempt int) error { return s.Spec.DiscardAttempt(task, attempt) }

// Open implements Node.
func (s *Sink) Open(tc *TaskContext, inputs []Stream) (Stream, error) {
	if len(inputs) != 1 {
		return nil, fmt.Errorf("%w: Sink takes one input", ErrInternal)
	}
	in := s.Input.Schema()
	nFile := in.NumFields() - s.Partitions
	if nFile < 1 || s.Partitions < 0 {
		return nil, fmt.Errorf("%w: Sink of %d columns with %d partition columns", ErrInternal, in.NumFields(), s.Partitions)
	}
	st := &sinkStream{s: s, tc: tc, input: inputs[0], nFile: nFile, files: map[string]*sinkFile{}}
	if tc != nil {
		st.task, st.attempt = tc.Task, tc.Attempt
	}
	fs := make([]arrow.Field, nFile)
	for i := range fs {
		fs[i] = in.Field(i)
	}
	st.fileSchema = arrow.NewSchema(fs, nil)
	return st, nil
}

type sinkFile struct {
	dir string // the partition folder, relative ("" when unpartitioned)
	w   hive.DataFileWriter
}

type sinkStream struct {
	s             *Sink
	tc            *TaskContext
	input         Stream
	nFile         int
	fileSchema    *arrow.Schema
	task, attempt int
	files         map[string]*sinkFile // open files by partition folder
	written       int                  // files started
	rows          int64
	done          bool
}

func (st *sinkStream) Next(ctx context.Context) (arrow.RecordBatch, error) {
	if st.done {
		return nil, io.EOF
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		b, err := st.input.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		err = st.write(b)
		b.Release()
		if err != nil {
			return nil, err
		}
	}
	if x := st.s.Spec.Export; x != nil && !x.Folder && st.written == 0 {
		// One file is the target even for no rows (the export's one
		// writing task makes it).
		if _, err := st.file(""); err != nil {
			return nil, err
		}
	}
	for dir, f := range st.files {
		delete(st.files, dir)
		if _, err := f.w.Close(); err != nil {
			return nil, errs.Wrap(errs.IO, "writing table %s: %w", st.s.Spec.Table, err)
		}
	}
	st.done = true
	alloc := allocOf(st.tc)
	rb := array.NewInt64Builder(alloc)
	defer rb.Release()
	rb.Append(st.rows)
	rows := rb.NewArray()
	defer rows.Release()
	rb.Append(int64(st.written))
	files := rb.NewArray()
	defer files.Release()
	return array.NewRecordBatch(SinkSchema, []arrow.Array{rows, files}, 1), nil
}

// storageOf is a's storage when a is of an extension type (collated
// strings): files hold the plain values.
func storageOf(a arrow.Array) arrow.Array {
	if ext, ok := a.(array.ExtensionArray); ok {
		return ext.Storage()
	}
	return a
}

// write sends each row of b to its partition's file.
func (st *sinkStream) write(b arrow.RecordBatch) error {
	n := int(b.NumRows())
	if n == 0 {
		return nil
	}
	cols := b.Columns()
	if st.s.Partitions == 0 {
		return st.writeRows("", cols[:st.nFile], nil, n)
	}
	// Rows of one partition keep their order; a batch of one partition
	// (input clustered by the key) is written whole.
	order, groups, err := partitionGroups(st.s.Spec, cols[st.nFile:], n)
	if err != nil {
		return err
	}
	if len(order) == 1 {
		return st.writeRows(order[0], cols[:st.nFile], nil, n)
	}
	for i, k := range order {
		if err := st.writeRows(k, cols[:st.nFile], groups[i], len(groups[i])); err != nil {
			return err
		}
	}
	return nil
}

// partitionGroups splits rows 0..n-1 by their partition folder: the
// folders in order of first appearance, and the rows of each in order.
// One integer or date partition column (the usual case) is grouped by
// its values, each folder name made once; other keys by their folder
// names, made per row.
func partitionGroups(spec *hive.WriteSpec, parts []arrow.Array, n int) ([]string, [][]int32, error) {
	var order []string
	var groups [][]int32
	if len(parts) == 1 {
		var value func(i int) int64
		switch c := storageOf(parts[0]).(type) {
		case *array.Int32:
			value = func(i int) int64 { return int64(c.Value(i)) }
		case *array.Int64:
			value = c.Value
		case *array.Date32:
			value = func(i int) int64 { return int64(c.Value(i)) }
		}
		if value != nil {
			a := parts[0]
			byValue := map[int64]int{}
			nullGroup := -1
			for i := 0; i < n; i++ {
				valid := a.IsValid(i)
				g, seen := nullGroup, nullGroup >= 0
				if valid {
					g, seen = byValue[value(i)]
				}
				if !seen {
					k, err := partitionPath(spec, parts, i)
					if err != nil {
						return nil, nil, err
					}
					g = len(order)
					order, groups = append(order, k), append(groups, nil)
					if valid {
						byValue[value(i)] = g
					} else {
						nullGroup = g
					}
				}
				groups[g] = append(groups[g], int32(i))
			}
			return order, groups, nil
		}
	}
	byName := map[string]int{}
	for i := 0; i < n; i++ {
		k, err := partitionPath(spec, parts, i)
		if err != nil {
			return nil, nil, err
		}
		g, ok := byName[k]
		if !ok {
			g = len(order)
			byName[k] = g
			order, groups = append(order, k), append(groups, nil)
		}
		groups[g] = append(groups[g], int32(i))
	}
	return order, groups, nil
}

// writeRows writes rows idx (nil: all n) of cols into partition dir's
// file, rolling to a new file at the target size.
func (st *sinkStream) writeRows(dir string, cols []arrow.Array, idx []int32, n int) error {
	plain := make([]arrow.Array, len(cols))
	for i, c := range cols {
		plain[i] = storageOf(c)
	}
	if idx != nil {
		taken, err := takeArrays(allocOf(st.tc), plain, idx)
		if err != nil {
			return err
		}
		defer releaseArrays(taken)
		plain = taken
	}
	rec := array.NewRecordBatch(st.fileSchema, plain, int64(n))
	defer rec.Release()
	f, err := st.file(dir)
	if err != nil {
		return err
	}
	if err := f.w.Write(rec); err != nil {
		return errs.Wrap(errs.IO, "writing table %s: %w", st.s.Spec.Table, err)
	}
	st.rows += int64(n)
	if f.w.Size() >= st.s.Spec.Options.TargetFileSize {
		delete(st.files, dir)
		if _, err := f.w.Close(); err != nil {
			return errs.Wrap(errs.IO, "writing table %s: %w", st.s.Spec.Table, err)
		}
	}
	return nil
}

// file is the open file of partition folder dir, created on first use
// in the attempt's staging folder.
func (st *sinkStream) file(dir string) (*sinkFile, error) {
	if f := st.files[dir]; f != nil {
		return f, nil
	}
	spec := st.s.Spec
	folder := filepath.Join(spec.AttemptDir(st.task, st.attempt), filepath.FromSlash(dir))
	if err := os.MkdirAll(folder, 0o755); err != nil {
		return nil, errs.Wrap(errs.IO, "writing table %s: %w", spec.Table, err)
	}
	path := filepath.Join(folder, spec.FileName(st.task, st.written))
	w, err := spec.CreateFile(path, st.fileSchema)
	if err != nil {
		return nil, errs.Wrap(errs.IO, "writing table %s: %w", spec.Table, err)
	}
	st.written++
	f := &sinkFile{dir: dir, w: w}
	st.files[dir] = f
	return f, nil
}

// Close implements Stream. Files still open belong to an attempt that
// did not finish: they are removed (the runtime removes the attempt's
// folder too).
func (st *sinkStream) Close() {
	for dir, f := range st.files {
		f.w.Abort()
		delete(st.files, dir)
	}
	if st.input != nil {
		st.input.Close()
		st.input = nil
	}
}

// partitionPath is row i's partition folder, k1=v1/k2=v2, relative to
// the table folder.
func partitionPath(spec *hive.WriteSpec, parts []arrow.Array, i int) (string, error) {
	var b strings.Builder
	names := spec.Meta.Partitions
	for k, a := range parts {
		if k > 0 {
			b.WriteByte('/')
		}
		b.WriteString(hive.EscapePartitionValue(names[k]))
		b.WriteByte('=')
		v, err := partitionValue(a, i)
		if err != nil {
			return "", errs.Wrap(errs.Execution, "writing table %s: partition column %s: %w", spec.Table, names[k], err)
		}
		b.WriteString(v)
	}
	return b.String(), nil
}

// partitionValue is row i of a as a partition folder spells it.
func partitionValue(a arrow.Array, i int) (string, error) {
	a = storageOf(a)
	if a.IsNull(i) {
		return hive.FolderValue(nil)
	}
	switch c := a.(type) {
	case *array.Int32:
		return hive.FolderValue(c.Value(i))
	case *array.Int64:
		return hive.FolderValue(c.Value(i))
	case *array.Date32:
		return hive.FolderValue(c.Value(i))
	case *array.String:
		return hive.FolderValue(c.Value(i))
	}
	return "", errs.New(errs.Unsupported, "a partition column of type %s", a.DataType())
}
