package exec

import (
	"github.com/apache/arrow-go/v18/arrow"

	"github.com/fsql-dev/fsql/exec/expr"
)

// KeyGroups is how a task's inputs were shuffled to it, when every input
// of the node being opened is a hash exchange of which the task reads
// the same key groups whole (Flink's KeyGroupRangeAssignment, package
// shuffle/keygroup): rows of input i belong to key group
// keygroup.ForHash(HashColumns(Keys[i]), Count), and this task holds
// exactly the rows of key groups Start..End of every producer. The
// runtime sets TaskContext.KeyGroups only then: not for a broadcast,
// forward or gather input, nor for a task that reads a piece of a key
// group split for skew.
//
// A hash join that spills partitions by it first (hash_join_spill.go):
// a spilled partition is then a set of whole key groups, cut where the
// exchange already cut, and the seeded hash of the next level splits
// what is left independently.
type KeyGroups struct {
	// Start..End (inclusive) of Count key groups.
	Start, End, Count int
	// Keys are the shuffle keys of each input, in the node's input order.
	Keys [][]expr.Expr
}

// span is the number of key groups in the range.
func (k *KeyGroups) span() int { return k.End - k.Start + 1 }

// hashedBy reports whether input i was shuffled by exactly keys (the same
// expressions over the same schema, so the same hashes).
func (k *KeyGroups) hashedBy(i int, keys []expr.Expr) bool {
	if i >= len(k.Keys) || len(k.Keys[i]) != len(keys) {
		return false
	}
	for c, e := range k.Keys[i] {
		if !sameExpr(e, keys[c]) {
			return false
		}
	}
	return true
}

// sameExpr reports whether a and b compute the same column: columns by
// position (their names need not be unique), anything else by type and
// text. It only decides whether a join partitions by key group: a false
// answer falls back to the seeded hash, which is correct for any keys.
func sameExpr(a, b expr.Expr) bool {
	if !arrow.TypeEqual(a.DataType(), b.DataType()) {
		return false
	}
	ca, ok1 := a.(*expr.Column)
	cb, ok2 := b.(*expr.Column)
	if ok1 || ok2 {
		return ok1 && ok2 && ca.Index == cb.Index
	}
	return a.String() == b.String()
}
