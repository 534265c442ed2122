#!/usr/bin/env bash
# Fails when a package imports one above it. Layers, bottom up (docs/design.md):
#   0 apis, generated, lru, metrics, machinecontroller (the contract)
#   1 sandbox           the template engine: templates + data -> text, within a budget
#     machines          machine-controller's objects read from informer caches
#   2 render            OSP + MD + facts -> bytes
#   3 facts, tokens, changefeed, overlays, resolve, review, nodejoin, defaultosps, bootreports
#   4 registry, syncer, migrate
#   5 server
#   6 cmd (its flags: cmd/osm-apiserver/app/options)
#   7 test, and tools in hack/ (imagebuild)
# A package may import its own layer and those below.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODULE="$(go list -m)"

layer() {
  case "${1#"$MODULE"/}" in
    pkg/apis/* | pkg/generated/* | pkg/lru* | pkg/metrics* | pkg/machinecontroller*) echo 0 ;;
    pkg/sandbox* | pkg/machines*) echo 1 ;;
    pkg/render*) echo 2 ;;
    pkg/facts* | pkg/tokens* | pkg/changefeed* | pkg/overlays* | pkg/resolve* | pkg/review* | pkg/nodejoin* | pkg/defaultosps* | pkg/bootreports* | artifacts/*) echo 3 ;;
    pkg/registry* | pkg/syncer* | pkg/migrate*) echo 4 ;;
    pkg/server*) echo 5 ;;
    cmd/*) echo 6 ;;
    test/* | hack/*) echo 7 ;;
    *) echo "unknown" ;;
  esac
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
    if [ "$to" = unknown ] || [ "$to" -gt "$from" ]; then
      echo "verify-layers: ${pkg#"$MODULE"/} (layer $from) imports ${imp#"$MODULE"/} (layer $to)" >&2
      bad=1
    fi
  done
done < <(go list -f '{{.ImportPath}} {{join .Imports " "}}' ./... )
[ "$bad" -eq 0 ] && echo "package layers are respected"
exit "$bad"
