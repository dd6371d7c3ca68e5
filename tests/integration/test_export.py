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
data plane and the API alone and its drops are counted; a server slow
enough that the handoff skips snapshots still gets the last one at the
stop. What a server
does under a running export (tables dropped, a server back empty, a 2xx
answer that is not its own) and reloads that remove and put back the
section or change the format recover without a SIGHUP and keep the sums
exact; the alerts rows carry the alert's fingerprint.
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
    """The exact sums in both insert formats: RowBinary (the default) and JSONEachRow."""
    for fmt in (None, 'JSONEachRow'):
        clickhouse_exact(h, fmt)


def clickhouse_exact(h, fmt):
    sub, hosts, total_bytes = expected(h)
    c = h.checker('clickhouse exact sums (%s)' % (fmt or 'RowBinary, the default'))
    with servers.ClickHouse() as ch:
        cfg = export_config(ch={'url': ch.url, 'database': DB, 'user': 'dpmon',
                                'password_file': os.path.join(ch.dir, 'pw')})
        if fmt is not None:
            cfg['export']['clickhouse']['format'] = fmt
            # Tables an older dpmon made: hosts without peers, alerts
            # without the counts. dpmon adds the missing columns.
            ch.query('CREATE DATABASE %s' % DB)
            ch.query('CREATE TABLE %s.hosts (instance String, time DateTime, seq UInt64, '
                     'interval_s Float64, direction Enum8(\'ingress\' = 1, \'egress\' = 2), '
                     'address String, subnet String, name String, packets UInt64, '
                     'bytes UInt64) ENGINE = MergeTree() PARTITION BY toYYYYMMDD(time) '
                     'ORDER BY (instance, subnet, address, direction, time)' % DB)
            ch.query('CREATE TABLE %s.alerts (instance String, time DateTime, seq UInt64, '
                     'id UInt64) ENGINE = MergeTree() PARTITION BY toYYYYMM(time) '
                     'ORDER BY (instance, time, id)' % DB)
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

            # The summary's counters are as of its merge (snapshot S, before
            # S was handed over): with nothing spooled and S - 1 intervals
            # encoded, they are the rows of the snapshots before S.
            def rows_agree():
                s = d.summary()
                e = exporter(s, 'clickhouse')
                if e['spool_depth'] != 0 or e['intervals'] != s['snapshot_seq'] - 1:
                    return None
                n = sum(int(ch.rows('SELECT count() FROM %s.%s WHERE seq < %d' % (
                    DB, t, s['snapshot_seq']))[0][0])
                    for t in ('totals', 'subnets', 'hosts', 'alerts'))
                return (n, e['rows'])
            n, rows = wait_for('a summary with nothing spooled', rows_agree, timeout=10)
            c.eq('exporter rows == rows in ClickHouse', n, rows)
            if fmt is not None:
                cols = {(t, name) for t, name in ch.rows(
                    "SELECT table, name FROM system.columns WHERE database = '%s'" % DB)}
                c.true('older tables gained the new columns (hosts.peers, alerts.packets, '
                       'alerts.tcp_syn, alerts.fingerprint)',
                       {('hosts', 'peers'), ('alerts', 'packets'), ('alerts', 'tcp_syn'),
                        ('alerts', 'fingerprint')} <= cols, repr(sorted(cols)))
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


def test_clickhouse_wrong_types(h):
    """A table whose column has another type than dpmon writes (RowBinary
    would store the bytes as that type: a UInt64 read as a Float64, an
    Enum8 by number) is refused, with the column and both types named,
    before any row goes; with "create_tables": false as well."""
    sub, _, total_bytes = expected(h)
    cases = [('packets Float64', True,
              'dpmon.hosts.packets is Float64 where dpmon writes UInt64'),
             ("direction Enum8('egress' = 1, 'ingress' = 2)", False,
              "dpmon.hosts.direction is Enum8('egress' = 1, 'ingress' = 2) where dpmon writes "
              "Enum8('ingress' = 1, 'egress' = 2)")]
    for column, create, reason in cases:
        c = h.checker('clickhouse wrong types (%s, create_tables %s)' % (column, create))
        with servers.ClickHouse() as ch:
            ch.query('CREATE DATABASE %s' % DB)
            ch.query('CREATE TABLE %s.hosts (instance String, time DateTime, %s) '
                     'ENGINE = MergeTree() ORDER BY (instance, time)' % (DB, column))
            cfg = export_config(ch={'url': ch.url, 'database': DB, 'create_tables': create,
                                    'timeout_ms': 2000}, retry_max_ms=500)
            with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                             'export-types', extra_config=cfg) as d:
                d.wait_counts(PACKETS, total_bytes, 0)
                e = wait_for('the refusal', lambda: (lambda e: e if e['failures'] > 0 else None)(
                    exporter(d.summary(), 'clickhouse')))
                c.true('last_error names the column and both types: %r' % reason,
                       reason in (e['last_error'] or ''), repr(e['last_error']))
                c.eq('batches', 0, e['batches'])
                c.eq('rows in dpmon.hosts', [['0']], ch.rows('SELECT count() FROM %s.hosts' % DB))
                s0 = d.summary()['snapshot_seq']
                wait_for('the merges to go on', lambda: d.summary()['snapshot_seq'] > s0 + 1)
                c.eq('rc of stop', 0, d.stop())
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
        # A server that is away is not a stuck exporter: its thread beats.
        status, _, body = d.request('/health')
        c.eq('/health while the server is away', (200, []), (status, body['reasons']))
        t0 = time.monotonic()
        c.eq('rc of stop', 0, d.stop())
        c.true('stop within 5 s (flush_timeout_ms 300)', time.monotonic() - t0 < 5.0)
        with open(os.path.join(d.dir, 'stderr')) as f:
            log = f.read()
        c.true('log lines are rate limited (at most 10 + 1 per kind)',
               log.count('export to clickhouse') <= 12, log[-2000:])
    c.done()


def influx_sums(ix, measurement, group):
    """{(tag values...): (sum(packets), sum(bytes))} of `measurement` by tags `group`."""
    out = {}
    for ser in ix.query(DB, 'SELECT sum(packets), sum(bytes) FROM %s GROUP BY %s' % (
            measurement, ', '.join(group))):
        tags = ser.get('tags', {})
        v = ser['values'][0]
        if v[1] is None or v[2] is None:
            raise TestFailure("InfluxDB: no sum in %r" % ser)
        out[tuple(tags.get(g, "") for g in group)] = (int(v[1]), int(v[2]))
    return out


def test_influxdb_exact(h):
    sub, hosts, total_bytes = expected(h)
    c = h.checker('influxdb 1.x exact sums')
    with servers.InfluxDB() as ix:
        cfg = export_config(influx={'url': ix.url, 'database': DB})
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-influx', extra_config=cfg) as d:
            s = d.wait_counts(PACKETS, total_bytes, 0)

            def ingress():
                try:
                    return influx_sums(ix, 'totals', ['direction']).get(('ingress',),
                                                                        (0, 0))[0] == PACKETS
                except (OSError, TestFailure):
                    return False
            wait_for('InfluxDB totals to reach %d ingress packets' % PACKETS, ingress)
            time.sleep(1.0)
            tot = influx_sums(ix, 'totals', ['direction'])
            for t in ('ingress', 'egress', 'internal', 'external'):
                c.eq('totals %s == API cumulative' % t,
                     (s['totals'][t]['packets'], s['totals'][t]['bytes']),
                     tot.get((t,), (0, 0)))
            got = influx_sums(ix, 'subnets', ['prefix', 'direction'])
            for p, ing, eg in sub:
                c.eq('subnet %s ingress (tshark)' % p, ing, got.get((p, 'ingress')))
                c.eq('subnet %s egress (tshark)' % p, eg, got.get((p, 'egress')))
            got = {}
            for (a, direction), v in influx_sums(ix, 'hosts', ['address', 'direction']).items():
                got.setdefault(harness.canon_addr(a), {})[direction] = v
            c.eq('hosts in InfluxDB', sorted(hosts), sorted(got))
            for a, (ing, eg) in sorted(hosts.items()):
                g = got.get(a, {})
                c.eq('host %s ingress (tshark)' % a, ing if ing[0] else None, g.get('ingress'))
                c.eq('host %s egress (tshark)' % a, eg if eg[0] else None, g.get('egress'))
            e = exporter(d.summary(), 'influxdb')
            c.eq('exporter failures', 0, e['failures'])
            c.eq('d.stop() exit status', 0, d.stop())
    c.done()


def parse_line(line):
    """(measurement, {tag: value}, {field: value}) of one line-protocol point
    (no escaped characters: dpmon's tags here have none)."""
    head, fields, _ts = line.split(' ')
    parts = head.split(',')
    tags = dict(p.split('=', 1) for p in parts[1:])
    f = {}
    for kv in fields.split(','):
        k, v = kv.split('=', 1)
        f[k] = int(v[:-1]) if v.endswith('i') else (v.strip('"') if v.startswith('"')
                                                    else float(v))
    return parts[0], tags, f


def test_influxdb2_api(h):
    """The 2.x write API: org, bucket, the token header; the points sum exactly."""
    sub, hosts, total_bytes = expected(h)
    c = h.checker('influxdb 2.x')
    token = 'tok-123'
    points = []

    def handler(req):
        if not req['path'].startswith('/api/v2/write?'):
            return 404, 'not found'
        if req['headers'].get('Authorization') != 'Token ' + token:
            return 401, '{"code":"unauthorized","message":"unauthorized access"}'
        q = dict(kv.split('=', 1) for kv in req['path'].split('?', 1)[1].split('&'))
        if q.get('org') != 'noc' or q.get('bucket') != 'traffic' or q.get('precision') != 'ms':
            return 400, 'bad query %r' % q
        points.extend(parse_line(l) for l in req['body'].decode().splitlines() if l)
        return 204, ''
    with servers.FakeHTTP(handler) as srv:
        tok = os.path.join(srv_dir(h), 'token')
        with open(tok, 'w') as f:
            f.write(token + '\n')
        cfg = export_config(influx={'url': srv.url, 'org': 'noc', 'bucket': 'traffic',
                                    'token_file': tok})
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-influx2', extra_config=cfg) as d:
            s = d.wait_counts(PACKETS, total_bytes, 0)
            wait_for('the points of every packet', lambda: sum(
                f['packets'] for m, t, f in list(points)
                if m == 'totals' and t['direction'] == 'ingress') == PACKETS)
            c.eq('rc of stop', 0, d.stop())
        c.true('every request had the token', all(
            r['headers'].get('Authorization') == 'Token ' + token for r in srv.requests))
        for t in ('ingress', 'egress'):
            c.eq('totals %s == API' % t, (s['totals'][t]['packets'], s['totals'][t]['bytes']),
                 (sum(f['packets'] for m, tg, f in points
                      if m == 'totals' and tg['direction'] == t),
                  sum(f['bytes'] for m, tg, f in points
                      if m == 'totals' and tg['direction'] == t)))
        for p, ing, _ in sub:
            c.eq('subnet %s ingress (tshark)' % p, ing,
                 (sum(f['packets'] for m, tg, f in points if m == 'subnets' and
                      tg.get('prefix') == p and tg['direction'] == 'ingress'),
                  sum(f['bytes'] for m, tg, f in points if m == 'subnets' and
                      tg.get('prefix') == p and tg['direction'] == 'ingress')))
        c.eq('instance tag', {'it-pop1'}, {tg['instance'] for _, tg, _ in points})
    c.done()


def test_bad_servers(h):
    """HTTP 500, bad credentials (401) and a server that answers after 10 s:
    each counted, with its reason, in rate-limited log lines; the merge as
    fast as without a server, and the exporter's progress stamp fresh while
    it waits."""
    sub, _, total_bytes = expected(h)
    cases = [
        ('http500', lambda req: (500, 'Code: 1001, e.displayText() = DB::Exception: boom'),
         'HTTP 500: Code: 1001'),
        ('auth', lambda req: (401, 'Code: 193, e.displayText() = DB::Exception: Wrong '
                                   'password for user dpmon'), 'HTTP 401: Code: 193'),
        ('slow', lambda req: (time.sleep(10), (200, ''))[1], 'imed out'),
    ]
    for name, handler, reason in cases:
        c = h.checker('bad server: %s' % name)
        with servers.FakeHTTP(handler) as srv:
            cfg = export_config(ch={'url': srv.url, 'timeout_ms': 2000, 'user': 'dpmon'},
                                retry_max_ms=500, flush_timeout_ms=500)
            with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in
                                             enumerate(sub)],
                             'export-bad-' + name, extra_config=cfg) as d:
                d.wait_counts(PACKETS, total_bytes, 0)
                e = wait_for('a failure counted', lambda: (
                    lambda x: x if x['failures'] >= 2 else None)(
                        exporter(d.summary(), 'clickhouse')), timeout=20)
                s = d.summary()
                c.true('last_error %r contains %r' % (e['last_error'], reason),
                       e['last_error'] is not None and reason in e['last_error'])
                c.eq('batches', 0, e['batches'])
                c.true('merge_s below 50 ms', s['merge_s'] < 0.05, repr(s['merge_s']))
                c.true('progress_age_s below 2 s (libcurl calls back at least once a second)',
                       exporter(s, 'clickhouse')
                       ['progress_age_s'] < 2.0, repr(exporter(s, 'clickhouse')))
                c.eq('handoff_skipped (the exporter takes every snapshot)', 0,
                     exporter(s, 'clickhouse')['handoff_skipped'] if name != 'slow' else 0)
                c.eq('rc of stop', 0, d.stop())
                with open(os.path.join(d.dir, 'stderr')) as f:
                    log = f.read()
                c.true('the reason in the log', reason in log, log[-1500:])
                c.true('log lines rate limited', log.count('export to clickhouse') <= 11,
                       log[-3000:])
        c.done()


def test_final_snapshot_after_skips(h):
    """A server that holds each request while merges run every 100 ms: the
    exporter's handoff fills and skips snapshots, the last merge's among
    them at the stop; the stop still exports that last snapshot, so the
    totals written equal dpmon's final counts (the capture replayed
    without end, so the last interval has packets)."""
    import threading
    sub, _, _ = expected(h)
    c = h.checker('final snapshot after skips')
    slow = threading.Event()
    slow.set()
    points = []

    def handler(req):
        deadline = time.monotonic() + 20
        while slow.is_set() and time.monotonic() < deadline:
            time.sleep(0.02)
        points.extend(parse_line(ln) for ln in req['body'].decode().splitlines() if ln)
        return 204, ''
    with servers.FakeHTTP(handler) as srv:
        tok = os.path.join(srv_dir(h), 'token')
        with open(tok, 'w') as f:
            f.write('tok\n')
        cfg = export_config(influx={'url': srv.url, 'org': 'noc', 'bucket': 'traffic',
                                    'token_file': tok, 'timeout_ms': 30000},
                            flush_timeout_ms=30000)
        cfg['merge_interval_ms'] = 100
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-final', extra_config=cfg, vdev_args=',infinite_rx=1') as d:
            wait_for('snapshots skipped at the handoff', quiet(lambda: exporter(
                d.summary(), 'influxdb')['handoff_skipped'] >= 3))
            # The server answers again once the stop's last merge was offered.
            threading.Timer(1.0, slow.clear).start()
            c.eq('rc of stop', 0, d.stop(timeout=60))
            (in_p, in_b), (out_p, out_b) = final_counts(d)
    c.true('the last merge had packets (replayed without end)', in_p + out_p > 0)
    for t, want in (('ingress', (in_p, in_b)), ('egress', (out_p, out_b))):
        c.eq('totals %s written == the final snapshot' % t, want,
             (sum(f['packets'] for m, tg, f in points
                  if m == 'totals' and tg['direction'] == t),
              sum(f['bytes'] for m, tg, f in points
                  if m == 'totals' and tg['direction'] == t)))
    c.done()


def test_check_config_export(h):
    """--check-config on the export section: each mistake named by JSON path and reason."""
    import json
    import subprocess
    import tempfile
    c = h.checker('check-config export')
    tmp = tempfile.mkdtemp(prefix='dpmon-export-cc-')
    base = {'ports': [{'device': 'net_pcap0'}], 'subnets': [{'prefix': '10.0.0.0/8'}]}
    cases = [
        ({'clickhouse': {'url': 'ftp://x'}}, '$.export.clickhouse.url: the scheme must be '
                                             'http or https, got "ftp://x"'),
        ({'clickhouse': {'url': 'http://h:1/?a=b'}}, '$.export.clickhouse.url: no query'),
        ({'clickhouse': {'url': 'not a url'}}, '$.export.clickhouse.url: '),
        ({'clickhouse': {'timeout_ms': 5}}, '$.export.clickhouse.timeout_ms: '),
        ({'clickhouse': {'hosts': 'some'}}, '$.export.clickhouse.hosts: '),
        ({'clickhouse': {'database': 'a-b'}}, '$.export.clickhouse.database: not a name'),
        ({'clickhouse': {'password_file': '/nonexistent/pw'}},
         '$.export.clickhouse.password_file: cannot read "/nonexistent/pw"'),
        ({'clickhouse': {'ttl': 3}}, '$.export.clickhouse.ttl: unknown key'),
        ({'clickhouse': {'format': 'CSV'}}, '$.export.clickhouse.format: unknown format "CSV" '
                                            '(expected RowBinary or JSONEachRow)'),
        ({'clickhouse': {'format': 1}}, '$.export.clickhouse.format: '),
        ({'influxdb': {'bucket': 'b'}}, '$.export.influxdb.org: missing required key'),
        ({'spool_intervals': 0}, '$.export.spool_intervals: '),
        ({'instance': 'a b'}, '$.export.instance: not a name'),
        ({'kafka': {}}, '$.export.kafka: unknown key'),
    ]
    for i, (section, want) in enumerate(cases):
        path = os.path.join(tmp, 'c%d.json' % i)
        doc = dict(base, export=section)
        with open(path, 'w') as f:
            json.dump(doc, f)
        p = subprocess.run([h.dpmon, '--check-config', path], capture_output=True, text=True)
        c.eq('%s: exit status' % json.dumps(section), 1, p.returncode)
        c.true('%s: message %r' % (json.dumps(section), want), (path + ': ' + want) in p.stderr,
               p.stderr)
    path = os.path.join(tmp, 'ok.json')
    with open(path, 'w') as f:
        json.dump(dict(base, export={'instance': 'pop1', 'spool_intervals': 10,
                                     'clickhouse': {'url': 'http://127.0.0.1:8123/',
                                                    'hosts': 100, 'ttl_days': 30,
                                                    'format': 'JSONEachRow'},
                                     'influxdb': {'url': 'https://influx:8086'}}), f)
    p = subprocess.run([h.dpmon, '--check-config', path], capture_output=True, text=True)
    c.eq('valid export section: exit status', 0, p.returncode)
    p = subprocess.run([h.dpmon, '--print-schema', 'clickhouse', '--config', path],
                       capture_output=True, text=True)
    c.eq('--print-schema: exit status', 0, p.returncode)
    c.true('--print-schema: the TTL when ttl_days is set',
           'TTL time + INTERVAL 30 DAY' in p.stdout, p.stdout[:500])
    p = subprocess.run([h.dpmon, '--print-schema', 'clickhouse', '--cluster', 'fleet'],
                       capture_output=True, text=True)
    c.true('--print-schema --cluster: ReplicatedMergeTree and Distributed',
           "ReplicatedMergeTree('/clickhouse/tables/{shard}/dpmon/hosts', '{replica}')"
           in p.stdout and 'ENGINE = Distributed(fleet, dpmon, hosts_local' in p.stdout,
           p.stdout[:800])
    c.true('--print-schema: no TTL by default', 'TTL' not in p.stdout)
    c.done()


def test_reload_export(h):
    """SIGHUP: an export section added by a reload starts; its instance is used."""
    import json
    import signal as sig
    sub, _, total_bytes = expected(h)
    c = h.checker('reload export')
    points = []

    def handler(req):
        points.extend(req['body'].decode().splitlines())
        return 204, ''
    with servers.FakeHTTP(handler) as srv:
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-reload') as d:
            d.wait_counts(PACKETS, total_bytes, 0)
            c.eq('no exporter before', [], d.summary()['exporters'])
            cfgp = os.path.join(d.dir, 'dpmon.json')
            with open(cfgp) as f:
                doc = json.load(f)
            doc.update(export_config(influx={'url': srv.url}, instance='reloaded'))
            with open(cfgp, 'w') as f:
                json.dump(doc, f)
            d.proc.send_signal(sig.SIGHUP)
            wait_for('the exporter after the reload',
                     lambda: [e['name'] for e in d.summary()['exporters']] == ['influxdb'])
            wait_for('points with the new instance', lambda: any(
                'instance=reloaded' in p for p in points))
            c.eq('rc of stop', 0, d.stop())
        c.true('the first batch holds every packet (counts since start)', any(
            p.startswith('totals,instance=reloaded,direction=ingress packets=%di' % PACKETS)
            for p in points), '\n'.join(points[:5]))
    c.done()


def test_alert_events(h):
    """An alert's start and end reach the alerts table, once each, with the
    API's id, address, metric and type (a ClickHouse stand-in records the
    rows of each INSERT)."""
    import json
    import tempfile
    import urllib.parse
    c = h.checker('alert events')
    tmp = tempfile.mkdtemp(prefix='dpmon-export-alert-')
    flood, _ = h.gen(tmp, 'in5', ['--subnet', '10.0.0.4/30', '--egress-percent', '0',
                                  '--hosts', '1', '--packets', '40000', '--mix', 'udp=1'])
    tables = {}

    def handler(req):
        q = urllib.parse.parse_qs(req['path'].split('?', 1)[1]).get('query', [''])[0]
        if q.startswith('INSERT INTO dpmon.'):
            t = q.split()[2].split('.')[1]
            tables.setdefault(t, []).extend(
                json.loads(line) for line in req['body'].decode().splitlines() if line)
        return 200, ''
    with servers.FakeHTTP(handler) as srv:
        cfg = export_config(ch={'url': srv.url, 'format': 'JSONEachRow'})
        cfg.update({'average_time_constant_ms': 1000,
                    'detection': {'thresholds': {'ingress': {'pps': 4000}}, 'hold_s': 1}})
        with h.dpmon_run([flood], [('10.0.0.0/24', 'lan')], 'export-alert',
                         extra_config=cfg) as d:
            d.wait_counts(40000)
            alerts = wait_for('the alert to end', lambda: (
                lambda doc: doc if doc['alerts'] and doc['active'] == 0 else None)(
                    d.get('/api/v1/alerts')), timeout=30)['alerts']
            wait_for('its end event', lambda: any(
                r['event'] == 'end' for r in tables.get('alerts', [])))
            c.eq('rc of stop', 0, d.stop())
        c.eq('alerts in the API', 1, len(alerts))
        a = alerts[0]
        ev = tables.get('alerts', [])
        c.eq('events', ['start', 'end'], [r['event'] for r in ev])
        for r in ev:
            c.eq('%s: id' % r['event'], a['id'], r['id'])
            c.eq('%s: address' % r['event'], a['address'], r['address'])
            c.eq('%s: target, direction, metric, type' % r['event'],
                 ('host', a['direction'], a['metric'], a['type']),
                 (r['target'], r['direction'], r['metric'], r['type']))
            c.eq('%s: instance' % r['event'], 'it-pop1', r['instance'])
        c.true('end: duration_s > 0', ev and ev[-1]['duration_s'] > 0, repr(ev))
        # Each event carries its host's row of that interval (0 when the
        # host sent nothing in it: no hosts row then).
        host_rows = {(r['seq'], r['address']): r for r in tables.get('hosts', [])
                     if r['direction'] == 'ingress'}
        for r in ev:
            want = host_rows.get((r['seq'], r['address']), {})
            c.eq('%s: packets, bytes, udp_packets == the hosts row of seq %d' % (
                r['event'], r['seq']),
                (want.get('packets', 0), want.get('bytes', 0), want.get('udp_packets', 0)),
                (r['packets'], r['bytes'], r['udp_packets']))
        c.true('start: packets > 0', ev and ev[0]['packets'] > 0, repr(ev[:1]))
        c.eq('hosts rows: every packet once', 40000, sum(
            r['packets'] for r in tables.get('hosts', []) if r['direction'] == 'ingress'))
    shutil_rmtree(tmp)
    c.done()



def reload_config(d, change):
    """Rewrite dpmon's configuration file with change(doc) and SIGHUP it;
    return once the reload is applied (the summary's config.reloads)."""
    import json
    import signal as sig
    before = d.summary()['config']['reloads']
    cfgp = os.path.join(d.dir, 'dpmon.json')
    with open(cfgp) as f:
        doc = json.load(f)
    change(doc)
    with open(cfgp + '.tmp', 'w') as f:
        json.dump(doc, f)
    os.rename(cfgp + '.tmp', cfgp)
    d.proc.send_signal(sig.SIGHUP)
    wait_for('the reload to be applied', lambda: d.summary()['config']['reloads'] > before)


def quiet(fn):
    """fn() for a wait_for: None while the server or dpmon cannot answer yet
    (no database yet, no snapshot yet)."""
    def call():
        try:
            return fn()
        except (TestFailure, OSError):
            return None
    return call


def ch_totals(ch):
    """{direction: (sum(packets), sum(bytes))} of the totals table."""
    return {r[0]: (int(r[1]), int(r[2])) for r in ch.rows(
        'SELECT toString(direction), sum(packets), sum(bytes) FROM %s.totals '
        'GROUP BY direction' % DB)}


def test_clickhouse_tables_gone(h):
    """The tables go away while dpmon exports: DROP TABLE hosts, then a
    server that comes back empty (no database). The first INSERT answered
    404 (UNKNOWN_TABLE, UNKNOWN_DATABASE) makes them again and the spool
    drains, with no SIGHUP; the rows of both lives of the server sum to
    dpmon's final counts exactly."""
    sub, _, _ = expected(h)
    c = h.checker('clickhouse tables gone')
    ch = servers.ClickHouse()
    data = os.path.join(ch.dir, 'data')
    try:
        ch.start()
        cfg = export_config(ch={'url': ch.url, 'database': DB, 'timeout_ms': 2000},
                            retry_max_ms=1000, flush_timeout_ms=30000)
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-gone', extra_config=cfg, vdev_args=',infinite_rx=1') as d:
            wait_for('host rows', quiet(lambda: int(ch.rows(
                'SELECT count() FROM %s.hosts' % DB)[0][0]) > 0))
            ch.query('DROP TABLE %s.hosts' % DB)
            f0 = exporter(d.summary(), 'clickhouse')['failures']

            def hosts_again():
                t = ch.rows("SELECT count() FROM system.tables WHERE database = '%s' AND "
                            "name = 'hosts'" % DB)
                return t == [['1']] and int(ch.rows(
                    'SELECT count() FROM %s.hosts' % DB)[0][0]) > 0
            wait_for('dpmon.hosts made again, with rows', quiet(hosts_again), timeout=20)
            e = exporter(d.summary(), 'clickhouse')
            c.true('the 404 counted as a failure', e['failures'] > f0, repr(e))
            c.true('last_error says the table is missing and made again',
                   'Code: 60: table dpmon.hosts is missing; made again before the next '
                   'attempt' in (e['last_error'] or ''), repr(e['last_error']))
            wait_for('the spool to drain', lambda: exporter(d.summary(), 'clickhouse')
                     ['spool_depth'] <= 1)

            # The server comes back empty: its data directory set aside.
            ch.stop()
            os.rename(data, data + '.first')
            time.sleep(2.0)
            ch.start()
            wait_for('the database made again and the spool drained', quiet(lambda: ch.rows(
                "SELECT count() FROM system.tables WHERE database = '%s'" % DB) == [['4']]
                and exporter(d.summary(), 'clickhouse')['spool_depth'] <= 1), timeout=30)
            e = exporter(d.summary(), 'clickhouse')
            c.true('last_error says the database is missing',
                   'Code: 81: database dpmon is missing; made again before the next attempt'
                   in (e['last_error'] or ''), repr(e['last_error']))
            c.eq('rc of stop', 0, d.stop())
            c.eq('dropped_intervals', 0, e['dropped_intervals'])
            ing, eg = final_counts(d)
        second = ch_totals(ch)
        ch.stop()
        os.rename(data, data + '.second')
        os.rename(data + '.first', data)
        ch.start()
        first = ch_totals(ch)
        for t, want in (('ingress', ing), ('egress', eg)):
            got = tuple(first.get(t, (0, 0))[i] + second.get(t, (0, 0))[i] for i in (0, 1))
            c.eq('totals %s: first server + the one back empty == final snapshot' % t,
                 want, got)
        c.true('rows in both lives of the server', first.get('ingress', (0, 0))[0] > 0 and
               second.get('ingress', (0, 0))[0] > 0, repr((first, second)))
    finally:
        ch.__exit__(None, None, None)
    c.done()


def test_clickhouse_tables_gone_no_create(h):
    """"create_tables": false and no hosts table: the error says what to
    run; once the table is made by hand the spool drains, no SIGHUP, and
    the sums are exact."""
    import subprocess
    sub, hosts, total_bytes = expected(h)
    c = h.checker('clickhouse table missing, create_tables false')
    with servers.ClickHouse() as ch:
        p = subprocess.run([h.dpmon, '--print-schema', 'clickhouse'], capture_output=True,
                           text=True)
        ddl = {}
        for stmt in p.stdout.split(';'):
            m = re.search(r'CREATE (?:TABLE|DATABASE) IF NOT EXISTS dpmon(?:\.(\w+))?', stmt)
            if m:
                ddl[m.group(1) or ''] = stmt.strip()
        c.eq('--print-schema: the database and four tables', ['', 'alerts', 'hosts',
                                                              'subnets', 'totals'], sorted(ddl))
        for t in ('', 'totals', 'subnets', 'alerts'):
            ch.query(ddl[t])
        cfg = export_config(ch={'url': ch.url, 'database': DB, 'create_tables': False,
                                'timeout_ms': 2000}, retry_max_ms=500)
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-nocreate', extra_config=cfg) as d:
            s = d.wait_counts(PACKETS, total_bytes, 0)
            e = wait_for('the refusal', lambda: (lambda e: e if e['failures'] > 0 else None)(
                exporter(d.summary(), 'clickhouse')))
            c.eq('last_error: what to run',
                 'writing hosts: HTTP 404: Code: 60: table dpmon.hosts is missing; '
                 'create_tables is false: run dpmon --print-schema clickhouse | '
                 'clickhouse-client --multiquery', e['last_error'])
            time.sleep(1.0)
            ch.query(ddl['hosts'])
            wait_for('the spool to drain', lambda: exporter(d.summary(), 'clickhouse')
                     ['spool_depth'] == 0, timeout=20)
            check_clickhouse_tables(c, ch, d, s, sub, hosts)
            c.eq('rc of stop', 0, d.stop())
    c.done()


def test_reload_storm(h):
    """The export section removed and added again, five times, while the
    capture replays: every interval is written once (the sums in ClickHouse
    equal dpmon's final counts, not a multiple of them)."""
    sub, _, _ = expected(h)
    c = h.checker('export reload storm')
    with servers.ClickHouse() as ch:
        cfg = export_config(ch={'url': ch.url, 'database': DB, 'timeout_ms': 2000},
                            retry_max_ms=500, flush_timeout_ms=10000)
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-storm', extra_config=cfg, vdev_args=',infinite_rx=1') as d:
            wait_for('rows', quiet(lambda: ch_totals(ch).get('ingress', (0, 0))[0] > 0))
            for i in range(5):
                reload_config(d, lambda doc: doc.pop('export'))
                c.eq('round %d: no exporter once removed' % i, [], d.summary()['exporters'])
                time.sleep(1.5)
                reload_config(d, lambda doc: doc.update(cfg))
                c.eq('round %d: the exporter back' % i, ['clickhouse'],
                     [e['name'] for e in d.summary()['exporters']])
                time.sleep(1.0)
            wait_for('the spool to drain', lambda: exporter(d.summary(), 'clickhouse')
                     ['spool_depth'] <= 1)
            e = exporter(d.summary(), 'clickhouse')
            c.eq('rc of stop', 0, d.stop())
            ing, eg = final_counts(d)
        tot = ch_totals(ch)
        c.eq('totals ingress in ClickHouse == final snapshot', ing, tot.get('ingress'))
        c.eq('totals egress in ClickHouse == final snapshot', eg, tot.get('egress'))
        c.eq('subnets ingress in ClickHouse == final snapshot', ing,
             ch_sum(ch, 'subnets', "WHERE direction = 'ingress'"))
        c.eq('dropped_intervals', 0, e['dropped_intervals'])
    c.done()


def test_reload_format(h):
    """A reload changes the insert format while batches wait for the server:
    each batch goes in the format it was encoded in (RowBinary sent as
    JSONEachRow would be refused until the spool dropped it), and the
    sums equal dpmon's final counts."""
    sub, _, _ = expected(h)
    c = h.checker('export format reloaded with batches spooled')
    ch = servers.ClickHouse()
    try:
        cfg = export_config(ch={'url': ch.url, 'database': DB, 'timeout_ms': 2000},
                            retry_max_ms=500, flush_timeout_ms=10000)
        with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in enumerate(sub)],
                         'export-format', extra_config=cfg, vdev_args=',infinite_rx=1') as d:
            wait_for('RowBinary batches spooled', quiet(lambda: exporter(
                d.summary(), 'clickhouse')['spool_depth'] >= 3))
            reload_config(d, lambda doc: doc['export']['clickhouse'].update(
                format='JSONEachRow'))
            s0 = d.summary()['snapshot_seq']
            wait_for('JSONEachRow batches spooled after them',
                     lambda: d.summary()['snapshot_seq'] >= s0 + 3)
            ch.start()
            wait_for('the spool to drain', lambda: exporter(d.summary(), 'clickhouse')
                     ['spool_depth'] <= 1, timeout=30)
            e = exporter(d.summary(), 'clickhouse')
            c.eq('rc of stop', 0, d.stop())
            ing, eg = final_counts(d)
        tot = ch_totals(ch)
        c.eq('totals ingress in ClickHouse == final snapshot', ing, tot.get('ingress'))
        c.eq('totals egress in ClickHouse == final snapshot', eg, tot.get('egress'))
        c.eq('dropped_intervals', 0, e['dropped_intervals'])
        c.true('last_error is from the outage, never a parse error: %r' % e['last_error'],
               'onnect' in (e['last_error'] or ''))
    finally:
        ch.__exit__(None, None, None)
    c.done()


def test_garbage_2xx(h):
    """A 2xx answer with a body the server never sends for a write (a
    proxy's page, "Ok." from a ClickHouse ping URL): a failure, counted and
    retried; once the real answer comes, every row arrives once."""
    sub, _, total_bytes = expected(h)
    cases = [('clickhouse', 'Ok.\n', 'writing totals: HTTP 200 with a body, which clickhouse '
              'never sends: Ok.'),
             ('influxdb', '<html><body>Welcome to the proxy</body></html>',
              'writing totals: HTTP 200 with a body, which influxdb never sends: <html><body>'
              'Welcome to the proxy</body></html>')]
    for name, garbage, reason in cases:
        c = h.checker('2xx with a garbage body: %s' % name)
        state = {'garbage': True}
        got = []

        def handler(req, name=name, garbage=garbage, state=state, got=got):
            if name == 'clickhouse':
                q = req['path'].split('query=', 1)[1] if 'query=' in req['path'] else ''
                if not q.startswith('INSERT'):
                    return 200, ''
                if state['garbage']:
                    return 200, garbage
                if 'dpmon.totals' in q:
                    got.extend(req['body'].decode().splitlines())
                return 200, ''
            if not req['path'].startswith('/write?'):
                return 200, '{"results":[{"statement_id":0}]}'
            if state['garbage']:
                return 200, garbage
            got.extend(req['body'].decode().splitlines())
            return 204, ''
        with servers.FakeHTTP(handler) as srv:
            sink = {'url': srv.url, 'timeout_ms': 2000}
            if name == 'clickhouse':
                sink['format'] = 'JSONEachRow'
            cfg = export_config(retry_max_ms=300, **{
                'influx' if name == 'influxdb' else 'ch': sink})
            with h.dpmon_run([h.td(*PCAP)], [(p, 's%d' % i) for i, (p, _, _) in
                                             enumerate(sub)],
                             'export-garbage-' + name, extra_config=cfg) as d:
                s = d.wait_counts(PACKETS, total_bytes, 0)
                e = wait_for('two failures', lambda: (
                    lambda x: x if x['failures'] >= 2 else None)(exporter(d.summary(), name)))
                c.eq('last_error', reason, e['last_error'])
                c.eq('batches (none taken)', 0, e['batches'])
                c.eq('rows (none taken)', 0, e['rows'])
                state['garbage'] = False
                wait_for('the spool to drain', lambda: exporter(d.summary(), name)
                         ['spool_depth'] == 0 and exporter(d.summary(), name)['batches'] > 0)
                c.eq('rc of stop', 0, d.stop())
            if name == 'clickhouse':
                import json
                rows = [json.loads(x) for x in got]
                ingress = [(r['packets'], r['bytes']) for r in rows
                           if r['direction'] == 'ingress']
            else:
                pts = [parse_line(x) for x in got]
                ingress = [(f['packets'], f['bytes']) for m, t, f in pts
                           if m == 'totals' and t['direction'] == 'ingress']
            c.eq('totals ingress written once, after the retries == API',
                 (s['totals']['ingress']['packets'], s['totals']['ingress']['bytes']),
                 (sum(x[0] for x in ingress), sum(x[1] for x in ingress)))
        c.done()


def test_alert_fingerprint_clickhouse(h):
    """The alert's fingerprint in the ClickHouse alerts rows, both insert
    formats, against a real ClickHouse: the start row has none yet (""),
    the end row holds the API's fingerprint of the ended alert."""
    import json
    import tempfile
    tmp = tempfile.mkdtemp(prefix='dpmon-export-fp-')
    flood, _ = h.gen(tmp, 'in5', ['--subnet', '10.0.0.4/30', '--egress-percent', '0',
                                  '--hosts', '1', '--packets', '40000', '--mix', 'udp=1'])
    for fmt in ('RowBinary', 'JSONEachRow'):
        c = h.checker('alert fingerprint in ClickHouse (%s)' % fmt)
        with servers.ClickHouse() as ch:
            cfg = export_config(ch={'url': ch.url, 'database': DB, 'format': fmt})
            cfg.update({'average_time_constant_ms': 1000,
                        'detection': {'thresholds': {'ingress': {'pps': 1000}}, 'hold_s': 1},
                        'actions': {'flowspec': {'sample_packets': 200,
                                                 'sample_timeout_s': 30}}})
            with h.dpmon_run([flood], [('10.0.0.0/24', 'lan')], 'export-fp',
                             extra_config=cfg, vdev_args=',infinite_rx=1') as d:
                wait_for('the fingerprint ready', quiet(lambda: (lambda a: a and (
                    a[0].get('fingerprint') or {}).get('state') == 'ready')(
                        d.get('/api/v1/alerts')['alerts'])), timeout=30)
                reload_config(d, lambda doc: doc['detection'].update(
                    thresholds={'ingress': {'pps': 1e12}}))
                alerts = wait_for('the alert to end', lambda: (
                    lambda doc: doc if doc['alerts'] and doc['active'] == 0 else None)(
                        d.get('/api/v1/alerts')), timeout=30)['alerts']
                rows = wait_for('its end row', quiet(lambda: (
                    lambda r: r if len(r) == 2 else None)([json.loads(x) for x in ch.query(
                        'SELECT toString(event) AS ev, id, fingerprint FROM %s.alerts '
                        'ORDER BY event FORMAT JSONEachRow' % DB).splitlines() if x])))
                c.eq('rc of stop', 0, d.stop())
            c.eq("the end row's fingerprint through ClickHouse 18.16's own JSON functions "
                 "(docs/export.md)", [['ready']], ch.rows(
                     "SELECT visitParamExtractString(fingerprint, 'state') FROM %s.alerts "
                     "WHERE event = 'end'" % DB))
            c.eq('alerts in the API', 1, len(alerts))
            a = alerts[0]
            c.eq('events and ids', [('start', str(a['id'])), ('end', str(a['id']))],
                 [(r['ev'], str(r['id'])) for r in rows])
            c.eq('start row: no fingerprint yet', '', rows[0]['fingerprint'])
            c.eq('end row: the API\'s fingerprint', a['fingerprint'],
                 json.loads(rows[1]['fingerprint'] or 'null'))
            c.eq('its state', 'ready', a['fingerprint']['state'])
        c.done()
    shutil_rmtree(tmp)


def shutil_rmtree(d):
    import shutil
    shutil.rmtree(d, ignore_errors=True)


_tmpdirs = []


def srv_dir(h):
    """A temporary directory, removed when the test program ends."""
    import atexit
    import tempfile
    d = tempfile.mkdtemp(prefix='dpmon-export-')
    if not _tmpdirs:
        atexit.register(lambda: [shutil_rmtree(x) for x in _tmpdirs])
    _tmpdirs.append(d)
    return d


if __name__ == '__main__':
    harness.main(globals())
