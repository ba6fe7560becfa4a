package memtable

import (
	"encoding/binary"
	"math"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"

	"github.com/fsql-dev/fsql/connectors/hive"
	"github.com/fsql-dev/fsql/errs"
	"github.com/fsql-dev/fsql/internal/format"
)

// Key is a PRIMARY KEY or UNIQUE key of an in-memory table: no two rows
// have equal values in all of Columns. A primary key's columns are NOT
// NULL; a unique key ignores rows with a NULL in it, as MySQL's do.
// Values compare as fsql compares them (strings byte-wise), not by
// MySQL's default case-insensitive collation.
type Key struct {
	// Name is the key's name in messages: PRIMARY, or the index's.
	Name    string
	Columns []int
	Primary bool
}

var errDupEntry = errs.Condition{Kind: errs.Execution, Code: 1062, SQLState: "23000", Name: "ER_DUP_ENTRY"}

// keySet holds the encoded values of one key of a table's rows.
type keySet map[string]struct{}

// keySets builds the sets of t's keys from its rows, once; Write keeps
// them up to date under the store's lock.
func (t *table) keySets() ([]keySet, error) {
	if t.keys != nil || len(t.def.Keys) == 0 {
		return t.keys, nil
	}
	sets := make([]keySet, len(t.def.Keys))
	for i := range sets {
		sets[i] = keySet{}
	}
	var batches []arrow.RecordBatch
	for _, f := range t.files {
		batches = append(batches, hive.MemoryBatch(f))
	}
	if err := addKeys(t.def, sets, batches); err != nil {
		return nil, err
	}
	t.keys = sets
	return sets, nil
}

// checkKeys checks the rows of batches against the key sets of the rows
// kept (nil for an overwrite) and among themselves, and returns the sets
// of the new rows; kept is not changed (the caller merges on success).
func checkKeys(def *Def, kept []keySet, batches []arrow.RecordBatch) ([]keySet, error) {
	if len(def.Keys) == 0 {
		return nil, nil
	}
	sets := make([]keySet, len(def.Keys))
	for i := range sets {
		sets[i] = keySet{}
	}
	if err := addKeysAgainst(def, sets, kept, batches); err != nil {
		return nil, err
	}
	return sets, nil
}

// addKeys adds the keys of batches' rows to sets, failing on the first
// duplicate.
func addKeys(def *Def, sets []keySet, batches []arrow.RecordBatch) error {
	return addKeysAgainst(def, sets, nil, batches)
}

// addKeysAgainst is addKeys failing also on a key kept holds.
func addKeysAgainst(def *Def, sets, kept []keySet, batches []arrow.RecordBatch) error {
	var buf []byte
	for _, b := range batches {
		for row := 0; row < int(b.NumRows()); row++ {
			for k, key := range def.Keys {
				buf = buf[:0]
				null := false
				for _, c := range key.Columns {
					var isNull bool
					buf, isNull = appendValue(buf, b.Column(c), row)
					null = null || isNull
				}
				if null {
					continue // NULLs never collide in a unique key
				}
				_, dup := sets[k][string(buf)]
				if kept != nil && !dup {
					_, dup = kept[k][string(buf)]
				}
				if dup {
					return errs.New(errDupEntry, "duplicate entry '%s' for key '%s' of table %s", entryText(def, key, b, row), key.Name, def.Name)
				}
				sets[k][string(buf)] = struct{}{}
			}
		}
	}
	return nil
}

// appendValue appends row i of a, encoded so that equal values (and only
// they) encode alike.
func appendValue(buf []byte, a arrow.Array, i int) ([]byte, bool) {
	if a.IsNull(i) {
		return buf, true
	}
	switch c := a.(type) {
	case *array.Int32:
		return binary.AppendVarint(buf, int64(c.Value(i))), false
	case *array.Int64:
		return binary.AppendVarint(buf, c.Value(i)), false
	case *array.Uint64:
		return binary.AppendUvarint(buf, c.Value(i)), false
	case *array.Float64:
		v := c.Value(i)
		if v == 0 {
			v = 0 // -0 equals 0
		}
		return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v)), false
	case *array.String:
		s := c.Value(i)
		return append(binary.AppendUvarint(buf, uint64(len(s))), s...), false
	case *array.Binary:
		s := c.Value(i)
		return append(binary.AppendUvarint(buf, uint64(len(s))), s...), false
	}
	// Dates, timestamps, times, decimals and booleans by their text,
	// which is one-to-one for one column type.
	text, _ := format.Value(a, i)
	return append(binary.AppendUvarint(buf, uint64(len(text))), text...), false
}

// entryText is the key's values in row as MySQL's message shows them,
// joined by '-'.
func entryText(def *Def, key Key, b arrow.RecordBatch, row int) string {
	parts := make([]string, len(key.Columns))
	for i, c := range key.Columns {
		parts[i], _ = format.Value(b.Column(c), row)
	}
	return strings.Join(parts, "-")
}
