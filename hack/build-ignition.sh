#!/usr/bin/env bash
# Builds Ignition, Flatcar's provisioning tool, at the version hack/tools/ignition/go.mod
# pins, from the Go module proxy into the cache (once per version and dependency set), and
# prints the binary's path. The default profiles' tests apply their Ignition payloads with it
# (artifacts/default-osps/ignition_test.go; docs/default-osps.md).
#
# Ignition needs cgo (libblkid, and its own lookups of users in the target root):
# hack/install-test-deps.sh installs gcc, libc6-dev and libblkid-dev. OSM_CACHE_DIR (default
# ~/.cache/osm-apiserver) holds the cache. Times: docs/benchmarks.md, "Ignition".
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mod="$root/hack/tools/ignition"
log() { echo "[build-ignition] $*" >&2; }
die() { log "error: $*"; exit 1; }

version=$(awk '$1 == "github.com/coreos/ignition/v2" { print $2 }' "$mod/go.mod")
[ -n "$version" ] || die "hack/tools/ignition/go.mod pins no github.com/coreos/ignition/v2"
key=$(sha256sum "$mod/go.sum" | cut -c1-12)
cache="${OSM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/osm-apiserver}/tools"
dir="$cache/ignition-$version-$key"
bin="$dir/ignition"
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
# One builder at a time: a second caller waits for the first and then uses its binary.
exec 9>"$cache/ignition.lock"
if ! flock -n 9; then
  log "another build of Ignition is running; waiting for it to finish"
  flock 9
fi
if [ -x "$bin" ]; then
  echo "$bin"
  exit 0
fi

command -v gcc >/dev/null 2>&1 || die "Ignition needs cgo and there is no gcc; run hack/install-test-deps.sh"
for h in stdlib.h blkid/blkid.h; do
  echo "#include <$h>" | gcc -E -x c - >/dev/null 2>&1 || die "no <$h> for Ignition's cgo; run hack/install-test-deps.sh"
done

log "building Ignition $version from the Go module proxy into $dir (once per version; measured 483 s on a busy 2-core machine with empty module and build caches, docs/benchmarks.md)"
start=$SECONDS
mkdir -p "$dir"
# -mod=mod: the module's own go.sum, whatever GOFLAGS the caller has. version.Raw is what
# Ignition's own build stamps. selinuxRelabel=false: the test roots have no SELinux policy
# (setfiles would fail); labelling is no part of what the profiles ask of Ignition.
(
  cd "$mod"
  export GOFLAGS="-mod=mod -trimpath -buildvcs=false" CGO_ENABLED=1
  go mod download
  go build -ldflags "-X github.com/coreos/ignition/v2/internal/version.Raw=$version -X github.com/coreos/ignition/v2/internal/distro.selinuxRelabel=false" \
    -o "$bin.tmp" github.com/coreos/ignition/v2/internal
) >&2
mv "$bin.tmp" "$bin"
log "built Ignition $version in $((SECONDS - start)) s: $bin"
echo "$bin"
