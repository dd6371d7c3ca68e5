#!/usr/bin/env python3
"""Every third-party capture of MANIFEST.tsv through dpmon.

Per file, with 0.0.0.0/0 and ::/0 monitored (so every IP packet is
internal):
  - dpmon starts, counts and exits 0 on SIGTERM (no crash on any file);
  - ports[0].ipackets/ibytes/ierrors equal the column
    dpdk_net_pcap_testpmd_rx_pkts/bytes/errors (what DPDK 22.11's pcap PMD
    delivered to dpdk-testpmd for that file). For the one file where testpmd
    crashed (bigtcp-ipv4.pcap) the packet count and pkt_len come from the
    rxonly run quoted in netpcap_note;
  - sum(workers[].packets) == ipackets;
  - parse accounting is complete: sum(parse_errors) + totals.internal.packets
    == ipackets, and ingress == egress == internal, external == 0.
The expected IP counts per file are not asserted here: several files carry
layers (MPLS, PPPoE, tunnels, non-Ethernet link types) that the parser does
not follow yet.

Files run two at a time, each dpmon with its own --file-prefix and its
worker lcore on a different CPU.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LCORES_ONE_WORKER, LCORES_ONE_WORKER_ALT, TestFailure  # noqa: E402

RX_COL = 'dpdk_net_pcap_testpmd_rx_pkts/bytes/errors'
SUBNETS = [('0.0.0.0/0', 'all-v4'), ('::/0', 'all-v6')]


def expected_rx(row):
    """(pkts, bytes, errors or None) the pcap PMD delivers, from the manifest."""
    m = re.fullmatch(r'(\d+)/(\d+)/(\d+)', row[RX_COL])
    if m:
        return tuple(int(x) for x in m.groups())
    m = re.search(r'rxonly: (\d+) pkt pkt_len=(\d+)', row['netpcap_note'])
    if row[RX_COL].startswith('CRASH') and m and int(m.group(1)) == 1:
        return int(m.group(1)), int(m.group(2)), None
    raise TestFailure('%s: cannot read %s = %r (note %r)' % (
        row['file'], RX_COL, row[RX_COL], row['netpcap_note']))


def run_file(h, row, lcores):
    name = row['file']
    lines = []
    c = h.checker(name, lines)
    pkts, nbytes, nerr = expected_rx(row)
    if nerr is None:
        c.note('testpmd crashed on this file; expecting the rxonly figures of the note: '
               '%d packet(s), %d bytes; ierrors not asserted' % (pkts, nbytes))
    with h.dpmon_run([h.td('pcaps', *name.split('/'))], SUBNETS, name, lcores=lcores) as d:
        s = d.wait_counts(pkts, nbytes, nerr, stall=2.0)
        port = s['ports'][0]
        c.eq('ports[0].ipackets', pkts, port['ipackets'])
        c.eq('ports[0].ibytes', nbytes, port['ibytes'])
        if nerr is not None:
            c.eq('ports[0].ierrors', nerr, port['ierrors'])
        c.eq('ports[0].imissed', 0, port['imissed'])
        c.eq('ports[0].rx_nombuf', 0, port['rx_nombuf'])
        c.eq('sum(workers[].packets) == ipackets', port['ipackets'],
             sum(w['packets'] for w in s['workers']))
        t = s['totals']
        errs = sum(s['parse_errors'].values())
        ip = t['internal']['packets']
        c.eq('sum(parse_errors) %r + totals.internal.packets %d == ipackets'
             % ({k: v for k, v in s['parse_errors'].items() if v}, ip),
             port['ipackets'], errs + ip)
        for k in ('ingress', 'egress'):
            c.eq('totals.%s (packets, bytes) == internal' % k,
                 (t['internal']['packets'], t['internal']['bytes']),
                 (t[k]['packets'], t[k]['bytes']))
        c.eq('totals.external packets', 0, t['external']['packets'])
        c.true('totals.internal.bytes %d <= ibytes %d' % (t['internal']['bytes'], port['ibytes']),
               t['internal']['bytes'] <= port['ibytes'])
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    return lines, c


def test_manifest(h):
    rows = h.manifest()
    h.log('MANIFEST.tsv: %d captures' % len(rows))
    for r in rows:
        p = h.td('pcaps', *r['file'].split('/'))
        if not os.path.isfile(p):
            raise TestFailure('capture listed in MANIFEST.tsv is missing: %s' % p)

    def job(i, row):
        lcores = LCORES_ONE_WORKER if i % 2 == 0 else LCORES_ONE_WORKER_ALT
        return lambda: run_file(h, row, lcores)

    checks = harness.run_parallel([job(i, r) for i, r in enumerate(rows)], workers=2)
    c = h.checker('manifest')
    bad = []
    for r, x in zip(rows, checks):
        c.merge(x)
        if x.failures:
            bad.append(r['file'])
    h.log('%d of %d captures passed; failing: %s' % (len(rows) - len(bad), len(rows),
                                                     ', '.join(bad) or 'none'))
    c.done()


if __name__ == '__main__':
    harness.main(globals())
