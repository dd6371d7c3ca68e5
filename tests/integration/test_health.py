#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""/health tells the truth, and dpmon feeds the systemd watchdog only while
it works (lib/serve/health.h, lib/run/service.c).

dpmon runs with merge_interval_ms 200, so the merge and the lcores may be
1 s late (DPMON_HEALTH_MIN_AGE_MS), and with DPMON_TEST_HOOKS set to a
directory of the test's (lib/run/hooks.c): the file hold-merge stops the
main lcore before its next merge, hold-worker-<N> stops worker lcore N
polling. Checked:

 - the merge held: /health answers 503 {"status": "unhealthy", "reasons":
   ["merge: no merge for A s (limit 1.0 s)"]} within 3 s, also to a
   client sending the ETag of its last 200 (no 304), with the snapshot_seq
   it had; the summary answers 200 with the same "health" and no ETag;
   released: /health 200 "ok" again, with reasons [] and a newer snapshot;
 - a worker lcore held: 503 with "worker lcore 1: no RX poll for A s
   (limit 1.0 s)" while the merges go on; released: 200;
 - no false alarm: with software_rss (a distributor and two workers) and
   the longest idle sleep (idle_sleep_us 100000), /health stays 200 "ok"
   for 3 s once the capture is read, every lcore asleep most of the time;
 - the watchdog: a socket playing systemd's NOTIFY_SOCKET (WATCHDOG_USEC
   1 s) receives READY=1 first, then WATCHDOG=1 always less than
   WATCHDOG_USEC apart (systemd's contract; dpmon aims at a quarter of it
   plus one merge); none while the merge is held or (after the lcore limit)
   while a worker is held; again once released; STOPPING=1 at SIGTERM.
"""
import os
import re
import signal
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SUBNET = '10.0.0.0/24'
MERGE_REASON = re.compile(r'^merge: no merge for [0-9]+\.[0-9] s \(limit 1\.0 s\)$')
WORKER_REASON = re.compile(r'^worker lcore 1: no RX poll for [0-9]+\.[0-9] s \(limit 1\.0 s\)$')


def capture(h, tmp):
    pcap = os.path.join(tmp, 'a.pcap')
    harness.subprocess.run([h.dpmon_gen, '-o', pcap, '--packets', '2000', '--subnet', SUBNET],
                           stdout=harness.subprocess.DEVNULL, check=True, timeout=60)
    return pcap


def hold(hooks, name, on):
    path = os.path.join(hooks, name)
    if on:
        open(path, 'w').close()
    else:
        os.unlink(path)


def wait_health(d, status, timeout):
    """(seconds waited, HTTP status, headers, body) once /health answers `status`."""
    t0 = time.monotonic()
    while True:
        got, headers, doc = d.request('/health')
        if got == status or time.monotonic() - t0 > timeout:
            return time.monotonic() - t0, got, headers, doc
        time.sleep(0.05)


def test_merge_held(h):
    c = h.checker('merge held')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-health-') as tmp:
        hooks = os.path.join(tmp, 'hooks')
        os.mkdir(hooks)
        with h.dpmon_run([capture(h, tmp)], [(SUBNET, 'office')], 'health-merge',
                         env={'DPMON_TEST_HOOKS': hooks}) as d:
            d.wait_counts(2000)
            _, status, headers, doc = wait_health(d, 200, 10)
            c.eq('healthy: status', (200, 'ok', []), (status, doc['status'], doc['reasons']))
            etag = headers.get('ETag')
            c.true('healthy: an ETag', etag is not None)
            s = d.summary()
            c.eq('healthy: summary health', {'status': 'ok', 'reasons': []}, s['health'])

            hold(hooks, 'hold-merge', True)
            waited, status, headers, doc = wait_health(d, 503, 5)
            c.eq('held: /health status', 503, status)
            c.true('held: 503 within 3 s', waited <= 3.0, '%.2f s' % waited)
            c.note('503 %.2f s after the merge was held' % waited)
            c.eq('held: body keys', ['reasons', 'snapshot_seq', 'status'], sorted(doc))
            c.eq('held: status', 'unhealthy', doc['status'])
            c.eq('held: one reason', 1, len(doc['reasons']))
            c.true('held: the merge reason', MERGE_REASON.match(doc['reasons'][0]),
                   doc['reasons'])
            c.true('held: no ETag on the 503', headers.get('ETag') is None)
            seq = doc['snapshot_seq']
            status, _, doc = d.request('/health', headers={'If-None-Match': etag})
            c.eq('held: If-None-Match of the last 200 still gets the 503', 503, status)
            status, headers, s = d.request('/api/v1/summary')
            c.eq('held: summary status', 200, status)
            c.eq('held: summary of the last snapshot', seq, s['snapshot_seq'])
            c.eq('held: summary health status', 'unhealthy', s['health']['status'])
            c.true('held: summary health reason',
                   len(s['health']['reasons']) == 1 and
                   MERGE_REASON.match(s['health']['reasons'][0]), s['health'])
            c.true('held: no ETag on the summary', headers.get('ETag') is None)
            time.sleep(0.5)
            status, _, doc = d.request('/health')
            c.eq('held: still 503, same snapshot', (503, seq), (status, doc['snapshot_seq']))

            hold(hooks, 'hold-merge', False)
            waited, status, _, doc = wait_health(d, 200, 5)
            c.eq('released: /health', (200, 'ok', []), (status, doc['status'], doc['reasons']))
            c.true('released: within 1 s', waited <= 1.0, '%.2f s' % waited)
            c.true('released: a newer snapshot', doc['snapshot_seq'] > seq, doc)
            c.eq('released: summary health', {'status': 'ok', 'reasons': []},
                 d.summary()['health'])
            c.eq('exit status', 0, d.stop())
    c.done()


def test_worker_held(h):
    c = h.checker('worker held')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-health-') as tmp:
        hooks = os.path.join(tmp, 'hooks')
        os.mkdir(hooks)
        with h.dpmon_run([capture(h, tmp)], [(SUBNET, 'office')], 'health-worker',
                         env={'DPMON_TEST_HOOKS': hooks}) as d:
            before = d.wait_counts(2000)['totals']['ingress']['packets']
            _, status, _, doc = wait_health(d, 200, 10)
            c.eq('healthy', 200, status)
            hold(hooks, 'hold-worker-1', True)
            waited, status, _, doc = wait_health(d, 503, 6)
            c.eq('held: /health status', 503, status)
            c.true('held: 503 within 3 s', waited <= 3.0, '%.2f s' % waited)
            c.note('503 %.2f s after the worker was held' % waited)
            c.eq('held: status', 'unhealthy', doc['status'])
            c.true('held: the worker reason only',
                   len(doc['reasons']) == 1 and WORKER_REASON.match(doc['reasons'][0]),
                   doc['reasons'])
            seq = doc['snapshot_seq']
            time.sleep(0.6)
            status, _, doc = d.request('/health')
            c.eq('held: still 503', 503, status)
            c.true('held: the merges go on', doc['snapshot_seq'] > seq, doc)
            s = d.summary()
            c.true('held: summary health',
                   s['health']['status'] == 'unhealthy' and
                   WORKER_REASON.match(s['health']['reasons'][0]), s['health'])
            hold(hooks, 'hold-worker-1', False)
            waited, status, _, doc = wait_health(d, 200, 5)
            c.eq('released: /health', (200, 'ok', []), (status, doc['status'], doc['reasons']))
            c.true('released: within 1 s', waited <= 1.0, '%.2f s' % waited)
            c.eq('counts kept', before, d.summary()['totals']['ingress']['packets'])
            c.eq('exit status', 0, d.stop())
    c.done()


def test_idle_srss_healthy(h):
    c = h.checker('idle software RSS')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-health-') as tmp:
        with h.dpmon_run([capture(h, tmp)], [(SUBNET, 'office')], 'health-srss',
                         lcores=['--lcores', '0@0,1@1,2@1,3@0'],
                         extra_config={'software_rss': True, 'idle_sleep_us': 100000}) as d:
            d.wait_counts(2000)
            answers, end = [], time.monotonic() + 3.0
            while time.monotonic() < end:
                status, _, doc = d.request('/health')
                answers.append((status, doc['status'], tuple(doc['reasons'])))
                time.sleep(0.1)
            c.true('at least 20 answers', len(answers) >= 20, len(answers))
            c.eq('every answer 200 "ok" without a reason', [(200, 'ok', ())],
                 sorted(set(answers)))
            c.eq('summary health', {'status': 'ok', 'reasons': []}, d.summary()['health'])
            c.eq('exit status', 0, d.stop())
    c.done()


class NotifySocket:
    """systemd's side of sd_notify: a Unix datagram socket at a temp path."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.sock.settimeout(0.05)

    def read(self, seconds):
        """[(monotonic time, message line)] received within `seconds`."""
        out, end = [], time.monotonic() + seconds
        while time.monotonic() < end:
            try:
                data = self.sock.recv(4096)
            except socket.timeout:
                continue
            now = time.monotonic()
            out += [(now, line) for line in data.decode().splitlines()]
        return out

    def close(self):
        self.sock.close()


def pings(msgs):
    return [t for t, m in msgs if m == 'WATCHDOG=1']


def longest_gap(times):
    return max((b - a for a, b in zip(times, times[1:])), default=float('inf'))


def test_watchdog(h):
    c = h.checker('watchdog')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-notify-') as tmp:
        hooks = os.path.join(tmp, 'hooks')
        os.mkdir(hooks)
        path = os.path.join(tmp, 'notify')
        ns = NotifySocket(path)
        env = {'DPMON_TEST_HOOKS': hooks, 'NOTIFY_SOCKET': path, 'WATCHDOG_USEC': '1000000'}
        try:
            with h.dpmon_run([capture(h, tmp)], [(SUBNET, 'office')], 'watchdog',
                             env=env) as d:
                msgs = ns.read(2.5)
                lines = [m for _, m in msgs]
                c.true('READY=1 first', lines[:1] == ['READY=1'], lines[:3])
                c.true('STATUS after READY', 'STATUS=merging every 200 ms' in lines, lines[:3])
                t = pings(msgs)
                c.true('WATCHDOG=1 repeated: at least 5 in 2.5 s', len(t) >= 5, len(t))
                # The contract: a ping within every WATCHDOG_USEC, else systemd
                # restarts dpmon. dpmon pings every 250 ms + one merge; the
                # margin is for a loaded test machine's scheduling.
                c.true('pings less than WATCHDOG_USEC (1 s) apart', longest_gap(t) < 1.0,
                       '%.3f s' % longest_gap(t))
                c.note('%d pings in 2.5 s, at most %.3f s apart' % (len(t), longest_gap(t)))

                hold(hooks, 'hold-merge', True)
                ns.read(0.3)  # a merge already under way may still ping
                t = pings(ns.read(1.5))
                c.eq('merge held: no WATCHDOG=1 for 1.5 s', [], t)
                hold(hooks, 'hold-merge', False)
                t = pings(ns.read(1.0))
                c.true('merge released: WATCHDOG=1 again', len(t) >= 2, len(t))

                hold(hooks, 'hold-worker-1', True)
                ns.read(1.6)  # the lcore limit (1 s) and one merge
                t = pings(ns.read(1.5))
                c.eq('worker held: no WATCHDOG=1 for 1.5 s', [], t)
                hold(hooks, 'hold-worker-1', False)
                t = pings(ns.read(1.0))
                c.true('worker released: WATCHDOG=1 again', len(t) >= 2, len(t))

                d.proc.send_signal(signal.SIGTERM)
                lines = [m for _, m in ns.read(2.0)]
                c.true('STOPPING=1 at SIGTERM', 'STOPPING=1' in lines, lines[-3:])
                c.eq('exit status', 0, d.stop())
        finally:
            ns.close()
    c.done()


if __name__ == '__main__':
    harness.main(globals())
