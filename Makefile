# osm-apiserver — see README.md. `make demo` runs the product on a local cluster,
# `make test` runs every test (unit + end-to-end).
SHELL := /usr/bin/env bash
GO ?= go
BIN := bin/osm-apiserver
# The image `make image` tags (and `make image-push` pushes); artifacts/deploy runs osm-apiserver:latest.
IMAGE ?= osm-apiserver:latest
IMAGE_DIR ?= _output/image
IMAGEBUILD = $(GO) run ./hack/imagebuild --binary $(BIN) --image $(IMAGE) --output $(IMAGE_DIR) \
	--version "$$(hack/version.sh version)" --revision "$$(hack/version.sh commit)" --created "$$(hack/version.sh date)"

# One build configuration for everything but test-race: the one `make build` ships (static,
# -trimpath). go vet, golangci-lint, the unit tests, the osm-apiserver the e2e and node tests
# build and `make image` then share one compile of the dependency tree, which takes ~5
# minutes on a cold 2-core machine (docs/benchmarks.md "First run").
export CGO_ENABLED := 0
export GOFLAGS := -trimpath -buildvcs=false

.PHONY: all build image image-push release test test-unit test-race test-e2e node-test test-deps verify update bench bench-scale bench-reports demo demo-down clean

all: build

## build: a static, stripped binary with its version stamped (hack/version.sh), as released.
build:
	$(GO) build -ldflags "$$(hack/version.sh)" -o $(BIN) ./cmd/osm-apiserver

## image: an OCI image of that binary, built without a container daemon (hack/imagebuild): no shell,
## uid 65532, the same bytes for the same commit. Writes $(IMAGE_DIR)/oci (OCI layout),
## $(IMAGE_DIR)/osm-apiserver.tar (docker/podman load, kind load image-archive) and
## $(IMAGE_DIR)/deploy (artifacts/deploy running it: kubectl kustomize $(IMAGE_DIR)/deploy).
image: build
	$(IMAGEBUILD)

## image-push: make image, then push it, e.g. make image-push IMAGE=registry.example/osm-apiserver:v1.2.3
## (docker/podman login credentials); $(IMAGE_DIR)/deploy then pins its digest.
image-push: build
	$(IMAGEBUILD) --push

## release: make release VERSION=vX.Y.Z [IMAGE=registry.example/osm-apiserver:vX.Y.Z] [PUSH=1]: from a
## clean (tagged) checkout, the binary and image stamped VERSION and _output/release/install.yaml,
## artifacts/deploy running the image pinned by digest (pushed with PUSH=1, else the local image's
## digest); crds.yaml, SHA256SUMS (hack/release.sh). IMAGE defaults to osm-apiserver:VERSION.
release:
	@VERSION="$(VERSION)" GO="$(GO)" IMAGE="$(if $(filter command line environment,$(origin IMAGE)),$(IMAGE),osm-apiserver:$(VERSION))" hack/release.sh

## test: unit tests, then end-to-end tests against a real kube-apiserver + etcd.
test: test-deps verify test-unit test-e2e

## test-deps: install the tools the tests of rendered output need (cloud-init, shellcheck, iproute2, procps, curl,
## and gcc, libc6-dev, libblkid-dev, passwd, systemd for building and running Ignition).
test-deps:
	@hack/install-test-deps.sh

UNIT_PACKAGES := ./cmd/... ./pkg/... ./artifacts/... ./hack/imagebuild/... ./test/node/nodevm/... ./test/node/egress/... ./test/node/images/... ./test/internal/...

## test-unit: unit tests, in the build configuration above (no second compile of the dependencies).
## First builds Ignition, which the test of osp-flatcar's payloads applies them with (cached; times
## in docs/benchmarks.md): a cold build inside `go test` would take most of its 10-minute timeout.
test-unit:
	@hack/build-ignition.sh >/dev/null
	$(GO) test -count=1 $(UNIT_PACKAGES)

## test-race: unit tests with the race detector. Not part of `make test`: the detector needs cgo
## and its own compile of every dependency (~11 minutes on a cold 2-core machine), which would
## take `.ci/run` past its hour; run it when you change code that runs concurrently (the caches,
## the syncer, the changefeed, the server's handlers).
test-race:
	@hack/build-ignition.sh >/dev/null
	CGO_ENABLED=1 $(GO) test -race -count=1 $(UNIT_PACKAGES)

## test-e2e: builds the cluster binaries the tests run once (cached; times in docs/benchmarks.md),
## then runs test/e2e and test/image.
test-e2e:
	@hack/build-cluster-binaries.sh kube-apiserver kubectl etcd kube-controller-manager >/dev/null
	$(GO) test -count=1 -timeout 40m ./test/e2e/... ./test/image/...

## node-test: boots node VMs (QEMU, installed when missing) against a local cluster;
## one line per boot. The first run builds the node kit and the kubelet (cached; times in
## docs/benchmarks.md). docs/node-test.md
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

## bench-scale: N MachineDeployments (default 3000) on a fresh local cluster: create time, all
## Secrets written, osm-apiserver RSS, `kubectl get osc -A`, restart, writes per MD (issue 20;
## hack/benchscale, numbers in docs/benchmarks.md). Bounded by BENCH_TIMEOUT (default 45m);
## BENCH_FLAGS adds flags, e.g. BENCH_FLAGS="-heap-profiles /tmp/heap".
N ?= 3000
BENCH_TIMEOUT ?= 45m
bench-scale: build
	@hack/build-cluster-binaries.sh kube-apiserver kubectl etcd >/dev/null
	$(GO) run ./hack/benchscale -n $(N) -timeout $(BENCH_TIMEOUT) -osm-apiserver $(BIN) $(BENCH_FLAGS)

## bench-reports: a rollout of N machines (default 1000) of one MachineDeployment posting their
## boot reports, 8 records each, through a fresh e2e cluster, time compressed tenfold: records/s,
## 429s, drops, latency p99 (issue 31; test/e2e TestBootReportRolloutLosesNoRecord, which
## `make test` runs with 300 machines; numbers in docs/benchmarks.md). FLOWCONTROL=1 applies
## artifacts/deploy/components/flowcontrol first.
bench-reports:
	@hack/build-cluster-binaries.sh kube-apiserver kubectl etcd kube-controller-manager >/dev/null
	OSM_E2E_ROLLOUT_FLOWCONTROL=$(FLOWCONTROL) \
	OSM_E2E_ROLLOUT_MACHINES=$(if $(filter command line environment,$(origin N)),$(N),1000) \
		$(GO) test -count=1 -timeout 60m -v -run '^TestBootReportRolloutLosesNoRecord$$' ./test/e2e/

## demo: builds osm-apiserver, then runs it on a local cluster (hack/demo.sh); the first run
## also builds kube-apiserver, kubectl and etcd. Each long step says what it does and how long
## it took; measured times are in docs/benchmarks.md ("First run").
demo:
	@echo "[demo] building bin/osm-apiserver (with empty Go caches this downloads its modules and compiles them: 316 s on a quiet 2-core machine, 1,897 s on a busy one; docs/benchmarks.md)" >&2
	@start=$$SECONDS; $(MAKE) --no-print-directory build && echo "[demo] bin/osm-apiserver built in $$((SECONDS - start)) s" >&2
	@hack/demo.sh up

demo-down:
	@hack/demo.sh down

clean:
	rm -rf bin _output
