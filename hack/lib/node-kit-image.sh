# shellcheck shell=bash disable=SC2154
# The node kit's VM image (hack/node-kit.sh): a Debian root file system from mmdebstrap,
# made into an air-gapped cloud image. Uses the variables and log() of hack/node-kit.sh.

# The image/mirror split. IMAGE_PACKAGES is what a stock Ubuntu cloud image (the OSP's
# target) has, plus what the harness needs: systemd, cloud-init with NoCloud, the cloud
# kernel, DHCP on eth0 with ifupdown, systemd-resolved and dbus (on Ubuntu, not in Debian's
# minimal image), tools for a person on the console, and of osp-ubuntu's apt installs those
# Ubuntu's cloud image has (ca-certificates, curl and gnupg, which the bootstrap needs,
# iptables, kmod, e2fsprogs, util-linux) plus qemu-guest-agent: the test drives the VM
# through it before the setup runs, so the OSP's install of it is a no-op, as on
# kubevirt's images.
IMAGE_PACKAGES=(
  systemd-sysv udev dbus systemd-resolved cloud-init linux-image-cloud-amd64 initramfs-tools
  ifupdown isc-dhcp-client iproute2 iputils-ping procps less
  qemu-guest-agent
  ca-certificates curl gnupg iptables kmod e2fsprogs util-linux
)
# MIRROR_PACKAGES: the rest of what osp-ubuntu apt-installs for cloud provider kubevirt,
# which a stock image lacks (ethtool too: not every Ubuntu cloud image has it). They are
# not in the image; the kit's Debian package mirror serves them with every dependency the
# image lacks (build_debian_repo), so the setup's `apt-get update` and `apt-get install`
# really fetch and install them. check_osp_packages keeps both lists honest.
MIRROR_PACKAGES=(conntrack ebtables ethtool ipvsadm socat nfs-common cifs-utils)
# Packages osp-ubuntu installs only for other cloud providers: open-vm-tools (vsphere,
# vmware-cloud-director), open-iscsi (nutanix).
OTHER_PROVIDER_PACKAGES=" open-vm-tools open-iscsi "

# check_osp_packages: fails when osp-ubuntu apt-installs a package neither the image has
# nor the mirror serves.
check_osp_packages() {
  local p pkgs
  pkgs=$(sed -n 's/^ *apt_install \([a-z0-9][a-z0-9 .+-]*\)$/\1/p' "$OSP")
  [ -n "$pkgs" ] || die "found no apt_install lines in $OSP"
  for p in $pkgs; do
    [[ $OTHER_PROVIDER_PACKAGES == *" $p "* ]] && continue
    [[ " ${IMAGE_PACKAGES[*]} ${MIRROR_PACKAGES[*]} " == *" $p "* ]] ||
      die "osp-ubuntu installs $p; add it to MIRROR_PACKAGES (or, if a stock Ubuntu cloud image has it, IMAGE_PACKAGES) in hack/lib/node-kit-image.sh"
  done
}

debian_sources() {
  printf '%s\n' "deb $DEBIAN_MIRROR $SUITE main" "deb $DEBIAN_MIRROR $SUITE-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR $SUITE-security main"
}

# rootfs_hash: names the root file system's inputs (the cache key of its tar and of the
# mirror's packages, which are downloaded with it).
rootfs_hash() {
  { debian_sources; printf '%s\n' "${IMAGE_PACKAGES[@]}" -- "${MIRROR_PACKAGES[@]}"; } | sha256sum | cut -c1-12
}

# build_rootfs PART DEBS: the root file system's tar, and in DEBS the packages the mirror
# serves: what `apt-get install MIRROR_PACKAGES` downloads in the finished root, with its
# Debian sources and apt defaults (recommends too), the very state the VM boots in, so the
# VM's install needs exactly these. Both come from one run: the same index, no skew.
build_rootfs() {
  local part=$1 debs=$2 src=()
  [ -s "$part" ] && [ -d "$debs" ] && return 0
  mapfile -t src < <(debian_sources)
  rm -rf "$work/debs"
  mkdir -p "$work/debs"
  # No documentation, manual pages or translations: a smaller image fills faster. The hooks
  # run in the finished root ($1, expanded by mmdebstrap's shell), with the host's
  # resolv.conf in place of systemd-resolved's link (no resolved runs in the chroot).
  # shellcheck disable=SC2016
  mmdebstrap --quiet --variant=apt --include="$(IFS=,; echo "${IMAGE_PACKAGES[*]}")" \
    --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --customize-hook='chroot "$1" apt-get clean' \
    --customize-hook='rm -f "$1/etc/resolv.conf" && cp -L /etc/resolv.conf "$1/etc/resolv.conf"' \
    --customize-hook="chroot \"\$1\" apt-get install -qq -y --download-only ${MIRROR_PACKAGES[*]} >&2" \
    --customize-hook="sync-out /var/cache/apt/archives $work/debs" \
    --customize-hook='chroot "$1" apt-get clean' \
    --customize-hook='ln -sf ../run/systemd/resolve/stub-resolv.conf "$1/etc/resolv.conf"' \
    "$SUITE" "$work/rootfs.tar" "${src[@]}" >&2
  rm -rf "$work/debs/partial" "$work/debs/lock"
  local p
  for p in "${MIRROR_PACKAGES[@]}"; do
    compgen -G "$work/debs/${p}_*.deb" >/dev/null ||
      die "apt downloaded no $p: the image has it already (a dependency of IMAGE_PACKAGES?); move it to IMAGE_PACKAGES"
  done
  rm -rf "$debs"
  mv "$work/debs" "$debs"
  mv "$work/rootfs.tar" "$part"
}

# build_debian_repo DEBS REPO LIST: a Debian repository (suite $SUITE, component main,
# amd64) of the packages in DEBS, signed with the kit's key, whose binary keyring goes into
# the image (build_image); LIST names its packages (package, version, pool file).
build_debian_repo() {
  local debs=$1 repo=$2 list=$3 dist="$2/dists/$SUITE" f name
  mkdir -p "$repo/pool/main" "$dist/main/binary-amd64"
  # Named as Debian's pool names them (no epoch: a colon or its %3a would not survive a URL).
  for f in "$debs"/*.deb; do
    name=$(dpkg-deb -f "$f" Package Version Architecture | awk -F': ' '{v[NR]=$2} END {sub(/^[0-9]+:/, "", v[2]); print v[1] "_" v[2] "_" v[3] ".deb"}')
    cp "$f" "$repo/pool/main/$name"
  done
  (cd "$repo" && apt-ftparchive packages pool/main) >"$dist/main/binary-amd64/Packages"
  gzip -9nk "$dist/main/binary-amd64/Packages"
  awk -F': ' '$1 == "Package" {p = $2} $1 == "Version" {v = $2} $1 == "Filename" {print p "\t" v "\t" $2}' \
    "$dist/main/binary-amd64/Packages" >"$list"
  apt-ftparchive -o APT::FTPArchive::Release::Origin="osm-apiserver node kit" \
    -o APT::FTPArchive::Release::Label="osm-apiserver node kit" \
    -o APT::FTPArchive::Release::Suite="$SUITE" -o APT::FTPArchive::Release::Codename="$SUITE" \
    -o APT::FTPArchive::Release::Architectures=amd64 -o APT::FTPArchive::Release::Components=main \
    release "$dist" >"$work/Release"
  mv "$work/Release" "$dist/Release"
  sign_release "$dist"
  kit_gpg --export >"$work/debian-keyring.gpg"
  kit_gpg --armor --export >"$repo/key.asc"
}

# build_image ROOTFS_TAR KIT: rootfs.img, vmlinuz, initrd.img and image-packages.txt.
build_image() {
  local tar=$1 kit=$2 r="$work/rootfs"
  mkdir -p "$r"
  tar -C "$r" --numeric-owner --xattrs --xattrs-include='*' -xpf "$tar"
  # Air-gapped: Debian's sources make way for the kit's Debian package mirror (the OSP adds
  # its containerd.io repository, the mirror's too).
  rm -f "$r/etc/apt/sources.list"
  find "$r/etc/apt/sources.list.d" -mindepth 1 -delete
  install -d -m 0755 "$r/etc/apt/keyrings"
  install -m 0644 "$work/debian-keyring.gpg" "$r/etc/apt/keyrings/osm-node-kit-debian.gpg"
  printf '# Written by osm-apiserver'"'"'s hack/node-kit.sh: the node test'"'"'s Debian package mirror.\n%s\n' \
    "deb [signed-by=/etc/apt/keyrings/osm-node-kit-debian.gpg] $MIRROR_URL/debian $SUITE main" \
    >"$r/etc/apt/sources.list.d/osm-node-kit.list"
  find "$r/var/lib/apt/lists" -mindepth 1 -maxdepth 1 -type f -delete
  rm -f "$r"/var/cache/apt/*.bin
  # Every VM makes its own machine id on first boot.
  : >"$r/etc/machine-id"
  rm -f "$r/var/lib/dbus/machine-id"
  echo node >"$r/etc/hostname"
  printf '127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\n' >"$r/etc/hosts"
  echo '/dev/vda / ext4 rw,errors=remount-ro 0 1' >"$r/etc/fstab"
  # Names resolve through systemd-resolved, as on Ubuntu (the kubelet reads its resolv.conf).
  rm -f "$r/etc/resolv.conf"
  ln -s ../run/systemd/resolve/stub-resolv.conf "$r/etc/resolv.conf"
  # eth0 (net.ifnames=0) gets DHCP from cloud-init's fallback network config, which
  # cloud-init writes to /etc/network/interfaces.d/50-cloud-init.
  printf 'auto lo\niface lo inet loopback\n\nsource /etc/network/interfaces.d/*\n' >"$r/etc/network/interfaces"
  # QEMU's user networking with restrict=on leaves the router out of its DHCP offer, where a
  # cloud's DHCP names one: without a default route `ip route get` fails, as the kubelet's
  # node-IP lookup does. The route is harmless: restrict=on drops what is not forwarded.
  cat >"$r/etc/dhcp/dhclient-exit-hooks.d/osm-node-kit-default-route" <<'EOF'
# Written by osm-apiserver's hack/node-kit.sh: a default route through QEMU's user-mode
# gateway where the DHCP offer names no router.
case "$reason" in
  BOUND | RENEW | REBIND | REBOOT)
    if [ -z "$new_routers" ]; then ip -4 route replace default via 10.0.2.2 dev "$interface"; fi ;;
esac
EOF
  # NoCloud from a disk labelled cidata; C.UTF-8 needs no locale generation (Debian's
  # locale-gen would make no en_US.UTF-8); no SSH server, so no host keys.
  cat >"$r/etc/cloud/cloud.cfg.d/90-osm-node-kit.cfg" <<'EOF'
# Written by osm-apiserver's hack/node-kit.sh.
datasource_list: [ NoCloud, None ]
locale: C.UTF-8
ssh_genkeytypes: []
EOF
  if [ "$SUITE" = trixie ]; then
    # cloud-init 25's fallback network configuration asks for DHCPv6 too, which QEMU's
    # user networking does not serve: `ifup -a` then holds the boot for networking.service's
    # 5 minutes (docs/node-test.md, "Debian 13"). A cloud's datasource would give the network
    # configuration; here it is DHCPv4 on eth0, as the Debian 12 image gets it, and
    # IPv6 from router advertisements (SLAAC) where the network sends them.
    printf '# Written by osm-apiserver'"'"'s hack/node-kit.sh.\nnetwork: {config: disabled}\n' \
      >"$r/etc/cloud/cloud.cfg.d/91-osm-node-kit-network.cfg"
    printf 'auto eth0\niface eth0 inet dhcp\n' >"$r/etc/network/interfaces.d/50-osm-node-kit"
  fi
  printf '%s\n' "$ENVIRONMENT" >"$r/etc/environment"
  # A root shell on the serial console, for a person debugging a VM.
  mkdir -p "$r/etc/systemd/system/serial-getty@ttyS0.service.d"
  cat >"$r/etc/systemd/system/serial-getty@ttyS0.service.d/autologin.conf" <<'EOF'
[Service]
ExecStart=
ExecStart=-/sbin/agetty --autologin root --noclear --keep-baud 115200,57600,38400,9600 %I $TERM
EOF
  # The journal survives reboots (the reboot check reads earlier boots).
  mkdir -p "$r/var/log/journal"
  local kernel initrd
  kernel=$(find "$r/boot" -name 'vmlinuz-*' | sort -V | tail -n1)
  initrd=$(find "$r/boot" -name 'initrd.img-*' | sort -V | tail -n1)
  if [ -z "$kernel" ] || [ -z "$initrd" ]; then die "no kernel or initrd in $r/boot"; fi
  cp "$kernel" "$kit/vmlinuz"
  cp "$initrd" "$kit/initrd.img"
  # shellcheck disable=SC2016 # dpkg-query's format, not the shell's
  chroot "$r" dpkg-query -W -f '${Package}\t${Version}\n' >"$kit/image-packages.txt"
  truncate -s 4G "$kit/rootfs.img"
  mkfs.ext4 -q -F -L osm-node -d "$r" "$kit/rootfs.img"
  rm -rf "$r"
}
