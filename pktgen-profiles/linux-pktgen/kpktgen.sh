#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# kpktgen.sh - the shared skeleton of the Linux kernel pktgen profiles.
#
# Design: a profile is a POSIX shell script that sources this file and then
# calls `pg_start "$@"`, one `pg_set "PARAM VALUE"` per device parameter (the
# exact text written to /proc/net/pktgen/IFACE, see the kernel's
# Documentation/networking/pktgen.rst) and `pg_run`. Keeping every packet
# parameter on a pg_set line is what lets `dpmon-gen --profile` render the
# same traffic to a pcap and refuse any line it does not understand.
#
# Usage of a profile (root, on the generator machine):
#   ./udp-flood-60.sh -i IFACE [-d DST_MAC] [-t THREAD] [-n COUNT]
#     -i IFACE    the interface that sends (required)
#     -d DST_MAC  destination MAC (the dpmon port, or any MAC when a mirror
#                 port feeds dpmon: dpmon runs its ports in promiscuous mode)
#     -t THREAD   kernel pktgen thread (CPU) to run on, default 0
#     -n COUNT    packets to send, overriding the profile's count (0 = until
#                 interrupted)
# PKTGEN_DRY_RUN=1 prints every write as "FILE <- TEXT" instead of doing it.

PG_IFACE=""
PG_THREAD=0
PG_DST_MAC=""
PG_COUNT=""

# pg_write FILE TEXT: write one command to a pktgen control file and check
# the kernel's "Result: OK" (or print it in a dry run).
pg_write() {
	if [ "${PKTGEN_DRY_RUN:-0}" = 1 ]; then
		printf '%s <- %s\n' "$1" "$2"
		return 0
	fi
	printf '%s\n' "$2" >"$1" || { echo "kpktgen: cannot write '$2' to $1" >&2; exit 1; }
	case "$1" in
	*/pgctrl) return 0 ;;
	esac
	if ! grep -q "^Result: OK" "$1"; then
		echo "kpktgen: $1: '$2' refused: $(grep '^Result:' "$1")" >&2
		exit 1
	fi
}

pg_usage() {
	echo "usage: $0 -i IFACE [-d DST_MAC] [-t THREAD] [-n COUNT]" >&2
	exit 2
}

# pg_start ARGS: parse the command line, load pktgen, attach IFACE to a thread.
pg_start() {
	while getopts "i:d:t:n:h" opt; do
		case "$opt" in
		i) PG_IFACE=$OPTARG ;;
		d) PG_DST_MAC=$OPTARG ;;
		t) PG_THREAD=$OPTARG ;;
		n) PG_COUNT=$OPTARG ;;
		*) pg_usage ;;
		esac
	done
	[ -n "$PG_IFACE" ] || pg_usage
	if [ "${PKTGEN_DRY_RUN:-0}" != 1 ] && [ ! -d /proc/net/pktgen ]; then
		modprobe pktgen || exit 1
	fi
	pg_write /proc/net/pktgen/pgctrl "reset"
	pg_write "/proc/net/pktgen/kpktgend_$PG_THREAD" "rem_device_all"
	pg_write "/proc/net/pktgen/kpktgend_$PG_THREAD" "add_device $PG_IFACE"
}

# pg_set "PARAM VALUE": one device parameter; -d and -n override dst_mac and count.
pg_set() {
	case "$1" in
	"dst_mac "*) [ -n "$PG_DST_MAC" ] && set -- "dst_mac $PG_DST_MAC" ;;
	"count "*) [ -n "$PG_COUNT" ] && set -- "count $PG_COUNT" ;;
	esac
	pg_write "/proc/net/pktgen/$PG_IFACE" "$1"
}

# pg_run: start sending (blocks until count is reached or Ctrl-C), then show the result.
pg_run() {
	echo "kpktgen: sending on $PG_IFACE (Ctrl-C stops)" >&2
	pg_write /proc/net/pktgen/pgctrl "start"
	if [ "${PKTGEN_DRY_RUN:-0}" != 1 ]; then
		grep -A2 "^Result:" "/proc/net/pktgen/$PG_IFACE"
	fi
}
