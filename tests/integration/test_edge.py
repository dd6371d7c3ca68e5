#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The one-packet edge cases of pcaps/edge/ (README table) through dpmon,
monitoring 10.1.0.0/16 and 2001:db8:1::/48 as the README prescribes.

Every file: dpmon exits 0, ipackets 1, ibytes = the README's byte count,
parse accounting complete. Then the README's "what a correct analyzer
does", in full:
  d01 d02 d03 d04 d07 d09 d11 d16  ingress 1 packet / all bytes to the
                               README's host, protocol class as stated,
                               nothing else (d04: MPLS, d09: Hop-by-Hop
                               walked);
  d05 d06                      IPv4 fragments counted by IP protocol (UDP)
                               and in ip_stats.fragments (d05 non-first: no
                               ports; d06 first: ports 1111->2222 — ports
                               are not in the API, test_parse checks them);
  d10                          GRE, decap off: outer destination 10.1.0.10,
                               class other (GRE is not TCP/UDP/ICMP);
                               decap on (a second run): inner destination
                               10.1.0.110, UDP, ip_stats.decapsulated 1;
  d11                          the SYN in ip_stats.tcp_syn;
  d17                          10.1.0.17 -> 10.1.0.18: egress of .17,
                               ingress of .18, totals.internal 1;
  d12 d13 d14 d19              counted as the stated parse error, no subnet
                               or host counted.
Counted packets carry no anomaly; ip_stats are 0 unless stated.
One dpmon per run, two at a time.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LCORES_ONE_WORKER, LCORES_ONE_WORKER_ALT, TestFailure  # noqa: E402

SUBNETS = [('10.1.0.0/16', 'edge-v4'), ('2001:db8:1::/48', 'edge-v6')]
V4, V6 = SUBNETS[0][0], SUBNETS[1][0]

# file stem -> what a correct analyzer counts (from the README table).
#   ingress: (destination host, its subnet, protocol class or None = not asserted)
#   exact:   True when no other host/subnet/total may be counted
#   errors:  {reason or (reason, reason): count} with every other reason 0
EXPECT = {
    'd01_vlan_8100_udp': {'ingress': ('10.1.0.1', V4, 'udp'), 'exact': True},
    'd02_qinq_88a8_8100_udp': {'ingress': ('10.1.0.2', V4, None), 'exact': True},
    'd03_double_8100_udp': {'ingress': ('10.1.0.3', V4, None), 'exact': True},
    'd04_mpls_udp': {'ingress': ('10.1.0.4', V4, 'udp'), 'exact': True},
    'd05_ipv4_nonfirst_frag_udp': {'ingress': ('10.1.0.5', V4, 'udp'), 'exact': True,
                                   'ip_stats': {'fragments': 1}},
    'd06_ipv4_first_frag_udp': {'ingress': ('10.1.0.6', V4, 'udp'), 'exact': True,
                                'ip_stats': {'fragments': 1}},
    'd07_ipv6_udp': {'ingress': ('2001:db8:1::7', V6, 'udp'), 'exact': True},
    'd09_ipv6_hopbyhop_udp': {'ingress': ('2001:db8:1::9', V6, 'udp'), 'exact': True},
    'd10_gre_ipv4_in_ipv4': {'ingress': ('10.1.0.10', V4, 'other'), 'exact': True},
    'd11_tcp_syn': {'ingress': ('10.1.0.11', V4, 'tcp'), 'exact': True,
                    'ip_stats': {'tcp_syn': 1}},
    'd12_ipv4_ihl2': {'errors': {'ipv4_bad_header': 1}},
    'd13_runt_eth_only': {'errors': {('runt', 'ipv4_truncated'): 1}},
    'd14_arp': {'errors': {'non_ip': 1}},
    'd16_icmp_echo': {'ingress': ('10.1.0.16', V4, 'icmp'), 'exact': True},
    'd17_internal_10_to_10': {'internal': ('10.1.0.17', '10.1.0.18', V4)},
    'd19_ipv4_truncated_ihl15': {'errors': {'ipv4_truncated': 1}},
}

# The same files with "decap": true, where the README says what changes.
EXPECT_DECAP = {
    'd10_gre_ipv4_in_ipv4': {'ingress': ('10.1.0.110', V4, 'udp'), 'exact': True,
                             'ip_stats': {'decapsulated': 1}},
}


# What AddressSanitizer, LeakSanitizer and UBSan print (a sanitizer build).
SANITIZER_MARKERS = ('ERROR: AddressSanitizer', 'ERROR: LeakSanitizer', 'runtime error:',
                     'SUMMARY: UndefinedBehaviorSanitizer')


def readme_table(h):
    """{file stem: frame bytes} from the README's edge-case table."""
    out = {}
    with open(h.td('README.md'), encoding='utf-8') as f:
        for line in f:
            m = re.match(r'\|\s*(d\d\d_\w+)\s*\|\s*(\d+)\s*\|', line)
            if m:
                out[m.group(1)] = int(m.group(2))
    return out


def check_dir(c, what, got, pkts, nbytes, proto=None):
    c.eq('%s (packets, bytes)' % what, (pkts, nbytes), (got['packets'], got['bytes']))
    if proto is not None:
        c.eq('%s.%s (packets, bytes)' % (what, proto), (pkts, nbytes),
             (got[proto]['packets'], got[proto]['bytes']))


def run_edge(h, stem, nbytes, lcores, decap=False):
    lines = []
    label = stem + (' (decap)' if decap else '')
    c = h.checker(label, lines)
    e = (EXPECT_DECAP if decap else EXPECT)[stem]
    extra = {'ports': [{'device': 'net_pcap0', 'rx_queues': 1, 'decap': True}]} if decap else None
    with h.dpmon_run([h.td('pcaps', 'edge', stem + '.pcap')], SUBNETS, label, lcores=lcores,
                     extra_config=extra) as d:
        s = d.wait_counts(1, nbytes, 0, stall=2.0)
        port, t, pe = s['ports'][0], s['totals'], s['parse_errors']
        c.eq('ports[0].ipackets', 1, port['ipackets'])
        c.eq('ports[0].ibytes (README bytes)', nbytes, port['ibytes'])
        c.eq('sum(workers[].packets)', 1, sum(w['packets'] for w in s['workers']))
        # Each IP packet is in exactly one of internal, external, or
        # ingress/egress only, so IP packets = ingress + egress - internal + external.
        ip = (t['ingress']['packets'] + t['egress']['packets'] - t['internal']['packets']
              + t['external']['packets'])
        c.eq('sum(parse_errors) + IP packets', 1, sum(pe.values()) + ip)
        c.eq('anomalies (all zero)', {k: 0 for k in s['anomalies']}, s['anomalies'])
        want = {k: 0 for k in s['ip_stats']}
        want.update(e.get('ip_stats', {}))
        c.eq('ip_stats', want, s['ip_stats'])
        subnets = harness.by_prefix(d.get('/api/v1/subnets'))
        hosts_doc = d.get('/api/v1/hosts?limit=10000')
        hosts = harness.by_address(hosts_doc)

        if 'errors' in e:
            want = {k: 0 for k in pe}
            got = dict(pe)
            for reasons, n in e['errors'].items():
                if isinstance(reasons, tuple):
                    c.eq('parse_errors %s' % ' + '.join(reasons), n, sum(pe[r] for r in reasons))
                    for r in reasons:
                        del want[r], got[r]
                else:
                    want[reasons] = n
            c.eq('parse_errors', want, got)
            for k in harness.TOTALS:
                c.eq('totals.%s packets' % k, 0, t[k]['packets'])
            for p, sn in sorted(subnets.items()):
                for dr in harness.DIRS:
                    c.eq('subnet %s %s packets' % (p, dr), 0, sn[dr]['packets'])
            c.eq('hosts total', 0, hosts_doc['total'])

        if 'ingress' in e:
            addr, net, proto = e['ingress']
            c.eq('parse_errors (all zero)', {k: 0 for k in pe}, pe)
            g = hosts.get(addr)
            if g is None:
                c.fail('host %s not reported (hosts: %s)' % (addr, sorted(hosts)))
            else:
                check_dir(c, 'host %s ingress' % addr, g['ingress'], 1, nbytes, proto)
                one = d.get('/api/v1/hosts/' + addr)
                check_dir(c, 'GET /api/v1/hosts/%s ingress' % addr, one['ingress'], 1, nbytes,
                          proto)
                check_dir(c, 'host %s egress' % addr, g['egress'], 0, 0)
            if e['exact']:
                check_dir(c, 'subnet %s ingress' % net, subnets[net]['ingress'], 1, nbytes, proto)
                for p, sn in sorted(subnets.items()):
                    check_dir(c, 'subnet %s egress' % p, sn['egress'], 0, 0)
                    if p != net:
                        check_dir(c, 'subnet %s ingress' % p, sn['ingress'], 0, 0)
                c.eq('hosts reported', [addr], sorted(hosts))
                check_dir(c, 'totals.ingress', t['ingress'], 1, nbytes, proto)
                for k in ('egress', 'internal', 'external'):
                    c.eq('totals.%s packets' % k, 0, t[k]['packets'])

        if 'internal' in e:
            src, dst, net = e['internal']
            c.eq('parse_errors (all zero)', {k: 0 for k in pe}, pe)
            c.eq('hosts reported', sorted([src, dst]), sorted(hosts))
            if src in hosts and dst in hosts:
                check_dir(c, 'host %s egress' % src, hosts[src]['egress'], 1, nbytes)
                check_dir(c, 'host %s ingress' % src, hosts[src]['ingress'], 0, 0)
                check_dir(c, 'host %s ingress' % dst, hosts[dst]['ingress'], 1, nbytes)
                check_dir(c, 'host %s egress' % dst, hosts[dst]['egress'], 0, 0)
            check_dir(c, 'subnet %s ingress' % net, subnets[net]['ingress'], 1, nbytes)
            check_dir(c, 'subnet %s egress' % net, subnets[net]['egress'], 1, nbytes)
            for k in ('ingress', 'egress', 'internal'):
                check_dir(c, 'totals.%s' % k, t[k], 1, nbytes)
            c.eq('totals.external packets', 0, t['external']['packets'])

        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
        log = d.log_tail(1 << 20)
        c.true('no sanitizer report in dpmon\'s output',
               not any(m in log for m in SANITIZER_MARKERS), log[-2000:])
    return lines, c


def test_edge(h):
    table = readme_table(h)
    files = sorted(f[:-5] for f in os.listdir(h.td('pcaps', 'edge')) if f.endswith('.pcap'))
    c = h.checker('edge')
    c.eq('edge files on disk == README table', sorted(table), files)
    c.eq('edge files covered by this test', sorted(EXPECT), files)
    for stem in files:
        if stem not in table:
            raise TestFailure('pcaps/edge/%s.pcap is not in the README table' % stem)
        recs = harness.pcap_records(h.td('pcaps', 'edge', stem + '.pcap'))
        c.eq('%s: records, captured bytes (pcap headers) == README' % stem, [(table[stem])],
             [cl for cl, _ in recs])

    def job(i, stem, decap):
        lcores = LCORES_ONE_WORKER if i % 2 == 0 else LCORES_ONE_WORKER_ALT
        return lambda: run_edge(h, stem, table[stem], lcores, decap)

    runs = [(s, False) for s in files if s in EXPECT] + [(s, True) for s in sorted(EXPECT_DECAP)]
    for x in harness.run_parallel([job(i, s, dc) for i, (s, dc) in enumerate(runs)]):
        c.merge(x)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
