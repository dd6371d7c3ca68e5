#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Configuration reload on SIGHUP (docs/operations.md#reload): no count is
lost or doubled, an invalid file is refused, a new subnet counts.

dpmon-gen writes a capture of 3,000,000 packets over five subnets (A, B, C,
v6 D and E, internal traffic included); dpmon reads it twice per run (two
RX queues on the same file, two worker lcores: 6,000,000 packets), once
without reload and then with one SIGHUP after another (each as soon as
the previous reload shows in a snapshot) while it reads:

  - same file: every subnet, every host (all directions and protocols),
    the host count and the totals are exactly those of the run without
    reload;
  - a file that alternately removes C and adds E (A, B and D throughout):
    A, B, D and their hosts are exactly those of the run without reload;
    C and its hosts are gone, E is listed and counted part of its traffic.

In both, at least three reloads must have completed while the capture was
still being read (else the test proves nothing and fails). Then, on a
capture replayed forever (infinite_rx): an invalid file is refused (the
process goes on, the subnets stay, the failure is counted and logged with
the file and the JSON path); a restart-only key is kept with a warning;
a file adding a subnet makes it appear and count new traffic.
"""
import json
import os
import re
import signal
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LCORES_TWO_WORKERS, TestFailure  # noqa: E402

A, B, C, D, E = '10.1.0.0/24', '10.2.0.0/24', '10.3.0.0/24', '2001:db8:4::/64', '10.5.0.0/24'
ALL = [(A, 'a'), (B, 'b'), (C, 'c'), (D, 'd'), (E, 'e')]
BASE = [(A, 'a'), (B, 'b'), (C, 'c'), (D, 'd')]
ALT = [(A, 'a'), (B, 'b'), (D, 'd'), (E, 'e')]
PACKETS = 3000000
COPIES = 2  # RX queues reading the same capture


def capture(h, tmp, name, packets, seed):
    """<tmp>/<name>.pcap: `packets` packets over the five subnets ALL."""
    args = ['--packets', str(packets), '--seed', str(seed), '--hosts', '40',
            '--internal-percent', '10', '--size', '64,128,600']
    for p, n in ALL:
        args += ['--subnet', '%s=%s' % (p, n)]
    return h.gen(tmp, name, args, timeout=300)


def write_config(d, subnets, **extra):
    """Replace d's configuration file atomically (a reload reads it whole)."""
    cfg = dict(d.config)
    cfg['subnets'] = [{'prefix': p, 'name': n} for p, n in subnets]
    cfg.update(extra)
    path = os.path.join(d.dir, 'dpmon.json')
    with open(path + '.tmp', 'w') as f:
        json.dump(cfg, f)
    os.rename(path + '.tmp', path)
    return path


def write_text(d, text):
    path = os.path.join(d.dir, 'dpmon.json')
    with open(path + '.tmp', 'w') as f:
        f.write(text)
    os.rename(path + '.tmp', path)
    return path


def view(d):
    """Counts of every subnet and host, the host count and the totals."""
    subnets = {s['prefix']: {'name': s['name'], **{x: harness.counts_of(s[x])
                                                   for x in harness.DIRS}}
               for s in d.get('/api/v1/subnets')['subnets']}
    hd = d.get('/api/v1/hosts?limit=10000')
    hosts = {x['address']: {'subnet': x['subnet'],
                            **{y: harness.counts_of(x[y]) for y in harness.DIRS}}
             for x in hd['hosts']}
    s = d.summary()
    totals = {k: harness.counts_of(s['totals'][k]) for k in harness.TOTALS}
    return {'subnets': subnets, 'hosts': hosts, 'n_hosts': hd['total'], 'totals': totals,
            'summary': s}


def first_summary(d, timeout=20.0):
    """The first snapshot's summary (the API answers 503 before it)."""
    deadline = time.monotonic() + timeout
    while True:
        status, _, doc = d.request('/api/v1/summary')
        if status == 200:
            return doc
        if time.monotonic() >= deadline:
            raise TestFailure('%s: no snapshot within %.0f s' % (d.label, timeout))
        time.sleep(0.02)


def reload_and_wait(d, subnets, ok, failed=0, timeout=10.0, **extra):
    """Write the file, SIGHUP, wait for the snapshot that counts the reload
    (signals sent faster than reloads are served coalesce, by design)."""
    write_config(d, subnets, **extra)
    d.proc.send_signal(signal.SIGHUP)
    return wait_reloads(d, ok, failed, timeout)


def run(h, pcap, label, configs=None):
    """One run over COPIES x the capture; with @configs, one reload after
    another while it reads, configs[i % len] for the i-th.
    Returns (view, reloads completed mid-read)."""
    total = COPIES * PACKETS
    with h.dpmon_run([pcap] * COPIES, BASE, label, lcores=LCORES_TWO_WORKERS) as d:
        mid_read, sent = 0, 0
        first_summary(d)
        if configs:
            while True:
                sent += 1
                s = reload_and_wait(d, configs[(sent - 1) % len(configs)], sent)
                done = sum(w['packets'] for w in s['workers'])
                if done < total:
                    mid_read = s['config']['reloads']
                else:
                    break
                if sent > 400:
                    raise TestFailure('%s: capture not read after %d reloads' % (label, sent))
        s = d.wait_counts(total, timeout=120)
        v = view(d)
        v['sent'] = sent
        if d.stop() != 0:
            raise TestFailure('%s: dpmon did not exit 0 after SIGTERM' % label)
    return v, mid_read


def compare(c, what, ref, got, prefixes):
    for p in prefixes:
        c.eq('%s: subnet %s == without reload' % (what, p), ref['subnets'].get(p),
             got['subnets'].get(p))
    ref_h = {a: x for a, x in ref['hosts'].items() if x['subnet'] in prefixes}
    got_h = {a: x for a, x in got['hosts'].items() if x['subnet'] in prefixes}
    c.eq('%s: hosts of %s (set)' % (what, ', '.join(prefixes)), sorted(ref_h), sorted(got_h))
    bad = [a for a in ref_h if ref_h[a] != got_h.get(a)]
    c.eq('%s: hosts whose counts differ from the run without reload' % what, [], bad)
    c.true('%s: hosts compared' % what, len(ref_h) > 100, '%d hosts' % len(ref_h))


def test_reload_under_traffic(h):
    c = h.checker('reload')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-reload-') as tmp:
        pcap, sm = capture(h, tmp, 'reload', PACKETS, 5)
        want = {s['prefix']: s for s in sm['subnets']}
        ref, _ = run(h, pcap, 'no reload')
        for p in (A, C):
            c.eq('no reload: subnet %s ingress packets == %d x dpmon-gen' % (p, COPIES),
                 COPIES * want[p]['ingress']['packets'],
                 ref['subnets'][p]['ingress']['packets'])
        c.eq('no reload: reloads', 0, ref['summary']['config']['reloads'])
        c.eq('no reload: last_reload_unix_s', None,
             ref['summary']['config']['last_reload_unix_s'])

        same, mid = run(h, pcap, 'same file', [BASE])
        c.true('same file: >= 3 reloads completed mid-read', mid >= 3, 'only %d' % mid)
        c.note('same file: %d reloads, %d of them mid-read' % (same['sent'], mid))
        c.eq('same file: reloads == signals sent', same['sent'],
             same['summary']['config']['reloads'])
        c.eq('same file: reload_failures', 0, same['summary']['config']['reload_failures'])
        c.eq('same file: last_reload_ok', True, same['summary']['config']['last_reload_ok'])
        compare(c, 'same file', ref, same, [A, B, C, D])
        c.eq('same file: distinct hosts == without reload', ref['n_hosts'], same['n_hosts'])
        c.eq('same file: totals == without reload', ref['totals'], same['totals'])

        # Ends on ALT whatever the number of signals: one more reload below.
        alt, mid = run(h, pcap, 'C removed, E added', [ALT, BASE])
        c.true('alternating: >= 3 reloads completed mid-read', mid >= 3, 'only %d' % mid)
        c.note('alternating: %d reloads, %d of them mid-read' % (alt['sent'], mid))
        compare(c, 'alternating', ref, alt, [A, B, D])
        c.eq('alternating: reload_failures', 0, alt['summary']['config']['reload_failures'])
    c.done()


def test_reload_alternating_ends(h):
    """The alternating run's end state: the last file (ALT) is what runs."""
    c = h.checker('reload end state')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-reload-') as tmp:
        pcap, sm = capture(h, tmp, 'small', 200000, 9)
        want = {s['prefix']: s for s in sm['subnets']}
        with h.dpmon_run([pcap], BASE, 'end state', lcores=LCORES_TWO_WORKERS) as d:
            first_summary(d)
            for i, cfg in enumerate((ALT, BASE, ALT)):
                reload_and_wait(d, cfg, i + 1)
            s = d.wait_counts(200000, timeout=60)
            c.eq('reloads', 3, s['config']['reloads'])
            v = view(d)
            c.eq('subnets listed (the last file, in its order)', [A, B, D, E],
                 [x['prefix'] for x in d.get('/api/v1/subnets')['subnets']])
            c.eq('hosts of removed subnet C listed', [],
                 [a for a, x in v['hosts'].items() if x['subnet'] == C])
            n_e = len([a for a, x in v['hosts'].items() if x['subnet'] == E])
            c.eq('hosts listed == hosts used in A, B, D + hosts of E seen since it was added',
                 sum(want[p]['hosts_used'] for p in (A, B, D)) + n_e, v['n_hosts'])
            c.true('hosts of E at most those dpmon-gen used', n_e <= want[E]['hosts_used'])
            c.eq('subnet A ingress == dpmon-gen (kept across 3 reloads)',
                 harness.counts_of(want[A]['ingress'])['packets'],
                 v['subnets'][A]['ingress']['packets'])
            c.true('subnet E counted at most what dpmon-gen wrote',
                   v['subnets'][E]['ingress']['packets'] <= want[E]['ingress']['packets'])
            c.eq('summary subnets', 4, s['subnets'])
            # BASE -> ALT: C goes, E comes; ALT -> BASE the other way round.
            c.eq('reload log lines: subnets kept, added, removed',
                 ['4 subnet(s), 3 kept, 1 added, 1 removed'] * 3,
                 re.findall(r'reloaded \S+: (.*)', stderr_text(d)))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def wait_reloads(d, ok, failed, timeout=10.0):
    deadline = time.monotonic() + timeout
    while True:
        s = d.summary()
        cf = s['config']
        if (cf['reloads'], cf['reload_failures']) == (ok, failed):
            return s
        if time.monotonic() >= deadline:
            raise TestFailure('%s: reloads %r after %.0f s, waiting for ok=%d failed=%d' % (
                d.label, cf, timeout, ok, failed))
        time.sleep(0.05)


def sample(metrics, name):
    """The value text of the unlabelled sample `name` in a /metrics text."""
    for line in metrics.splitlines():
        if line.startswith(name + ' '):
            return line.split(' ', 1)[1]
    raise TestFailure('/metrics has no sample %s' % name)


def stderr_text(d):
    with open(os.path.join(d.dir, 'stderr'), 'rb') as f:
        return f.read().decode('utf-8', 'replace')


def test_reload_refused_and_added(h):
    c = h.checker('reload refused/added')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-reload-') as tmp:
        pcap, _ = capture(h, tmp, 'loop', 20000, 13)
        with h.dpmon_run([pcap], BASE, 'infinite', vdev_args=',infinite_rx=1') as d:
            first_summary(d)
            # (b) an invalid file: refused, logged with file and path; nothing changes.
            path = write_config(d, [(A, 'a'), ('10.2.0.1/24', 'b')])
            t0 = time.time()
            d.proc.send_signal(signal.SIGHUP)
            s = wait_reloads(d, 0, 1)
            c.true('dpmon still running after a refused reload', d.proc.poll() is None)
            c.eq('subnets after a refused reload', [A, B, C, D],
                 [x['prefix'] for x in d.get('/api/v1/subnets')['subnets']])
            c.eq('last_reload_ok after a refused reload', False, s['config']['last_reload_ok'])
            c.true('last_reload_unix_s is the time of the attempt',
                   abs(s['config']['last_reload_unix_s'] - t0) < 5,
                   repr(s['config']['last_reload_unix_s']))
            err = stderr_text(d)
            c.true('the refusal names the file and the JSON path',
                   ('%s: $.subnets[1].prefix' % path) in err and 'refused' in err, err[-600:])
            c.eq('reload_refusals after a refused reload', 1, s['config']['reload_refusals'])
            c.eq('last_refusal: its time, the file, the error count and the first reason',
                 {'unix_s': s['config']['last_reload_unix_s'], 'file': path, 'errors': 1,
                  'reason': '$.subnets[1].prefix: host bits set (address is not the network '
                            'address of the prefix), got "10.2.0.1/24"'},
                 s['config']['last_refusal'])
            _, _, metrics = d.request('/metrics')
            c.true('/metrics: dpmon_config_reloads_total{result="failed"} 1',
                   'dpmon_config_reloads_total{result="failed"} 1\n' in metrics)
            c.true('/metrics: dpmon_config_reload_refusals_total 1',
                   '\ndpmon_config_reload_refusals_total 1\n' in metrics)
            c.eq('/metrics: dpmon_config_last_refusal_timestamp_seconds is the last attempt\'s',
                 sample(metrics, 'dpmon_config_last_reload_timestamp_seconds'),
                 sample(metrics, 'dpmon_config_last_refusal_timestamp_seconds'))
            # A syntax error is refused too.
            write_text(d, '{"ports": [')
            d.proc.send_signal(signal.SIGHUP)
            s = wait_reloads(d, 0, 2)
            c.true('dpmon still running after a syntax error', d.proc.poll() is None)
            c.eq('reload_refusals after a syntax error', 2, s['config']['reload_refusals'])
            c.eq('last_refusal of a syntax error: line, column and jansson\'s text',
                 {'unix_s': s['config']['last_reload_unix_s'], 'file': path, 'errors': 1,
                  'reason': "1:11: invalid JSON: ']' expected near end of file"},
                 s['config']['last_refusal'])

            # (c) a file adding E (and changing a restart-only key): E appears
            # and counts the traffic that keeps coming; the key keeps its value.
            s = reload_and_wait(d, BASE + [(E, 'e')], 1, 2, merge_interval_ms=500)
            c.eq('subnets after adding E', [A, B, C, D, E],
                 [x['prefix'] for x in d.get('/api/v1/subnets')['subnets']])
            c.eq('merge_interval_ms kept (restart-only)', 200, d.summary()['interval_ms'])
            c.true('warning names merge_interval_ms',
                   'merge_interval_ms changed but takes effect only at restart'
                   in stderr_text(d))
            e1 = harness.by_prefix(d.get('/api/v1/subnets'))[E]['ingress']['packets']
            time.sleep(1.0)
            e2 = harness.by_prefix(d.get('/api/v1/subnets'))[E]['ingress']['packets']
            c.true('subnet E counts new traffic', e2 > e1,
                   'E ingress %r then %r' % (e1, e2))
            hosts_e = d.get('/api/v1/hosts?limit=10000')
            c.true('hosts of E listed', any(x['subnet'] == E for x in hosts_e['hosts']))
            _, _, metrics = d.request('/metrics')
            c.true('/metrics: dpmon_config_reloads_total{result="ok"} 1',
                   'dpmon_config_reloads_total{result="ok"} 1\n' in metrics)
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_reload_storm_keeps_merging(h):
    """SIGHUPs sent without pause while each reload takes long (20000
    subnets): at least one merge between two reloads, so snapshots,
    detection and rates go on (operations.md: a reload is served between
    two merges)."""
    c = h.checker('reload storm')
    many = [(A, 'a')] + [('11.%d.%d.0/24' % (i >> 8, i & 255), 's%d' % i) for i in range(19999)]
    with tempfile.TemporaryDirectory(prefix='dpmon-it-reload-') as tmp:
        pcap, _ = capture(h, tmp, 'storm', 20000, 17)
        with h.dpmon_run([pcap], BASE, 'storm', vdev_args=',infinite_rx=1') as d:
            first_summary(d)
            s0 = reload_and_wait(d, many, 1, timeout=120)
            deadline = time.monotonic() + 120
            s = s0
            while s['config']['reloads'] < s0['config']['reloads'] + 3:
                if time.monotonic() > deadline:
                    raise TestFailure('storm: 3 reloads not served within 120 s: %r'
                                      % s['config'])
                d.proc.send_signal(signal.SIGHUP)
                time.sleep(0.02)
                s = d.summary()
            reloads = s['config']['reloads'] - s0['config']['reloads']
            merges = s['snapshot_seq'] - s0['snapshot_seq']
            c.true('%d merges during %d reloads (at least one between two)' % (merges, reloads),
                   merges >= reloads - 1)
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def reload_host_prefixes(d, lens, ok):
    """Reload BASE with subnets[].host_prefix_len from @lens (prefix -> length)."""
    cfg = dict(d.config)
    cfg['subnets'] = [dict({'prefix': p, 'name': n},
                           **({'host_prefix_len': lens[p]} if p in lens else {}))
                      for p, n in BASE]
    path = os.path.join(d.dir, 'dpmon.json')
    with open(path + '.tmp', 'w') as f:
        json.dump(cfg, f)
    os.rename(path + '.tmp', path)
    d.proc.send_signal(signal.SIGHUP)
    return wait_reloads(d, ok, 0)


def same_snapshot(d, prefix, timeout=10.0):
    """The hosts of subnet @prefix and the subnet, from one snapshot, two
    merges after the call (a whole interval counted at the running length)."""
    seq0 = d.summary()['snapshot_seq']
    deadline = time.monotonic() + timeout
    while True:
        hosts = d.get('/api/v1/hosts?limit=10000&subnet=' + prefix)
        subs = d.get('/api/v1/subnets')
        if hosts['snapshot_seq'] >= seq0 + 2 and hosts['snapshot_seq'] == subs['snapshot_seq']:
            return hosts, harness.by_prefix(subs)[prefix]
        if time.monotonic() >= deadline:
            raise TestFailure('%s: no two answers from one snapshot' % d.label)
        time.sleep(0.05)


def test_reload_host_prefix_len(h):
    """subnets[].host_prefix_len set and removed by reloads while a capture
    replays: hosts of A become /28 prefixes and those of v6 D /112 ones,
    each aligned, found by any address inside; the interval's host rates
    add up to the subnet's (the old /32 hosts no longer count); back to
    whole addresses, the old hosts return."""
    c = h.checker('reload host_prefix_len')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-reload-') as tmp:
        pcap, _ = capture(h, tmp, 'hostpfx', 20000, 19)
        with h.dpmon_run([pcap], BASE, 'hostpfx', vdev_args=',infinite_rx=1') as d:
            first_summary(d)
            before = {x['address'] for x in d.get('/api/v1/hosts?limit=10000&subnet=' + A)
                      ['hosts']}
            c.true('whole addresses first', before and all('/' not in a for a in before),
                   repr(sorted(before)[:5]))
            reload_host_prefixes(d, {A: 28, D: 112}, 1)
            subs = harness.by_prefix(d.get('/api/v1/subnets'))
            c.eq('host_prefix_len of A, B, D', (28, 32, 112),
                 (subs[A]['host_prefix_len'], subs[B]['host_prefix_len'],
                  subs[D]['host_prefix_len']))
            hosts, sub = same_snapshot(d, A)
            addrs = [x['address'] for x in hosts['hosts']]
            c.true('hosts of A are /28 prefixes', addrs and all(
                a.endswith('/28') and int(a.split('/')[0].split('.')[3]) % 16 == 0
                for a in addrs), repr(addrs[:8]))
            c.true('fewer /28 hosts than addresses (%d < %d)' % (len(addrs), len(before)),
                   0 < len(addrs) < len(before))
            # Live traffic: a host's read and its subnet's differ by at most
            # a burst at each merge, so the rates agree within a fraction.
            for dr in harness.DIRS:
                got = sum(x[dr]['pps'] for x in hosts['hosts'])
                c.true('A %s: the /28 hosts\' pps add up to the subnet\'s within 2 %% '
                       '(%r, %r)' % (dr, got, sub[dr]['pps']),
                       sub[dr]['pps'] > 0 and abs(got - sub[dr]['pps']) <= 0.02 * sub[dr]['pps'])
            inside = sorted(before)[0]
            one = d.get('/api/v1/hosts/' + inside)
            c.true('GET /api/v1/hosts/%s: its /28 host' % inside,
                   one['address'].endswith('/28') and one['address'] in addrs, one['address'])
            c.eq('GET /api/v1/hosts/' + one['address'], one['address'],
                 d.get('/api/v1/hosts/' + one['address'])['address'])
            v6 = [x['address'] for x in d.get('/api/v1/hosts?limit=10000&subnet=' + D)['hosts']]
            c.true('hosts of D are /112 prefixes', v6 and all(a.endswith('::/112') for a in v6),
                   repr(v6[:4]))
            reload_host_prefixes(d, {}, 2)
            hosts, _ = same_snapshot(d, A)
            after = {x['address'] for x in hosts['hosts']}
            # A /28's network address (10.1.0.16) became that prefix, whose
            # counts it holds: it is not listed as an address again
            # (docs/configuration.md, "On reload").
            aligned = {a for a in before if int(a.split('.')[3]) % 16 == 0}
            c.true('some hosts of A were /28 network addresses', aligned, repr(sorted(before)))
            c.eq('back to whole addresses: the hosts of A', sorted(before - aligned),
                 sorted(after))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_reload_during_start(h):
    """A SIGHUP while dpmon still loads its configuration (65536 ignored
    sources take seconds) is a reload once it runs; it never ends dpmon
    (a SIGHUP before the handler was set killed it, status 129)."""
    c = h.checker('reload during start')
    ignore = ['%d.%d.%d.0/24' % (11 + (i >> 16), (i >> 8) & 255, i & 255) for i in range(65536)]
    with tempfile.TemporaryDirectory(prefix='dpmon-it-reload-') as tmp:
        pcap, _ = capture(h, tmp, 'tiny', 1000, 3)
        d = h.dpmon_run([pcap], BASE, 'reload during start',
                        extra_config={'detection': {'ignore_sources': ignore}})
        sent = []

        def hup():
            deadline = time.monotonic() + 10
            while d.proc is None and time.monotonic() < deadline:
                time.sleep(0.01)
            time.sleep(0.5)
            if d.proc is not None and d.proc.poll() is None:
                d.proc.send_signal(signal.SIGHUP)
                sent.append(d.port is None)

        t = threading.Thread(target=hup, daemon=True)
        t.start()
        try:
            d.start(timeout=180)
            t.join()
            c.eq('one SIGHUP sent before dpmon listened', [True], sent)
            # The reload is served before the first snapshot (503 until then).
            first_summary(d, timeout=180)
            s = wait_reloads(d, 1, 0, timeout=180)
            c.eq('reloads served once it ran (ok, failed)', (1, 0),
                 (s['config']['reloads'], s['config']['reload_failures']))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop(timeout=60))
        finally:
            d.__exit__(None, None, None)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
