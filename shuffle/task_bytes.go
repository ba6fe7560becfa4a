package shuffle

import "github.com/fsql-dev/fsql/shuffle/keygroup"

// TaskBytes is what task of consumer stage (of parallelism tasks) will
// read of the buffer, in the committed counters' bytes: the slices the
// runtime set for it, else its count-based key-group range of a hash
// exchange, its producer's output of a forward edge, everything of a
// broadcast or gather (as OpenReader reads). A slice that is one part of
// a split key group counts its share of the group's bytes. It is the
// planned input the runtime's progress estimate measures a task's reads
// against, so it must agree with what the task's readers hand it.
func (b *Buffer) TaskBytes(stage, task, parallelism int) int64 {
	sl := b.Slices(stage, task)
	if sl == nil {
		switch b.Kind() {
		case Hash:
			start, end := keygroup.Range(b.Subpartitions, parallelism, task)
			sl = []keygroup.Slice{keygroup.Whole(start, end)}
		case Forward:
			sl = []keygroup.Slice{{Start: 0, End: 0, Producer: task, Parts: 1}}
		default:
			return b.TotalBytes()
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var n int64
	for _, s := range sl {
		for p := range b.bytes {
			if s.Producer >= 0 && p != s.Producer {
				continue
			}
			var part int64
			for k := max(s.Start, 0); k <= s.End && k < len(b.bytes[p]); k++ {
				part += b.bytes[p][k]
			}
			if s.Parts > 1 {
				part /= int64(s.Parts)
			}
			n += part
		}
	}
	return n
}
