# shellcheck shell=bash disable=SC2154
# Parts of the node kit (hack/node-kit.sh): host packages, the Go binaries, the
# containerd.io package with its signed apt repository, the kit's signing key, and the
# download mirror.
# Uses the variables and log() of hack/node-kit.sh; $work is its scratch directory.

# Debian packages the kit build needs, installed when missing.
install_host_packages() {
  local missing=()
  command -v mmdebstrap >/dev/null 2>&1 || missing+=(mmdebstrap)
  command -v apt-ftparchive >/dev/null 2>&1 || missing+=(apt-utils)
  command -v gpg >/dev/null 2>&1 || missing+=(gnupg)
  command -v dpkg-deb >/dev/null 2>&1 || missing+=(dpkg-dev)
  command -v mkfs.ext4 >/dev/null 2>&1 || missing+=(e2fsprogs)
  command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  # runc is built with cgo and links libseccomp statically, as its release does.
  [ -e /usr/lib/x86_64-linux-gnu/libseccomp.a ] || missing+=(libseccomp-dev)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing ${missing[*]} from Debian"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# go_install OUT CGO_ENABLED ARGS...: `go install pkg@version` honours the module's own
# go.mod, so each tool builds with exactly the dependencies it was released with.
go_install() {
  local out=$1 cgo=$2
  shift 2
  mkdir -p "$out"
  env GOBIN="$out" GOCACHE="$work/gocache" GOFLAGS= CGO_ENABLED="$cgo" go install -trimpath "$@" 2> >(quiet_go >&2)
}

# quiet_go: go's stderr without the hundreds of "go: downloading" lines of a cold cache.
quiet_go() { grep -v '^go: downloading' || true; }

# mod_dir MODULE@VERSION: the module's directory in the module cache (downloads it).
mod_dir() { go mod download -json "$1" 2> >(quiet_go >&2) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'; }

build_containerd() {
  local part=$1 m=github.com/containerd/containerd/v2
  [ -d "$part" ] && return 0
  rm -rf "$part.tmp"
  local ldflags="-s -w -X $m/version.Version=$CONTAINERD_VERSION -X $m/version.Package=github.com/containerd/containerd"
  # static_build/netgo/osusergo as the release's static build; btrfs needs cgo.
  go_install "$part.tmp/bin" 0 -tags "urfave_cli_no_docs osusergo netgo static_build no_btrfs" -ldflags "$ldflags" \
    "$m/cmd/containerd@$CONTAINERD_VERSION" "$m/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION" "$m/cmd/ctr@$CONTAINERD_VERSION"
  # runc needs cgo (nsenter, seccomp); linked statically like runc's own release binary.
  go_install "$part.tmp/bin" 1 -tags "seccomp urfave_cli_no_docs netgo osusergo" \
    -ldflags "-s -w -extldflags -static" "github.com/opencontainers/runc@$RUNC_VERSION"
  # Docker's package runs containerd from /usr/bin.
  sed 's|/usr/local/bin/containerd|/usr/bin/containerd|' "$(mod_dir "$m@$CONTAINERD_VERSION")/containerd.service" >"$part.tmp/containerd.service"
  mv "$part.tmp" "$part"
}

build_cni() {
  local part=$1 m=github.com/containernetworking/plugins p pkgs=()
  [ -d "$part" ] && return 0
  rm -rf "$part.tmp"
  # The plugins the release tarball carries.
  for p in main/bridge main/dummy main/host-device main/ipvlan main/loopback main/macvlan main/ptp main/tap main/vlan \
    ipam/dhcp ipam/host-local ipam/static meta/bandwidth meta/firewall meta/portmap meta/sbr meta/tuning meta/vrf; do
    pkgs+=("$m/plugins/$p@$CNI_VERSION")
  done
  go_install "$part.tmp/bin" 0 -ldflags "-s -w -X $m/pkg/utils/buildversion.BuildVersion=$CNI_VERSION" "${pkgs[@]}"
  local dir
  dir=$(mod_dir "$m@$CNI_VERSION")
  cp "$dir/LICENSE" "$dir/README.md" "$part.tmp/bin/"
  chmod 644 "$part.tmp/bin/LICENSE" "$part.tmp/bin/README.md"
  mv "$part.tmp" "$part"
}

build_crictl() {
  local part=$1 m=sigs.k8s.io/cri-tools sum dir
  [ -d "$part" ] && return 0
  rm -rf "$part.tmp"
  export GONOSUMDB="$m${GONOSUMDB:+,$GONOSUMDB}"
  sum=$(go mod download -json "$m@$CRICTL_VERSION" 2> >(quiet_go >&2) | sed -n 's/.*"Sum": "\(.*\)".*/\1/p')
  if [ "$CRICTL_VERSION" = v1.34.0 ] && [ "$sum" != "$CRICTL_MODULE_SUM" ]; then
    die "$m@$CRICTL_VERSION has module hash $sum, want $CRICTL_MODULE_SUM"
  fi
  # Built as the main module in its own directory: `go install pkg@version` would ask the
  # proxy for the module's version list, which it refuses for cri-tools.
  dir=$(mod_dir "$m@$CRICTL_VERSION")
  mkdir -p "$part.tmp/bin"
  (cd "$dir" && env GOCACHE="$work/gocache" GOFLAGS= GOWORK=off CGO_ENABLED=0 \
    go build -trimpath -ldflags "-s -w -X $m/pkg/version.Version=$CRICTL_VERSION" -o "$part.tmp/bin/crictl" ./cmd/crictl) \
    >&2 2> >(quiet_go >&2)
  mv "$part.tmp" "$part"
}

# build_containerd_deb PART OUT.deb: a containerd.io package laid out like Docker's.
build_containerd_deb() {
  local part=$1 deb=$2 pkg="$work/containerd.io"
  rm -rf "$pkg"
  install -d "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/lib/systemd/system" "$pkg/etc/containerd"
  install -m 0755 "$part"/bin/* "$pkg/usr/bin/"
  install -m 0644 "$part/containerd.service" "$pkg/lib/systemd/system/containerd.service"
  # Docker's package ships this conffile (the CRI plugin off): the OSP keeps its own config.
  printf '# The file Docker'"'"'s containerd.io package ships (hack/node-kit.sh).\ndisabled_plugins = ["cri"]\n' \
    >"$pkg/etc/containerd/config.toml"
  echo /etc/containerd/config.toml >"$pkg/DEBIAN/conffiles"
  cat >"$pkg/DEBIAN/control" <<EOF
Package: containerd.io
Version: $CONTAINERD_DEB_VERSION
Architecture: amd64
Maintainer: osm-apiserver node kit <osm@local>
Installed-Size: $(du -sk "$pkg/usr" | cut -f1)
Section: admin
Priority: optional
Provides: containerd, runc
Conflicts: containerd, runc
Replaces: containerd, runc
Homepage: https://containerd.io
Description: An open and reliable container runtime
 containerd $CONTAINERD_VERSION and runc $RUNC_VERSION, built from their Go modules by
 osm-apiserver's hack/node-kit.sh for the node test's air-gapped apt repository.
EOF
  # As Docker's (debhelper) scripts: enable and (re)start the service where systemd runs.
  cat >"$pkg/DEBIAN/postinst" <<'EOF'
#!/bin/sh
set -e
if [ "$1" = configure ] || [ "$1" = abort-upgrade ]; then
  if [ -d /run/systemd/system ]; then
    systemctl --system daemon-reload >/dev/null || true
    systemctl enable containerd.service >/dev/null 2>&1 || true
    systemctl restart containerd.service || true
  fi
fi
EOF
  cat >"$pkg/DEBIAN/prerm" <<'EOF'
#!/bin/sh
set -e
if [ -d /run/systemd/system ] && [ "$1" = remove ]; then
  systemctl stop containerd.service || true
fi
EOF
  chmod 0755 "$pkg/DEBIAN/postinst" "$pkg/DEBIAN/prerm"
  mkdir -p "$(dirname "$deb")"
  dpkg-deb --root-owner-group -Zgzip -z6 --build "$pkg" "$deb" >/dev/null
}

# build_apt_repo PART REPO: Docker's repository layout (dists/$SUITE/stable), signed with
# a key made for this kit; the armored public key is $REPO/gpg, as the OSP fetches it.
build_apt_repo() {
  local part=$1 repo=$2 dist="$2/dists/$SUITE"
  build_containerd_deb "$part" "$repo/pool/stable/amd64/containerd.io_${CONTAINERD_DEB_VERSION}_amd64.deb"
  mkdir -p "$dist/stable/binary-amd64"
  (cd "$repo" && apt-ftparchive packages pool/stable) >"$dist/stable/binary-amd64/Packages"
  gzip -9nk "$dist/stable/binary-amd64/Packages"
  apt-ftparchive -o APT::FTPArchive::Release::Origin=Docker -o APT::FTPArchive::Release::Label=Docker \
    -o APT::FTPArchive::Release::Suite="$SUITE" -o APT::FTPArchive::Release::Codename="$SUITE" \
    -o APT::FTPArchive::Release::Architectures=amd64 -o APT::FTPArchive::Release::Components=stable \
    release "$dist" >"$work/Release"
  mv "$work/Release" "$dist/Release"
  sign_release "$dist"
  kit_gpg --armor --export >"$repo/gpg"
}

# kit_gpg ARGS...: gpg with the kit's signing key (ed25519), made on first use in $work.
kit_gpg() {
  if [ ! -d "$work/gnupg" ]; then
    install -d -m 0700 "$work/gnupg"
    GNUPGHOME="$work/gnupg" gpg --batch --quiet --passphrase '' --quick-gen-key 'osm-apiserver node kit <osm@local>' ed25519 sign never
  fi
  GNUPGHOME="$work/gnupg" gpg --batch "$@"
}

# sign_release DIST: InRelease and Release.gpg for DIST/Release.
sign_release() {
  kit_gpg --yes --clearsign -o "$1/InRelease" "$1/Release"
  kit_gpg --yes --armor --detach-sign -o "$1/Release.gpg" "$1/Release"
}

# build_mirror KUBE_BIN_DIR MIRROR: the release download layouts and checksum formats
# (dl.k8s.io and crictl: the bare hash; CNI plugins: "hash  file").
build_mirror() {
  local kube=$1 mirror=$2 d f
  d="$mirror/kubernetes/release/$KUBE_VERSION/bin/linux/amd64"
  mkdir -p "$d"
  for f in kubelet kubectl; do
    install -m 0755 "$kube/$f" "$d/$f"
    sha256sum "$d/$f" | cut -d' ' -f1 >"$d/$f.sha256"
  done
  d="$mirror/cni/$CNI_VERSION"
  f="cni-plugins-linux-amd64-$CNI_VERSION.tgz"
  mkdir -p "$d"
  tar -C "$CNI_PART/bin" --owner=0 --group=0 --sort=name -czf "$d/$f" .
  (cd "$d" && sha256sum "$f" >"$f.sha256")
  d="$mirror/cri-tools/$CRICTL_VERSION"
  f="crictl-$CRICTL_VERSION-linux-amd64.tar.gz"
  mkdir -p "$d"
  tar -C "$CRICTL_PART/bin" --owner=0 --group=0 -czf "$d/$f" crictl
  sha256sum "$d/$f" | cut -d' ' -f1 >"$d/$f.sha256"
}
