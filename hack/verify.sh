#!/usr/bin/env bash
# Fails when code is not gofmt'ed, go vet or the linters complain, a package
# imports one above it, or generated code is stale.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# shellcheck source=hack/lib/tools.sh
. hack/lib/tools.sh

unformatted="$(gofmt -l cmd pkg test artifacts 2>/dev/null || true)"
if [ -n "$unformatted" ]; then
  echo "gofmt needed on:" >&2
  echo "$unformatted" >&2
  exit 1
fi
go vet ./...
hack/verify-layers.sh
echo "[verify] golangci-lint (.golangci.yml)" >&2
"$(tool_bin golangci-lint github.com/golangci/golangci-lint/v2/cmd/golangci-lint)" run ./...
echo "[verify] logcheck: structured, contextual logging" >&2
"$(tool_bin logcheck sigs.k8s.io/logtools/logcheck)" ./...
hack/verify-codegen.sh
