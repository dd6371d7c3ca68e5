#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# profile: vlan - 802.1Q-tagged UDP (VLAN 100) to one host
# generator: linux-pktgen
#   run: ./vlan.sh -i IFACE [-d DST_MAC]
#
# vlan_id adds a tag inside pkt_size: 'pkt_size 256' is a 256-byte frame
# (260 on the wire), tag included, and dpmon counts 256 bytes. UDP from
# 198.51.100.9 (unmonitored) to 10.0.0.50. ratep 100000.
#
# dpmon reads on 10.0.0.0/24, ingress, udp: 100000 pps, 204800000 bps
# (256 x 8), one host.
#
# subnets: 10.0.0.0/24
# test-packets: 1000
# rate: pps=100000 dpmon_bps=204800000
# expect: subnet=10.0.0.0/24 direction=ingress protocol=udp frame_bytes=256 share=1 vlan=100
# expect-hosts: subnet=10.0.0.0/24 hosts=1
set -eu
# shellcheck source=kpktgen.sh source-path=SCRIPTDIR
. "$(dirname "$0")/kpktgen.sh"
pg_start "$@"
pg_set "count 0"
pg_set "pkt_size 256"
pg_set "clone_skb 0"
pg_set "ratep 100000"
pg_set "vlan_id 100"
pg_set "dst_mac 02:00:00:00:00:02"
pg_set "dst 10.0.0.50"
pg_set "src_min 198.51.100.9"
pg_set "src_max 198.51.100.9"
pg_set "udp_src_min 61440"
pg_set "udp_src_max 61440"
pg_set "udp_dst_min 9"
pg_set "udp_dst_max 9"
pg_run
