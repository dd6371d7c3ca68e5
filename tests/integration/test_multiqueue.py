#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""One port with two RX queues (the pcap PMD opens one rx_pcap per queue),
read once by one worker lcore and once by two.

Both queues replay pcapplusplus/example.pcap, so in the two-worker run
every host is counted by both workers and the merge has to add them up.
Checked:
  - both runs: every subnet's ingress equals twice the benchmark TSV;
  - the full /api/v1/subnets and /api/v1/hosts?limit=10000 (packets and
    bytes of every direction and protocol; rates ignored) are identical
    between the two runs;
  - in the two-worker run the queues are dealt one per worker, so each
    worker counts exactly one copy of the file (4631 packets).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LCORES_ONE_WORKER, LCORES_TWO_WORKERS  # noqa: E402

PACKETS = 4631


def counts_view(subnets_doc, hosts_doc):
    subnets = {s['prefix']: {d: harness.counts_of(s[d]) for d in harness.DIRS}
               for s in subnets_doc['subnets']}
    hosts = {x['address']: {'subnet': x['subnet'],
                            **{d: harness.counts_of(x[d]) for d in harness.DIRS}}
             for x in hosts_doc['hosts']}
    return subnets, hosts, hosts_doc['total']


def run(h, c, sub, lcores, label):
    pcap = h.td('pcaps', 'pcapplusplus', 'example.pcap')
    subnets = [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)]
    with h.dpmon_run([pcap, pcap], subnets, label, lcores=lcores) as d:
        s = d.wait_counts(2 * PACKETS)
        c.eq('%s: ports[0].ipackets' % label, 2 * PACKETS, s['ports'][0]['ipackets'])
        c.eq('%s: ports[0].rx_queues' % label, 2, s['ports'][0]['rx_queues'])
        workers = [w['packets'] for w in s['workers']]
        c.note('%s: workers %s' % (label, [(w['lcore'], w['packets']) for w in s['workers']]))
        view = counts_view(d.get('/api/v1/subnets'), d.get('/api/v1/hosts?limit=10000'))
        for p, pkts, nbytes in sub:
            got = view[0].get(p)
            c.eq('%s: subnet %s ingress (packets, bytes) == 2 x TSV' % (label, p),
                 (2 * pkts, 2 * nbytes),
                 got and (got['ingress']['packets'], got['ingress']['bytes']))
        c.eq('%s: dpmon exit status after SIGTERM' % label, 0, d.stop())
    return view, workers


def test_one_vs_two_workers(h):
    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    sub = [(r['dst_prefix'], int(r['pkts']), int(r['bytes_cap(frame.cap_len)'])) for r in rows]
    c = h.checker('multiqueue')
    one, w1 = run(h, c, sub, LCORES_ONE_WORKER, '1 worker')
    two, w2 = run(h, c, sub, LCORES_TWO_WORKERS, '2 workers')
    c.eq('1 worker: workers[].packets', [2 * PACKETS], w1)
    c.eq('2 workers: workers[].packets (one queue = one copy of the file each)',
         [PACKETS, PACKETS], w2)
    c.true('2 workers: every worker counted packets', len(w2) == 2 and all(n > 0 for n in w2))
    c.eq('/api/v1/subnets set', sorted(one[0]), sorted(two[0]))
    for p in sorted(set(one[0]) & set(two[0])):
        c.eq('subnet %s: 2 workers == 1 worker' % p, one[0][p], two[0][p])
    c.eq('/api/v1/hosts total', one[2], two[2])
    c.eq('/api/v1/hosts set', sorted(one[1]), sorted(two[1]))
    for a in sorted(set(one[1]) & set(two[1])):
        c.eq('host %s: 2 workers == 1 worker' % a, one[1][a], two[1][a])
    c.done()


if __name__ == '__main__':
    harness.main(globals())
