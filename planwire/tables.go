package planwire

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/exec"
	"github.com/fsql-dev/fsql/planwire/pb"
)

// A table travels as its name and the snapshot the plan saw: the
// partitions the fragment's scans read and their files (name, size,
// modification time, rows, row groups). The decoder looks the name up
// through its Resolver and insists on exactly those partitions and files,
// so a decoded fragment reads what the plan was made for, or fails with
// hive.ErrChanged naming what differs. Partitions are named by their
// folder relative to the table's (hive.Table.Dir) and files relative to
// their partition's, so the data directory may sit elsewhere in the
// decoding process.

// snapshot is one table of a fragment being encoded.
type snapshot struct {
	index int32
	msg   *pb.Table
	parts map[*hive.Partition]int32 // index into msg.Partitions
}

// encodeTables gives every table the scans of a fragment read its
// snapshot, listing the union of the partitions the scans read, in the
// table's order.
func encodeTables(scans []*exec.Scan) ([]*pb.Table, map[*hive.Table]*snapshot, error) {
	used := map[*hive.Table]map[*hive.Partition]bool{}
	var order []*hive.Table
	for _, s := range scans {
		if s.Table == nil {
			return nil, nil, errs.New(errs.Internal, "a scan without a table")
		}
		u, ok := used[s.Table]
		if !ok {
			u = map[*hive.Partition]bool{}
			used[s.Table] = u
			order = append(order, s.Table)
		}
		parts := s.Partitions
		if parts == nil {
			parts = s.Table.Partitions
		}
		for _, p := range parts {
			u[p] = true
		}
	}
	var out []*pb.Table
	snaps := map[*hive.Table]*snapshot{}
	for _, t := range order {
		m := &pb.Table{Name: t.Name, Format: t.Format.String(), NumFileColumns: int32(t.NumFileColumns), NumPartitions: int32(len(t.Partitions))}
		for _, f := range t.Schema.Fields() {
			m.Columns = append(m.Columns, &pb.ColumnCheck{Name: f.Name, Type: f.Type.String()})
		}
		sn := &snapshot{index: int32(len(out)), msg: m, parts: map[*hive.Partition]int32{}}
		found := 0
		for _, p := range t.Partitions {
			if !used[t][p] {
				continue
			}
			found++
			pm, err := encodePartition(t, p)
			if err != nil {
				return nil, nil, err
			}
			sn.parts[p] = int32(len(m.Partitions))
			m.Partitions = append(m.Partitions, pm)
		}
		if found != len(used[t]) {
			return nil, nil, errs.New(errs.Internal, "a scan of %s reads a partition that is not one of the table's", t.Name)
		}
		snaps[t] = sn
		out = append(out, m)
	}
	return out, snaps, nil
}

func encodePartition(t *hive.Table, p *hive.Partition) (*pb.Partition, error) {
	rel, err := partitionPath(t, p)
	if err != nil {
		return nil, err
	}
	m := &pb.Partition{Path: rel}
	for _, f := range p.Files {
		name, err := relPath(p.Dir, f.Path)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, "table %s: %w", t.Name, err)
		}
		m.Files = append(m.Files, &pb.File{
			Name:            name,
			Size:            f.Size,
			ModTimeUnixNano: f.ModTime.UnixNano(),
			NumRows:         f.NumRows,
			NumRowGroups:    int32(len(f.RowGroups)),
		})
	}
	return m, nil
}

// partitionPath is p's folder relative to its table's ("" for the table's
// folder itself).
func partitionPath(t *hive.Table, p *hive.Partition) (string, error) {
	rel, err := relPath(t.Dir, p.Dir)
	if err != nil {
		return "", errs.Wrap(errs.Internal, "table %s: %w", t.Name, err)
	}
	return rel, nil
}

// relPath is path relative to dir, with slashes, "" for dir itself. A
// path outside dir is an error: tables keep their files below their
// folder.
func relPath(dir, path string) (string, error) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", errs.New(errs.Internal, "%s is not below the folder %s", path, dir)
	}
	if rel == "." {
		return "", nil
	}
	return filepath.ToSlash(rel), nil
}

// resolved is a decoded table: the resolver's table and the partitions of
// the snapshot, in its order.
type resolved struct {
	table *hive.Table
	msg   *pb.Table
	parts []*hive.Partition
}

// resolveTable looks m up through r and checks it is the snapshot.
func resolveTable(r Resolver, m *pb.Table) (*resolved, error) {
	if r == nil {
		return nil, errs.New(errs.Internal, "decoding a scan of %s without a table resolver", m.Name)
	}
	t, err := r.Lookup(m.Name)
	if err != nil {
		return nil, errs.Wrap(errs.Execution, "resolving table %s of a plan fragment: %w", m.Name, err)
	}
	changed := func(format string, args ...any) error {
		return errs.Wrap(errs.Conflict, "%w: table %s is not the one the plan was made with: %s; plan the query again",
			hive.ErrChanged, m.Name, fmt.Sprintf(format, args...))
	}
	if f := t.Format.String(); f != m.Format {
		return nil, changed("its files are %s, the plan read %s", f, m.Format)
	}
	fields := t.Schema.Fields()
	if len(fields) != len(m.Columns) || t.NumFileColumns != int(m.NumFileColumns) {
		return nil, changed("%d columns (%d in files), the plan saw %d (%d)", len(fields), t.NumFileColumns, len(m.Columns), m.NumFileColumns)
	}
	for i, f := range fields {
		if c := m.Columns[i]; f.Name != c.Name || f.Type.String() != c.Type {
			return nil, changed("column %d is %s %s, the plan saw %s %s", i+1, f.Name, f.Type, c.Name, c.Type)
		}
	}
	byPath := make(map[string]*hive.Partition, len(t.Partitions))
	for _, p := range t.Partitions {
		rel, err := partitionPath(t, p)
		if err != nil {
			return nil, err
		}
		if _, dup := byPath[rel]; dup {
			return nil, errs.New(errs.Internal, "table %s has two partitions at %s", t.Name, rel)
		}
		byPath[rel] = p
	}
	out := &resolved{table: t, msg: m, parts: make([]*hive.Partition, len(m.Partitions))}
	for i, pm := range m.Partitions {
		p, ok := byPath[pm.Path]
		if !ok {
			return nil, changed("partition %q is gone", pm.Path)
		}
		if len(p.Files) != len(pm.Files) {
			return nil, changed("partition %q has %d files, the plan saw %d", pm.Path, len(p.Files), len(pm.Files))
		}
		for j, fm := range pm.Files {
			f := p.Files[j]
			name, err := relPath(p.Dir, f.Path)
			if err != nil {
				return nil, err
			}
			if name != fm.Name || f.Size != fm.Size || f.ModTime.UnixNano() != fm.ModTimeUnixNano ||
				f.NumRows != fm.NumRows || len(f.RowGroups) != int(fm.NumRowGroups) {
				return nil, changed("file %s is %s of %d bytes modified at %d with %d rows in %d row groups, the plan saw %s of %d bytes at %d with %d rows in %d",
					f.Path, name, f.Size, f.ModTime.UnixNano(), f.NumRows, len(f.RowGroups),
					fm.Name, fm.Size, fm.ModTimeUnixNano, fm.NumRows, fm.NumRowGroups)
			}
		}
		out.parts[i] = p
	}
	return out, nil
}

// scanPartitions are a decoded scan's partitions: nil (all of the table)
// when the plan read all and the table has exactly the snapshot's.
func (r *resolved) scanPartitions(all bool, idx []int32) ([]*hive.Partition, error) {
	if all {
		if len(r.table.Partitions) != int(r.msg.NumPartitions) || len(r.msg.Partitions) != int(r.msg.NumPartitions) {
			return nil, errs.Wrap(errs.Conflict, "%w: table %s has %d partitions, the plan read all of its %d; plan the query again",
				hive.ErrChanged, r.table.Name, len(r.table.Partitions), r.msg.NumPartitions)
		}
		return nil, nil
	}
	out := make([]*hive.Partition, len(idx))
	for i, k := range idx {
		if k < 0 || int(k) >= len(r.parts) {
			return nil, errs.New(errs.Internal, "a scan of %s reads partition #%d of a snapshot of %d", r.table.Name, k, len(r.parts))
		}
		out[i] = r.parts[k]
	}
	return out, nil
}
