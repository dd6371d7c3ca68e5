#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# profile: imix - simple IMIX (64, 594, 1518 bytes on the wire, weights 7:4:1)
# generator: linux-pktgen (imix_weights: Linux 5.10 and later)
#   run: ./imix.sh -i IFACE [-d DST_MAC]
#
# imix_weights sizes are pkt_size values, FCS excluded: 60, 590 and 1514 make
# the same wire frames as Pktgen-DPDK's 64, 594 and 1518, and dpmon counts
# 60, 590 and 1514 bytes. The kernel turns the weights into a table of 100
# slots (7/12 -> 58, 4/12 -> 33, the rest 9) and picks a slot at random for
# every skb: over time 58% / 33% / 9% of the packets, not exactly 7:4:1.
# UDP from 198.51.100.1 (unmonitored) to 10.0.1.10. ratep 100000.
#
# dpmon reads on 10.0.1.0/24, ingress, udp: 100000 pps and about 292608000 bps
# (mean 365.76 bytes x 8), one host.
#
# subnets: 10.0.1.0/24
# test-packets: 10000
# rate: pps=100000 dpmon_bps=292608000 tolerance=0.02
# expect: subnet=10.0.1.0/24 direction=ingress protocol=udp frame_bytes=60 share=0.58 tolerance=0.02
# expect: subnet=10.0.1.0/24 direction=ingress protocol=udp frame_bytes=590 share=0.33 tolerance=0.02
# expect: subnet=10.0.1.0/24 direction=ingress protocol=udp frame_bytes=1514 share=0.09 tolerance=0.02
# expect-hosts: subnet=10.0.1.0/24 hosts=1
set -eu
# shellcheck source=kpktgen.sh source-path=SCRIPTDIR
. "$(dirname "$0")/kpktgen.sh"
pg_start "$@"
pg_set "count 0"
pg_set "imix_weights 60,7 590,4 1514,1"
pg_set "clone_skb 0"
pg_set "ratep 100000"
pg_set "dst_mac 02:00:00:00:00:02"
pg_set "dst 10.0.1.10"
pg_set "src_min 198.51.100.1"
pg_set "src_max 198.51.100.1"
pg_set "udp_src_min 61440"
pg_set "udp_src_max 61440"
pg_set "udp_dst_min 9"
pg_set "udp_dst_max 9"
pg_run
