#!/usr/bin/env bash
# Regenerates code into a scratch copy of the tree and fails if it differs.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
tar -C "$ROOT" --exclude=./.git --exclude=./bin --exclude=./.demo -cf - . | tar -C "$tmp" -xf -
(cd "$tmp" && hack/update-codegen.sh >/dev/null)
for d in pkg/apis pkg/generated hack/api-rules-violations.list; do
  if ! diff -ruN "$ROOT/$d" "$tmp/$d" >"$tmp/codegen.diff"; then
    echo "generated code in $d is stale; run 'make update'" >&2
    head -40 "$tmp/codegen.diff" >&2
    exit 1
  fi
done
echo "generated code is up to date"
