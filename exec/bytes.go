package exec

import (
	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// BatchBytes is the number of bytes in the buffers b references, each
// buffer counted once (arrow/util.TotalRecordSize without its protobuf
// dependency). A slice reports the buffers it shares in full.
func BatchBytes(b arrow.RecordBatch) int64 {
	seen := make(map[*memory.Buffer]struct{})
	var n int64
	for _, c := range b.Columns() {
		n += arrayDataBytes(c.Data(), seen)
	}
	return n
}

func arrayDataBytes(d arrow.ArrayData, seen map[*memory.Buffer]struct{}) int64 {
	var n int64
	for _, buf := range d.Buffers() {
		if buf == nil {
			continue
		}
		if _, ok := seen[buf]; ok {
			continue
		}
		seen[buf] = struct{}{}
		n += int64(buf.Len())
	}
	for _, c := range d.Children() {
		n += arrayDataBytes(c, seen)
	}
	// Only dictionary arrays have a dictionary; others return a typed nil.
	if d.DataType().ID() == arrow.DICTIONARY {
		n += arrayDataBytes(d.Dictionary(), seen)
	}
	return n
}
