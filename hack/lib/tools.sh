# shellcheck shell=bash
# Builds the tools pinned in hack/tools/go.mod once per version set, into the
# cache beside the cluster binaries, and prints the path of the one asked for.
#   tool_bin golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint

tool_bin() {
  local name=$1 pkg=$2 root
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
  local key
  key=$(sha256sum "$root/hack/tools/go.sum" | cut -c1-12)
  local dir="${OSM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/osm-apiserver}/tools/$key"
  if [ ! -x "$dir/$name" ]; then
    mkdir -p "$dir"
    echo "[tools] building $name from hack/tools/go.mod into $dir (once per version)" >&2
    local start=$SECONDS
    # -modfile would not do: a tool's own dependencies come from hack/tools/go.sum.
    (cd "$root/hack/tools" && go mod download && CGO_ENABLED=0 go build -trimpath -o "$dir/$name.tmp" "$pkg") >&2
    mv "$dir/$name.tmp" "$dir/$name"
    echo "[tools] built $name in $((SECONDS - start)) s" >&2
  fi
  echo "$dir/$name"
}
