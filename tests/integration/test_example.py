#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpmon on pcapplusplus/example.pcap (4631 packets of real office web
traffic) against expected/benchmark/example.pcap.{dst_subnets,hosts}.tsv.

The two TSVs were made with tshark (README: defragmentation and
desegmentation off, one count per frame). The hosts TSV has byte columns
for the wire length only; it is usable against dpmon (which counts the
captured length the pcap PMD delivers) because every record of this file
has caplen == len — checked below from the pcap record headers and from
the expected JSON before anything is compared.
"""
import ipaddress
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import by_address, by_prefix, in_any  # noqa: E402

PCAP = ('pcaps', 'pcapplusplus', 'example.pcap')
PACKETS = 4631


def load_expected(h):
    c = h.checker('example.pcap data')
    subnets = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    hosts = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.hosts.tsv'))
    exp = harness.load_json(h.td('expected', 'pcapplusplus', 'example.pcap.json'))
    recs = harness.pcap_records(h.td(*PCAP))
    # caplen == len for every record, so wire bytes == captured bytes and the
    # hosts TSV's *_wire columns are the bytes dpmon must count.
    c.eq('records in the pcap', PACKETS, len(recs))
    c.eq('records with caplen != len (pcap record headers)', 0,
         sum(1 for cl, ol in recs if cl != ol))
    c.eq('expected JSON counts.bytes_wire == bytes_cap', exp['counts']['bytes_wire'],
         exp['counts']['bytes_cap'])
    c.eq('expected JSON libpcap caplen_lt_len', 0, exp['libpcap_1.10.3_view']['caplen_lt_len'])
    for r in subnets:
        c.eq('TSV %s bytes_wire == bytes_cap' % r['dst_prefix'],
             r['bytes_wire(frame.len incl L2)'], r['bytes_cap(frame.cap_len)'])
    c.eq('TSV subnets', 17, len(subnets))
    # The hosts TSV is complete (every address of the file): each packet has
    # one source and one destination, so each column sums to the file.
    c.eq('hosts TSV: sum pkts_as_dst', PACKETS, sum(int(r['pkts_as_dst']) for r in hosts))
    c.eq('hosts TSV: sum pkts_as_src', PACKETS, sum(int(r['pkts_as_src']) for r in hosts))
    c.done()
    sub = [(r['dst_prefix'], int(r['pkts']), int(r['bytes_cap(frame.cap_len)'])) for r in subnets]
    hst = {harness.canon_addr(r['host']): (int(r['pkts_as_dst']), int(r['bytes_as_dst_wire']),
                                          int(r['pkts_as_src']), int(r['bytes_as_src_wire']))
           for r in hosts}
    return sub, hst, exp


def test_example(h):
    sub, hst, exp = load_expected(h)
    nets = [ipaddress.ip_network(p) for p, _, _ in sub]
    inside = {a: v for a, v in hst.items() if in_any(a, nets)}
    outside = sorted(set(hst) - set(inside))
    h.log('hosts TSV: %d hosts, %d inside the 17 subnets, outside: %s'
          % (len(hst), len(inside), outside or 'none'))
    # Subnet egress from the (complete) hosts TSV: packets whose source is in it.
    egress = {}
    for p, _, _ in sub:
        n = ipaddress.ip_network(p)
        egress[p] = (sum(v[2] for a, v in hst.items() if ipaddress.ip_address(a) in n),
                     sum(v[3] for a, v in hst.items() if ipaddress.ip_address(a) in n))
    # All sources and destinations are monitored iff every TSV host is inside.
    all_inside = not outside
    total_bytes = exp['counts']['bytes_cap']

    c = h.checker('example.pcap')
    with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                     'example.pcap') as d:
        s = d.wait_counts(PACKETS, total_bytes, 0)
        c.eq('ports[0].ipackets', PACKETS, s['ports'][0]['ipackets'])
        c.eq('ports[0].ibytes', total_bytes, s['ports'][0]['ibytes'])
        c.eq('sum(workers[].packets)', PACKETS, sum(w['packets'] for w in s['workers']))
        c.eq('parse_errors (all zero)', {k: 0 for k in s['parse_errors']}, s['parse_errors'])
        c.eq('totals.ingress packets', PACKETS, s['totals']['ingress']['packets'])
        c.eq('totals.ingress bytes', total_bytes, s['totals']['ingress']['bytes'])
        if all_inside:
            c.eq('totals.internal packets', PACKETS, s['totals']['internal']['packets'])
            c.eq('totals.external packets', 0, s['totals']['external']['packets'])

        subnets = by_prefix(d.get('/api/v1/subnets'))
        c.eq('subnets listed', sorted(p for p, _, _ in sub), sorted(subnets))
        for p, pkts, nbytes in sub:
            got = subnets.get(p)
            if got is None:
                c.fail('subnet %s missing from /api/v1/subnets' % p)
                continue
            c.eq('subnet %s ingress packets' % p, pkts, got['ingress']['packets'])
            c.eq('subnet %s ingress bytes' % p, nbytes, got['ingress']['bytes'])
            c.eq('subnet %s egress packets (hosts TSV)' % p, egress[p][0], got['egress']['packets'])
            c.eq('subnet %s egress bytes (hosts TSV)' % p, egress[p][1], got['egress']['bytes'])
        for p, pkts, nbytes in sub[:2]:
            one = d.get('/api/v1/subnets/' + p)
            c.eq('GET /api/v1/subnets/%s prefix' % p, p, one['prefix'])
            c.eq('GET /api/v1/subnets/%s ingress' % p, (pkts, nbytes),
                 (one['ingress']['packets'], one['ingress']['bytes']))

        hosts_doc = d.get('/api/v1/hosts?limit=10000')
        hosts = by_address(hosts_doc)
        c.eq('/api/v1/hosts total', len(inside), hosts_doc['total'])
        c.eq('/api/v1/hosts listed', len(inside), len(hosts_doc['hosts']))
        c.eq('set of hosts reported', sorted(inside), sorted(hosts))
        for a, (dp, db, sp, sb) in sorted(inside.items()):
            got = hosts.get(a)
            if got is None:
                c.fail('host %s missing from /api/v1/hosts' % a)
                continue
            c.eq('host %s ingress (packets, bytes)' % a, (dp, db),
                 (got['ingress']['packets'], got['ingress']['bytes']))
            c.eq('host %s egress (packets, bytes)' % a, (sp, sb),
                 (got['egress']['packets'], got['egress']['bytes']))
            c.eq('host %s subnet' % a, True,
                 ipaddress.ip_address(a) in ipaddress.ip_network(got['subnet']))

        for a in ('10.0.0.6', '212.199.202.9', '10.0.0.255'):
            if a not in inside:
                continue
            one = d.get('/api/v1/hosts/' + a)
            dp, db, sp, sb = inside[a]
            c.eq('GET /api/v1/hosts/%s address' % a, a, one['address'])
            c.eq('GET /api/v1/hosts/%s ingress' % a, (dp, db),
                 (one['ingress']['packets'], one['ingress']['bytes']))
            c.eq('GET /api/v1/hosts/%s egress' % a, (sp, sb),
                 (one['egress']['packets'], one['egress']['bytes']))

        # Top 5 by ingress bytes, and by egress packets; the API breaks ties
        # by address, so the expected order does too.
        for q, key in (('sort=bytes&direction=ingress&limit=5', 1),
                       ('sort=packets&direction=egress&limit=5', 2)):
            ranked = sorted(inside, key=lambda a: (-inside[a][key], ipaddress.ip_address(a)))
            got = [x['address'] for x in d.get('/api/v1/hosts?' + q)['hosts']]
            c.eq('/api/v1/hosts?%s order' % q, ranked[:5], got)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
        # A plain-HTTP start passes libmicrohttpd no TLS option (it would
        # warn of one given without MHD_USE_TLS).
        mhd = [ln for ln in d.log_tail(1 << 20).splitlines() if 'MHD' in ln]
        c.eq('libmicrohttpd warnings in the log', [], mhd)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
