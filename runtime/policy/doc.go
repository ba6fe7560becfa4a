// Package policy holds the adaptive scheduler's decisions as pure
// functions over plain statistics: how many tasks a stage gets
// (DecideParallelism), how key groups are cut into byte-balanced ranges
// (CutRanges, BalancedRanges), which key groups of a join are skewed and
// how they are split (FindSkew, SkewPlan), and whether a shuffled join
// turns into a broadcast join at run time (SwitchToBroadcast,
// ForwardPlan) and whether a planned broadcast join runs co-partitioned
// instead (CoPartitionLimit, SwitchToCoPartitioned,
// CoPartitionParallelism), which running attempts are slow enough to copy
// (FindSlowAttempts, with the pace of each worker's recent attempts,
// PaceOf and WorkerPace), and which workers take no new attempt
// (Blocklist, MayBlock).
//
// Nothing here points at stages, runs or buffers: inputs and outputs are
// values, so every policy is table-tested alone and the runtime (package
// runtime) only gathers the statistics and applies the answer.
package policy
