#!/usr/bin/env bash
# `make node-test`: boots real node VMs against a local cluster (docs/node-test.md).
# Installs QEMU and socat from Debian when missing, builds the node
# kit (hack/node-kit.sh, cached), then runs test/node, which prints one line per boot:
#   node-test osp-ubuntu ipv4 on debian-12: Ready after 212 s, pod Running
# and exits non-zero if any boot failed. One node test runs per machine at a time; a second
# waits for the first.
#
# Environment: OSM_NODE_TEST_ACCEL=kvm|tcg overrides the KVM detection (TCG where this
# machine is itself a VM); OSM_NODE_TEST_RUN=REGEX runs only the boots it matches
# (e.g. 'TestBoots/ipv4'); OSM_NODE_KIT=DIR and OSM_NODE_KIT_DEBIAN13=DIR use those kits
# (Debian 12's, Debian 13's) instead of hack/node-kit.sh's; the test refuses a kit these
# scripts would not build (its KIT_KEY).
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"
log() { echo "[node-test] $*" >&2; }

# needs prints the Debian packages whose commands are missing.
needs() {
  command -v qemu-system-x86_64 >/dev/null 2>&1 || echo qemu-system-x86
  command -v qemu-img >/dev/null 2>&1 || echo qemu-utils
  command -v socat >/dev/null 2>&1 || echo socat
}
mapfile -t missing < <(needs)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]} from Debian"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq >/dev/null
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  log "installed in $SECONDS s"
fi

# The kits of the boots' images: Debian 12 (OSM_NODE_KIT), Debian 13 (OSM_NODE_KIT_DEBIAN13).
if [ -z "${OSM_NODE_KIT:-}" ]; then
  start=$(date +%s)
  log "Debian 12 node kit (hack/node-kit.sh; the first build took 7 minutes on a quiet 2-core machine, docs/benchmarks.md)"
  OSM_NODE_KIT="$(OSM_NODE_KIT_DEBIAN=12 hack/node-kit.sh)"
  log "node kit ready after $(($(date +%s) - start)) s: $OSM_NODE_KIT"
fi
if [ -z "${OSM_NODE_KIT_DEBIAN13:-}" ]; then
  start=$(date +%s)
  log "Debian 13 node kit (OSM_NODE_KIT_DEBIAN=13 hack/node-kit.sh; its Debian parts alone took 390 s at load 10-20, docs/benchmarks.md)"
  OSM_NODE_KIT_DEBIAN13="$(OSM_NODE_KIT_DEBIAN=13 hack/node-kit.sh)"
  log "node kit ready after $(($(date +%s) - start)) s: $OSM_NODE_KIT_DEBIAN13"
fi
export OSM_NODE_KIT OSM_NODE_KIT_DEBIAN13
# What the test's cluster runs (the kit has the kubelet and kubectl the VMs get).
hack/build-cluster-binaries.sh kube-apiserver kubectl etcd kube-controller-manager >/dev/null

run=()
[ -z "${OSM_NODE_TEST_RUN:-}" ] || run=(-run "$OSM_NODE_TEST_RUN")
# -p 1: go test streams a package's output (the progress of long waits) only when it
# runs one test binary at a time.
# One node test per machine: two would share 2 cores and both run out of time. flock -o
# keeps the lock in flock itself, so no process the test starts (etcd, QEMU) inherits it
# and holds it after the test is killed.
lock="${TMPDIR:-/tmp}/osm-apiserver-node-test.lock"
if ! flock -n "$lock" true; then
  log "another node test is running on this machine ($lock); waiting for it to finish"
fi
flock -o "$lock" go test -count=1 -v -p 1 -timeout 75m "${run[@]}" ./test/node/...
