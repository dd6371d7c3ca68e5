#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The analytics counters (fragments, SYNs, flows, averages) on real
captures, against independent expectations.

- pcapplusplus/example.pcap: tshark counted 65 frames with SYN set and ACK
  clear (expected JSON counts.frames_tcp_syn_only) and 271 distinct
  unidirectional 5-tuples (counts.outer_flows_unidir). With every address
  monitored, totals.ingress sees every packet, so its tcp_syn must be 65
  and its flows (one interval holds the whole file: the merge interval is
  longer than the replay) within 2 % of 271; the next interval has 0.
- The two suricata-verify defrag captures (IPv4 and IPv6 fragments, VLAN):
  totals' fragments equal ip_stats.fragments; hosts sum to their subnet and
  subnets to the totals for fragments and tcp_syn; hosts report flows and
  peers, and on example.pcap their ingress flows add up to the 271.
- GET /api/v1/history ends with the snapshot's own point.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ALL = [('0.0.0.0/1', 'v4lo'), ('128.0.0.0/1', 'v4hi'), ('::/1', 'v6lo'), ('8000::/1', 'v6hi')]
EXAMPLE = ('pcaps', 'pcapplusplus', 'example.pcap')
DEFRAG = [('pcaps', 'suricata-verify', 'defrag', 'bug-6887-defrag-eth-vlan-ipv4-tcp-syn',
           'frag-eth-vlan-ip-tcp-syn.pcap'),
          ('pcaps', 'suricata-verify', 'defrag', 'bug-6887-defrag-eth-vlan-ipv6-tcp',
           'frag-eth-vlan-ipv6-tcp.pcap')]


def check_sums(c, d, s, what):
    """Hosts sum to their subnet, subnets to the totals (fragments, tcp_syn)."""
    subnets = d.get('/api/v1/subnets')['subnets']
    hosts = d.get('/api/v1/hosts?limit=10000')['hosts']
    for kind in ('fragments', 'tcp_syn'):
        for dirn in ('ingress', 'egress'):
            for sn in subnets:
                mine = [h for h in hosts if h['subnet'] == sn['prefix']]
                c.eq('%s: %s %s %s: sum of hosts' % (what, sn['prefix'], dirn, kind),
                     (sn[dirn][kind]['packets'], sn[dirn][kind]['bytes']),
                     (sum(h[dirn][kind]['packets'] for h in mine),
                      sum(h[dirn][kind]['bytes'] for h in mine)))
            c.eq('%s: totals.%s.%s: sum of subnets' % (what, dirn, kind),
                 s['totals'][dirn][kind]['packets'],
                 sum(sn[dirn][kind]['packets'] for sn in subnets))
    c.eq('%s: hosts report flows and peers (integers >= 0)' % what, [True] * len(hosts),
         [all(isinstance(h[dirn][k], int) and h[dirn][k] >= 0
              for dirn in ('ingress', 'egress') for k in ('flows', 'peers')) for h in hosts])
    return hosts


def test_example_syn_and_flows(h):
    exp = harness.load_json(h.td('expected', 'pcapplusplus', 'example.pcap.json'))['counts']
    c = h.checker('example.pcap analytics')
    with h.dpmon_run([h.td(*EXAMPLE)], ALL, 'example.pcap analytics',
                     merge_interval_ms=3000) as d:
        # The first snapshot (3 s after start) holds the whole file, which
        # the PMD delivers at once; flows are per interval, so read that one.
        deadline = time.monotonic() + 20
        status, _, s = d.request('/api/v1/summary')
        while status != 200 and time.monotonic() < deadline:
            time.sleep(0.05)
            status, _, s = d.request('/api/v1/summary')
        c.eq('first snapshot', (200, 1), (status, s.get('snapshot_seq')))
        c.eq('first snapshot holds the whole file', exp['frames'],
             sum(w['packets'] for w in s['workers']))
        c.eq('totals.ingress.tcp_syn.packets (tshark frames_tcp_syn_only)',
             exp['frames_tcp_syn_only'], s['totals']['ingress']['tcp_syn']['packets'])
        c.eq('ip_stats.tcp_syn', exp['frames_tcp_syn_only'], s['ip_stats']['tcp_syn'])
        flows = s['totals']['ingress']['flows']
        h.log('flows: %s, tshark outer_flows_unidir %d' % (flows, exp['outer_flows_unidir']))
        c.eq('totals.ingress.flows within 2 %% of %d' % exp['outer_flows_unidir'], True,
             abs(flows - exp['outer_flows_unidir']) <= 0.02 * exp['outer_flows_unidir'])
        c.eq('totals.internal.flows (not measured)', None, s['totals']['internal']['flows'])
        hosts = check_sums(c, d, s, 'example.pcap')
        # Every flow has one destination host (all addresses monitored): the
        # hosts' ingress flows add up to the flows, each host's estimate
        # exact or within its bitmap's error (docs/architecture.md).
        fsum = sum(x['ingress']['flows'] for x in hosts)
        h.log('sum of hosts\' ingress flows: %d' % fsum)
        c.eq('sum of hosts\' ingress flows within 5 %% of %d' % exp['outer_flows_unidir'], True,
             abs(fsum - exp['outer_flows_unidir']) <= 0.05 * exp['outer_flows_unidir'])
        hist = d.get('/api/v1/history')
        c.eq('history: last point is this snapshot', hist['snapshot_seq'], hist['points'][-1]['seq'])
        c.eq('history: subnets', [p for p, _ in ALL], hist['subnets'])
        # Next interval: no traffic, no flows.
        deadline = time.monotonic() + 15
        nxt = d.get('/api/v1/summary')
        while nxt['snapshot_seq'] == s['snapshot_seq'] and time.monotonic() < deadline:
            time.sleep(0.2)
            nxt = d.get('/api/v1/summary')
        c.eq('next interval: a new snapshot', True, nxt['snapshot_seq'] > s['snapshot_seq'])
        c.eq('next interval: flows', 0, nxt['totals']['ingress']['flows'])
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_defrag_fragments(h):
    for path in DEFRAG:
        recs = harness.pcap_records(h.td(*path))
        name = path[-1]
        c = h.checker(name)
        with h.dpmon_run([h.td(*path)], ALL, name) as d:
            s = d.wait_counts(len(recs), sum(cl for cl, _ in recs), 0)
            frags = s['ip_stats']['fragments']
            c.eq('%s: has fragments' % name, True, frags > 0)
            c.eq('%s: totals.ingress.fragments == ip_stats.fragments' % name, frags,
                 s['totals']['ingress']['fragments']['packets'])
            c.eq('%s: totals.ingress.tcp_syn == ip_stats.tcp_syn' % name, s['ip_stats']['tcp_syn'],
                 s['totals']['ingress']['tcp_syn']['packets'])
            check_sums(c, d, s, name)
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
        c.done()


if __name__ == '__main__':
    harness.main(globals())
