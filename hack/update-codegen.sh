#!/usr/bin/env bash
# Regenerates deepcopy, conversion, defaults, OpenAPI and the clientset, listers
# and informers with k8s.io/code-generator (the version pinned in go.mod).
set -o errexit -o nounset -o pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
MODULE="$(go list -m)"
CODEGEN_PKG="$(go list -m -f '{{.Dir}}' k8s.io/code-generator)"
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
