#!/usr/bin/env bash
# Builds the node kit of the node boot test (docs/node-test.md "The kit") and prints its
# directory: a Debian 12 VM image (Debian 13 with OSM_NODE_KIT_DEBIAN=13) with its kernel
# and initrd, and an air-gapped mirror laid
# out like the real download sites (kubelet and kubectl, CNI plugins, crictl, a signed
# apt repository with a containerd.io package, and a signed Debian package mirror with
# the packages the OSP installs that the image lacks), all built from the Go module proxy
# and Debian's packages. Progress goes to stderr.
#
# Cached under ${OSM_CACHE_DIR:-~/.cache/osm-apiserver}/node/<key>, where the key names the
# versions and hashes the rest (these scripts, osp-ubuntu.yaml); the parts (Go binaries, the
# Debian root file system and the mirror's packages) are cached beside it, so a
# failed step does not redo the ones before it. A warm call returns at once. The first
# build took 420 s on a quiet 2-core machine with empty caches, the kubelet included
# (docs/benchmarks.md, "First run"; hack/build-cluster-binaries.sh builds the kubelet and
# kubectl).
# Runs as root (mmdebstrap, file ownership in the image), as CI does.
set -euo pipefail
shopt -s inherit_errexit

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# The profile the node test boots; the kit is made for it and checked against it.
OSP="$ROOT/artifacts/default-osps/osp-ubuntu.yaml"
KUBE_VERSION="${KUBE_VERSION:-v1.37.1}"
CONTAINERD_VERSION=v2.2.9
CONTAINERD_DEB_VERSION="${CONTAINERD_VERSION#v}-1"
RUNC_VERSION=v1.3.6 # what containerd v2.2.9 names in script/setup/runc-version
CNI_VERSION=v1.9.1
CRICTL_VERSION=v1.34.0 # the newest cri-tools the module proxy serves
# sum.golang.org does not know cri-tools v1.34.0, so the module's hash is pinned here.
CRICTL_MODULE_SUM="h1:KqL9EJ+WgHtz1HR1exezm91n+o8O2uMLs/eHzHJHAWw="
# The image's Debian: OSM_NODE_KIT_DEBIAN=12 (bookworm, the default) or 13 (trixie).
case "${OSM_NODE_KIT_DEBIAN:-12}" in
  12) SUITE=bookworm ;;
  13) SUITE=trixie ;;
  *) echo "[node-kit] error: OSM_NODE_KIT_DEBIAN=${OSM_NODE_KIT_DEBIAN}: want 12 or 13" >&2; exit 1 ;;
esac
DEBIAN_RELEASE="${OSM_NODE_KIT_DEBIAN:-12}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
DEBIAN_SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# Fixed guest-side addresses (docs/node-test.md): the harness forwards them with guestfwd.
GUEST_ADDR=10.0.2.100 MIRROR_PORT=8080 REGISTRY_PORT=5000 APISERVER_PORT=6443
KERNEL_CMDLINE="console=ttyS0 root=/dev/vda rw net.ifnames=0"
# The kit's layout; the key also hashes these scripts, so any change of them rebuilds the kit.
KIT_FORMAT=1

CACHE_ROOT="${OSM_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/osm-apiserver}"
NODE_CACHE="$CACHE_ROOT/node"
PARTS="$NODE_CACHE/parts"
MIRROR_URL="http://$GUEST_ADDR:$MIRROR_PORT"

# shellcheck source=hack/lib/node-kit-parts.sh
. "$ROOT/hack/lib/node-kit-parts.sh"
# shellcheck source=hack/lib/node-kit-image.sh
. "$ROOT/hack/lib/node-kit-image.sh"

log() { echo "[node-kit] $*" >&2; }
die() { log "error: $*"; exit 1; }

# The OSP's own default for a download variable, e.g. osp_default OSM_CNI_VERSION -> v1.9.1.
osp_default() {
  sed -n "s/.*\${$1:-\([^}]*\)}.*/\1/p" "$OSP" | head -n1
}

# /etc/environment of the image: Ubuntu's PATH line, and the documented download overrides
# (docs/default-osps.md "Air-gapped installs"); versions only where the OSP's default differs.
guest_environment() {
  echo 'PATH="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/usr/games:/usr/local/games:/snap/bin"'
  echo "# The node test's air-gapped mirror (hack/node-kit.sh)."
  echo "OSM_KUBERNETES_URL=$MIRROR_URL/kubernetes/release"
  echo "OSM_CNI_URL=$MIRROR_URL/cni"
  echo "OSM_CRICTL_URL=$MIRROR_URL/cri-tools"
  echo "OSM_CONTAINERD_APT_REPO=$MIRROR_URL/docker/linux/ubuntu"
  [ "$(osp_default OSM_CNI_VERSION)" = "$CNI_VERSION" ] || echo "OSM_CNI_VERSION=$CNI_VERSION"
  # crictl follows the kubelet's minor by default (v1.x.0).
  local kube_minor="${KUBE_VERSION%.*}"
  [ "$kube_minor.0" = "$CRICTL_VERSION" ] || echo "OSM_CRICTL_VERSION=$CRICTL_VERSION"
  # The OSP installs containerd.io=${OSM_CONTAINERD_VERSION}*.
  case "$CONTAINERD_DEB_VERSION" in
    "$(osp_default OSM_CONTAINERD_VERSION)"*) ;;
    *) echo "OSM_CONTAINERD_VERSION=${CONTAINERD_VERSION#v}" ;;
  esac
}

ENVIRONMENT="$(guest_environment)"
# What no version names: the image's /etc/environment and packages, these scripts, and the
# OSP the kit was checked against (its download defaults make /etc/environment, its apt
# installs must be in the image or the Debian mirror: check_osp_packages). An OSP change makes a new kit; only
# the cheap apt repository, image and mirror steps run again (the parts stay cached).
# Nothing else of the repository goes into the kit: osm-report and the payloads come from
# the osm-apiserver the test runs.
cfg_hash=$(printf '%s\n' "$ENVIRONMENT" "$(rootfs_hash)" "$(cat "$ROOT/hack/node-kit.sh" "$ROOT"/hack/lib/node-kit-*.sh)" \
  "$(sha256sum <"$OSP")" | sha256sum | cut -c1-8)
KEY="v${KIT_FORMAT}-kube-${KUBE_VERSION}_containerd-${CONTAINERD_VERSION}_runc-${RUNC_VERSION}_cni-${CNI_VERSION}_crictl-${CRICTL_VERSION}_debian-${SUITE}_cfg-${cfg_hash}"
KIT="$NODE_CACHE/$KEY"
# --key: the key alone, so that the test can tell a kit it is given (OSM_NODE_KIT) is
# the one these scripts and this OSP build.
if [ "${1:-}" = --key ]; then
  echo "$KEY"
  exit 0
fi

# A kit's mtime says when it was last handed out: the build prunes kits unused for 3 hours.
if [ -s "$KIT/kit.env" ]; then
  touch "$KIT" 2>/dev/null || true
  echo "$KIT"
  exit 0
fi

[ "$(id -u)" -eq 0 ] || die "building the node kit needs root (mmdebstrap, file ownership in the image)"
mkdir -p "$PARTS"
# One builder at a time: a second caller waits for the first and then reuses its result.
exec 8>"$NODE_CACHE/build.lock"
if ! flock -n 8; then
  log "another node kit build is running; waiting for it to finish"
  flock 8
fi
if [ -s "$KIT/kit.env" ]; then
  echo "$KIT"
  exit 0
fi

install_host_packages

work="$(mktemp -d "$NODE_CACHE/work.XXXXXX")"
cleanup() {
  if [ -d "$work/gnupg" ]; then GNUPGHOME="$work/gnupg" gpgconf --kill gpg-agent 2>/dev/null || true; fi
  rm -rf "$work" "$KIT.tmp"
}
trap cleanup EXIT
start=$(date +%s)
STEPS=9 step_n=0 step_start=0 step_name="" step_note="" times=""
# step NAME HINT [PART]: starts a step; a PART left by an earlier build makes it "cached".
step() {
  step_n=$((step_n + 1)) step_name=$1 step_start=$(date +%s) step_note=""
  if [ -n "${3:-}" ] && [ -e "$3" ]; then step_note=cached; fi
  log "[$step_n/$STEPS] $1 (${step_note:-$2})"
}
step_done() {
  local s=$(($(date +%s) - step_start))
  log "[$step_n/$STEPS] done in ${s}s"
  times+="$step_name: ${s}s${step_note:+ ($step_note)}"$'\n'
}

log "building the node kit $KEY"
# Before anything slow, and on every build: the root file system's and the mirror packages'
# cached parts are keyed by their package lists, not by the OSP.
check_osp_packages
log "once per version set: measured 7 minutes (420 s) on a quiet 2-core machine with empty caches (docs/benchmarks.md)"
rm -rf "$KIT.tmp"
mkdir -p "$KIT.tmp/mirror"

CONTAINERD_PART="$PARTS/containerd-$CONTAINERD_VERSION-runc-$RUNC_VERSION"
CNI_PART="$PARTS/cni-plugins-$CNI_VERSION"
CRICTL_PART="$PARTS/crictl-$CRICTL_VERSION"
ROOTFS_PART="$PARTS/rootfs-$SUITE-$(rootfs_hash).tar"
DEBS_PART="$PARTS/debs-$SUITE-$(rootfs_hash)"

step "containerd $CONTAINERD_VERSION and runc $RUNC_VERSION" "from the Go module proxy, measured 167 s" "$CONTAINERD_PART"
build_containerd "$CONTAINERD_PART"
step_done
step "CNI plugins $CNI_VERSION" "from the Go module proxy, measured 22 s" "$CNI_PART"
build_cni "$CNI_PART"
step_done
step "crictl $CRICTL_VERSION" "from the Go module proxy, measured 54 s" "$CRICTL_PART"
build_crictl "$CRICTL_PART"
step_done
step "containerd.io $CONTAINERD_DEB_VERSION package and its signed apt repository" "measured 6 s"
build_apt_repo "$CONTAINERD_PART" "$KIT.tmp/mirror/docker/linux/ubuntu"
step_done
step "Debian $SUITE root file system and the mirror's packages" "mmdebstrap from Debian's mirror, measured 101 s" "$DEBS_PART"
build_rootfs "$ROOTFS_PART" "$DEBS_PART"
touch "$ROOTFS_PART" "$DEBS_PART"
step_done
step "Debian package mirror: ${MIRROR_PACKAGES[*]} and their dependencies" "indexed and signed, measured 1 s"
build_debian_repo "$DEBS_PART" "$KIT.tmp/mirror/debian" "$KIT.tmp/mirror-packages.txt"
step_done
step "VM image: rootfs.img, vmlinuz, initrd.img" "measured 4 s"
build_image "$ROOTFS_PART" "$KIT.tmp"
step_done
step "kubelet and kubectl $KUBE_VERSION" "hack/build-cluster-binaries.sh: at once when built, else it says how long; measured 57 s after make test"
kube_dir=$("$ROOT/hack/build-cluster-binaries.sh" kubelet kubectl)
step_done
step "mirror: kubelet, kubectl, CNI plugins, crictl and their checksums" "measured 8 s"
build_mirror "$kube_dir" "$KIT.tmp/mirror"
step_done

printf '%s' "$times" >"$KIT.tmp/build-times.txt"
cat >"$KIT.tmp/kit.env" <<EOF
# Written by hack/node-kit.sh; docs/node-test.md "The kit".
KIT_KEY=$KEY
KUBE_VERSION=$KUBE_VERSION
CNI_VERSION=$CNI_VERSION
CRICTL_VERSION=$CRICTL_VERSION
CONTAINERD_VERSION=$CONTAINERD_VERSION
CONTAINERD_DEB_VERSION=$CONTAINERD_DEB_VERSION
RUNC_VERSION=$RUNC_VERSION
DEBIAN_SUITE=$SUITE
DEBIAN_RELEASE=$DEBIAN_RELEASE
DEBIAN_MIRROR_PACKAGES="${MIRROR_PACKAGES[*]}"
GUEST_ADDR=$GUEST_ADDR
MIRROR_PORT=$MIRROR_PORT
REGISTRY_PORT=$REGISTRY_PORT
APISERVER_PORT=$APISERVER_PORT
KERNEL_CMDLINE="$KERNEL_CMDLINE"
EOF
rm -rf "$KIT"
mv "$KIT.tmp" "$KIT"
# Other kits (~700 MB each; other versions, or other scripts in another worktree) and root
# file systems go once unused for 3 hours, longer than any test keeps using one; the Go
# parts stay for the next build.
find "$NODE_CACHE" -mindepth 1 -maxdepth 1 -type d -name 'v[0-9]*-kube-*' ! -name "$KEY" -mmin +180 -exec rm -rf {} +
# Only this Debian's: the other release's parts are its kits' (both are used by every run).
find "$PARTS" -maxdepth 1 -name "rootfs-$SUITE-*.tar" ! -name "${ROOTFS_PART##*/}" -mmin +180 -delete
find "$PARTS" -mindepth 1 -maxdepth 1 -type d -name "debs-$SUITE-*" ! -name "${DEBS_PART##*/}" -mmin +180 -exec rm -rf {} +
log "done in $(($(date +%s) - start))s: $KIT"
echo "$KIT"
