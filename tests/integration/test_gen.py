#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpmon-gen as an oracle: it writes a pcap and prints exactly what it wrote
(--summary json, docs/dpmon-gen.md); dpmon, fed that pcap through the pcap
PMD with the same subnets, must count the same, per subnet, direction and
protocol, in the totals, and in distinct hosts.

Runs: the defaults (--packets 20000 --seed 7), and a mixed run with every
protocol class, internal traffic, several frame sizes, a VLAN tag and
subnets of both families given on the command line.

The pcap's record count and captured bytes are also checked from its
record headers against the summary, so the oracle itself is checked
against the file it describes.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import TestFailure  # noqa: E402

RUNS = [
    ('default', ['--packets', '20000', '--seed', '7']),
    ('mixed', ['--packets', '20000', '--seed', '11',
               '--subnet', '10.20.0.0/16=campus', '--subnet', '10.30.1.0/24=lab',
               '--subnet', '2001:db8:20::/48=campus-v6', '--subnet', '2001:db8:30:1::/64',
               '--hosts', '200', '--mix', 'tcp=4,udp=3,icmp=2,other=1',
               '--internal-percent', '20', '--egress-percent', '40',
               '--size', '64,128,512,1000,1518', '--vlan', '100', '--peers', '300']),
]


def counts(d):
    """packets/bytes, total and per protocol, of a summary or API direction."""
    out = {'packets': d['packets'], 'bytes': d['bytes']}
    for p in harness.PROTOS:
        out[p] = {'packets': d[p]['packets'], 'bytes': d[p]['bytes']}
    return out


def run_case(h, tmp, label, args):
    if not os.access(h.dpmon_gen, os.X_OK):
        raise TestFailure('dpmon-gen not built at %s' % h.dpmon_gen)
    c = h.checker('gen %s' % label)
    pcap, sm = h.gen(tmp, label, args)
    tot = sm['totals']
    recs = harness.pcap_records(pcap)
    c.eq('pcap records == summary totals.packets', tot['packets'], len(recs))
    c.eq('pcap captured bytes == summary totals.bytes', tot['bytes'], sum(cl for cl, _ in recs))
    c.eq('summary per-protocol packets add up', tot['packets'],
         sum(tot[p]['packets'] for p in harness.PROTOS))
    subnets = [(s['prefix'], s['name']) for s in sm['subnets']]
    with h.dpmon_run([pcap], subnets, 'gen %s' % label) as d:
        s = d.wait_counts(tot['packets'], tot['bytes'], 0)
        port = s['ports'][0]
        c.eq('ports[0].ipackets', tot['packets'], port['ipackets'])
        c.eq('ports[0].ibytes', tot['bytes'], port['ibytes'])
        c.eq('parse_errors (all zero)', {k: 0 for k in s['parse_errors']}, s['parse_errors'])
        for k in harness.TOTALS:
            c.eq('totals.%s (packets, bytes)' % k,
                 (tot[k]['packets'], tot[k]['bytes']),
                 (s['totals'][k]['packets'], s['totals'][k]['bytes']))
        got = harness.by_prefix(d.get('/api/v1/subnets'))
        c.eq('subnets listed', sorted(p for p, _ in subnets), sorted(got))
        for e in sm['subnets']:
            g = got.get(e['prefix'])
            if g is None:
                c.fail('subnet %s missing' % e['prefix'])
                continue
            c.eq('subnet %s name' % e['prefix'], e['name'], g['name'])
            for dr in harness.DIRS:
                c.eq('subnet %s %s (all protocols)' % (e['prefix'], dr), counts(e[dr]),
                     counts(g[dr]))
            hs = d.get('/api/v1/hosts?subnet=%s&limit=1' % e['prefix'])
            c.eq('subnet %s distinct hosts (hosts_used)' % e['prefix'], e['hosts_used'],
                 hs['total'])
        c.eq('distinct monitored hosts (hosts_used)', sm['hosts_used'],
             d.get('/api/v1/hosts?limit=1')['total'])
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_gen_default(h):
    with tempfile.TemporaryDirectory(prefix='dpmon-it-gen-') as tmp:
        run_case(h, tmp, *RUNS[0])


def test_gen_mixed(h):
    with tempfile.TemporaryDirectory(prefix='dpmon-it-gen-') as tmp:
        run_case(h, tmp, *RUNS[1])


if __name__ == '__main__':
    harness.main(globals())
