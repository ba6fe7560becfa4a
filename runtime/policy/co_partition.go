package policy

// The run-time broadcast switch the other way round: a join the planner
// broadcast (its build side estimated small) whose build side turns out
// too large to hold whole in a task runs co-partitioned instead, when its
// probe side is already hash-partitioned on the join keys: each task
// builds only the build rows of its own key groups.
//
// Why half a task's quota. Each task of the join's stage holds at most
// its quota (budget/slots) across all its operators that hold memory,
// and a broadcast build is held whole next to them (shared by the stage's
// tasks, but charged to the same budget). A join is never alone in its
// task: the probe side comes out of at least one other operator or
// exchange reader, and an aggregate, sort or second join above or below
// it takes a fair share too. With two operators each gets half, so a
// build above half the quota cannot stay in memory whole in any stage
// that holds anything else: it spills, and with it every task writes
// and reads back most of its probe rows. Below half it may still fit, and
// the broadcast plan (one table, probe rows never shuffled) is the better
// one.

// CoPartitionLimit is the largest planned broadcast build a join keeps
// whole: half a task's quota (budget/slots/2, see above). Zero (an
// unlimited budget, a quota of 0) never co-partitions.
func CoPartitionLimit(taskQuota int64) int64 {
	if taskQuota <= 0 {
		return 0
	}
	return taskQuota / 2
}

// SwitchToCoPartitioned is the decision for one planned broadcast join
// whose probe side is hash-partitioned on its keys: the table of the
// build side it wrote would reserve buildCost bytes (its bytes and the
// hash table's per-row cost, exec.BuildCost), over limit
// (CoPartitionLimit), so it runs co-partitioned.
func SwitchToCoPartitioned(buildCost, limit int64) bool {
	return limit > 0 && buildCost > limit
}

// CoPartitionParallelism is the task count of a stage whose joins run
// co-partitioned: at least p (what the stage decided from its input),
// and enough tasks that each task's part of the largest co-partitioned
// build table (largestBuild/tasks, in exec.BuildCost bytes) fits share, one operator's fair share of a
// task's quota (quota over the operators of the stage that hold memory),
// since the builds are held while the other operators run; rounded up to
// whole waves of slots as DecideParallelism does, and at most maxTasks
// (the key groups of the probe side, max-parallelism). Building only
// 1/tasks of the build side is what co-partitioning buys; too few tasks
// would spill anyway.
func CoPartitionParallelism(p int, largestBuild, share int64, slots, maxTasks int) int {
	want := p
	if share > 0 && largestBuild > 0 {
		need := int(min((largestBuild+share-1)/share, int64(1<<20)))
		if need > want {
			want = need
			if slots > 1 && want%slots != 0 {
				want = (want + slots - 1) / slots * slots
			}
		}
	}
	if maxTasks > 0 && want > maxTasks {
		want = max(maxTasks, p)
	}
	return max(want, 1)
}

// CoPartitionSharedMin is the smallest planned broadcast build table
// (exec.BuildCost bytes) CoPartitionShared divides among the tasks. Below
// it building the whole table takes about as long as each task hashing
// every build row to keep its own (shuffle.FilterKeyGroups), and a
// dimension of a few thousand rows is best built once.
const CoPartitionSharedMin = 4 << 20

// CoPartitionShared is the decision for one planned broadcast join, not
// over CoPartitionLimit, whose probe side is hash-partitioned on its keys
// in a stage of tasks tasks: run it co-partitioned when all the tasks run
// at once (at most slots of them), so that shared one task would build
// the table while the others wait for it; when the table (buildCost) is
// at least CoPartitionSharedMin; and when each task's part of it fits
// share, one operator's fair share of a task's quota (zero: no quota).
// Co-partitioned, each task builds 1/tasks of the table at the same time
// as the others, and probes a table that much smaller.
func CoPartitionShared(buildCost int64, tasks, slots int, share int64) bool {
	if tasks < 2 || tasks > slots || buildCost < CoPartitionSharedMin {
		return false
	}
	return share <= 0 || buildCost/int64(tasks) <= share
}
