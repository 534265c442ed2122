#!/usr/bin/env bash
# make release VERSION=vX.Y.Z [IMAGE=registry.example/osm-apiserver:vX.Y.Z] [PUSH=1]
#
# Builds the binary and the image stamped VERSION (hack/version.sh) from a clean
# checkout and writes RELEASE_DIR (default _output/release):
#   install.yaml   artifacts/deploy, rendered, running the image pinned by digest
#                  (the CRDs included)
#   crds.yaml      artifacts/crd alone, for clusters that manage CRDs apart
#   install-management.yaml, install-worker.yaml
#                  the management/worker topology: install.yaml with
#                  components/management-worker, and artifacts/deploy-worker
#   image/         make image's outputs (oci/, osm-apiserver.tar, deploy/)
#   osm-apiserver  the binary; SHA256SUMS of the files above
# With PUSH=1 the image is pushed to IMAGE (docker/podman login credentials) and
# install.yaml pins the digest the registry answered; without, it pins the local
# image's digest, which a registry keeps when image/oci is pushed as it is
# (`crane push`, `skopeo copy --preserve-digests`): push it before applying.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
log() { echo "[release] $*" >&2; }
die() { log "error: $*"; exit 1; }

VERSION=${VERSION:-}
IMAGE=${IMAGE:-osm-apiserver:$VERSION}
RELEASE_DIR=${RELEASE_DIR:-_output/release}
GO=${GO:-go}
[[ "$VERSION" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] || die "VERSION=${VERSION:-(unset)}: want vMAJOR.MINOR.PATCH[-PRERELEASE], e.g. make release VERSION=v0.1.0"
# ALLOW_DIRTY=1: test/image's release test, on a checkout being worked on.
[ -z "$(git status --porcelain --untracked-files=no)" ] || [ "${ALLOW_DIRTY:-}" = 1 ] ||
  die "the checkout has local changes: a release is built from a commit"
tags=$(git tag --points-at HEAD --list 'v*')
if [ -z "$tags" ]; then
  log "warning: HEAD is not tagged; tag it (git tag -a $VERSION) so that later builds of it say $VERSION too"
elif ! grep -qx -- "$VERSION" <<<"$tags"; then
  die "HEAD is tagged $(echo "$tags" | tr '\n' ' ')but not $VERSION"
fi

export VERSION
commit=$(hack/version.sh commit)
date=$(hack/version.sh date)
rm -rf "$RELEASE_DIR"
mkdir -p "$RELEASE_DIR"
log "building osm-apiserver $VERSION ($commit)"
$GO build -ldflags "$(hack/version.sh)" -o "$RELEASE_DIR/osm-apiserver" ./cmd/osm-apiserver
push=()
[ "${PUSH:-}" = 1 ] && push=(--push)
$GO run ./hack/imagebuild --binary "$RELEASE_DIR/osm-apiserver" --image "$IMAGE" --output "$RELEASE_DIR/image" \
  --version "$VERSION" --revision "$commit" --created "$date" --pin "${push[@]}" >&2

kubectl="$(hack/build-cluster-binaries.sh kubectl)/kubectl"
pinned=$("$kubectl" kustomize "$RELEASE_DIR/image/deploy" | sed -n 's/^ *image: //p' | sort -u)
[[ "$pinned" == *@sha256:* ]] || die "the rendered Deployment runs $pinned, not an image pinned by digest"
{
  echo "# osm-apiserver $VERSION (commit $commit): artifacts/deploy running $pinned."
  echo "# With osm-apiserver's CRDs; kubectl delete -f of this file deletes them and every profile (docs/deploying.md)."
  "$kubectl" kustomize "$RELEASE_DIR/image/deploy"
} >"$RELEASE_DIR/install.yaml"
"$kubectl" kustomize artifacts/crd >"$RELEASE_DIR/crds.yaml"
# The management/worker topology (docs/deploying.md): the management cluster's
# side runs the same pinned image.
management="$RELEASE_DIR/management"
mkdir -p "$management"
printf 'resources: [%s]\ncomponents: [%s]\n' "$(realpath --relative-to="$management" "$RELEASE_DIR/image/deploy")" \
  "$(realpath --relative-to="$management" artifacts/deploy/components/management-worker)" >"$management/kustomization.yaml"
{
  echo "# osm-apiserver $VERSION (commit $commit), the management cluster's side: artifacts/deploy with components/management-worker running $pinned."
  "$kubectl" kustomize "$management"
} >"$RELEASE_DIR/install-management.yaml"
rm -rf "$management"
{
  echo "# osm-apiserver $VERSION (commit $commit), the worker cluster's side: artifacts/deploy-worker; set the ExternalName (docs/deploying.md)."
  "$kubectl" kustomize artifacts/deploy-worker
} >"$RELEASE_DIR/install-worker.yaml"
(cd "$RELEASE_DIR" && sha256sum install.yaml install-management.yaml install-worker.yaml crds.yaml osm-apiserver image/osm-apiserver.tar >SHA256SUMS)
if [ "${PUSH:-}" = 1 ]; then
  log "install.yaml runs $pinned (pushed)"
else
  log "install.yaml runs $pinned: the local image's digest, not pushed; push $RELEASE_DIR/image/oci as it is (or run again with PUSH=1) before applying"
fi
echo "$RELEASE_DIR/install.yaml"
