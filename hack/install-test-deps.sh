#!/usr/bin/env bash
# Installs what the tests of rendered output need: Debian's cloud-init (for
# `cloud-init schema`), shellcheck, and iproute2, procps and curl (the tests
# run node scripts and apply sysctls in network namespaces, and fetch
# checksums with file:// URLs), and what hack/build-ignition.sh and the
# Ignition test need: gcc, libc6-dev and libblkid-dev (Ignition is built with
# cgo), passwd (useradd, which Ignition runs) and systemd (systemctl --root
# applies Ignition's unit presets). Does nothing when all are present.
set -euo pipefail
missing=()
command -v cloud-init >/dev/null 2>&1 || missing+=(cloud-init)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
command -v sysctl >/dev/null 2>&1 || missing+=(procps)
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v gcc >/dev/null 2>&1 || missing+=(gcc)
[ -e /usr/include/stdlib.h ] || missing+=(libc6-dev)
[ -e /usr/include/blkid/blkid.h ] || missing+=(libblkid-dev)
command -v useradd >/dev/null 2>&1 || missing+=(passwd)
command -v systemctl >/dev/null 2>&1 || missing+=(systemd)
[ ${#missing[@]} -eq 0 ] && exit 0
echo "[install-test-deps] installing ${missing[*]} from Debian" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq >/dev/null
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "[install-test-deps] installed in $SECONDS s" >&2
