package hive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
)

// Tables fsql writes (CREATE TABLE ... AS SELECT, INSERT, REPLACE) keep
// their data files in the Hive layout, readable by any engine, and beside
// them, in the folder _fsql (skipped by every listing, as "_" names are),
// what makes their changes atomic for fsql's readers:
//
//	t/_fsql/table.json        the marker: columns, types, partition columns
//	t/_fsql/v00000007.json    manifest version 7: every data file of the table
//	t/_fsql/lock              held while a statement publishes
//	t/_fsql/txn-<id>/         a running statement's staging (write.go)
//	t/k=v/part-<statement>-<task>-<n>.parquet
//
// A statement publishes by writing the next manifest version, which is one
// link(2) of a complete file to a name that must not exist: a reader sees
// the old file list or the new one, never a part of one. A reader of an
// fsql table takes its files from the newest manifest and does not list
// the folders; files a newer statement added are not in the reader's
// manifest, so a query planned on an older version reads it to its end.
// Files an overwrite (REPLACE) removed stay on disk for
// RemovedFileRetention for the same reason. write.go has the protocol.

// MarkerDir is the folder of a table fsql wrote that holds its marker and
// manifests.
const MarkerDir = "_fsql"

const (
	markerFile = "table.json"
	lockName   = "lock"
)

// TableMeta is the marker of a table fsql created.
type TableMeta struct {
	// Format is "parquet".
	Format string `json:"format"`
	// Columns are the file columns, then the partition columns.
	Columns []MetaColumn `json:"columns"`
	// Partitions names the partition columns (the last len(Partitions)
	// Columns), outermost folder first.
	Partitions []string `json:"partitions,omitempty"`
	// CreatedBy is "fsql".
	CreatedBy string `json:"created_by"`
}

// MetaColumn is one column of a table fsql created, its type as
// arrow.DataType.String spells it.
type MetaColumn struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// Schema is the table's schema: file columns, then partition columns.
func (m *TableMeta) Schema() (*arrow.Schema, error) {
	fs := make([]arrow.Field, len(m.Columns))
	for i, c := range m.Columns {
		t, err := parseTypeName(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		fs[i] = arrow.Field{Name: c.Name, Type: t, Nullable: true}
	}
	return arrow.NewSchema(fs, nil), nil
}

// Manifest is one version of an fsql table's file list.
type Manifest struct {
	Version int64          `json:"version"`
	Files   []ManifestFile `json:"files"`
	// Statement is the ID of the write statement that published this
	// version, and Rows the rows it wrote: a retried job commit finds
	// its statement's version here and does not publish twice.
	Statement string `json:"statement,omitempty"`
	Rows      int64  `json:"rows"`
	// Removed are files an overwrite took out of the table, kept on disk
	// for RemovedFileRetention so queries planned on an older version
	// read them to their end; a later statement deletes them.
	Removed []RemovedFile `json:"removed,omitempty"`
}

// RemovedFile is a file an overwrite removed, and when.
type RemovedFile struct {
	Path      string `json:"path"`
	RemovedAt int64  `json:"removed_at_ns"`
}

// RemovedFileRetention is how long a file an overwrite removed stays on
// disk: a query planned before the overwrite reads the old version, so
// its files must outlive it. Queries longer than this that read a table
// overwritten meanwhile fail with ErrChanged.
const RemovedFileRetention = time.Hour

// ManifestFile is one data file: its path under the table folder (with
// "/" separators) and its stamp when it was published; files are never
// rewritten, so a different stamp means someone else changed the file,
// and the reader fails with ErrChanged.
type ManifestFile struct {
	Path  string `json:"path"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
	Rows  int64  `json:"rows"`
}

// ReadTableMeta reads the marker of the table in dir; ok is false when dir
// is not a table fsql created.
func ReadTableMeta(dir string) (meta *TableMeta, ok bool, err error) {
	data, err := os.ReadFile(filepath.Join(dir, MarkerDir, markerFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	meta = &TableMeta{}
	if err := json.Unmarshal(data, meta); err != nil {
		return nil, false, fmt.Errorf("%w: %s: %w", ErrCorrupt, filepath.Join(dir, MarkerDir, markerFile), err)
	}
	return meta, true, nil
}

func manifestName(v int64) string { return fmt.Sprintf("v%08d.json", v) }

// manifestVersions lists the manifest versions in dir/_fsql, ascending.
func manifestVersions(dir string) ([]int64, error) {
	ents, err := os.ReadDir(filepath.Join(dir, MarkerDir))
	if err != nil {
		return nil, err
	}
	var vs []int64
	for _, e := range ents {
		n := e.Name()
		if !strings.HasPrefix(n, "v") || !strings.HasSuffix(n, ".json") {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(n[1:], ".json"), 10, 64)
		if err == nil && v > 0 {
			vs = append(vs, v)
		}
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i] < vs[j] })
	return vs, nil
}

// readManifest reads version v of the table in dir.
func readManifest(dir string, v int64) (*Manifest, error) {
	path := filepath.Join(dir, MarkerDir, manifestName(v))
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	if err := json.Unmarshal(data, m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
	return m, nil
}

// LatestManifest reads the newest manifest of the fsql table in dir. A
// table without one (never published) has an empty version 0.
func LatestManifest(dir string) (*Manifest, error) {
	vs, err := manifestVersions(dir)
	if err != nil {
		return nil, err
	}
	if len(vs) == 0 {
		return &Manifest{}, nil
	}
	// Versions are published with link(2), whole, so the newest listed
	// is complete; one removed since the listing (retention) is an old
	// one, and a newer exists.
	return readManifest(dir, vs[len(vs)-1])
}

// loadManifestTable is how the catalog reads a table fsql created: the
// files of its newest manifest, typed by its marker, without listing its
// folders. It is the listing's only hook (loadTable).
func (c *Catalog) loadManifestTable(ctx context.Context, name, dir string, meta *TableMeta) (*Table, error) {
	m, err := LatestManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	schema, err := meta.Schema()
	if err != nil {
		return nil, fmt.Errorf("%w: table %s: %w", ErrCorrupt, name, err)
	}
	nFile := len(meta.Columns) - len(meta.Partitions)
	partTypes := make([]arrow.DataType, len(meta.Partitions))
	for i := range partTypes {
		partTypes[i] = schema.Field(nFile + i).Type
	}
	byDir := map[string]*rawPartition{}
	var dirs []string
	for _, f := range m.Files {
		rel := filepath.FromSlash(f.Path)
		pdir := filepath.Join(dir, filepath.Dir(rel))
		raw := byDir[pdir]
		if raw == nil {
			raw = &rawPartition{dir: pdir, keys: []string{}, values: []string{}}
			if d := filepath.Dir(f.Path); d != "." {
				for _, seg := range strings.Split(d, "/") {
					k, v, ok := strings.Cut(seg, "=")
					if !ok {
						return nil, fmt.Errorf("%w: table %s: manifest file %s is not under key=value folders", ErrCorrupt, name, f.Path)
					}
					raw.keys = append(raw.keys, unescapePath(k))
					raw.values = append(raw.values, unescapePath(v))
				}
			}
			if len(raw.keys) != len(meta.Partitions) {
				return nil, fmt.Errorf("%w: table %s: manifest file %s has %d partition folders, the table %d", ErrCorrupt, name, f.Path, len(raw.keys), len(meta.Partitions))
			}
			byDir[pdir] = raw
			dirs = append(dirs, pdir)
		}
		raw.files = append(raw.files, listedFile{path: filepath.Join(dir, rel), stamp: fileStamp{size: f.Size, mtime: f.MTime}})
	}
	if len(dirs) == 0 {
		// An empty table: its schema is the marker's.
		t := &Table{Name: name, Dir: dir, Format: Parquet, Schema: schema, NumFileColumns: nFile, Managed: true,
			PartitionColumns: append([]string(nil), meta.Partitions...), columns: metaColumns(schema, nFile), opts: c.opts}
		if len(meta.Partitions) == 0 {
			t.Partitions = []*Partition{{Dir: dir}}
		}
		return t, nil
	}
	sort.Strings(dirs)
	raws := make([]rawPartition, len(dirs))
	for i, d := range dirs {
		raws[i] = *byDir[d]
	}
	t, err := c.buildTableTyped(ctx, name, dir, dir, raws, partTypes)
	if err != nil {
		return nil, err
	}
	t.Managed = true
	return t, nil
}

func metaColumns(s *arrow.Schema, nFile int) []tableColumn {
	cols := make([]tableColumn, nFile)
	for i := range cols {
		cols[i] = tableColumn{name: s.Field(i).Name, typ: s.Field(i).Type}
	}
	return cols
}

// typedPartitions converts partition folder values to declared types
// (an fsql table's marker says them); a value that does not convert is a
// corrupt table.
func typedPartitions(keys []string, raws []rawPartition, types []arrow.DataType) ([][]any, error) {
	values := make([][]any, len(raws))
	for i, r := range raws {
		values[i] = make([]any, len(keys))
		for k := range keys {
			v := r.values[k]
			if v == DefaultPartitionName {
				continue
			}
			var err error
			switch types[k].ID() {
			case arrow.INT32:
				var n int64
				n, err = strconv.ParseInt(v, 10, 32)
				values[i][k] = int32(n)
			case arrow.INT64:
				values[i][k], err = strconv.ParseInt(v, 10, 64)
			case arrow.DATE32:
				d, ok := parseDate(v)
				if !ok {
					err = errors.New("not a date")
				}
				values[i][k] = d
			case arrow.STRING:
				values[i][k] = v
			default:
				err = fmt.Errorf("partition type %s", types[k])
			}
			if err != nil {
				return nil, fmt.Errorf("%w: partition folder %s: %s=%s is not a %s: %w", ErrCorrupt, r.dir, keys[k], v, types[k], err)
			}
		}
	}
	return values, nil
}

// PartitionTypeOK reports whether t can be the type of a partition
// column of a table fsql writes: the folder value must read back as the
// same type.
func PartitionTypeOK(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT32, arrow.INT64, arrow.DATE32, arrow.STRING:
		return true
	}
	return false
}

// parseTypeName reads the types arrow.DataType.String writes for the
// types fsql writes.
func parseTypeName(s string) (arrow.DataType, error) {
	simple := map[string]arrow.DataType{
		"bool": arrow.FixedWidthTypes.Boolean, "int8": arrow.PrimitiveTypes.Int8, "int16": arrow.PrimitiveTypes.Int16,
		"int32": arrow.PrimitiveTypes.Int32, "int64": arrow.PrimitiveTypes.Int64, "uint8": arrow.PrimitiveTypes.Uint8,
		"uint16": arrow.PrimitiveTypes.Uint16, "uint32": arrow.PrimitiveTypes.Uint32, "uint64": arrow.PrimitiveTypes.Uint64,
		"float32": arrow.PrimitiveTypes.Float32, "float64": arrow.PrimitiveTypes.Float64, "utf8": arrow.BinaryTypes.String,
		"large_utf8": arrow.BinaryTypes.LargeString, "binary": arrow.BinaryTypes.Binary, "date32": arrow.FixedWidthTypes.Date32,
		"time64[us]": arrow.FixedWidthTypes.Time64us, "timestamp[us]": &arrow.TimestampType{Unit: arrow.Microsecond},
		"timestamp[us, tz=UTC]": &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
	}
	if t, ok := simple[s]; ok {
		return t, nil
	}
	var p, sc int32
	if _, err := fmt.Sscanf(s, "decimal(%d, %d)", &p, &sc); err == nil && p >= 1 && p <= 38 {
		return &arrow.Decimal128Type{Precision: p, Scale: sc}, nil
	}
	return nil, fmt.Errorf("unknown column type %q", s)
}

// TypeNameOf is t as the marker spells it (collated strings are strings).
func TypeNameOf(t arrow.DataType) string {
	if et, ok := t.(arrow.ExtensionType); ok {
		t = et.StorageType()
	}
	return t.String()
}
