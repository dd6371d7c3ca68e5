#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""`dpmon --check-config FILE` (no EAL): the shipped config/dpmon.json and
config/dpmon-detection.json are valid (exit 0); broken files exit non-zero and name every problem by its
JSON path on a line of its own (docs/configuration.md, "Errors").
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

GOOD = {
    'ports': [{'device': 'net_pcap0', 'rx_queues': 1}],
    'subnets': [{'prefix': '10.0.0.0/24', 'name': 'office'},
                {'prefix': '10.0.1.0/24'},
                {'prefix': '2001:db8::/48'}],
    'http': {'listen': '127.0.0.1', 'port': 0},
}

# (label, mutation of GOOD, [(JSON path, word expected on the same line)])
BAD = [
    ('host bits set', lambda c: c['subnets'][1].update(prefix='10.0.1.1/24'),
     [('$.subnets[1].prefix', 'host bits')]),
    ('duplicate subnet', lambda c: c['subnets'].append({'prefix': '10.0.0.0/24'}),
     [('$.subnets[3].prefix', 'duplicate')]),
    ('duplicate IPv6 subnet, other spelling',
     lambda c: c['subnets'].append({'prefix': '2001:DB8:0::/48'}),
     [('$.subnets[3].prefix', 'duplicate')]),
    ('unknown key', lambda c: c['http'].update(foo=1), [('$.http.foo', 'unknown key')]),
    ('unknown top-level key', lambda c: c.update(bogus=True), [('$.bogus', 'unknown key')]),
    ('wrong type (string for integer)', lambda c: c['ports'][0].update(rx_queues='2'),
     [('$.ports[0].rx_queues', 'wrong type')]),
    ('wrong type (real for integer)', lambda c: c.update(merge_interval_ms=200.0),
     [('$.merge_interval_ms', 'wrong type')]),
    ('unknown metric', lambda c: c.update(detection={'thresholds': {'ingress': {'syn': 1}}}),
     [('$.detection.thresholds.ingress.syn', 'unknown metric')]),
    ('capture directory bound out of range',
     lambda c: c.update(actions={'pcap_max_files': 1000001, 'pcap_max_mb': -1}),
     [('$.actions.pcap_max_files', '0..1000000'), ('$.actions.pcap_max_mb', '0..1048576')]),
    ('prefix in two hostgroups', lambda c: c.update(detection={'hostgroups': [
        {'name': 'a', 'prefixes': ['10.0.0.0/25']},
        {'name': 'b', 'prefixes': ['10.0.0.0/25']}]}),
     [('$.detection.hostgroups[1].prefixes', 'duplicate prefix')]),
]


def check_config(h, path):
    p = subprocess.run([h.dpmon, '--check-config', path], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
    return p.returncode, (p.stdout + p.stderr).decode('utf-8', 'replace')


def write(tmp, name, doc):
    path = os.path.join(tmp, name)
    with open(path, 'w') as f:
        json.dump(doc, f)
    return path


def expect_errors(c, label, rc, out, wants):
    c.true('%s: exit status non-zero (got %d)' % (label, rc), rc != 0)
    lines = out.splitlines()
    for jpath, word in wants:
        hit = [l for l in lines if (jpath + ':') in l and word.lower() in l.lower()]
        c.true('%s: a line names %s with "%s"' % (label, jpath, word), bool(hit),
               'output was:\n' + out)


def test_check_config(h):
    c = h.checker('check-config')
    rc, out = check_config(h, os.path.join(h.source, 'config', 'dpmon.json'))
    c.eq('config/dpmon.json exit status (output %r)' % out.strip(), 0, rc)
    rc, out = check_config(h, os.path.join(h.source, 'config', 'dpmon-detection.json'))
    c.eq('config/dpmon-detection.json exit status (output %r)' % out.strip(), 0, rc)
    with tempfile.TemporaryDirectory(prefix='dpmon-it-cfg-') as tmp:
        rc, out = check_config(h, write(tmp, 'good.json', GOOD))
        c.eq('a minimal valid config exit status (output %r)' % out.strip(), 0, rc)
        for i, (label, mutate, wants) in enumerate(BAD):
            doc = json.loads(json.dumps(GOOD))
            mutate(doc)
            rc, out = check_config(h, write(tmp, 'bad%d.json' % i, doc))
            expect_errors(c, label, rc, out, wants)
        # All at once: every error is reported, not just the first.
        doc = json.loads(json.dumps(GOOD))
        for label, mutate, wants in BAD:
            if label in ('host bits set', 'duplicate subnet', 'unknown key',
                         'unknown top-level key', 'wrong type (string for integer)'):
                mutate(doc)
        rc, out = check_config(h, write(tmp, 'all.json', doc))
        expect_errors(c, 'all errors in one file', rc, out,
                      [w for label, _, ws in BAD for w in ws
                       if label in ('host bits set', 'duplicate subnet', 'unknown key',
                                    'unknown top-level key', 'wrong type (string for integer)')])
        # The example of docs/configuration.md, verbatim.
        doc = {
            'ports': [{'device': 'net_pcap0', 'rx_queues': '2'}],
            'subnets': [{'prefix': '10.0.0.0/24', 'name': 'office'}, {'prefix': '10.0.1.0/24'},
                        {'prefix': '10.0.2.1/24'}, {'prefix': '10.0.0.0/24'}],
            'http': {'port': 70000, 'foo': 1},
            'bogus': True,
        }
        rc, out = check_config(h, write(tmp, 'doc.json', doc))
        expect_errors(c, 'docs example', rc, out, [
            ('$.ports[0].rx_queues', 'wrong type'), ('$.subnets[2].prefix', 'host bits'),
            ('$.subnets[3].prefix', 'duplicate'), ('$.http.port', '65535'),
            ('$.http.foo', 'unknown key'), ('$.bogus', 'unknown key')])
        rc, out = check_config(h, os.path.join(tmp, 'missing.json'))
        c.true('missing file: exit status non-zero (got %d)' % rc, rc != 0)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
