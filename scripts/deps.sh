#!/usr/bin/env bash
# Install what dpmon needs to build and test on Debian 12 (bookworm).
# Idempotent: skips apt when every package is already installed.
set -euo pipefail

PKGS=(build-essential clang libclang-rt-14-dev meson ninja-build pkg-config python3 python3-pyelftools
      dpdk dpdk-dev libdpdk-dev libnuma-dev libjansson-dev libmicrohttpd-dev libpcap-dev
      curl)

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
