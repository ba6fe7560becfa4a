// Package spill keeps what does not fit in a query's memory budget on
// disk: Arrow IPC files, compressed, in the directories of io.tmp.dirs.
//
// One Manager serves one run of a query. The runtime creates it, hands it
// to every task through exec.TaskContext.Spill, and closes it when the
// run ends (success, error or cancellation alike); Close removes every
// file the run wrote. Nothing touches the disk until the first file is
// created, so queries that never spill cost nothing.
//
// # Files
//
// Manager.Create starts a file for one batch schema; Writer.Write appends
// batches (one IPC record each, sliced batches write only their rows) and
// Writer.Finish closes it into a File, which any number of Readers read
// back, sequentially (Reader.Next) or record by record (Reader.At, safe
// from several goroutines). A File is removed by File.Remove as soon as
// its owner is done with it, or with the rest at Manager.Close. Files are
// spread over the configured directories round robin.
//
// An operator that spills by partition writes every partition of one
// spill into one file through a PartWriter (Manager.CreateParts), which
// gathers each partition's small pieces into records of a size the
// caller's reader can hold and hands back one File per partition: the
// list of its records in the shared file, read alone, the file removed
// with its last partition (parts.go says why).
//
// Columns of an Arrow extension type (fsql's collated strings) are written
// as their storage and wrapped again on read, from the schema the writer
// was given, so no extension type needs registering with Arrow.
//
// # Folders and leftovers
//
// Each directory of io.tmp.dirs gets, at its first file, one folder for
// the run, named fsql-spill-<pid>-<random>, holding a lock file the
// process keeps locked (flock) until Close. A process that crashed leaves
// its folders behind with their locks released; Sweep, which the engine
// calls when it opens, removes exactly those, and never a folder whose
// owner still runs (another engine in this or another process).
//
// # Errors
//
// Disk errors wrap ErrSpill (kind errs.Resources) and the operating
// system's error, and name the directory and what to do
// (an unwritable directory, a full disk). exec reports them as
// resources exhausted: the query could not get the room it needed.
//
// # Accounting
//
// A Writer counts the rows, the records, the Arrow bytes it was given and
// the bytes that reached the disk; Manager.Stats sums them over the run.
// What a Reader hands out is ordinary Arrow memory from the allocator it
// was given: its owner charges it to the memory budget like any batch.
//
// # Reuse by the shuffle
//
// The shuffle's store (shuffle.Buffer) keeps a producer's output as
// batches sorted by key group. When the budget is tight it writes them
// through the same API (shuffle/spill.go): one File per eviction of
// committed output, one per staged attempt (finished when it commits),
// each batch cut into a few records along key-group boundaries, the
// bounds kept in memory beside the record numbers, so a consumer reads
// only the records of its key-group range (Reader.At).
package spill
