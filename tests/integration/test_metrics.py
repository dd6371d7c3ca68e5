#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""GET /metrics of a running dpmon: valid for Prometheus's own checker, and
equal to the JSON API for the same snapshot.

dpmon counts pcapplusplus/example.pcap (17 monitored /24s from the
benchmark TSV). Then, for one snapshot (the ETag of /metrics equals the
ETag of every API answer compared, and dpmon_snapshot_seq equals
snapshot_seq):
  - `promtool check metrics` (Debian package prometheus) accepts the text
    with no complaint at all (lint problems included);
  - every family has one HELP and one TYPE; counters end in _total;
  - totals, subnets, the top-N hosts, ports, workers, parse reasons, merge
    duration, uptime, hosts and subnets equal the API's numbers exactly
    (bytes per second x 8 == bps);
  - the per-host series are exactly the metrics.top_hosts hosts with the most
    bytes (ingress + egress), computed here from /api/v1/hosts;
  - Content-Type, Cache-Control and a 304 for the ETag.
Runs twice: metrics.top_hosts 5 and 0. Then with 65 536 subnets, the most a
configuration takes: the subnets metrics.top_subnets selects, promtool
again, exact series counts (test_metrics_65536_subnets).
"""
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import TestFailure  # noqa: E402

PACKETS = 4631
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)')


def promtool():
    path = shutil.which('promtool')
    if path is None:
        raise TestFailure('promtool not found: install the Debian package prometheus '
                          '(bash scripts/deps.sh does)')
    return path


def unescape(v):
    """A label value as written in the exposition format, unescaped."""
    out, i = [], 0
    while i < len(v):
        if v[i] == '\\' and i + 1 < len(v):
            out.append({'n': '\n'}.get(v[i + 1], v[i + 1]))
            i += 2
        else:
            out.append(v[i])
            i += 1
    return ''.join(out)


def parse_metrics(text, c):
    """{(name, frozenset(labels)): float}, {name: type}; checks the structure."""
    samples, types, helps, order = {}, {}, {}, []
    for line in text.splitlines():
        if line.startswith('# HELP '):
            name = line.split(' ')[2]
            c.true('one HELP for %s' % name, name not in helps)
            helps[name] = True
            order.append(name)
        elif line.startswith('# TYPE '):
            _, _, name, typ = line.split(' ')
            c.true('one TYPE for %s' % name, name not in types)
            types[name] = typ
        elif line:
            m = SAMPLE.match(line)
            if m is None:
                c.fail('sample line does not parse: %r' % line[:80])
                continue
            name, labels, value = m.group(1), m.group(2) or '', m.group(3)
            if name not in types:
                c.fail('sample %s before its TYPE line' % name)
            pairs = [(k, unescape(v)) for k, v in LABEL.findall(labels)]
            samples[(name, frozenset(pairs))] = float(value)
    for name, typ in types.items():
        c.true('%s: counter iff *_total' % name, (typ == 'counter') == name.endswith('_total'))
    return samples, types


def snapshot_of_all(d, paths, tries=20):
    """Fetch /metrics and the API paths until all answers share one ETag."""
    for _ in range(tries):
        got = {}
        for p in ['/metrics'] + paths:
            status, headers, body = d.request(p)
            if status != 200:
                raise TestFailure('GET %s answered %d' % (p, status))
            got[p] = (headers.get('ETag'), headers, body)
        if len({v[0] for v in got.values()}) == 1:
            return got
        time.sleep(0.05)
    raise TestFailure('no single snapshot across /metrics and the API in %d tries' % tries)


def L(**kw):
    return frozenset(kw.items())


def compare(c, m, api, top_hosts):
    summary = api['/api/v1/summary'][2]
    subnets = api['/api/v1/subnets'][2]['subnets']
    hosts = api['/api/v1/hosts?limit=10000'][2]['hosts']

    def eq(what, key, want):
        got = m.get(key)
        c.eq(what, want, got)

    eq('dpmon_snapshot_seq', ('dpmon_snapshot_seq', L()), summary['snapshot_seq'])
    eq('dpmon_uptime_seconds', ('dpmon_uptime_seconds', L()), summary['uptime_s'])
    eq('dpmon_merge_interval_seconds', ('dpmon_merge_interval_seconds', L()), summary['interval_s'])
    eq('dpmon_merge_duration_seconds', ('dpmon_merge_duration_seconds', L()), summary['merge_s'])
    eq('dpmon_hosts', ('dpmon_hosts', L()), summary['hosts'])
    eq('dpmon_subnets', ('dpmon_subnets', L()), summary['subnets'])
    eq('dpmon_alerts_active', ('dpmon_alerts_active', L()), 0)

    def dir_metrics(prefix, labels, obj, what):
        for proto in harness.PROTOS:
            lab = L(protocol=proto, **labels)
            r = obj[proto]
            eq('%s %s packets' % (what, proto), (prefix + '_packets_total', lab), r['packets'])
            eq('%s %s bytes' % (what, proto), (prefix + '_bytes_total', lab), r['bytes'])
            eq('%s %s pps' % (what, proto), (prefix + '_packets_per_second', lab), r['pps'])
            got = m.get((prefix + '_bytes_per_second', lab))
            c.eq('%s %s bytes/s x 8 == bps' % (what, proto), r['bps'],
                 None if got is None else got * 8)

    for t in harness.TOTALS:
        dir_metrics('dpmon_traffic', {'direction': t}, summary['totals'][t], 'totals ' + t)
    for s in subnets:
        eq('subnet_info %s' % s['prefix'], ('dpmon_subnet_info', L(
            subnet=s['prefix'], name=s['name'], family=str(s['family']))), 1)
        for dr in harness.DIRS:
            dir_metrics('dpmon_subnet', {'subnet': s['prefix'], 'direction': dr}, s[dr],
                        'subnet %s %s' % (s['prefix'], dr))

    ranked = sorted(hosts, key=lambda h: (-(h['ingress']['bytes'] + h['egress']['bytes']),
                                          _addr_key(h['address'])))
    want_hosts = {h['address'] for h in ranked[:top_hosts]}
    got_hosts = {dict(k[1])['host'] for k in m if k[0] == 'dpmon_host_bytes_total'}
    c.eq('per-host series: the top %d hosts by bytes' % top_hosts, sorted(want_hosts),
         sorted(got_hosts))
    for h in ranked[:top_hosts]:
        for dr in harness.DIRS:
            dir_metrics('dpmon_host', {'subnet': h['subnet'], 'host': h['address'], 'direction': dr},
                        h[dr], 'host %s %s' % (h['address'], dr))

    for p in summary['ports']:
        lab = L(port=p['device'])
        for name, key in (('rx_packets_total', 'ipackets'), ('rx_bytes_total', 'ibytes'),
                          ('rx_missed_packets_total', 'imissed'), ('rx_errors_total', 'ierrors'),
                          ('rx_nombuf_total', 'rx_nombuf'), ('rx_queues', 'rx_queues')):
            eq('port %s %s' % (p['device'], key), ('dpmon_port_' + name, lab), p[key])
    for w in summary['workers']:
        lab = L(lcore=str(w['lcore']))
        for name, key in (('packets_total', 'packets'), ('bursts_total', 'bursts'),
                          ('polls_total', 'polls'), ('busy_seconds_total', 'busy_s'),
                          ('busy_ratio', 'busy_ratio'), ('host_table_entries', 'hosts'),
                          ('host_table_capacity', 'host_capacity'),
                          ('host_table_full_total', 'host_table_full')):
            eq('worker %s %s' % (w['lcore'], key), ('dpmon_worker_' + name, lab), w[key])
        eq('worker %s fill ratio' % w['lcore'], ('dpmon_worker_host_table_fill_ratio', lab),
           w['hosts'] / w['host_capacity'])
    for reason, n in summary['parse_errors'].items():
        eq('parse reason %s' % reason, ('dpmon_parse_errors_total', L(reason=reason)), n)


def _addr_key(text):
    """dpmon's address order: 16-byte form, IPv4 as ::ffff:a.b.c.d."""
    a = harness.ipaddress.ip_address(text)
    if a.version == 4:
        return b'\0' * 10 + b'\xff\xff' + a.packed
    return a.packed


def run(h, top_hosts):
    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    subnets = [(r['dst_prefix'], 'net "%d"\\' % i) for i, r in enumerate(rows)]
    c = h.checker('metrics top_hosts=%d' % top_hosts)
    with h.dpmon_run([h.td('pcaps', 'pcapplusplus', 'example.pcap')], subnets,
                     'metrics %d' % top_hosts,
                     extra_config={'metrics': {'top_hosts': top_hosts}}) as d:
        d.wait_counts(PACKETS)
        paths = ['/api/v1/summary', '/api/v1/subnets', '/api/v1/hosts?limit=10000']
        got = snapshot_of_all(d, paths)
        etag, headers, text = got['/metrics']
        c.eq('Content-Type', 'text/plain; version=0.0.4; charset=utf-8', headers.get('Content-Type'))
        c.eq('Cache-Control', 'no-store', headers.get('Cache-Control'))
        p = subprocess.run([promtool(), 'check', 'metrics'], input=text.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
        c.eq('promtool check metrics: exit status', 0, p.returncode)
        c.eq('promtool check metrics: no complaint', '', p.stdout.decode().strip())
        m, types = parse_metrics(text, c)
        c.true('families served: %d' % len(types), len(types) >= 30)
        compare(c, m, got, top_hosts)
        status, h304, body = d.request('/metrics', headers={'If-None-Match': etag})
        c.true('If-None-Match with the ETag: 304 or a newer snapshot',
               status == 304 or (status == 200 and h304.get('ETag') != etag), str(status))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_metrics_top5(h):
    run(h, 5)


def test_metrics_no_hosts(h):
    run(h, 0)


TOP_SUBNETS_DEFAULT = 1000
MAX_SUBNETS = 65536


def test_metrics_65536_subnets(h):
    """The most subnets a configuration takes: 65 519 IPv6 /48s that see no
    traffic, then the 17 /24s of example.pcap. With the default
    metrics.top_subnets (1000), exactly the 17 with traffic and the first
    983 others (ties in configuration order) have series, listed in
    configuration order; promtool accepts the text; the ingress packets and
    bytes of the 17 equal the manifest's."""
    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    real = [r['dst_prefix'] for r in rows]
    fill = [str(harness.ipaddress.ip_network('2001:db8:%x::/48' % i))
            for i in range(MAX_SUBNETS - len(real))]
    subnets = [(p, '') for p in fill + real]
    c = h.checker('metrics 65536 subnets')
    with h.dpmon_run([h.td('pcaps', 'pcapplusplus', 'example.pcap')], subnets,
                     'metrics 65536 subnets') as d:
        d.wait_counts(PACKETS)
        status, headers, text = d.request('/metrics')
        c.eq('GET /metrics', 200, status)
        p = subprocess.run([promtool(), 'check', 'metrics'], input=text.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
        c.eq('promtool check metrics: exit status', 0, p.returncode)
        c.eq('promtool check metrics: no complaint', '', p.stdout.decode().strip())
        m, types = parse_metrics(text, c)
        c.true('families served: %d' % len(types), len(types) >= 30)
        want = fill[:TOP_SUBNETS_DEFAULT - len(real)] + real
        info = [line.split('"')[1] for line in text.splitlines()
                if line.startswith('dpmon_subnet_info{')]
        c.eq('dpmon_subnet_info: the top 1000, in configuration order', want, info)
        for fam in ('packets_total', 'bytes_total', 'packets_per_second', 'bytes_per_second'):
            n = sum(1 for k in m if k[0] == 'dpmon_subnet_' + fam)
            c.eq('dpmon_subnet_%s series' % fam, TOP_SUBNETS_DEFAULT * 2 * 4, n)
        lines = [line for line in text.splitlines()
                 if line.startswith('dpmon_subnet_') and '{subnet="' in line]
        c.eq('per-subnet sample lines', TOP_SUBNETS_DEFAULT * (1 + 4 * 2 * 4) + sum(
            1 for k in m if k[0] == 'dpmon_subnet_flows'), len(lines))
        c.eq('dpmon_subnets', MAX_SUBNETS, m.get(('dpmon_subnets', L())))
        for r in rows:
            for fam, col in (('packets_total', 'pkts'),
                             ('bytes_total', 'bytes_wire(frame.len incl L2)')):
                got = sum(m.get(('dpmon_subnet_' + fam, L(subnet=r['dst_prefix'],
                                                          direction='ingress', protocol=pr)), 0)
                          for pr in harness.PROTOS)
                c.eq('%s ingress %s' % (r['dst_prefix'], fam), int(r[col]), got)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
