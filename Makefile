GO ?= go
# Scale of the TPC-DS data `make run` and `make bench` use.
SCALE ?= 1

.PHONY: build test test-race bench run answers fmt vet

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

run: build
	./bin/fsql -e "select count(*) from store_sales"

fmt:
	gofmt -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...
