GO ?= go
# Scale of the TPC-DS data `make run` and `make bench` use.
SCALE ?= 1

.PHONY: build test test-race bench bench-dpp bench-vs-duckdb bench-write-vs-duckdb fuzz-vs-duckdb run answers fmt vet proto

build:
	$(GO) build ./...
	$(GO) build -o bin/fsql ./cmd/fsql

# The whole test suite: unit tests, .slt files, TPC-DS golden answers,
# brief fuzzing, SQLite's sqllogictest scripts select1-5 (through the code
# fsql slt runs; a few minutes, so a step of its own), and the race
# detector over the executor.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...
	$(GO) test -count=1 -timeout 20m -run '^TestSQLiteCorpus$$' -slt-corpus .
	$(GO) test -count=1 -race -timeout 30m ./exec/... ./shuffle/... ./runtime/...

bench: build
	./bin/fsql bench tpcds --scale $(SCALE) --runs 5

# Dynamic partition pruning on vs off, both layouts (see README).
bench-dpp: build
	./bin/fsql bench dpp --scale $(SCALE) --runs 5

# fsql against DuckDB (tools/oracle, cgo) on generated TPC-DS data, both
# layouts, all 103 statements, 2 threads each, interleaved; outside CI.
# BENCH_ARGS adds flags, e.g. BENCH_ARGS="--only q3,q7 --runs 5".
# The cached data sets' folders carry the generator's version
# (connectors/tpcds/version.go), as the tests' caches do.
TPCDS_GEN := $(shell sed -n 's/^const GeneratorVersion = //p' connectors/tpcds/version.go)
BENCH_DATA ?= $(HOME)/.cache/fsql/tpcds-sf$(SCALE)-g$(TPCDS_GEN)
BENCH_FLAT ?= $(HOME)/.cache/fsql/tpcds-sf$(SCALE)-flat-g$(TPCDS_GEN)
bench-vs-duckdb: build
	test -d $(BENCH_DATA) || ./bin/fsql gen tpcds --scale $(SCALE) --out $(BENCH_DATA)
	test -d $(BENCH_FLAT) || ./bin/fsql gen tpcds --scale $(SCALE) --partitioned=false --out $(BENCH_FLAT)
	cd tools/oracle && $(GO) run . bench --data $(BENCH_DATA),$(BENCH_FLAT) --queries ../../testdata/tpcds $(BENCH_ARGS)

# Writing: CREATE TABLE ... PARTITION BY KEY (ss_sold_date_sk) AS SELECT *
# FROM store_sales against DuckDB's COPY ... (FORMAT PARQUET, PARTITION_BY
# (ss_sold_date_sk)) on the flat layout, zstd both, 2 threads each,
# interleaved (tools/oracle bench-write); outside CI. WRITE_ARGS adds
# flags, e.g. WRITE_ARGS="--runs 5 --cpuprofile /tmp/write.prof".
WRITE_ARGS ?= --runs 3
bench-write-vs-duckdb:
	test -d $(BENCH_FLAT) || $(GO) run ./cmd/fsql gen tpcds --scale $(SCALE) --partitioned=false --out $(BENCH_FLAT)
	cd tools/oracle && $(GO) run . bench-write --data $(BENCH_FLAT) $(WRITE_ARGS)

# Random queries over the TPC-DS schema (internal/querygen), fsql's answers
# against DuckDB's (tools/oracle fuzz, cgo); outside CI. FUZZ_ARGS adds
# flags, e.g. FUZZ_ARGS="--n 5000 --seed 2 --out /tmp/fuzz-reports".
FUZZ_DATA ?= $(HOME)/.cache/fsql/tpcds-sf0.2-seed1-flat-g$(TPCDS_GEN)
FUZZ_ARGS ?= --n 2000 --seed 1
fuzz-vs-duckdb:
	test -d $(FUZZ_DATA) || $(GO) run ./cmd/fsql gen tpcds --scale 0.2 --seed 1 --partitioned=false --out $(FUZZ_DATA)
	cd tools/oracle && $(GO) run . fuzz --data $(FUZZ_DATA) $(FUZZ_ARGS)

run: build
	./bin/fsql -e "select count(*) from store_sales"

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

# Regenerate the plan wire format's Go code (planwire/pb/plan.pb.go, which
# is committed) after editing planwire/pb/plan.proto. Needs protoc
# (apt-get install protobuf-compiler) and protoc-gen-go at go.mod's
# google.golang.org/protobuf version on PATH.
PROTOC_GEN_GO_VERSION ?= v1.36.12
proto:
	export PATH="$$PATH:$$($(GO) env GOPATH)/bin"; \
	command -v protoc-gen-go >/dev/null || $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@$(PROTOC_GEN_GO_VERSION); \
	cd planwire/pb && protoc --go_out=. --go_opt=paths=source_relative plan.proto

# Regenerate the TPC-DS golden answers with DuckDB (tools/oracle, a separate
# cgo module) from scale-0.2, seed-1 data; see testdata/tpcds/answers/README.md.
answers:
	rm -rf /tmp/fsql-answers-data
	$(GO) run ./cmd/fsql gen tpcds --scale 0.2 --seed 1 --partitioned=false --out /tmp/fsql-answers-data
	cd tools/oracle && $(GO) run . --data /tmp/fsql-answers-data --queries ../../testdata/tpcds --out ../../testdata/tpcds/answers
