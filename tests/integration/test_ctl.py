#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpmonctl (lib/ctl, docs/operations.md) against a dpmon on
pcapplusplus/example.pcap, its 17 destination /24s monitored:

 - every view's table (summary, top with its options, host, subnets,
   alerts, blackhole list) equals the table rendered here, independently,
   from the API's JSON of the same snapshot; the counts shown equal the
   capture's manifest (expected/benchmark/example.pcap.*.tsv);
 - `-o json` prints the API's body byte for byte;
 - `--watch` in a pseudo-terminal: redraws in place, quits on q and on
   Ctrl-C with status 0 and the terminal's mode, cursor and screen
   restored; colours only on a terminal, never with NO_COLOR;
 - health: 0 and "ok" when healthy, 3 and the reason with the merge held;
 - blackhole add, list, del round trip, and the API's 400 as one line;
 - reload by pid file: applied, then refused with the file's error;
 - errors: a dead URL, a 404 host, bad arguments (status 2), the bearer
   token sent on POST and DELETE only (a stub server records it); https
   with --cacert, and a clear error without it; flowspec list, add and
   del against the documented shape of /api/v1/flowspec (the stub's): the
   body add sends for its options, a manual rule's "manual" alert.
"""
import http.server
import json
import os
import pty
import re
import select
import ssl
import subprocess
import sys
import tempfile
import termios
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PCAP = ('pcaps', 'pcapplusplus', 'example.pcap')
PACKETS = 4631
# Host alerts on averaged pps; 10.0.0.6 receives 2795 packets at once.
DETECTION = {'thresholds': {'ingress': {'pps': 50}}}

# ---------------------------------------------------------------------------
# The tables, rendered from the API's JSON (the format of lib/ctl/fmt.c,
# written again here from docs/operations.md)
# ---------------------------------------------------------------------------


def unit(v, u):
    """SI value: integer below 1000, else one decimal with k, M, G, T, P."""
    sep = ' ' if u else ''
    if v is None or v < 0:
        return '-'
    if v < 999.5:
        return '%.0f%s%s' % (v, sep, u)
    i = -1
    while i < 4 and (i < 0 or v >= 999.95):
        v /= 1000.0
        i += 1
    return '%.1f%s%s%s' % (v, sep, 'kMGTP'[i], u)


def count(v):
    if v is None:
        return '-'
    return str(v) if isinstance(v, int) else '%.0f' % v


def utc(t):
    return time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(int(t)))


def duration(s):
    t = int(s)
    if s < 60:
        return '%.1fs' % s
    if t < 3600:
        return '%dm %ds' % (t // 60, t % 60)
    if t < 86400:
        return '%dh %dm' % (t // 3600, t % 3600 // 60)
    return '%dd %dh' % (t // 86400, t % 86400 // 3600)


def table(heads, right, rows):
    cells = [heads] + rows
    w = [max(len(r[i]) for r in cells) for i in range(len(heads))]
    out = []
    for r in cells:
        parts = [(c.rjust(w[i]) if right[i] else c.ljust(w[i])) for i, c in enumerate(r)]
        out.append('  '.join(parts).rstrip() + '\n')
    return ''.join(out)


def nonzero(title, o):
    items = ['%s %d' % (k, v) for k, v in o.items() if v != 0]
    return '%s:%s\n' % (title, (' ' + ', '.join(items)) if items else ' none')


def render_summary(s):
    h, cfg = s['health'], s['config']
    out = 'dpmon %s, up %s, snapshot %d (interval %.3f s), health %s\n' % (
        s['version'], duration(s['uptime_s']), s['snapshot_seq'], s['interval_s'], h['status'])
    out += ''.join('  %s\n' % r for r in h['reasons'])
    out += 'subnets %d, hosts %d, blackholes %d, reloads %d applied / %d failed\n' % (
        s['subnets'], s['hosts'], s['actions']['blackholes'], cfg['reloads'],
        cfg['reload_failures'])
    if cfg['last_refusal'] is not None:
        r = cfg['last_refusal']
        out += 'last refused reload: %s UTC, %s: %s\n' % (utc(r['unix_s']), r['file'], r['reason'])
    out += '\n' + table(['TRAFFIC', 'PACKETS', 'BYTES', 'PPS', 'BPS', 'FLOWS'],
                        [False] + [True] * 5,
                        [[d, count(t['packets']), unit(t['bytes'], 'B'), unit(t['pps'], 'pps'),
                          unit(t['bps'], 'bps'), count(t['flows'])]
                         for d, t in ((d, s['totals'][d]) for d in harness.TOTALS)])
    out += '\n' + table(['PORT', 'RX QUEUES', 'RX PACKETS', 'RX BYTES', 'MISSED', 'ERRORS',
                         'NO MBUF'], [False] + [True] * 6,
                        [[p['device'], count(p['rx_queues']), count(p['ipackets']),
                          unit(p['ibytes'], 'B'), count(p['imissed']), count(p['ierrors']),
                          count(p['rx_nombuf'])] for p in s['ports']])
    out += '\n' + table(['LCORE', 'PACKETS', 'BUSY', 'HOSTS', 'CAPACITY', 'TABLE FULL',
                         'EVICTED'], [True] * 7,
                        [[count(w['lcore']), count(w['packets']), '%.1f %%' % (100 * w['busy_ratio']),
                          count(w['hosts']), count(w['host_capacity']),
                          count(w['host_table_full']), count(w['host_evictions'])]
                         for w in s['workers']])
    out += '\n' + nonzero('parse errors', s['parse_errors']) + nonzero('anomalies', s['anomalies'])
    return out


def render_top(doc, sort='bps', direction='ingress', subnet=None):
    d = 'OUT' if direction == 'egress' else 'IN'
    out = 'top %d of %d hosts%s by %s %s, snapshot %d\n' % (
        len(doc['hosts']), doc['total'], (' of ' + subnet) if subnet else '', sort, direction,
        doc['snapshot_seq'])
    rows = []
    for host in doc['hosts']:
        i, e, x = host['ingress'], host['egress'], host[direction]
        rows.append([host['address'], host['subnet'], unit(i['pps'], 'pps'), unit(i['bps'], 'bps'),
                     unit(e['pps'], 'pps'), unit(e['bps'], 'bps'), count(x['packets']),
                     unit(x['bytes'], 'B'), count(x['flows']), count(x['peers'])])
    return out + table(['ADDRESS', 'SUBNET', 'IN PPS', 'IN BPS', 'OUT PPS', 'OUT BPS',
                        d + ' PACKETS', d + ' BYTES', d + ' FLOWS', d + ' PEERS'],
                       [False, False] + [True] * 8, rows)


def render_subnets(doc):
    rows = []
    for s in doc['subnets']:
        i, e = s['ingress'], s['egress']
        rows.append([s['prefix'], s['name'] or '-', unit(i['pps'], 'pps'), unit(i['bps'], 'bps'),
                     unit(e['pps'], 'pps'), unit(e['bps'], 'bps'), count(i['packets']),
                     unit(i['bytes'], 'B'), count(e['packets']), unit(e['bytes'], 'B')])
    return table(['PREFIX', 'NAME', 'IN PPS', 'IN BPS', 'OUT PPS', 'OUT BPS', 'IN PACKETS',
                  'IN BYTES', 'OUT PACKETS', 'OUT BYTES'], [False, False] + [True] * 8, rows)


def render_host(host):
    out = 'host %s in %s, first seen %s UTC, last seen %s UTC\n\n' % (
        host['address'], host['subnet'], utc(host['first_seen']), utc(host['last_seen']))
    rows, prows = [], []
    for d in harness.DIRS:
        x = host[d]
        rows.append([d, count(x['packets']), unit(x['bytes'], 'B'), unit(x['pps'], 'pps'),
                     unit(x['bps'], 'bps'), unit(x['avg_pps'], 'pps'), unit(x['avg_bps'], 'bps'),
                     count(x['flows']), count(x['peers'])])
        for k in harness.PROTOS + ('fragments', 'tcp_syn'):
            p = x[k]
            prows.append([d, k, count(p['packets']), unit(p['bytes'], 'B'),
                          unit(p['pps'], 'pps'), unit(p['bps'], 'bps')])
    out += table(['DIRECTION', 'PACKETS', 'BYTES', 'PPS', 'BPS', 'AVG PPS', 'AVG BPS', 'FLOWS',
                  'PEERS'], [False] + [True] * 8, rows)
    return out + '\n' + table(['DIRECTION', 'CLASS', 'PACKETS', 'BYTES', 'PPS', 'BPS'],
                              [False, False] + [True] * 4, prows)


def metric_value(metric, v):
    for u in ('pps', 'bps'):
        if metric.endswith(u):
            return unit(v, u)
    return unit(v, '')


def render_alerts(doc, active=False):
    out = '%d of %d %salerts shown; %d active, %d started since dpmon started\n' % (
        len(doc['alerts']), doc['total'], 'active ' if active else '', doc['active'],
        doc['started'])
    if not doc['alerts']:
        return out
    rows = [[str(a['id']), a['state'], a['target'],
             a['address'] if a['target'] == 'host' else a['prefix'], a['direction'], a['type'],
             a['metric'], metric_value(a['metric'], a['value']),
             metric_value(a['metric'], a['threshold']), utc(a['start_unix_s']),
             duration(a['duration_s'])] for a in doc['alerts']]
    return out + table(['ID', 'STATE', 'TARGET', 'ADDRESS', 'DIRECTION', 'TYPE', 'METRIC', 'VALUE',
                        'THRESHOLD', 'START', 'DURATION'],
                       [True] + [False] * 6 + [True, True, False, True], rows)


def render_blackholes(doc):
    if not doc['blackholes']:
        return 'no blackholes\n'
    rows = [[b['address'], b['source'], '-' if b['alert_id'] is None else str(b['alert_id']),
             utc(b['since']), 'yes' if b['announced'] else 'no'] for b in doc['blackholes']]
    return table(['ADDRESS', 'SOURCE', 'ALERT', 'SINCE', 'ANNOUNCED'],
                 [False, False, True, False, False], rows)


FLOWSPEC = {'rules': [
    {'id': 3, 'alert_id': 7, 'match': 'destination 10.0.0.5/32; protocol udp; source-port =53;',
     'action': 'discard', 'announced': True, 'coverage': 0.875, 'packets': 333,
     'created': 1764522010.25},
    {'id': 12, 'alert_id': 9, 'match': 'destination 10.0.0.6/32; protocol tcp;',
     'action': 'rate-limit 1000', 'announced': False, 'coverage': 1.0, 'packets': 12,
     'created': 1764522099.0},
    {'id': 13, 'alert_id': None, 'match': 'destination 10.0.0.0/25; protocol tcp;',
     'action': 'discard', 'announced': True, 'coverage': 0.0, 'packets': 0,
     'created': 1764522100.0}]}


def render_flowspec(doc):
    rows = [[str(f['id']), 'manual' if f['alert_id'] is None else str(f['alert_id']), f['action'], 'yes' if f['announced'] else 'no',
             '%.0f %%' % (100 * f['coverage']), str(f['packets']), utc(f['created']),
             f['match']] for f in doc['rules']]
    return table(['ID', 'ALERT', 'ACTION', 'ANNOUNCED', 'COVERAGE', 'PACKETS', 'CREATED', 'MATCH'],
                 [True, True, False, False, True, True, False, False], rows)


# ---------------------------------------------------------------------------
# Running dpmonctl
# ---------------------------------------------------------------------------


class Ctl:
    def __init__(self, h, url):
        self.exe = os.path.join(h.build, 'app', 'dpmonctl')
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ('NO_COLOR', 'DPMON_URL', 'DPMON_TOKEN_FILE')}
        self.env['DPMON_URL'] = url

    def run(self, *args, env=None):
        """(exit status, stdout, stderr) of dpmonctl ARGS."""
        p = subprocess.run([self.exe] + list(args), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30,
                           env=dict(self.env, **(env or {})))
        return p.returncode, p.stdout.decode(), p.stderr.decode()


def raw_get(d, path):
    with urllib.request.urlopen('http://127.0.0.1:%d%s' % (d.port, path), timeout=10) as r:
        return r.read().decode()


def same_snapshot(c, what, d, path, run):
    """(API body, dpmonctl's result) with the API answering the same bytes
    before and after dpmonctl ran: both from one snapshot."""
    for _ in range(30):
        before = raw_get(d, path)
        got = run()
        if raw_get(d, path) == before:
            return before, got
        time.sleep(0.05)
    c.fail('%s: no two equal answers of %s around dpmonctl in 30 tries' % (what, path))
    return before, got


def check_view(c, d, ctl, what, args, path, render):
    body, (rc, out, err) = same_snapshot(c, what, d, path, lambda: ctl.run(*args))
    c.eq('%s: exit status' % what, 0, rc)
    c.eq('%s: no message' % what, '', err)
    c.eq('%s: the table' % what, render(json.loads(body)), out)
    body, (rc, out, err) = same_snapshot(c, what + ' -o json', d, path,
                                         lambda: ctl.run('-o', 'json', *args))
    c.eq('%s -o json: exit status' % what, 0, rc)
    c.eq('%s -o json: the API body unchanged' % what, body + '\n', out)
    return out


# ---------------------------------------------------------------------------
# The views
# ---------------------------------------------------------------------------


def views(h, c, d, ctl):
    hosts = {r['host']: r for r in harness.read_tsv(
        h.td('expected', 'benchmark', 'example.pcap.hosts.tsv'))}
    check_view(c, d, ctl, 'summary', ['summary'], '/api/v1/summary', render_summary)
    rc, out, _ = ctl.run('summary')
    row = [l for l in out.splitlines() if l.startswith('ingress ')]
    c.eq('summary: ingress packets (manifest)', str(PACKETS), row[0].split()[1] if row else None)
    check_view(c, d, ctl, 'top', ['top'], '/api/v1/hosts?sort=bps&direction=ingress&limit=20',
               render_top)
    check_view(c, d, ctl, 'top --sort bytes -n 5', ['top', '--sort', 'bytes', '-n', '5'],
               '/api/v1/hosts?sort=bytes&direction=ingress&limit=5',
               lambda doc: render_top(doc, 'bytes'))
    out = check_view(c, d, ctl, 'top egress in a subnet',
                     ['top', '--direction', 'egress', '--sort', 'packets', '--subnet',
                      '10.0.0.0/24', '--limit', '3'],
                     '/api/v1/hosts?sort=packets&direction=egress&limit=3&subnet=10.0.0.0%2F24',
                     lambda doc: render_top(doc, 'packets', 'egress', '10.0.0.0/24'))
    rc, out, _ = ctl.run('top', '--sort', 'bytes', '-n', '1')
    line = out.splitlines()[2].split() if len(out.splitlines()) > 2 else []
    c.eq('top by bytes: first host and its ingress packets (manifest)',
         ['10.0.0.6', hosts['10.0.0.6']['pkts_as_dst']], [line[0], line[10]] if line else None)
    for addr in ('10.0.0.6', '212.199.202.9'):
        check_view(c, d, ctl, 'host %s' % addr, ['host', addr], '/api/v1/hosts/' + addr,
                   render_host)
        rc, out, _ = ctl.run('host', addr)
        got = {l.split()[0]: l.split()[1] for l in out.splitlines()[3:5]}
        c.eq('host %s: packets by direction (manifest)' % addr,
             {'ingress': hosts[addr]['pkts_as_dst'], 'egress': hosts[addr]['pkts_as_src']}, got)
    check_view(c, d, ctl, 'subnets', ['subnets'], '/api/v1/subnets', render_subnets)
    out = check_view(c, d, ctl, 'alerts', ['alerts'], '/api/v1/alerts', render_alerts)
    c.true('alerts: 10.0.0.6 among them',
           any(a.get('address') == '10.0.0.6' for a in json.loads(out)['alerts']), out[:300])
    check_view(c, d, ctl, 'alerts --active', ['alerts', '--active'],
               '/api/v1/alerts?state=active', lambda doc: render_alerts(doc, True))


# ---------------------------------------------------------------------------
# --watch in a pseudo-terminal
# ---------------------------------------------------------------------------

ENTER = b'\x1b[?1049h\x1b[?25l'
LEAVE = b'\x1b[?25h\x1b[?1049l'
CLEAR = b'\x1b[H\x1b[2J'


def read_until(fd, pred, timeout):
    data, deadline = b'', time.monotonic() + timeout
    while not pred(data) and time.monotonic() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                break
            if not chunk:
                break
            data += chunk
    return data


def in_pty(ctl, args, env=None):
    """dpmonctl ARGS on a new pseudo-terminal: (process, master fd)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([ctl.exe] + list(args), stdin=slave, stdout=slave, stderr=slave,
                         env=dict(ctl.env, **(env or {})), start_new_session=True,
                         preexec_fn=lambda: __import__('fcntl').ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    return p, master


def watch(c, ctl):
    for how, key in (('q', b'q'), ('Ctrl-C', b'\x03')):
        p, fd = in_pty(ctl, ['--watch', '0.3', 'top', '-n', '3'])
        before = termios.tcgetattr(fd)
        t0 = time.monotonic()
        # Four redraws begun: the third is complete.
        data = read_until(fd, lambda b: b.count(CLEAR) >= 4, 15)
        c.eq('watch (%s): redrawn 4 times' % how, 4, min(4, data.count(CLEAR)))
        c.true('watch (%s): redraws about 0.3 s apart (%.2f s for 4)'
               % (how, time.monotonic() - t0), time.monotonic() - t0 >= 0.85)
        c.true('watch (%s): alternate screen, cursor hidden first' % how,
               data.startswith(ENTER), data[:40])
        during = termios.tcgetattr(fd)
        c.eq('watch (%s): no echo, no line mode while watching' % how, 0,
             during[3] & (termios.ICANON | termios.ECHO))
        last = data.split(CLEAR)[3].decode()
        c.true('watch (%s): the view under its title' % how,
               re.match(r'^every 0\.3 s: dpmonctl top    \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC    '
                        r'q: quit\r\n\r\ntop 3 of 27 hosts by bps ingress, snapshot \d+\r\n',
                        last) is not None, last[:200])
        c.true('watch (%s): coloured on a terminal (bold titles)' % how, '\x1b[1mADDRESS' in last)
        os.write(fd, key)
        rest = read_until(fd, lambda b: LEAVE in b, 5)
        try:
            rc = p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        c.eq('watch (%s): exit status' % how, 0, rc)
        c.true('watch (%s): cursor and screen restored last' % how, rest.endswith(LEAVE),
               rest[-40:])
        c.eq('watch (%s): terminal mode restored' % how, before[3], termios.tcgetattr(fd)[3])
        os.close(fd)
    p, fd = in_pty(ctl, ['top', '-n', '1'], env={'NO_COLOR': '1'})
    data = read_until(fd, lambda b: False, 5)
    p.wait(timeout=5)
    c.true('NO_COLOR on a terminal: no escape sequence', b'\x1b' not in data, data[:100])
    os.close(fd)
    rc, out, _ = ctl.run('top', '-n', '1')
    c.true('not a terminal: no escape sequence', '\x1b' not in out)
    rc, _, err = ctl.run('--watch', '1', 'health')
    c.eq('--watch health: usage', (2, 'dpmonctl: --watch redraws summary, top or alerts only, '
                                      'without arguments\n'), (rc, err))


# ---------------------------------------------------------------------------
# health, blackholes, reload
# ---------------------------------------------------------------------------


def health(c, d, ctl, hooks):
    rc, out, err = ctl.run('health')
    c.eq('health: exit status when healthy', 0, rc)
    c.true('health: ok', re.match(r'^ok, snapshot \d+\n$', out) is not None, out)
    open(os.path.join(hooks, 'hold-merge'), 'w').close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        rc, out, err = ctl.run('health')
        if rc != 0:
            break
        time.sleep(0.2)
    c.eq('health: exit status with the merge held', 3, rc)
    c.true('health: unhealthy and the reason', re.match(
        r'^unhealthy, snapshot \d+\n  merge: no merge for [0-9.]+ s \(limit 3\.0 s\)\n$',
        out) is not None, out)
    rc, out, _ = ctl.run('-o', 'json', 'health')
    doc = json.loads(out)
    c.eq('health -o json: exit status with the merge held', 3, rc)
    c.eq('health -o json: the 503 body', 'unhealthy', doc['status'])
    os.unlink(os.path.join(hooks, 'hold-merge'))
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and ctl.run('health')[0] != 0:
        time.sleep(0.2)
    c.eq('health: exit status once released', 0, ctl.run('health')[0])


def blackholes(c, d, ctl):
    c.eq('blackhole list: empty', (0, 'no blackholes\n', ''), ctl.run('blackhole', 'list'))
    c.eq('blackhole add', (0, 'blackholed 10.0.0.5\n', ''),
         ctl.run('blackhole', 'add', '10.0.0.5'))
    c.eq('blackhole add again', (0, '10.0.0.5 was blackholed already\n', ''),
         ctl.run('blackhole', 'add', '10.0.0.5'))
    body = raw_get(d, '/api/v1/blackholes')
    c.eq('blackhole list: the table', (0, render_blackholes(json.loads(body)), ''),
         ctl.run('blackhole', 'list'))
    c.eq('blackhole list: one manual entry', ['10.0.0.5', 'manual'],
         [[b['address'], b['source']] for b in json.loads(body)['blackholes']][0])
    c.eq('blackhole list -o json', (0, body + '\n', ''), ctl.run('-o', 'json', 'blackhole', 'list'))
    c.eq('blackhole del', (0, 'removed the blackhole of 10.0.0.5\n', ''),
         ctl.run('blackhole', 'del', '10.0.0.5'))
    c.eq('blackhole del again', (0, 'no blackhole for 10.0.0.5\n', ''),
         ctl.run('blackhole', 'del', '10.0.0.5'))
    c.eq('blackhole list: empty again', (0, 'no blackholes\n', ''), ctl.run('blackhole', 'list'))
    c.eq('blackhole add outside the subnets: the API error as one line',
         (1, '', 'dpmonctl: address 192.168.1.1 is outside every monitored subnet (HTTP 400)\n'),
         ctl.run('blackhole', 'add', '192.168.1.1'))


def reload(c, d, ctl):
    pid_file = os.path.join(d.dir, 'pid')
    with open(pid_file, 'w') as f:
        f.write('%d\n' % d.proc.pid)
    c.eq('reload: applied', (0, 'reload applied (1 since start)\n', ''),
         ctl.run('reload', '--pid-file', pid_file))
    cfg = os.path.join(d.dir, 'dpmon.json')
    with open(cfg) as f:
        good = f.read()
    with open(cfg, 'w') as f:
        f.write('{"ports": [')
    rc, out, err = ctl.run('reload', '--pid-file', pid_file)
    refusal = json.loads(raw_get(d, '/api/v1/summary'))['config']['last_refusal']
    c.eq('reload: refused', (1, '', 'dpmonctl: reload refused, the running configuration stays: '
                                    '%s: %s\n' % (cfg, refusal['reason'])), (rc, out, err))
    with open(cfg, 'w') as f:
        f.write(good)
    c.eq('reload: no such pid file', 1, ctl.run('reload', '--pid-file', cfg + '.none')[0])
    # A stale pid file naming another program: no signal, the program lives.
    other = subprocess.Popen(['sleep', '60'])
    try:
        with open(pid_file, 'w') as f:
            f.write('%d\n' % other.pid)
        c.eq('reload: a pid file of another program', (1, '', 'dpmonctl: process %d of %s is '
             'not dpmon (a stale pid file?): no signal sent\n' % (other.pid, pid_file)),
             ctl.run('reload', '--pid-file', pid_file))
        c.eq('reload: the other program got no SIGHUP', None, other.poll())
    finally:
        other.kill()
        other.wait()


def test_ctl_on_capture(h):
    c = h.checker('dpmonctl')
    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    subnets = [(r['dst_prefix'], 'net%d' % i) for i, r in enumerate(rows)]
    with tempfile.TemporaryDirectory(prefix='dpmon-it-ctl-') as tmp:
        hooks = os.path.join(tmp, 'hooks')
        os.mkdir(hooks)
        with h.dpmon_run([h.td(*PCAP)], subnets, 'ctl', merge_interval_ms=1000,
                         extra_config={'detection': DETECTION},
                         env={'DPMON_TEST_HOOKS': hooks}) as d:
            d.wait_counts(PACKETS)
            ctl = Ctl(h, 'http://127.0.0.1:%d' % d.port)
            views(h, c, d, ctl)
            watch(c, ctl)
            blackholes(c, d, ctl)
            c.eq('host not seen: the 404 as one line, status 1',
                 (1, '', 'dpmonctl: host 10.0.0.99 has not been seen (HTTP 404)\n'),
                 ctl.run('host', '10.0.0.99'))
            c.eq('host outside every subnet: says so, status 1',
                 (1, '', 'dpmonctl: host 172.16.0.1 is not inside any monitored subnet '
                  '(HTTP 404)\n'), ctl.run('host', '172.16.0.1'))
            c.eq('top --sort speed: the API 400, status 1', (1, '', 'dpmonctl: invalid sort '
                 "'speed': expected pps, bps, packets, bytes, avg_pps, avg_bps, syn_pps, "
                 'fragments_pps, tcp_pps, tcp_bps, udp_pps, udp_bps, icmp_pps, icmp_bps, flows '
                 'or peers (HTTP 400)\n'), ctl.run('top', '--sort', 'speed'))
            health(c, d, ctl, hooks)
            reload(c, d, ctl)
            c.eq('dpmon exit status', 0, d.stop())
    c.done()


def test_ctl_token(h):
    """dpmonctl against a dpmon with http.write_token_file: refused without
    --token-file (the API's 401 as one line), accepted with it."""
    c = h.checker('dpmonctl with a write token')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-ctl-token-') as tmp:
        tok = os.path.join(tmp, 'token')
        fd = os.open(tok, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, 'w') as f:
            f.write('ctl-Token_9\n')
        with h.dpmon_run([h.td('pcaps', 'zeek', 'http-vlan-0.pcap')],
                         [('141.142.228.0/24', 'a')], 'ctl token',
                         extra_config={'http': {'listen': '127.0.0.1', 'port': 0,
                                                'write_token_file': tok}}) as d:
            d.wait_counts(14)
            ctl = Ctl(h, 'http://127.0.0.1:%d' % d.port)
            c.eq('blackhole add without --token-file: the 401 as one line, status 1',
                 (1, '', 'dpmonctl: this request changes state: it needs Authorization: '
                  'Bearer with the write token (http.write_token_file) (HTTP 401; give '
                  'dpmonctl the token with --token-file FILE or DPMON_TOKEN_FILE)\n'),
                 ctl.run('blackhole', 'add', '141.142.228.5'))
            wrong = os.path.join(tmp, 'wrong')
            with open(wrong, 'w') as f:
                f.write('not-the-token\n')
            c.eq('blackhole add with a wrong token: says the token was refused, status 1',
                 (1, '', 'dpmonctl: this request changes state: it needs Authorization: '
                  'Bearer with the write token (http.write_token_file) (HTTP 401; dpmon '
                  'refused the token dpmonctl sent: the file of --token-file or '
                  "DPMON_TOKEN_FILE must hold http.write_token_file's)\n"),
                 ctl.run('--token-file', wrong, 'blackhole', 'add', '141.142.228.5'))
            c.eq('blackhole add with --token-file', (0, 'blackholed 141.142.228.5\n', ''),
                 ctl.run('--token-file', tok, 'blackhole', 'add', '141.142.228.5'))
            c.eq('blackhole del with DPMON_TOKEN_FILE',
                 (0, 'removed the blackhole of 141.142.228.5\n', ''),
                 ctl.run('blackhole', 'del', '141.142.228.5', env={'DPMON_TOKEN_FILE': tok}))
    c.done()


def test_ctl_flowspec_no_pipe(h):
    """A manual FlowSpec rule without actions.exabgp_pipe: refused with a
    409 naming the key, nothing listed or logged as announced; in a dry
    run it is listed and logged as a manual rule."""
    c = h.checker('dpmonctl flowspec without an ExaBGP pipe')
    http = {'listen': '127.0.0.1', 'port': 0}
    with h.dpmon_run([h.td('pcaps', 'zeek', 'http-vlan-0.pcap')],
                     [('141.142.228.0/24', 'a')], 'ctl no pipe',
                     extra_config={'http': http}) as d:
        d.wait_counts(14)
        ctl = Ctl(h, 'http://127.0.0.1:%d' % d.port)
        c.eq('flowspec add: refused, status 1',
             (1, '', 'dpmonctl: actions.exabgp_pipe is not set: nothing would announce '
              'the rule (HTTP 409)\n'), ctl.run('flowspec', 'add', '141.142.228.7'))
        c.eq('GET /api/v1/flowspec: 200, no rule', (200, {'rules': []}),
             d.request('/api/v1/flowspec')[::2])
        c.eq('exit status', 0, d.stop())
        c.eq('nothing logged as a rule', [],
             [x for x in d.log_tail(1 << 20).splitlines() if 'flowspec rule' in x])
    with h.dpmon_run([h.td('pcaps', 'zeek', 'http-vlan-0.pcap')],
                     [('141.142.228.0/24', 'a')], 'ctl dry run',
                     extra_config={'http': http,
                                   'actions': {'flowspec': {'announce': False}}}) as d:
        d.wait_counts(14)
        ctl = Ctl(h, 'http://127.0.0.1:%d' % d.port)
        c.eq('dry run: flowspec add accepted', 0,
             ctl.run('flowspec', 'add', '141.142.228.7')[0])
        c.eq('dry run: flowspec del', 0, ctl.run('flowspec', 'del', '1')[0])
        c.eq('exit status', 0, d.stop())
        c.eq('dry run: logged as a manual rule, added and withdrawn', [
            'dpmon: actions: flowspec rule 1 (manual), dry run, not sent: announce flow '
            'route { match { destination 141.142.228.7/32; } then { discard; } }',
            'dpmon: actions: flowspec rule 1 (manual) withdrawn'],
            [re.sub(r'^<\d>', '', x) for x in d.log_tail(1 << 20).splitlines()
             if 'flowspec rule' in x])
    c.done()


# ---------------------------------------------------------------------------
# Without dpmon: dead URL, bad arguments, the token
# ---------------------------------------------------------------------------


def test_errors(h):
    c = h.checker('dpmonctl errors')
    ctl = Ctl(h, 'http://127.0.0.1:1')
    rc, out, err = ctl.run('summary')
    c.eq('dead URL: status 1, nothing on stdout', (1, ''), (rc, out))
    c.true('dead URL: one line naming the URL and what to do',
           err.count('\n') == 1 and err.startswith('dpmonctl: cannot connect to '
                                                   'http://127.0.0.1:1: ')
           and err.endswith('; is dpmon running? (--url or DPMON_URL)\n'), err)
    c.eq('dead URL: health is an error (1), not unhealthy', 1, ctl.run('health')[0])
    for what, args, msg in [
            ('no command', [], 'a command is missing (dpmonctl --help)'),
            ('unknown command', ['frob'], "unknown command 'frob' (dpmonctl --help)"),
            ('-n 0', ['top', '-n', '0'], "invalid -n '0': expected an integer 1..10000"),
            ('-n 10001', ['top', '-n', '10001'],
             "invalid -n '10001': expected an integer 1..10000"),
            ('-o xml', ['-o', 'xml', 'summary'], "invalid -o 'xml': expected table or json"),
            ('host without address', ['host'], 'host takes one ADDRESS (dpmonctl --help)'),
            ('summary with an argument', ['summary', 'x'],
             'summary takes no argument (dpmonctl --help)'),
            ('--sort on summary', ['summary', '--sort', 'pps'],
             'summary takes none of --sort, --direction, --subnet, -n, --active, --pid-file, '
             '--unit but its own (dpmonctl --help)'),
            ('blackhole frob', ['blackhole', 'frob'],
             'usage: dpmonctl blackhole list | add ADDRESS | del ADDRESS'),
            ('--watch 0', ['--watch=0', 'top'], "invalid --watch '0': expected seconds, 0.1 to "
             '3600'),
            ('ftp URL', ['--url', 'ftp://x', 'summary'],
             "invalid URL 'ftp://x': expected http://HOST:PORT or https://...")]:
        c.eq('%s: status 2 and the message' % what, (2, '', 'dpmonctl: %s\n' % msg),
             ctl.run(*args))
    rc, out, _ = ctl.run('--unknown-option')
    c.eq('unknown option: status 2', 2, rc)
    rc, out, _ = ctl.run('--help')
    c.true('--help: status 0 and the usage', rc == 0 and out.startswith('usage: dpmonctl'))

    # The token: on POST and DELETE, never on GET (a stub API records it).
    seen = []

    class Stub(http.server.BaseHTTPRequestHandler):
        def answer(self, status, doc):
            n = int(self.headers.get('Content-Length') or 0)
            body = self.rfile.read(n).decode() if n else None
            seen.append((self.command, self.path, self.headers.get('Authorization'), body))
            data = json.dumps(doc).encode()
            self.send_response(status)
            self.send_header('Content-Type', 'application/json')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            self.answer(200, FLOWSPEC if self.path == '/api/v1/flowspec' else {'blackholes': []})

        def do_POST(self):
            if self.path == '/api/v1/flowspec':
                self.answer(201, FLOWSPEC['rules'][2])
                return
            self.answer(201, {'address': '10.0.0.5', 'source': 'manual', 'alert_id': None,
                              'since': 1.0, 'announced': False})

        def do_DELETE(self):
            if self.path.startswith('/api/v1/flowspec/'):
                n = int(self.path.rsplit('/', 1)[1])
                self.answer(200, {'id': n, 'removed': n == 3})
            else:
                self.answer(200, {'address': '10.0.0.5', 'removed': True})

        def log_message(self, *a):
            pass

    srv = http.server.HTTPServer(('127.0.0.1', 0), Stub)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    with tempfile.TemporaryDirectory(prefix='dpmon-it-ctl-') as tmp:
        tok = os.path.join(tmp, 'token')
        with open(tok, 'w') as f:
            f.write('s3cret-token\n')
        stub = Ctl(h, 'http://127.0.0.1:%d/' % srv.server_address[1])
        stub.run('--token-file', tok, 'blackhole', 'list')
        stub.run('--token-file', tok, 'blackhole', 'add', '10.0.0.5')
        stub.run('blackhole', 'del', '10.0.0.5', env={'DPMON_TOKEN_FILE': tok})
        stub.run('blackhole', 'add', '10.0.0.5')
        c.eq('token: sent on POST and DELETE only, from --token-file or DPMON_TOKEN_FILE', [
            ('GET', '/api/v1/blackholes', None, None),
            ('POST', '/api/v1/blackholes', 'Bearer s3cret-token', '{"address":"10.0.0.5"}'),
            ('DELETE', '/api/v1/blackholes/10.0.0.5', 'Bearer s3cret-token', None),
            ('POST', '/api/v1/blackholes', None, '{"address":"10.0.0.5"}')], seen)
        # flowspec list and del, against the shape of GET /api/v1/flowspec.
        del seen[:]
        c.eq('flowspec list: the table', (0, render_flowspec(FLOWSPEC), ''),
             stub.run('flowspec', 'list'))
        c.eq('flowspec list -o json: the body', (0, json.dumps(FLOWSPEC) + '\n', ''),
             stub.run('-o', 'json', 'flowspec', 'list'))
        c.eq('flowspec del 3', (0, 'withdrew flowspec rule 3\n', ''),
             stub.run('--token-file', tok, 'flowspec', 'del', '3'))
        c.eq('flowspec del 4 (none)', (0, 'no flowspec rule 4\n', ''),
             stub.run('flowspec', 'del', '4'))
        c.eq('flowspec: requests, the token on DELETE only',
             [('GET', '/api/v1/flowspec', None, None)] * 2 +
             [('DELETE', '/api/v1/flowspec/3', 'Bearer s3cret-token', None),
              ('DELETE', '/api/v1/flowspec/4', None, None)], seen)
        usage = ('dpmonctl: usage: dpmonctl flowspec list | add DESTINATION [--source PREFIX] '
                 '[--protocol P] [...] | del ID\n')
        c.eq('flowspec frob: usage', (2, '', usage), stub.run('flowspec', 'frob'))
        c.eq('flowspec list with an add option: usage', (2, '', usage),
             stub.run('flowspec', 'list', '--protocol', 'tcp'))
        # flowspec add: each option is the body's key of the same name.
        del seen[:]
        c.eq('flowspec add: the rule', (0, 'added flowspec rule 13: destination 10.0.0.0/25; '
                                           'protocol tcp; then discard\n', ''),
             stub.run('--token-file', tok, 'flowspec', 'add', '10.0.0.0/25',
                      '--source', '198.51.100.0/24', '--protocol', 'tcp',
                      '--destination-ports', '80,443', '--tcp-flags', 'syn,syn+ack',
                      '--packet-length', '40-60', '--action', 'rate-limit 9600'))
        stub.run('flowspec', 'add', '10.0.0.7', '--protocol', '1', '--icmp-type', '8',
                 '--icmp-code', '0', '--fragment', '--packet-length', '-100')
        stub.run('flowspec', 'add', '10.0.0.8', '--protocol', 'udp', '--source-ports', '53',
                 '--packet-length', '512')
        c.eq('flowspec add: POST with the token, the body of the options', [
            ('POST', '/api/v1/flowspec', 'Bearer s3cret-token', {
                'destination': '10.0.0.0/25', 'source': '198.51.100.0/24', 'protocol': 'tcp',
                'destination_ports': [80, 443], 'tcp_flags': ['syn', 'syn+ack'],
                'packet_length': {'min': 40, 'max': 60}, 'action': 'rate-limit 9600'}),
            ('POST', '/api/v1/flowspec', None, {
                'destination': '10.0.0.7', 'protocol': 1, 'icmp_type': [8], 'icmp_code': 0,
                'fragment': True, 'packet_length': {'max': 100}}),
            ('POST', '/api/v1/flowspec', None, {
                'destination': '10.0.0.8', 'protocol': 'udp', 'source_ports': [53],
                'packet_length': {'min': 512, 'max': 512}})],
             [(m, p, a, json.loads(b) if b else b) for m, p, a, b in seen])
        c.eq('token file missing: status 1', (1, '', 'dpmonctl: cannot read the token file '
                                                  '%s.none: No such file or directory\n' % tok),
             stub.run('--token-file', tok + '.none', 'blackhole', 'list'))

        # HTTPS: the stub behind TLS with a certificate of its own.
        key, cert = os.path.join(tmp, 'key.pem'), os.path.join(tmp, 'cert.pem')
        subprocess.run(['openssl', 'req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout',
                        key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext',
                        'subjectAltName=IP:127.0.0.1'], check=True, timeout=60,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        tls = http.server.HTTPServer(('127.0.0.1', 0), Stub)
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        tls.socket = ctx.wrap_socket(tls.socket, server_side=True)
        threading.Thread(target=tls.serve_forever, daemon=True).start()
        https = Ctl(h, 'https://127.0.0.1:%d' % tls.server_address[1])
        c.eq('https with --cacert: the answer', (0, 'no blackholes\n', ''),
             https.run('--cacert', cert, 'blackhole', 'list'))
        rc, out, err = https.run('blackhole', 'list')
        c.eq('https, certificate not trusted: status 1', (1, ''), (rc, out))
        c.true('https, certificate not trusted: one line naming the URL and the certificate',
               err.count('\n') == 1 and err.startswith('dpmonctl: GET https://127.0.0.1:%d/api/v1/'
                                                      'blackholes: SSL certificate problem'
                                                      % tls.server_address[1]), err)
        tls.shutdown()
    srv.shutdown()
    c.done()


if __name__ == '__main__':
    harness.main(globals())
