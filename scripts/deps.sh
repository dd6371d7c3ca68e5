#!/usr/bin/env bash
# Install what dpmon needs to build and test on Debian 12 (bookworm).
# Idempotent: skips apt when every package is already installed.
# The last two lines are for the appliance: the Debian package (debhelper),
# throw-away roots (debootstrap), the image (mtools, dosfstools, fdisk),
# booting it (qemu, OVMF), and checking units and scripts (systemd's
# systemd-analyze, shellcheck).
set -euo pipefail

PKGS=(build-essential clang meson ninja-build pkg-config python3 python3-pyelftools
      dpdk dpdk-dev libdpdk-dev libnuma-dev libjansson-dev libmicrohttpd-dev libpcap-dev
      curl
      debhelper dpkg-dev debootstrap mtools dosfstools fdisk e2fsprogs qemu-system-x86 ovmf
      systemd shellcheck)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
echo "deps: installing ${missing[*]}" >&2
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
