#!/usr/bin/env bash
# Builds kube-apiserver, kubectl, kube-controller-manager, kubelet and etcd from the
# Go module proxy into a cache directory keyed by version, and prints that directory.
# Later runs reuse it. kube-controller-manager runs beside the local cluster (garbage
# collection, CSR signing for nodes); the kubelet is what the node test serves to its VMs.
#
# The first build takes 8-12 minutes on a 2-core machine; a warm cache returns at once.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-v1.37.1}"
ETCD_VERSION="${ETCD_VERSION:-v3.7.0}"
CACHE_ROOT="${OSM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/osm-apiserver}"
# v2: with kube-controller-manager and the kubelet.
BIN_DIR="$CACHE_ROOT/bin/v2-kube-${KUBE_VERSION}_etcd-${ETCD_VERSION}"
KUBE_CMDS=(kube-apiserver kubectl kube-controller-manager kubelet)

log() { echo "[build-cluster-binaries] $*" >&2; }

complete() {
  local c
  for c in "${KUBE_CMDS[@]}" etcd; do [ -x "$BIN_DIR/$c" ] || return 1; done
}

if complete; then
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
if complete; then
  echo "$BIN_DIR"
  exit 0
fi

work="$(mktemp -d "$CACHE_ROOT/build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# A private build cache so the ~3 GB of objects can be thrown away afterwards.
export GOCACHE="$work/gocache" GOFLAGS="-mod=mod" CGO_ENABLED=0
start=$(date +%s)

log "building ${KUBE_CMDS[*]} $KUBE_VERSION and etcd $ETCD_VERSION from the Go module proxy"
log "this happens once per version and takes 8-12 minutes on a 2-core machine; progress follows"

# k8s.io/kubernetes cannot be built with 'go install pkg@version' because its go.mod
# uses replace directives for the staging modules; a small tools module pins each of
# them to the matching v0.x release instead.
mkdir -p "$work/kube" "$work/etcd" "$BIN_DIR.tmp"
staging_version="v0${KUBE_VERSION#v1}"
(
  cd "$work/kube"
  cat >go.mod <<MOD
module osm-apiserver.local/kube-tools

go 1.26

godebug default=go1.26

require k8s.io/kubernetes $KUBE_VERSION
MOD
  log "[1/6] downloading k8s.io/kubernetes $KUBE_VERSION"
  kube_mod="$(go mod download -json "k8s.io/kubernetes@$KUBE_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')"
  sed -n '/^replace (/,/^)/p' "$kube_mod" | awk '/=> \.\/staging/ {print $1}' | while read -r m; do
    echo "replace $m => $m $staging_version" >>go.mod
  done
  cat >tools.go <<'GO'
//go:build tools

package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
GO
  go mod tidy >/dev/null 2>&1 || go mod tidy
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitVersion=$KUBE_VERSION -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$(echo "$KUBE_VERSION" | cut -d. -f2) -X k8s.io/component-base/version.gitTreeState=clean"
  local_step=2
  for c in "${KUBE_CMDS[@]}"; do
    case $c in
      kube-apiserver) hint="the longest step, ~4-6 minutes" ;;
      *) hint="~1-2 minutes, sharing what the steps before compiled" ;;
    esac
    log "[$local_step/6] compiling $c ($hint)"
    go build -trimpath -tags selinux,notest,grpcnotrace -ldflags "$ldflags" -o "$BIN_DIR.tmp/$c" "k8s.io/kubernetes/cmd/$c"
    local_step=$((local_step + 1))
  done
)
(
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
  go mod tidy >/dev/null 2>&1 || go mod tidy
  log "[6/6] compiling etcd $ETCD_VERSION (~1 minute)"
  go build -trimpath -ldflags "-s -w" -o "$BIN_DIR.tmp/etcd" go.etcd.io/etcd/server/v3
)
rm -rf "$BIN_DIR"
mv "$BIN_DIR.tmp" "$BIN_DIR"
log "done in $(( $(date +%s) - start ))s: $BIN_DIR"
echo "$BIN_DIR"
