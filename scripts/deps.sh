#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Install what dpmon needs to build and test on Debian 12 (bookworm).
# Idempotent: apt runs only when a package is missing, npm only when
# tests/js/package-lock.json changed since the last install.
#
#   bash scripts/deps.sh           build and test dependencies
#   bash scripts/deps.sh --build   build dependencies only (quickstart)
#
#   build:  compilers, Meson, DPDK, jansson, libmicrohttpd, GnuTLS, libpcap, libsystemd,
#           libcurl, scdoc (the manual pages)
#   tests:  prometheus (promtool), clickhouse-server and influxdb (the export
#           tests start their own, test_export.py), chromium (the dashboard test), cppcheck and
#           clang-format (scripts/static-check.sh), DPDK's af_packet PMD and
#           iproute2 (the live-traffic test on a veth pair, test_soak.py;
#           libdpdk-dev pulls the PMD in too, it is named for what it is for),
#           exabgp, gobgpd and socat (a real BGP chain on loopback for the
#           FlowSpec and blackhole routes, tests/integration/bgp.py),
#           node + npm, and tests/js's npm packages (npm ci, pinned by
#           tests/js/package-lock.json; playwright-core drives the Debian
#           chromium, it never downloads a browser)
#
# The appliance's test packages: the Debian package (debhelper), throw-away
# roots (debootstrap), the image (mtools, dosfstools, fdisk), booting it
# (qemu, OVMF), and checks of the unit (systemd-analyze) and of the shell
# scripts (with the package named shellcheck), the package's lint (lintian),
# zsh (the syntax of dpmonctl's zsh completion) and openssl (a certificate
# for dpmonctl's https test).
set -euo pipefail
cd "$(dirname "$0")/.."

PKGS=(build-essential clang libclang-rt-14-dev meson ninja-build pkg-config python3 python3-pyelftools
      dpdk dpdk-dev libdpdk-dev libnuma-dev libjansson-dev libmicrohttpd-dev libpcap-dev
      libsystemd-dev libcurl4-openssl-dev libgnutls28-dev curl scdoc)
TEST_PKGS=(prometheus chromium librte-net-af-packet23 iproute2 clickhouse-server influxdb
      debhelper dpkg-dev debootstrap mtools dosfstools fdisk e2fsprogs qemu-system-x86 ovmf
      systemd shellcheck cppcheck clang-format lintian zsh openssl exabgp gobgpd socat)
build_only=0
[ "${1:-}" = "--build" ] && build_only=1
[ "$build_only" -eq 1 ] || PKGS+=("${TEST_PKGS[@]}")

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js: any installed node >= 18 will do; else Debian's.
if [ "$build_only" -eq 0 ]; then
	command -v node >/dev/null 2>&1 || missing+=(nodejs)
	command -v npm >/dev/null 2>&1 || missing+=(npm)
fi

if [ ${#missing[@]} -gt 0 ]; then
	echo "deps: installing ${missing[*]}" >&2
	# Installing prometheus, clickhouse-server or influxdb must not start
	# a server: only promtool is needed, and the export tests start their
	# own servers as user processes. Without a policy of the machine's own, deny service starts
	# for the duration of the install.
	policy=/usr/sbin/policy-rc.d
	own_policy=0
	if [ ! -e "$policy" ]; then
		printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$policy" >/dev/null
		$SUDO chmod 755 "$policy"
		own_policy=1
	fi
	$SUDO apt-get update -q
	rc=0
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
		"${missing[@]}" || rc=$?
	[ "$own_policy" -eq 0 ] || $SUDO rm -f "$policy"
	[ "$rc" -eq 0 ] || exit "$rc"
fi

[ "$build_only" -eq 0 ] || exit 0

# The Node packages of the integration tests, exactly as locked.
lock=tests/js/package-lock.json
stamp=tests/js/node_modules/.dpmon-lock.sha256
want=$(sha256sum "$lock" | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
	echo "deps: npm ci in tests/js" >&2
	(cd tests/js && npm ci --no-audit --no-fund --loglevel=error)
	echo "$want" >"$stamp"
fi
