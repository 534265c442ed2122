# shellcheck shell=bash disable=SC2154
# The node kit's VM image (hack/node-kit.sh): a Debian root file system from mmdebstrap,
# made into an air-gapped cloud image. Uses the variables and log() of hack/node-kit.sh.

# What a cloud image has (systemd, cloud-init with NoCloud, the cloud kernel, DHCP on eth0
# with ifupdown), what Ubuntu has and Debian's minimal image lacks (systemd-resolved, dbus),
# the QEMU guest agent the test drives the VM with, tools for a person on the console, and
# every package osp-ubuntu's setup apt-installs for cloud provider kubevirt, so that its
# `apt-get install` finds them installed (check_osp_packages keeps this list honest).
IMAGE_PACKAGES=(
  systemd-sysv udev dbus systemd-resolved cloud-init linux-image-cloud-amd64 initramfs-tools
  ifupdown isc-dhcp-client iproute2 iputils-ping procps less
  qemu-guest-agent
  ca-certificates curl gnupg conntrack ebtables ethtool iptables ipvsadm socat kmod
  nfs-common cifs-utils e2fsprogs util-linux
)
# Packages osp-ubuntu installs only for other cloud providers.
OTHER_PROVIDER_PACKAGES=" open-vm-tools "

# check_osp_packages: fails when osp-ubuntu apt-installs a package the image lacks.
check_osp_packages() {
  local p pkgs
  pkgs=$(sed -n 's/^ *apt_install \([a-z0-9][a-z0-9 .+-]*\)$/\1/p' "$OSP")
  for p in $pkgs; do
    [[ $OTHER_PROVIDER_PACKAGES == *" $p "* ]] && continue
    [[ " ${IMAGE_PACKAGES[*]} " == *" $p "* ]] || die "osp-ubuntu installs $p; add it to IMAGE_PACKAGES in hack/lib/node-kit-image.sh"
  done
}

debian_sources() {
  printf '%s\n' "deb $DEBIAN_MIRROR $SUITE main" "deb $DEBIAN_MIRROR $SUITE-updates main" \
    "deb $DEBIAN_SECURITY_MIRROR $SUITE-security main"
}

# rootfs_hash: names the root file system's inputs (the cache key of its tar).
rootfs_hash() { { debian_sources; printf '%s\n' "${IMAGE_PACKAGES[@]}"; } | sha256sum | cut -c1-12; }

build_rootfs() {
  local part=$1 src=()
  [ -s "$part" ] && return 0
  mapfile -t src < <(debian_sources)
  # No documentation, manual pages or translations: a smaller image fills faster.
  mmdebstrap --quiet --variant=apt --include="$(IFS=,; echo "${IMAGE_PACKAGES[*]}")" \
    --aptopt='Acquire::Retries "3"' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    "$SUITE" "$work/rootfs.tar" "${src[@]}" >&2
  mv "$work/rootfs.tar" "$part"
}

# build_image ROOTFS_TAR KIT: rootfs.img, vmlinuz, initrd.img and image-packages.txt.
build_image() {
  local tar=$1 kit=$2 r="$work/rootfs"
  mkdir -p "$r"
  tar -C "$r" --numeric-owner --xattrs --xattrs-include='*' -xpf "$tar"
  # Air-gapped: no Debian sources left; the OSP adds its own repository (the mirror's).
  rm -f "$r/etc/apt/sources.list"
  find "$r/etc/apt/sources.list.d" -mindepth 1 -delete
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
