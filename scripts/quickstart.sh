#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One command from a fresh Debian 12 machine to a running dpmon:
# install packages, build the three programs it runs, generate the default
# capture with dpmon-gen, and run dpmon on it through DPDK's pcap PMD (no
# NIC, no hugepages needed). infinite_rx=1 replays the capture forever so
# the rates stay live. Arguments go to dpmon after its "--" (for example
# --http-port 8083). Stop with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

# One line per step on stdout; each tool's own output goes to a log that is
# printed when the step fails.
log=run/quickstart.log
mkdir -p run
: >"$log"
step() {
	local what=$1
	shift
	echo "quickstart: $what"
	if ! "$@" >>"$log" 2>&1; then
		echo "quickstart: $what failed; the last lines of $log:" >&2
		tail -n 30 "$log" >&2
		exit 1
	fi
}

# The HTTP port dpmon will listen on: --http-port N (or =N) among the
# arguments, else the configuration's.
port=8080
prev=
for a in "$@"; do
	case $a in
	--http-port=*) port=${a#--http-port=} ;;
	esac
	[ "$prev" = --http-port ] && port=$a
	prev=$a
done

echo "quickstart: installing packages (those missing)"
bash scripts/deps.sh --build
[ -f build/build.ninja ] || step "configuring (meson setup build)" meson setup build --buildtype=release
step "building dpmon, dpmon-gen and dpmonctl (a few minutes)" \
	ninja -C build app/dpmon app/dpmon-gen app/dpmonctl
[ -f run/default.pcap ] || step "generating run/default.pcap with dpmon-gen" \
	build/app/dpmon-gen --output run/default.pcap --packets 50000 --seed 1 --summary text

if [ "$port" = 0 ]; then
	echo
	echo "dpmon picks a free port (--http-port 0): use the one it prints."
	base='http://127.0.0.1:PORT'
else
	base="http://127.0.0.1:$port"
fi
echo
echo "Query it from another terminal, e.g.:"
echo "  build/app/dpmonctl --url $base summary"
echo "  curl -s $base/api/v1/summary"
echo "  curl -s $base/api/v1/subnets"
echo "  curl -s '$base/api/v1/hosts?sort=bps&direction=ingress&limit=10'"
echo "  curl -s $base/api/v1/hosts/10.0.0.1"
echo "  curl -s $base/metrics"
echo "or open the dashboard at $base/"
echo
echo "quickstart: starting dpmon (Ctrl-C stops it)"
exec build/app/dpmon --no-huge -m 1024 --no-pci --file-prefix dpmon-quickstart -l 0-1 \
	--vdev "net_pcap0,rx_pcap=run/default.pcap,infinite_rx=1" \
	-- --config config/dpmon.json "$@"
