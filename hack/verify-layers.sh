#!/usr/bin/env bash
# Fails when a package imports one of its own layer or a higher one. Layers,
# bottom up (docs/design.md, *Packages*), so that each is what the real import
# graph makes it, and a package imports only layers below its own:
#   0  API types and generated code (pkg/apis, pkg/generated: these alone may
#      import each other), lru, metrics, render/cloudconfig, the CRDs, osm-report,
#      the overlay examples, the monitoring component's tests, tokens/tokenstest
#   1  machinecontroller (the contract), sandbox (the template engine), the
#      default profiles' files (artifacts/default-osps)
#   2  readers and records over the contract: machines, tokens, bootreports,
#      migrate, defaultosps, render/cloudinit, render/ignition, servingcert,
#      machinecontroller/machinecontrollertest
#   3  render (OSP + MD + facts -> bytes), informers (every informer), changefeed
#   4  facts, overlays, changefeed/changefeedtest
#   5  resolve (the one render path)
#   6  nodejoin, review, registry (the generic store), registry/registrytest
#   7  the storages (registry/*), syncer
#   8  server
#   9  cmd/osm-apiserver/app/options (the flags)
#   10 cmd/osm-apiserver/app, 11 cmd/osm-apiserver
#   12 test, and tools in hack/ (imagebuild, benchscale): may import anything
# A package that fits no line fails the check: give it the layer above the
# highest one it imports.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODULE="$(go list -m)"

layer() {
  case "${1#"$MODULE"/}" in
    pkg/apis/* | pkg/generated/*) echo api ;;
    pkg/lru | pkg/metrics | pkg/render/cloudconfig | artifacts/crd | artifacts/osmreport | artifacts/overlay-examples | \
      artifacts/deploy/components/monitoring | pkg/tokens/tokenstest) echo 0 ;;
    pkg/machinecontroller | pkg/sandbox | artifacts/default-osps) echo 1 ;;
    pkg/machines | pkg/tokens | pkg/bootreports | pkg/migrate | pkg/defaultosps | pkg/render/cloudinit | pkg/render/ignition | pkg/servingcert | \
      pkg/machinecontroller/machinecontrollertest) echo 2 ;;
    pkg/render | pkg/informers | pkg/changefeed) echo 3 ;;
    pkg/facts | pkg/overlays | pkg/changefeed/changefeedtest) echo 4 ;;
    pkg/resolve) echo 5 ;;
    pkg/nodejoin | pkg/review | pkg/registry | pkg/registry/registrytest) echo 6 ;;
    pkg/registry/* | pkg/syncer) echo 7 ;;
    pkg/server) echo 8 ;;
    cmd/osm-apiserver/app/options) echo 9 ;;
    cmd/osm-apiserver/app) echo 10 ;;
    cmd/osm-apiserver) echo 11 ;;
    test/* | hack/*) echo 12 ;;
    *) echo unknown ;;
  esac
}

# allowed FROM TO: whether a package of layer FROM may import one of layer TO.
allowed() {
  case "$1/$2" in
    api/api | 12/*) return 0 ;;
    */api) return 0 ;;
    api/*) return 1 ;;
  esac
  [ "$2" -lt "$1" ]
}

bad=0
while read -r pkg imports; do
  from=$(layer "$pkg")
  if [ "$from" = unknown ]; then
    echo "verify-layers: $pkg has no layer; add it to hack/verify-layers.sh" >&2
    bad=1
    continue
  fi
  for imp in $imports; do
    case "$imp" in "$MODULE"/*) ;; *) continue ;; esac
    to=$(layer "$imp")
    if [ "$to" = unknown ] || ! allowed "$from" "$to"; then
      echo "verify-layers: ${pkg#"$MODULE"/} (layer $from) imports ${imp#"$MODULE"/} (layer $to): only lower layers may be imported" >&2
      bad=1
    fi
  done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./...)
[ "$bad" -eq 0 ] && echo "package layers are respected"
exit "$bad"
