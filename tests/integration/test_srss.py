#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Software RSS ("software_rss": true, lib/dataplane/distributor.h): one port with one
RX queue, read once by one worker lcore and once by a distributor lcore
feeding two worker lcores through rte_rings.

Lcores share the two CPUs: --lcores '0@0,1@1,2@1,3@0' (main 0, distributor
1, workers 2 and 3), so a worker often waits for its CPU; the distributor
must then wait for ring room rather than drop.

Checked, on pcapplusplus/example.pcap and on a dpmon-gen capture (20 000
packets, 300 peers, IPv4 and IPv6, a VLAN tag):
  - the merged /api/v1/summary totals, the full /api/v1/subnets and
    /api/v1/hosts?limit=10000 (packets and bytes of every direction and
    protocol; rates ignored) are identical to the single-worker run;
  - sum(workers[].packets) == the capture's packets, ports[0].imissed == 0
    (no packet dropped on a full ring), two workers listed;
  - on the dpmon-gen capture both workers counted packets (the hash spreads);
  - dpmon prints the distributor's totals at exit, with 0 dropped.
And: software_rss with only two lcores is refused with a clear message.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LCORES_ONE_WORKER, TestFailure  # noqa: E402

LCORES_SRSS = ['--lcores', '0@0,1@1,2@1,3@0']
SRSS = {'software_rss': True}


def view(d):
    s = d.summary()
    totals = {k: harness.counts_of(v) for k, v in s['totals'].items()}
    subnets = {x['prefix']: {dr: harness.counts_of(x[dr]) for dr in harness.DIRS}
               for x in d.get('/api/v1/subnets')['subnets']}
    hd = d.get('/api/v1/hosts?limit=10000')
    hosts = {x['address']: {'subnet': x['subnet'],
                            **{dr: harness.counts_of(x[dr]) for dr in harness.DIRS}}
             for x in hd['hosts']}
    return {'totals': totals, 'subnets': subnets, 'hosts': hosts, 'n_hosts': hd['total'],
            'parse_errors': s['parse_errors']}


def run(h, c, pcap, packets, subnets, label, lcores, extra):
    with h.dpmon_run([pcap], subnets, label, lcores=lcores, extra_config=extra) as d:
        s = d.wait_counts(packets)
        c.eq('%s: ports[0].ipackets' % label, packets, s['ports'][0]['ipackets'])
        c.eq('%s: ports[0].imissed (no ring drop)' % label, 0, s['ports'][0]['imissed'])
        workers = [w['packets'] for w in s['workers']]
        c.eq('%s: sum(workers[].packets)' % label, packets, sum(workers))
        c.note('%s: workers %s' % (label, [(w['lcore'], w['packets']) for w in s['workers']]))
        v = view(d)
        c.eq('%s: dpmon exit status after SIGTERM' % label, 0, d.stop())
        out = d.log_tail(20000)
    return v, workers, out


def compare(c, pcap, packets, subnets, h, spread):
    one, w1, _ = run(h, c, pcap, packets, subnets, '1 worker', LCORES_ONE_WORKER, None)
    srss, w2, out = run(h, c, pcap, packets, subnets, 'software RSS', LCORES_SRSS, SRSS)
    c.eq('software RSS: two workers', 2, len(w2))
    if spread:
        c.true('software RSS: both workers counted packets', all(n > 0 for n in w2),
               repr(w2))
    m = re.search(r'distributor lcore \d+: (\d+) packets, (\d+) dropped', out)
    c.true('software RSS: distributor totals printed at exit', m is not None, out[-500:])
    if m:
        c.eq('software RSS: distributor packets, dropped', (packets, 0),
             (int(m.group(1)), int(m.group(2))))
    c.eq('parse_errors', one['parse_errors'], srss['parse_errors'])
    c.eq('totals', one['totals'], srss['totals'])
    c.eq('subnets listed by one run only', [],
         sorted(set(one['subnets']) ^ set(srss['subnets'])))
    for p in sorted(set(one['subnets']) & set(srss['subnets'])):
        c.eq('subnet %s: software RSS == 1 worker' % p, one['subnets'][p], srss['subnets'][p])
    c.eq('/api/v1/hosts total', one['n_hosts'], srss['n_hosts'])
    c.eq('hosts listed by one run only', [],
         sorted(set(one['hosts']) ^ set(srss['hosts']))[:10])
    diff = [a for a in set(one['hosts']) & set(srss['hosts'])
            if one['hosts'][a] != srss['hosts'][a]]
    c.eq('hosts whose counts differ', [], sorted(diff)[:10])


def example(h):
    """pcapplusplus/example.pcap, its packet count and its destination subnets."""
    pcap = h.td('pcaps', 'pcapplusplus', 'example.pcap')
    packets = len(harness.pcap_records(pcap))
    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    return pcap, packets, [(r['dst_prefix'], 's%d' % i) for i, r in enumerate(rows)]


def test_example(h):
    pcap, packets, subnets = example(h)
    c = h.checker('srss example')
    compare(c, pcap, packets, subnets, h, spread=False)
    c.done()


def test_gen(h):
    c = h.checker('srss gen')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-srss-') as tmp:
        pcap = os.path.join(tmp, 'gen.pcap')
        argv = [h.dpmon_gen, '--output', pcap, '--summary', 'json', '--packets', '20000',
                '--seed', '5', '--subnet', '10.20.0.0/16=campus',
                '--subnet', '2001:db8:20::/48=campus-v6', '--hosts', '200', '--peers', '300',
                '--mix', 'tcp=4,udp=3,icmp=2,other=1', '--internal-percent', '20',
                '--egress-percent', '40', '--vlan', '100']
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        if p.returncode != 0:
            raise TestFailure('dpmon-gen failed: %s' % p.stderr.decode('utf-8', 'replace'))
        sm = json.loads(p.stdout.decode('utf-8'))
        subnets = [(s['prefix'], s['name']) for s in sm['subnets']]
        compare(c, pcap, sm['totals']['packets'], subnets, h, spread=True)
    c.done()


def test_too_few_lcores(h):
    c = h.checker('srss lcores')
    pcap = h.td('pcaps', 'pcapplusplus', 'example.pcap')
    d = harness.Dpmon(h, [pcap], [('10.0.0.0/8', 'a')], 'srss 2 lcores',
                      lcores=LCORES_ONE_WORKER, extra_config=SRSS)
    try:
        d.start()
        c.fail('dpmon started with software_rss and two lcores')
    except TestFailure as e:
        c.true('refused: names the three lcores needed',
               'software_rss needs a distributor lcore' in str(e), str(e)[-600:])
    finally:
        d.__exit__(None, None, None)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
