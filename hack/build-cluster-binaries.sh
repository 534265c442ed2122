#!/usr/bin/env bash
# Builds the cluster binaries asked for from the Go module proxy into a cache directory
# keyed by version, and prints that directory. Each binary is cached on its own: a later
# call builds only what is missing, and a warm cache returns at once.
#
#   hack/build-cluster-binaries.sh [BINARY...]
#
# BINARY is kube-apiserver, kubectl, etcd (the default: what `make demo` and the e2e
# cluster run), kube-controller-manager (make test: the e2e tests that need controllers,
# make node-test: CSR signing for nodes) or kubelet (make node-test: served to the VMs).
#
# OSM_CACHE_DIR (default ~/.cache/osm-apiserver) holds the cache; point it elsewhere to
# measure a cold build without touching the cache other checkouts use
# (hack/measure-first-run.sh does). Times: docs/benchmarks.md, "First run".
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.37.1}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.0}"
CACHE_ROOT="${OSM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/osm-apiserver}"
# The same binaries, built the same way, as v2 (which built all five at once).
BIN_DIR="$CACHE_ROOT/bin/v2-kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}"
DEFAULT_BINARIES=(kube-apiserver kubectl etcd)

log() { echo "[build-cluster-binaries] $*" >&2; }
die() { log "error: $*"; exit 1; }

# hint prints how long a cold build of one binary took in a cold `.ci/run` on a quiet
# 2-core machine (docs/benchmarks.md, "First run"; empty module and build caches).
hint() {
  case $1 in
    download) echo "measured 14 s" ;;
    kube-apiserver) echo "the longest step; measured 449 s on a quiet 2-core machine" ;;
    kubectl) echo "measured 31 s after kube-apiserver" ;;
    kube-controller-manager) echo "measured 134 s after kube-apiserver, 1513 s on its own on a busy machine" ;;
    kubelet) echo "measured 57 s after the others, 2143 s on its own on a busy machine" ;;
    etcd) echo "measured 38 s" ;;
  esac
}

want=("$@")
[ ${#want[@]} -gt 0 ] || want=("${DEFAULT_BINARIES[@]}")
for b in "${want[@]}"; do
  case $b in
    kube-apiserver | kubectl | kube-controller-manager | kubelet | etcd) ;;
    *) die "unknown binary $b: want kube-apiserver, kubectl, kube-controller-manager, kubelet or etcd" ;;
  esac
done

# missing prints the binaries asked for that are not built yet.
missing() {
  local b
  for b in "${want[@]}"; do [ -x "$BIN_DIR/$b" ] || echo "$b"; done
}

todo=()
mapfile -t todo < <(missing)
if [ ${#todo[@]} -eq 0 ]; then
  echo "$BIN_DIR"
  exit 0
fi

mkdir -p "$CACHE_ROOT"
# One builder at a time: a second caller waits for the first and then reuses its result.
exec 9>"$CACHE_ROOT/build.lock"
if ! flock -n 9; then
  log "another build is running; waiting for it to finish"
  flock 9
fi
mapfile -t todo < <(missing)
if [ ${#todo[@]} -eq 0 ]; then
  echo "$BIN_DIR"
  exit 0
fi

work="$(mktemp -d "$CACHE_ROOT/build.XXXXXX")"
# A private build cache, so its gigabytes of objects can be thrown away. It is kept
# between calls until all five binaries are built: `make test` builds four of them and
# `make node-test` the kubelet after them, which then compiles only what is its own
# instead of the whole of client-go and apiserver again.
GO_BUILD_CACHE="$CACHE_ROOT/bin/gocache-kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}"
ALL_BINARIES=(kube-apiserver kubectl etcd kube-controller-manager kubelet)
finish() {
  rm -rf "$work"
  local b
  for b in "${ALL_BINARIES[@]}"; do [ -x "$BIN_DIR/$b" ] || return 0; done
  rm -rf "$GO_BUILD_CACHE"
}
trap finish EXIT
export GOCACHE="$GO_BUILD_CACHE" GOFLAGS="-mod=mod" CGO_ENABLED=0
start=$(date +%s)
mkdir -p "$BIN_DIR"

kube=() etcd=""
for b in "${todo[@]}"; do
  if [ "$b" = etcd ]; then etcd=1; else kube+=("$b"); fi
done
# One step per binary, and one for the Kubernetes modules.
steps=${#todo[@]}
[ ${#kube[@]} -eq 0 ] || steps=$((steps + 1))
step=0 step_start=0
begin() {
  step=$((step + 1)) step_start=$(date +%s)
  log "[$step/$steps] $1 ($2)"
}
done_step() { log "[$step/$steps] done in $(($(date +%s) - step_start)) s"; }

log "building ${todo[*]} (Kubernetes $KUBE_VERSION, etcd $ETCD_VERSION) from the Go module proxy into $BIN_DIR"
log "once per version; times measured on a 2-core machine are in docs/benchmarks.md (First run)"

if [ ${#kube[@]} -gt 0 ]; then
  # k8s.io/kubernetes cannot be built with 'go install pkg@version' because its go.mod
  # uses replace directives for the staging modules; a small tools module pins each of
  # them to the matching v0.x release instead.
  mkdir -p "$work/kube"
  staging_version="v0${KUBE_VERSION#v1}"
  cd "$work/kube"
  cat >go.mod <<MOD
module osm-apiserver.local/kube-tools

go 1.26

godebug default=go1.26

require k8s.io/kubernetes $KUBE_VERSION
MOD
  begin "downloading k8s.io/kubernetes $KUBE_VERSION and the modules ${kube[*]} need" "$(hint download) when the module cache is empty"
  kube_mod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  sed -n '/^replace (/,/^)/p' "$kube_mod" | awk '/=> \.\/staging/ {print $1}' | while read -r m; do
    echo "replace $m => $m $staging_version" >>go.mod
  done
  {
    printf '//go:build tools\n\npackage tools\n\nimport (\n'
    for c in "${kube[@]}"; do printf '\t_ "k8s.io/kubernetes/cmd/%s"\n' "$c"; done
    printf ')\n'
  } >tools.go
  go mod tidy >/dev/null 2>&1 || go mod tidy
  done_step
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean"
  for c in "${kube[@]}"; do
    begin "compiling $c" "$(hint "$c")"
    go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldflags" -o "$work/$c" "k8s.io/kubernetes/cmd/$c"
    # A rename within the cache's file system: a binary is there whole or not at all.
    mv "$work/$c" "$BIN_DIR/$c.tmp" && mv "$BIN_DIR/$c.tmp" "$BIN_DIR/$c"
    done_step
  done
fi
if [ -n "$etcd" ]; then
  mkdir -p "$work/etcd"
  cd "$work/etcd"
  cat >go.mod <<MOD
module osm-apiserver.local/etcd-tools

go 1.26

require go.etcd.io/etcd/server/v3 $ETCD_VERSION
MOD
  cat >tools.go <<'GO'
//go:build tools

package tools

import _ "go.etcd.io/etcd/server/v3"
GO
  begin "downloading and compiling etcd $ETCD_VERSION" "$(hint etcd)"
  go mod tidy >/dev/null 2>&1 || go mod tidy
  go build -trimpath -ldflags "-s -w" -o "$work/etcd.bin" go.etcd.io/etcd/server/v3
  mv "$work/etcd.bin" "$BIN_DIR/etcd.tmp" && mv "$BIN_DIR/etcd.tmp" "$BIN_DIR/etcd"
  done_step
fi
log "built ${todo[*]} in $(($(date +%s) - start)) s: $BIN_DIR"
if [ -d "$GO_BUILD_CACHE" ]; then
  log "keeping the build cache $GO_BUILD_CACHE ($(du -sh "$GO_BUILD_CACHE" | cut -f1)) until all five binaries are built"
fi
echo "$BIN_DIR"
