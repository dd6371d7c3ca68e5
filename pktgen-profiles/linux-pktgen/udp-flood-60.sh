#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# profile: udp-flood-60 - 64-byte (on the wire) UDP flood to every host of one /24
# generator: linux-pktgen
#   run: ./udp-flood-60.sh -i IFACE [-d DST_MAC]
#
# Kernel pkt_size excludes the FCS: 'pkt_size 60' is a 64-byte frame on the
# wire and 60 bytes in dpmon. Destinations step 10.0.0.1 .. 10.0.0.254 in
# order; sources are random in 198.51.100.1 .. 198.51.100.253 (flag
# IPSRC_RND, src_min/src_max: the kernel draws in [min, max)), unmonitored.
# burst 32 sends each skb 32 times, so a destination gets 32 packets in a
# row before the next one. ratep 1000000: one million packets per second.
#
# dpmon reads on 10.0.0.0/24, ingress, udp: 1000000 pps, 480000000 bps
# (60 bytes x 8), 254 hosts of about 3937 pps each.
#
# subnets: 10.0.0.0/24
# test-packets: 8128
# rate: pps=1000000 dpmon_bps=480000000
# expect: subnet=10.0.0.0/24 direction=ingress protocol=udp frame_bytes=60 share=1
# expect-hosts: subnet=10.0.0.0/24 hosts=254
set -eu
# shellcheck source=kpktgen.sh source-path=SCRIPTDIR
. "$(dirname "$0")/kpktgen.sh"
pg_start "$@"
pg_set "count 0"
pg_set "pkt_size 60"
pg_set "clone_skb 0"
pg_set "burst 32"
pg_set "ratep 1000000"
pg_set "dst_mac 02:00:00:00:00:02"
pg_set "dst_min 10.0.0.1"
pg_set "dst_max 10.0.0.254"
pg_set "src_min 198.51.100.1"
pg_set "src_max 198.51.100.254"
pg_set "flag IPSRC_RND"
pg_set "udp_src_min 61440"
pg_set "udp_src_max 61440"
pg_set "udp_dst_min 9"
pg_set "udp_dst_max 9"
pg_run
