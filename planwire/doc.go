// Package planwire is the wire form of physical plans: a plan cut into
// fragments, one per stage, each encodable alone so that a task can run
// in another process. The format is protobuf (pb/plan.proto; the Go code
// in pb/plan.pb.go is generated and committed, so building needs no
// protoc). Regenerate it after editing the .proto with
//
//	make proto
//
// which runs, in planwire/pb,
//
//	protoc --go_out=. --go_opt=paths=source_relative plan.proto
//
// with protoc 3.21 or later (apt-get install protobuf-compiler) and
// protoc-gen-go at the version of google.golang.org/protobuf in go.mod
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12).
//
// # What a fragment holds
//
// A Fragment message is one stage: its ID, the node tree a task of the
// stage opens, the exchange it writes (absent for the result stage) and
// snapshots of the tables its scans read. A Plan message is every
// fragment, producers before consumers, the result stage last.
//
//   - Nodes. One message per operator of package exec, with its fields;
//     every node carries its ID in the job graph (runtime.JobGraph.NodeID),
//     the key its statistics are reported under, so a worker elsewhere
//     reports counters the coordinator can place. A node reached twice in
//     one fragment is written once and then referenced by ID.
//   - Exchanges. The stage's output exchange is described in full (kind,
//     keys, key groups) with the exchange's node ID. An exchange the stage
//     reads is a leaf (InputExchange) with the same description and the
//     schema of its rows; the ID names the producer fragment. DecodePlan
//     joins the fragments back: every reader of an exchange gets the
//     producer's one Exchange node, as the planner built it. DecodeFragment
//     alone leaves an Input placeholder under each input exchange.
//   - Expressions. Columns (index, type, name), literals (type and the Go
//     value the engine holds, by its kind) and calls (function name,
//     result type, arguments, and whether a cast was inserted by the
//     binder). A call is never trusted as written: the decoder rebuilds it
//     through the binders (expr.Rebind, the same NewCall and NewCast the
//     binder uses), so its kernel is resolved again, and refuses the
//     fragment unless the binder gives back exactly that call.
//   - Types. Arrow types by ID, decimals with precision and scale, and
//     collated strings (expr.CollatedType) by collation name.
//   - Tables. A table travels as its name (a folder of the data
//     directory, or the path or glob the query wrote) and the snapshot the
//     plan saw: its format, its columns, its partition count, and the
//     partitions the fragment's scans read with their files (path in the
//     partition folder, size, modification time, rows, row groups),
//     partitions named by their folder relative to the table's. The
//     decoder looks the name up through a Resolver (a catalog view,
//     hive.Catalog.Lookup) and refuses, with hive.ErrChanged, a table
//     whose format, columns, partitions or files differ, so a decoded
//     fragment reads exactly what the plan was made for. The footers
//     (row-group statistics) and CSV settings come from the resolver's
//     catalog, whose reader checks each file's size and modification time
//     again when it opens it.
//
// # What the worker looks up
//
// Plans are data (no closures, no live objects; wiretest.CheckPlan
// enforces it on every plan the tests decode), so nothing else travels.
// What a decoded fragment needs beyond its bytes, the worker finds by
// name or ID:
//
//   - tables, by name, through the Resolver (above);
//   - the kernels of calls, by function name and argument types, through
//     the binders (expr.Rebind);
//   - collations, by name (expr.LookupCollation);
//   - the run's services, through the task context the runtime opens
//     each task with: the memory budget, and the dynamic-filter
//     coordinator, which collectors (DynamicFilterDataCollector.ID) hand
//     keys to and scans (Scan.DynamicFilters, pruning.Target.CollectorID)
//     ask by collector ID; OrderEnforce names the collectors it waits for
//     by ID too;
//   - statistics are reported under the node IDs the fragment carries.
//
// Every hash that crosses a task boundary is a fixed function of the key,
// the same in every process: the shuffle hash (exec.HashColumns) and its
// key groups (keygroup.ForHash), and the bloom filters of dynamic filters
// (XXH3-64 with seed 0 for strings, murmur3's finalizer for integers).
// Tests pin their values and compare them with a child process's
// (internal/proctest).
//
// # Versioning
//
// Every Plan and Fragment message carries the format version (Version,
// 1 today), and a decoder refuses any version but its own, naming both:
// coordinator and workers run the same build. Within a version, protobuf
// rules apply to plan.proto: a field's number and type never change and
// a removed field's number is reserved. A change that an older decoder
// would misread (a new operator, expression kind, type, enum value, or a
// field whose absence means something else) increments Version; a field
// whose zero value keeps today's meaning does not need to. The package
// is fsql.planwire.v1; a format that cannot keep these rules gets v2.
//
// # Adding to the plan
//
// A new operator, expression kind, Arrow type or enum value needs a
// message or enum value in plan.proto and a case in encode.go and
// decode.go (expr.go for expressions and types). The tests fail until it
// has them: they find every node and expression type of exec, exec/expr
// and shuffle and every constant of the plan's enums in the source, and
// compare every struct's fields with the ones the encoding covers.
package planwire
