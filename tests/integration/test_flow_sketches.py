#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`"flow_sketches": false` (docs/configuration.md): the workers skip the
distinct flows and peers, and nothing else changes.

- pcapplusplus/example.pcap, every address monitored, once with the key
  absent (default true) and once with false: the totals, every subnet and
  every host have the same packets and bytes in both runs (by direction and
  protocol, fragments and tcp_syn), and the totals equal the capture's
  expected frames and bytes (tshark); with false every "flows" and "peers"
  of the totals, subnets and hosts is null; with true they are numbers.
- --check-config: `"flow_sketches": "no"` is the wrong type, and false
  with a "flows" threshold (global, subnet, hostgroup) names each one.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

ALL = [('0.0.0.0/1', 'v4lo'), ('128.0.0.0/1', 'v4hi'), ('::/1', 'v6lo'), ('8000::/1', 'v6hi')]
EXAMPLE = ('pcaps', 'pcapplusplus', 'example.pcap')
KINDS = ('tcp', 'udp', 'icmp', 'other', 'fragments', 'tcp_syn')


def counts_total(t):
    """Packets and bytes of one direction object, in all and by kind."""
    return [(t['packets'], t['bytes'])] + [(t[k]['packets'], t[k]['bytes']) for k in KINDS]


def counts(obj):
    """Packets and bytes of an object with ingress and egress directions."""
    return [counts_total(obj[d]) for d in ('ingress', 'egress')]


def distinct(obj):
    """Its flows and peers, by direction."""
    return [obj[d].get(k) for d in ('ingress', 'egress') for k in ('flows', 'peers')
            if k in obj[d]]


def run(h, c, exp, flow_sketches):
    extra = None if flow_sketches is None else {'flow_sketches': flow_sketches}
    label = 'flow_sketches %s' % ('absent' if flow_sketches is None else flow_sketches)
    with h.dpmon_run([h.td(*EXAMPLE)], ALL, label, extra_config=extra) as d:
        s = d.wait_counts(exp['frames'])
        subnets = d.get('/api/v1/subnets')['subnets']
        hosts = d.get('/api/v1/hosts?limit=10000')['hosts']
        c.eq('%s: totals.ingress packets (tshark frames)' % label, exp['frames'],
             s['totals']['ingress']['packets'])
        c.eq('%s: totals.ingress bytes (tshark bytes_wire)' % label, exp['bytes_wire'],
             s['totals']['ingress']['bytes'])
        c.eq('%s: hosts (tshark distinct_outer_hosts)' % label, exp['distinct_outer_hosts'],
             len(hosts))
        c.eq('%s: dpmon exit status after SIGTERM' % label, 0, d.stop())
    return s, subnets, hosts


def test_counts_unchanged(h):
    exp = harness.load_json(h.td('expected', 'pcapplusplus', 'example.pcap.json'))['counts']
    c = h.checker('flow_sketches')
    s_on, sub_on, hosts_on = run(h, c, exp, None)
    s_off, sub_off, hosts_off = run(h, c, exp, False)
    for t in ('ingress', 'egress', 'internal', 'external'):
        c.eq('totals.%s: same counts' % t, counts_total(s_on['totals'][t]),
             counts_total(s_off['totals'][t]))
    c.eq('subnets: same counts', [(x['prefix'], counts(x)) for x in sub_on],
         [(x['prefix'], counts(x)) for x in sub_off])
    key = lambda x: x['address']  # noqa: E731
    c.eq('hosts: same counts', [(x['address'], counts(x)) for x in sorted(hosts_on, key=key)],
         [(x['address'], counts(x)) for x in sorted(hosts_off, key=key)])
    # On: measured (numbers; the internal and external totals have none).
    c.eq('on: totals.ingress.flows is a number', True,
         isinstance(s_on['totals']['ingress']['flows'], int))
    c.eq('on: hosts\' flows and peers are numbers', True,
         all(isinstance(v, int) for x in hosts_on for v in distinct(x)))
    c.eq('on: subnets\' flows are numbers', True,
         all(isinstance(x[d]['flows'], int) for x in sub_on for d in ('ingress', 'egress')))
    # Off: null everywhere.
    c.eq('off: totals flows and peers null', [None] * 8,
         [s_off['totals'][t].get(k) for t in ('ingress', 'egress', 'internal', 'external')
          for k in ('flows', 'peers')])
    c.eq('off: subnets\' flows null', [None] * (2 * len(sub_off)),
         [x[d]['flows'] for x in sub_off for d in ('ingress', 'egress')])
    c.eq('off: hosts\' flows and peers null', [None] * (4 * len(hosts_off)),
         [v for x in hosts_off for v in distinct(x)])
    c.done()


GOOD = {
    'ports': [{'device': 'net_pcap0', 'rx_queues': 1}],
    'subnets': [{'prefix': '10.0.0.0/24'}, {'prefix': '10.0.1.0/24'}],
    'http': {'listen': '127.0.0.1', 'port': 0},
}


def check_config(h, tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        json.dump(doc, f)
    p = subprocess.run([h.dpmon, '--check-config', path], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    return p.returncode, (p.stdout + p.stderr).decode('utf-8', 'replace')


def test_check_config(h):
    c = h.checker('flow_sketches --check-config')
    with tempfile.TemporaryDirectory() as tmp:
        rc, out = check_config(h, tmp, 'off.json', dict(GOOD, flow_sketches=False))
        c.eq('false alone: valid', (0, True), (rc, ': valid (' in out))
        rc, out = check_config(h, tmp, 'type.json', dict(GOOD, flow_sketches='no'))
        c.eq('a string: exit non-zero', True, rc != 0)
        c.eq('a string: "$.flow_sketches" wrong type', True,
             any('$.flow_sketches' in ln and 'wrong type' in ln for ln in out.splitlines()))
        doc = dict(GOOD, flow_sketches=False, detection={
            'thresholds': {'ingress': {'flows': 1000}},
            'hostgroups': [{'name': 'g', 'prefixes': ['10.0.0.0/25'],
                            'thresholds': {'egress': {'flows': 50}}}]})
        doc['subnets'] = [{'prefix': '10.0.0.0/24',
                           'thresholds': {'ingress': {'flows': 10}}},
                          {'prefix': '10.0.1.0/24'}]
        rc, out = check_config(h, tmp, 'flows.json', doc)
        c.eq('flows thresholds: exit non-zero', True, rc != 0)
        for path, word in (('$.detection.thresholds', 'ingress.flows'),
                           ('$.subnets[0].thresholds', 'ingress.flows'),
                           ('$.detection.hostgroups[0].thresholds', 'egress.flows')):
            c.eq('flows thresholds: %s names %s' % (path, word), True,
                 any(path + ':' in ln and word in ln and 'flow_sketches' in ln
                     for ln in out.splitlines()))
        doc['flow_sketches'] = True
        rc, out = check_config(h, tmp, 'flows-on.json', doc)
        c.eq('the same thresholds with true: valid', (0, True), (rc, ': valid (' in out))
    c.done()


if __name__ == '__main__':
    harness.main(globals())
