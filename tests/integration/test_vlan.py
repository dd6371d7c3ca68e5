#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""zeek/http-vlan-0.pcap (one 802.1Q tag) and zeek/http-qinq-0.pcap (the
same 14 packets with two tags) against expected/zeek/<file>.json.

Monitored subnets: the file's outer_dst_ipv4_24 prefixes. Per subnet the
ingress packets/bytes must equal pkts/bytes_cap. Hosts (outer_hosts, wire
bytes) are compared too, which is exact because counts.bytes_wire ==
bytes_cap for both files (checked). Finally the QinQ run must count what
the VLAN run counts plus 4 bytes per packet, in every subnet, host,
direction and protocol.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LCORES_ONE_WORKER, LCORES_ONE_WORKER_ALT, by_address, by_prefix  # noqa: E402

FILES = ('http-vlan-0.pcap', 'http-qinq-0.pcap')


def run_one(h, name, lcores):
    exp = harness.load_json(h.td('expected', 'zeek', name + '.json'))
    lines = []
    c = h.checker(name, lines)
    rows = exp['outer_dst_ipv4_24']
    subnets = [(r['prefix'], 'n%d' % i) for i, r in enumerate(rows)]
    pkts, nbytes = exp['counts']['frames'], exp['counts']['bytes_cap']
    wire_is_cap = exp['counts']['bytes_wire'] == exp['counts']['bytes_cap']
    c.true('expected counts.bytes_wire == bytes_cap (hosts comparable)', wire_is_cap)
    res = {}
    with h.dpmon_run([h.td('pcaps', 'zeek', name)], subnets, name, lcores=lcores) as d:
        s = d.wait_counts(pkts, nbytes, 0)
        c.eq('ports[0].ipackets', pkts, s['ports'][0]['ipackets'])
        c.eq('ports[0].ibytes', nbytes, s['ports'][0]['ibytes'])
        c.eq('sum(workers[].packets)', pkts, sum(w['packets'] for w in s['workers']))
        got = by_prefix(d.get('/api/v1/subnets'))
        for r in rows:
            g = got.get(r['prefix'])
            if g is None:
                c.fail('subnet %s missing' % r['prefix'])
                continue
            c.eq('subnet %s ingress packets' % r['prefix'], r['pkts'], g['ingress']['packets'])
            c.eq('subnet %s ingress bytes (bytes_cap)' % r['prefix'], r['bytes_cap'],
                 g['ingress']['bytes'])
        hosts = by_address(d.get('/api/v1/hosts?limit=10000'))
        c.eq('hosts reported', sorted(exp['outer_hosts']), sorted(hosts))
        if wire_is_cap:
            for a, e in sorted(exp['outer_hosts'].items()):
                g = hosts.get(a)
                if g is None:
                    continue
                c.eq('host %s ingress (packets, bytes)' % a, (e['dst_pkts'], e['dst_bytes_wire']),
                     (g['ingress']['packets'], g['ingress']['bytes']))
                c.eq('host %s egress (packets, bytes)' % a, (e['src_pkts'], e['src_bytes_wire']),
                     (g['egress']['packets'], g['egress']['bytes']))
        res['subnets'] = {p: {dr: harness.counts_of(v[dr]) for dr in harness.DIRS}
                          for p, v in got.items()}
        res['hosts'] = {a: {dr: harness.counts_of(v[dr]) for dr in harness.DIRS}
                        for a, v in hosts.items()}
        res['pkts'] = pkts
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    return lines, c, res


def plus4(dir_counts):
    out = {'packets': dir_counts['packets'],
           'bytes': dir_counts['bytes'] + 4 * dir_counts['packets']}
    for p in harness.PROTOS:
        x = dir_counts[p]
        out[p] = {'packets': x['packets'], 'bytes': x['bytes'] + 4 * x['packets']}
    return out


def test_vlan_and_qinq(h):
    out = {}

    def job(name, lcores):
        def run():
            lines, c, res = run_one(h, name, lcores)
            out[name] = res
            return lines, c
        return run

    checks = harness.run_parallel([job(FILES[0], LCORES_ONE_WORKER),
                                   job(FILES[1], LCORES_ONE_WORKER_ALT)])
    c = h.checker('qinq vs vlan')
    for x in checks:
        c.merge(x)
    v, q = out.get(FILES[0]), out.get(FILES[1])
    if v and q:
        c.eq('packets in the two files', v['pkts'], q['pkts'])
        for kind in ('subnets', 'hosts'):
            c.eq('%s reported' % kind, sorted(v[kind]), sorted(q[kind]))
            for key in sorted(set(v[kind]) & set(q[kind])):
                for dr in harness.DIRS:
                    c.eq('%s %s %s: qinq == vlan + 4 bytes/packet (all protocols)'
                         % (kind[:-1], key, dr), plus4(v[kind][key][dr]), q[kind][key][dr])
    c.done()


if __name__ == '__main__':
    harness.main(globals())
