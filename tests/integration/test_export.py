#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The exporters (docs/export.md) against real servers the test starts:
Debian's clickhouse-server and influxd, as user processes on free loopback
ports (servers.py).

dpmon counts pcapplusplus/example.pcap; then sum(packets) and sum(bytes)
per subnet and per host in the database equal the shared tshark tables
(expected/benchmark/example.pcap.*.tsv) exactly, and the totals equal the
API's cumulative counts. The outage cases replay the capture forever
(infinite_rx) while the server comes late, stops and comes back: the sums
still equal dpmon's final counts. A server that never comes leaves the
data plane and the API alone and its drops are counted.
"""
import ipaddress
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import servers  # noqa: E402
from harness import TestFailure  # noqa: E402
from test_example import PCAP, PACKETS, load_expected  # noqa: E402

DB = 'dpmon'


def expected(h):
    """(subnets [(prefix, ingress (p, b), egress (p, b))], hosts {addr: (in, out)})."""
    sub, hst, exp = load_expected(h)
    nets = [ipaddress.ip_network(p) for p, _, _ in sub]
    inside = {a: v for a, v in hst.items() if harness.in_any(a, nets)}
    rows = []
    for p, pkts, nbytes in sub:
        n = ipaddress.ip_network(p)
        eg = (sum(v[2] for a, v in hst.items() if ipaddress.ip_address(a) in n),
              sum(v[3] for a, v in hst.items() if ipaddress.ip_address(a) in n))
        rows.append((p, (pkts, nbytes), eg))
    hosts = {a: ((v[0], v[1]), (v[2], v[3])) for a, v in inside.items()}
    return rows, hosts, exp['counts']['bytes_cap']


def export_config(ch=None, influx=None, **kw):
    e = {'instance': 'it-pop1'}
    e.update(kw)
    if ch is not None:
        e['clickhouse'] = ch
    if influx is not None:
        e['influxdb'] = influx
    return {'export': e}


def exporter(summary, name):
    for e in summary.get('exporters', []):
        if e['name'] == name:
            return e
    raise TestFailure('no exporter %r in the summary: %r' % (name, summary.get('exporters')))


def wait_for(what, fn, timeout=30.0, period=0.25):
    """Poll fn() until it returns a true value; return it (raise on timeout)."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(period)
    raise TestFailure('timed out after %.0f s waiting for %s (last: %r)' % (timeout, what, last))


def ch_sum(ch, table, where=''):
    r = ch.rows('SELECT sum(packets), sum(bytes) FROM %s.%s %s' % (DB, table, where))
    return (int(r[0][0]), int(r[0][1])) if r else (0, 0)


def final_counts(d):
    """dpmon's final snapshot line (stdout at stop): ingress and egress (packets, bytes)."""
    with open(os.path.join(d.dir, 'stdout')) as f:
        text = f.read()
    m = re.search(r'final snapshot \d+ at [0-9.]+ s: ingress (\d+) packets (\d+) bytes, '
                  r'egress (\d+) packets (\d+) bytes', text)
    if m is None:
        raise TestFailure('no final snapshot line in dpmon stdout:\n%s' % text[-2000:])
    v = [int(x) for x in m.groups()]
    return (v[0], v[1]), (v[2], v[3])


def check_clickhouse_tables(c, ch, d, s, sub, hosts):
    """Every sum in ClickHouse against the tshark tables and the API's totals."""
    for t in ('ingress', 'egress', 'internal', 'external'):
        c.eq('totals %s sum(packets), sum(bytes) == API cumulative' % t,
             (s['totals'][t]['packets'], s['totals'][t]['bytes']),
             ch_sum(ch, 'totals', "WHERE direction = '%s'" % t))
    got = {(r[0], r[1]): (int(r[2]), int(r[3])) for r in ch.rows(
        'SELECT prefix, toString(direction), sum(packets), sum(bytes) FROM %s.subnets '
        'GROUP BY prefix, direction' % DB)}
    for p, ing, eg in sub:
        c.eq('subnet %s ingress (tshark dst_subnets TSV)' % p, ing, got.get((p, 'ingress')))
        c.eq('subnet %s egress (tshark hosts TSV)' % p, eg, got.get((p, 'egress')))
    got = {}
    for a, direction, pk, by in ch.rows(
            'SELECT address, toString(direction), sum(packets), sum(bytes) FROM %s.hosts '
            'GROUP BY address, direction' % DB):
        got.setdefault(harness.canon_addr(a), {})[direction] = (int(pk), int(by))
    c.eq('hosts in ClickHouse', sorted(hosts), sorted(got))
    for a, (ing, eg) in sorted(hosts.items()):
        g = got.get(a, {})
        c.eq('host %s ingress (tshark hosts TSV)' % a, ing if ing[0] else None,
             g.get('ingress'))
        c.eq('host %s egress (tshark hosts TSV)' % a, eg if eg[0] else None, g.get('egress'))
    inst = ch.rows('SELECT DISTINCT instance FROM %s.totals' % DB)
    c.eq('instance of every row', [['it-pop1']], inst)


def test_clickhouse_exact(h):
    sub, hosts, total_bytes = expected(h)
    c = h.checker('clickhouse exact sums')
    with servers.ClickHouse() as ch:
        cfg = export_config(ch={'url': ch.url, 'database': DB, 'user': 'dpmon',
                                'password_file': os.path.join(ch.dir, 'pw')})
        with open(os.path.join(ch.dir, 'pw'), 'w') as f:
            f.write(servers.ClickHouse.PASSWORD + '\n')
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-ch', extra_config=cfg) as d:
            s = d.wait_counts(PACKETS, total_bytes, 0)
            wait_for('ClickHouse totals to reach %d ingress packets' % PACKETS,
                     lambda: ch_sum(ch, 'totals', "WHERE direction = 'ingress'")[0] == PACKETS)
            # A later interval adds nothing: every counted packet was exported once.
            time.sleep(1.0)
            check_clickhouse_tables(c, ch, d, s, sub, hosts)
            e = exporter(d.summary(), 'clickhouse')
            c.eq('exporter failures', 0, e['failures'])
            c.eq('exporter dropped_intervals', 0, e['dropped_intervals'])
            c.true('exporter batches > 0', e['batches'] > 0, repr(e))

            # The summary's counters are as of its merge: compare when the
            # spool is empty and the count has not moved between two reads.
            def rows_agree():
                n = sum(int(ch.rows('SELECT count() FROM %s.%s' % (DB, t))[0][0])
                        for t in ('totals', 'subnets', 'hosts', 'alerts'))
                e = exporter(d.summary(), 'clickhouse')
                return (n, e['rows']) if e['spool_depth'] == 0 and n == e['rows'] else None
            n, rows = wait_for('the summary\'s rows to equal the rows in ClickHouse',
                               rows_agree, timeout=10)
            c.eq('exporter rows == rows in ClickHouse', n, rows)
            c.eq('d.stop() exit status', 0, d.stop())
    c.done()


def test_clickhouse_outage(h):
    """Late start, then a stop and a restart of the server mid-run: still exact."""
    sub, _, _ = expected(h)
    c = h.checker('clickhouse outage')
    ch = servers.ClickHouse()
    try:
        cfg = export_config(ch={'url': ch.url, 'database': DB, 'timeout_ms': 2000},
                            retry_max_ms=1000, flush_timeout_ms=30000)
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-outage', extra_config=cfg,
                         vdev_args=',infinite_rx=1') as d:
            time.sleep(3.0)
            e = exporter(d.summary(), 'clickhouse')
            c.true('failures while the server is not there yet', e['failures'] > 0, repr(e))
            c.true('batches spooled meanwhile', e['spool_depth'] > 0, repr(e))
            ch.start()
            wait_for('the spool to drain', lambda: exporter(d.summary(), 'clickhouse')
                     ['spool_depth'] <= 1 and exporter(d.summary(), 'clickhouse')['batches'])
            ch.stop()
            time.sleep(3.0)
            e = exporter(d.summary(), 'clickhouse')
            c.true('batches spooled while the server is stopped', e['spool_depth'] > 1,
                   repr(e))
            ch.start()
            wait_for('the spool to drain again', lambda: exporter(d.summary(), 'clickhouse')
                     ['spool_depth'] <= 1)
            e = exporter(d.summary(), 'clickhouse')
            c.eq('rc of stop', 0, d.stop())
            ing, eg = final_counts(d)
            c.eq('totals ingress in ClickHouse == final snapshot', ing,
                 ch_sum(ch, 'totals', "WHERE direction = 'ingress'"))
            c.eq('totals egress in ClickHouse == final snapshot', eg,
                 ch_sum(ch, 'totals', "WHERE direction = 'egress'"))
            c.eq('subnets ingress in ClickHouse == final snapshot', ing,
                 ch_sum(ch, 'subnets', "WHERE direction = 'ingress'"))
            c.eq('dropped_intervals (summary before the stop)', 0, e['dropped_intervals'])
            h.log('outage: %d failures, %d batches, %d rows before the stop' % (
                e['failures'], e['batches'], e['rows']))
    finally:
        ch.__exit__(None, None, None)
    c.done()


def test_server_never_comes(h):
    """Connection refused throughout: the data plane and the API as without
    export, the spool bounded and its drops counted."""
    sub, hosts, total_bytes = expected(h)
    c = h.checker('server never comes')
    cfg = export_config(ch={'url': 'http://127.0.0.1:%d' % servers.free_port(),
                            'timeout_ms': 500},
                        spool_intervals=5, retry_max_ms=200, flush_timeout_ms=300)
    with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                     'export-never', extra_config=cfg) as d:
        s = d.wait_counts(PACKETS, total_bytes, 0)
        c.eq('totals.ingress packets', PACKETS, s['totals']['ingress']['packets'])
        time.sleep(2.0)
        s = d.summary()
        e = exporter(s, 'clickhouse')
        c.eq('spool_depth (spool_intervals)', 5, e['spool_depth'])
        c.eq('intervals == spooled + dropped', e['intervals'],
             e['spool_depth'] + e['dropped_intervals'])
        c.true('failures counted', e['failures'] > 0, repr(e))
        c.true('last_error names the refusal',
               e['last_error'] is not None and 'onnect' in e['last_error'], repr(e))
        c.eq('batches', 0, e['batches'])
        c.true('merge_s below 50 ms', s['merge_s'] < 0.05, repr(s['merge_s']))
        hosts_doc = d.get('/api/v1/hosts?limit=10000')
        c.eq('/api/v1/hosts total', len(hosts), hosts_doc['total'])
        t0 = time.monotonic()
        c.eq('rc of stop', 0, d.stop())
        c.true('stop within 5 s (flush_timeout_ms 300)', time.monotonic() - t0 < 5.0)
        with open(os.path.join(d.dir, 'stderr')) as f:
            log = f.read()
        c.true('log lines are rate limited (at most 10 + 1 per kind)',
               log.count('export to clickhouse') <= 12, log[-2000:])
    c.done()


if __name__ == '__main__':
    harness.main(globals())
