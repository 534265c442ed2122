#!/usr/bin/env bash
# Fails when code is not gofmt'ed, go vet complains, or generated code is stale.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

unformatted="$(gofmt -l cmd pkg test artifacts 2>/dev/null || true)"
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
hack/verify-codegen.sh
