GO ?= go
# Scale of the TPC-DS data `make run` and `make bench` use.
SCALE ?= 1

.PHONY: build test test-race bench bench-dpp run answers fmt vet

build:
	$(GO) build ./...
	$(GO) build -o bin/fsql ./cmd/fsql

# The whole test suite: unit tests, .slt files, TPC-DS golden answers,
# brief fuzzing, and the race detector over the executor.
test:
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 15m ./...
	$(GO) test -count=1 -race -timeout 15m ./exec/...

bench: build
	./bin/fsql bench tpcds --scale $(SCALE) --runs 5

# Dynamic partition pruning on vs off, both layouts (see README).
bench-dpp: build
	./bin/fsql bench dpp --scale $(SCALE) --runs 5

run: build
	./bin/fsql -e "select count(*) from store_sales"

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

# Regenerate the TPC-DS golden answers with DuckDB (tools/oracle, a separate
# cgo module) from scale-0.2, seed-1 data; see testdata/tpcds/answers/README.md.
answers:
	rm -rf /tmp/fsql-answers-data
	$(GO) run ./cmd/fsql gen tpcds --scale 0.2 --seed 1 --partitioned=false --out /tmp/fsql-answers-data
	cd tools/oracle && $(GO) run . --data /tmp/fsql-answers-data --queries ../../testdata/tpcds --out ../../testdata/tpcds/answers
