package keygroup

import "fmt"

// Slice is one piece of an exchange that a consumer task reads: the key
// groups Start..End (inclusive) of one producer or all of them, and, when
// Parts > 1, only batch Part, Part+Parts, ... of the batches holding rows
// of those key groups (how a skewed key group is split among tasks).
type Slice struct {
	Start, End int
	// Producer is the only producer task read, or -1 for all of them.
	Producer int
	// Part of Parts; Parts <= 1 reads every batch.
	Part, Parts int
}

func (s Slice) String() string {
	out := fmt.Sprintf("%d-%d", s.Start, s.End)
	if s.Start == s.End {
		out = fmt.Sprint(s.Start)
	}
	if s.Producer >= 0 {
		out += fmt.Sprintf(" of producer %d", s.Producer)
	}
	if s.Parts > 1 {
		out += fmt.Sprintf(" part %d/%d", s.Part+1, s.Parts)
	}
	return out
}

// Whole is the slice of key groups start..end of every producer.
func Whole(start, end int) Slice {
	return Slice{Start: start, End: end, Producer: -1, Parts: 1}
}
