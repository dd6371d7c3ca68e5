#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""docs/openapi.yaml: a valid OpenAPI 3.1 document that describes what a
running dpmon really answers.

tests/js/openapi_check.mjs validates the document with
@seriousme/openapi-schema-validator, then sends dpmon every kind of request
(successes, each error, HEAD, If-None-Match, CORS preflights) and checks
each status, Content-Type, required header and body against the document
with ajv (JSON Schema 2020-12) — see that file. dpmon runs on
pcapplusplus/example.pcap with a CORS origin configured, and a detection
threshold every host and every subnet with ingress traffic exceeds (live host
and subnet alerts); the checks
run three times: before any configuration reload (summary.config with
nulls), after one (SIGHUP, same file: numbers and booleans) and after a
refused one (summary.config.last_refusal an object); then, with the merge
held back (test hook, lib/run/hooks.c), the unhealthy /health (503) and
summary are checked too.
"""
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import jstools  # noqa: E402

PACKETS = 4631
ORIGIN = 'http://dashboard.example:8000'


def test_openapi(h):
    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    subnets = [(r['dst_prefix'], 's%d' % i) for i, r in enumerate(rows)] + [
        ('2001:db8:1::/48', 'v6')]
    c = h.checker('openapi')
    hooks = tempfile.mkdtemp(prefix='dpmon-it-openapi-')
    with h.dpmon_run([h.td('pcaps', 'pcapplusplus', 'example.pcap')], subnets, 'openapi',
                     extra_config={'http': {'listen': '127.0.0.1', 'port': 0,
                                            'cors_origins': [ORIGIN]},
                                   # Any host with traffic alerts: the document
                                   # is checked against live alerts too.
                                   # So does every subnet with traffic (subnet alerts).
                                   'detection': {'thresholds': {'ingress': {'pps': 0.001}},
                                                 'subnet_thresholds':
                                                     {'ingress': {'pps': 0.001}}},
                                   # No ExaBGP: the manual FlowSpec rule of the
                                   # checks is a dry run's (listed, not sent).
                                   'actions': {'flowspec': {'announce': False}}},
                     env={'DPMON_TEST_HOOKS': hooks}) as d:
        d.wait_counts(PACKETS)
        out = jstools.run_node(h, c, 'openapi_check.mjs', [
            '--spec', os.path.join(h.source, 'docs', 'openapi.yaml'),
            '--base', 'http://127.0.0.1:%d' % d.port, '--cors', ORIGIN])
        c.true('openapi_check.mjs ran its checks', ' checks, 0 failed' in out)
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while d.summary()['config']['reloads'] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        c.eq('summary.config.reloads after SIGHUP', 1, d.summary()['config']['reloads'])
        out = jstools.run_node(h, c, 'openapi_check.mjs', [
            '--spec', os.path.join(h.source, 'docs', 'openapi.yaml'),
            '--base', 'http://127.0.0.1:%d' % d.port, '--cors', ORIGIN])
        c.true('openapi_check.mjs ran its checks after a reload', ' checks, 0 failed' in out)
        # A refused reload: summary.config.last_refusal is an object.
        path = os.path.join(d.dir, 'dpmon.json')
        with open(path + '.tmp', 'w') as f:
            f.write('{"ports": [')
        os.rename(path + '.tmp', path)
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while d.summary()['config']['reload_refusals'] < 1 and time.monotonic() < deadline:
            time.sleep(0.05)
        c.eq('summary.config.last_refusal after a refused SIGHUP',
             {'file': path, 'errors': 1,
              'reason': "1:11: invalid JSON: ']' expected near end of file"},
             {k: v for k, v in (d.summary()['config']['last_refusal'] or {}).items()
              if k != 'unix_s'})
        out = jstools.run_node(h, c, 'openapi_check.mjs', [
            '--spec', os.path.join(h.source, 'docs', 'openapi.yaml'),
            '--base', 'http://127.0.0.1:%d' % d.port, '--cors', ORIGIN])
        c.true('openapi_check.mjs ran its checks after a refused reload',
               ' checks, 0 failed' in out)
        open(os.path.join(hooks, 'hold-merge'), 'w').close()
        deadline = time.monotonic() + 10
        while d.request('/health')[0] != 503 and time.monotonic() < deadline:
            time.sleep(0.05)
        out = jstools.run_node(h, c, 'openapi_check.mjs', [
            '--spec', os.path.join(h.source, 'docs', 'openapi.yaml'),
            '--base', 'http://127.0.0.1:%d' % d.port, '--unhealthy', '1'])
        c.true('openapi_check.mjs ran its checks with the merge held',
               ' checks, 0 failed' in out)
        os.unlink(os.path.join(hooks, 'hold-merge'))
        os.rmdir(hooks)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
