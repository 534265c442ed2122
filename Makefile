# osm-apiserver — see README.md. `make demo` runs the product on a local cluster,
# `make test` runs every test (unit + end-to-end).
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin/osm-apiserver

.PHONY: all build test test-unit test-e2e node-test test-deps verify update bench demo demo-down clean

all: build

## build: a static, stripped binary with its version stamped (hack/version.sh), as released.
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "$$(hack/version.sh)" -o $(BIN) ./cmd/osm-apiserver

## test: unit tests, then end-to-end tests against a real kube-apiserver + etcd.
test: test-deps verify test-unit test-e2e

## test-deps: install the tools the tests of rendered output need (cloud-init, shellcheck).
test-deps:
	@hack/install-test-deps.sh

## test-unit: unit tests with the race detector.
test-unit:
	$(GO) test -race -count=1 ./cmd/... ./pkg/... ./artifacts/... ./test/node/nodevm/... ./test/node/images/...

## test-e2e: builds kube-apiserver/kubectl/etcd once (6-10 min, cached), then runs test/e2e.
test-e2e:
	@hack/build-cluster-binaries.sh >/dev/null
	$(GO) test -count=1 -timeout 40m ./test/e2e/...

## node-test: boots node VMs (QEMU, installed when missing) against a local cluster;
## one line per boot. The first run builds the node kit (6-10 min, cached). docs/node-test.md
node-test:
	@hack/node-test.sh

## verify: gofmt, go vet, golangci-lint, logcheck, package layers, generated code up to date.
verify:
	@hack/verify.sh

## update: regenerate code.
update:
	hack/update-codegen.sh

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

demo: build
	@hack/demo.sh up

demo-down:
	@hack/demo.sh down

clean:
	rm -rf bin _output
