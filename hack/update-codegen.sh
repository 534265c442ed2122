#!/usr/bin/env bash
# Regenerates deepcopy, conversion, defaults, OpenAPI and the clientset, listers
# and informers with k8s.io/code-generator (the version pinned in go.mod).
set -o errexit -o nounset -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODULE="$(go list -m)"
# `go list -m` prints no directory for a module that is not in the module cache
# yet (a fresh machine), so download it first: a no-op when it is there.
if [ -z "$(go list -m -f '{{.Dir}}' k8s.io/code-generator)" ]; then
  echo "update-codegen: downloading k8s.io/code-generator into the module cache" >&2
  go mod download k8s.io/code-generator
fi
CODEGEN_PKG="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
if [ -z "$CODEGEN_PKG" ] || [ ! -r "$CODEGEN_PKG/kube_codegen.sh" ]; then
  echo "update-codegen: k8s.io/code-generator has no kube_codegen.sh in the module cache (directory: '$CODEGEN_PKG', GOMODCACHE: $(go env GOMODCACHE))" >&2
  exit 1
fi
# shellcheck source=/dev/null
source "$CODEGEN_PKG/kube_codegen.sh"

BOILERPLATE="$ROOT/hack/boilerplate.go.txt"

kube::codegen::gen_helpers \
  --boilerplate "$BOILERPLATE" \
  "$ROOT/pkg/apis"

mkdir -p "$ROOT/pkg/generated/openapi"
kube::codegen::gen_openapi \
  --output-dir "$ROOT/pkg/generated/openapi" \
  --output-pkg "$MODULE/pkg/generated/openapi" \
  --report-filename "$ROOT/hack/api-rules-violations.list" \
  --update-report \
  --boilerplate "$BOILERPLATE" \
  "$ROOT/pkg/apis"

kube::codegen::gen_client \
  --with-watch \
  --output-dir "$ROOT/pkg/generated" \
  --output-pkg "$MODULE/pkg/generated" \
  --boilerplate "$BOILERPLATE" \
  "$ROOT/pkg/apis"
