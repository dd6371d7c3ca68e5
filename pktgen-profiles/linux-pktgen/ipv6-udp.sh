#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# profile: ipv6-udp - IPv6 UDP to random hosts of 2001:db8:10::/64
# generator: linux-pktgen
#   run: ./ipv6-udp.sh -i IFACE [-d DST_MAC]
#
# With dst6_min set the kernel draws every IPv6 destination as
# (random | dst6_min) & dst6_max, 32 bits at a time: with ::1 and ::ff in the
# last word that is the 128 odd addresses 2001:db8:10::1 .. ::ff. The frame
# holds at least Ethernet + IPv6 + UDP + the 16-byte pktgen header, so
# 'pkt_size 60' becomes 78 bytes (82 on the wire); dpmon counts 78.
# From 2001:db8:ffff::1 (unmonitored). ratep 1000000.
#
# dpmon reads on 2001:db8:10::/64, ingress, udp: 1000000 pps, 624000000 bps
# (78 x 8), 128 hosts.
#
# subnets: 2001:db8:10::/64
# test-packets: 5000
# rate: pps=1000000 dpmon_bps=624000000
# expect: subnet=2001:db8:10::/64 direction=ingress protocol=udp frame_bytes=78 share=1
# expect-hosts: subnet=2001:db8:10::/64 hosts=128
set -eu
# shellcheck source=kpktgen.sh source-path=SCRIPTDIR
. "$(dirname "$0")/kpktgen.sh"
pg_start "$@"
pg_set "count 0"
pg_set "pkt_size 60"
pg_set "clone_skb 0"
pg_set "ratep 1000000"
pg_set "dst_mac 02:00:00:00:00:02"
pg_set "dst6 2001:db8:10::1"
pg_set "dst6_min 2001:db8:10::1"
pg_set "dst6_max 2001:db8:10::ff"
pg_set "src6 2001:db8:ffff::1"
pg_set "udp_src_min 61440"
pg_set "udp_src_max 61440"
pg_set "udp_dst_min 9"
pg_set "udp_dst_max 9"
pg_run
