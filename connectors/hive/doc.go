// Package hive reads Hive-partitioned Parquet and CSV tables.
//
// # Layout
//
// A data directory holds one folder per table (files beside the table
// folders are ignored). A table folder holds data files, either directly
// or under nested key=value/ folders whose keys become partition columns
// (the folder name __HIVE_DEFAULT_PARTITION__ is NULL). A folder holds
// data files or partition folders, never both.
//
// Data files are known by content, not by name: every file in a table
// folder is read as Parquet (Hive's 000000_0, Spark's part-00000-<uuid>-c000
// and part-0.parquet alike), except what writers leave beside data, which
// is skipped (the rule of Spark's file index): names starting with "." or
// "_" (.part-0.crc, _SUCCESS, _temporary/, .hive-staging_*/), unless a
// "_" name holds "=" (a partition folder), Hadoop checksums (*.crc) and
// copies in progress (*._COPYING_). Any other file that is not Parquet
// (no PAR1 magic at its start and end) makes the table unreadable with
// ErrNotParquet naming it; its bytes are never quoted in the message.
//
// Symbolic links, to table folders, partition folders or files, are
// followed while their target stays inside the data directory (every link
// resolved, a link to the data directory itself included). A link out of
// it, a broken link and a link back up the tree (a cycle) are errors
// naming the link, raised when the table is looked up, so they spoil only
// their own table. Paths in Partition.Dir, File.Path and messages keep the
// names as spelled under the table folder.
//
// Data files are Parquet, or CSV when their names end in .csv or .csv.gz
// (csv.go has the CSV conventions and type detection); one table holds
// one format. A query may also name a file, a folder or a glob as a table
// (paths.go: `dir/**/*.parquet`, key=value folders under the glob's root
// are partition columns), relative to the data directory, or anywhere when
// Options.OutsideDataDir allows it.
//
// A table fsql wrote (CREATE TABLE ... AS SELECT) holds _fsql/ beside its
// data: a marker with the column types and one manifest per version
// listing the table's files. Such a table is read from its newest
// manifest rather than listed, so a write statement's files appear at
// once (manifest.go); write.go and writer.go are the writing side.
//
// # Types
//
// A partition column's type comes from all of its folder values (NULLs
// aside): INT when every value is an integer that fits in 32 bits, BIGINT
// when they are integers but some do not fit, DATE when every value is
// YYYY-MM-DD, VARCHAR otherwise. File columns map from Parquet as
// mapColumn (types.go) documents: integers signed and unsigned, FLOAT,
// DOUBLE, DECIMAL, DATE, TIMESTAMP (millis, micros, nanos; UTC-adjusted
// or not, and INT96) as microsecond timestamps, TIME, strings, UUID,
// fixed-length bytes, BOOLEAN. A column fsql cannot read (LIST, MAP,
// STRUCT, INTERVAL) is kept in the schema with its error: the table opens
// and only a query reading that column fails (Table.ColumnError).
//
// The files of a table need not share a schema (evolution.go): columns
// are matched by name, a column missing from a file reads as NULL there,
// INT/BIGINT and DECIMAL precisions widen, and a conflict fails only the
// queries that read the column, naming both files.
//
// # Freshness
//
// The files change under a long-lived engine. The rule, which every cache
// of this package follows and any later one (decoded footers, page
// indexes) must follow too:
//
//  1. A query sees one snapshot of each table. A Catalog is a view: it
//     lists a table's folders at the table's first lookup and returns that
//     same *Table to every later lookup, so every task of a query reads
//     the same files with the same footers. Catalog.Snapshot returns a new
//     view; the engine takes one per query, so every query lists the data
//     directory and checks the folders of the tables it names again. A
//     folder is read again only when its modification time moved (adding,
//     removing or renaming an entry moves it) or its last change is less
//     than two seconds old (racyWindow: within the timestamp resolution a
//     change can leave the time as it was); otherwise the last listing of
//     it is reused and only its files are stat'ed, since a file rewritten
//     in place leaves its folder's time alone. Folders holding symlinks
//     are always read. A view that finds the same files with the same
//     stamps as the last one gets the Table the last one built (a Table
//     never changes).
//  2. A version of a file is its stamp: size and modification time
//     (File.Size, File.ModTime). The views of one directory share a footer
//     cache keyed by path; an entry is used only when the listing shows the
//     stamp it was read with. Each load of a table replaces the table's
//     entries with those of its listing, so removed files leave the cache.
//  3. Reading checks the stamp. FileReader compares the open file's size
//     and modification time with the snapshot's, and the footer's bytes
//     (length and CRC-32) with those the snapshot decoded, before reading
//     a page, and the stamp again after the last row group; a file counted but not read (COUNT(*))
//     is stat'ed. A file rewritten, truncated, appended to, replaced or
//     removed after planning fails the query with ErrChanged naming it,
//     never a mix of two versions; the next query sees the new version.
//  4. The stamp cannot see a rewrite that keeps both size and modification
//     time (a copy that preserves times, two writes within the file
//     system's timestamp resolution), nor can a folder's time show an
//     entry added or removed by a tool that sets the folder's time back.
//     Catalog.Refresh (Engine.Refresh) drops every cached footer, folder
//     listing and table and reads those of the cached tables again.
//
// Path tables follow the same rule (each view lists the path or glob
// again), and so does CSV type detection: the detected header and types
// are cached beside the footers, by stamp and by the CSV options they were
// read with.
//
// A new cache keys on the stamp, lives beside the footer cache (shared by
// the views of a directory), and serves a view only for a file whose
// listed stamp equals the entry's.
//
// The cost of rule 1: checking a table of 1,828 date folders (one file
// each, a TPC-DS fact table) is one stat per folder and one per file,
// where reading every folder took about two and a half times the system
// calls and assembling the table again (uniting 1,828 files' columns)
// about half as much CPU again; a cold load also reads every footer.
// BenchmarkSnapshot measures both.
//
// On Linux a table of at least minWatchedFolders folders skips even that
// (watch.go): once such a table is listed, the directory's views watch
// every folder and file of the tables they list with inotify, a watch
// added before the folder is read or the file stat'ed, and a view whose
// queued events (read without blocking before it decides) name none of
// a table's folders or files gets the last listing's table with one stat
// of the table folder. The kernel queues an event inside the system call
// that makes the change, so a change completed before the view looked
// the table up is seen, as rule 1 requires. Not watched, so checked by
// stat as above: tables whose listing met a symlink, files on another
// device than their folder, folders on file systems whose changes may
// come from elsewhere (NFS, FUSE, overlays; only ext4, XFS, Btrfs, F2FS
// and tmpfs are watched), tables beyond the per-user watch limit. A lost
// event queue makes every table suspect; a reader that finds a file
// changed anyway (ErrChanged) drops the table's entry. Two changes
// neither stamps nor events show are not seen: a write through a shared
// memory mapping, and a file system mounted over a table's folder after
// it was listed.
//
// # Reading
//
// A footer is decoded once per file version (metadata.go: a compact
// Thrift reader that keeps only the fields fsql uses, the schema, row
// counts, chunk locations, codecs and statistics) and cached with the
// File; the scan never parses it again. FileReader reads a row group's
// column chunks where the footer says they are (chunks close together in
// one read), decodes page headers itself (pages.go), levels and dictionary
// indexes too (hybrid.go), and hands page bodies to parquet-go's codecs
// and value decoders; values go straight into Arrow buffers, never a row
// or an interface value at a time. Partition columns come out as
// constant arrays. Unless given an allocator that counts or limits, it
// takes batch buffers from a shared recycling pool (internal/mempool): a
// scan releases and rebuilds batches of the same shape over and over, and
// fresh memory from the Go allocator (zeroed, faulted in, then collected)
// cost three times the decoding itself.
//
// FileReader reads CSV files too, through the same interface: a file has
// no statistics and one row group, or one per byte range of a file bigger
// than csv.split-size, each range starting at a record (csv_split.go);
// the scan makes each range a split of its own.
//
// The package does not import exec (exec imports it), so its errors wrap
// ErrUnsupported, ErrCorrupt, ErrNotParquet, ErrCSV, ErrChanged, ErrOutside
// or ErrNoTable, and every message names the file involved.
package hive
