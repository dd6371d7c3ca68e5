#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# One command from a fresh Debian 12 machine to a running dpmon:
# install packages, build, generate the default capture with dpmon-gen, and
# run dpmon on it through DPDK's pcap PMD (no NIC, no hugepages needed).
# infinite_rx=1 replays the capture forever so the rates stay live.
# Stop with Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/deps.sh --build
[ -f build/build.ninja ] || meson setup build --buildtype=release >/dev/null
ninja -C build >/dev/null

mkdir -p run
[ -f run/default.pcap ] || build/app/dpmon-gen --output run/default.pcap --packets 50000 --seed 1 --summary text

echo
echo "Query it from another terminal, e.g.:"
echo "  curl -s http://127.0.0.1:8080/api/v1/summary"
echo "  curl -s http://127.0.0.1:8080/api/v1/subnets"
echo "  curl -s 'http://127.0.0.1:8080/api/v1/hosts?sort=bps&direction=ingress&limit=10'"
echo "  curl -s http://127.0.0.1:8080/api/v1/hosts/10.0.0.1"
echo "  curl -s http://127.0.0.1:8080/metrics"
echo "or open the dashboard at http://127.0.0.1:8080/"
echo
exec build/app/dpmon --no-huge -m 1024 --no-pci --file-prefix dpmon-quickstart -l 0-1 \
	--vdev "net_pcap0,rx_pcap=run/default.pcap,infinite_rx=1" \
	-- --config config/dpmon.json "$@"
