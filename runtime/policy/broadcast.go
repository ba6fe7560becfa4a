package policy

import "github.com/fsql-dev/fsql/shuffle/keygroup"

// SwitchToBroadcast is the run-time broadcast switch's decision (Flink's
// adaptive broadcast join): a shuffled join whose build side, now that it
// ran, wrote fewer bytes than threshold is run as a broadcast join on its
// probe side's own tasks. A threshold of zero or less never switches.
func SwitchToBroadcast(buildBytes, threshold int64) bool {
	return threshold > 0 && buildBytes < threshold
}

// ForwardPlan is what each task of a switched join reads: task i reads
// probe task i's output unsplit (probeTaskBytes[i] bytes; the join runs
// len(probeTaskBytes) tasks) and the whole build side (buildKeyGroups key
// groups, buildBytes bytes); whole is what every task reads besides
// (broadcast inputs).
func ForwardPlan(probeTaskBytes []int64, buildKeyGroups int, buildBytes, whole int64) (probe, build [][]keygroup.Slice, taskBytes []int64) {
	p := len(probeTaskBytes)
	probe = make([][]keygroup.Slice, p)
	build = make([][]keygroup.Slice, p)
	taskBytes = make([]int64, p)
	for i := 0; i < p; i++ {
		probe[i] = []keygroup.Slice{{Start: 0, End: 0, Producer: i, Parts: 1}}
		build[i] = []keygroup.Slice{keygroup.Whole(0, buildKeyGroups-1)}
		taskBytes[i] = probeTaskBytes[i] + buildBytes + whole
	}
	return probe, build, taskBytes
}
