#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Soak on live traffic: hosts that come and go through a small host table.

Not a replayed capture: the test creates a veth pair in a network namespace
of its own (harness.LiveLink), runs dpmon with DPDK's af_packet PMD on one
end and sends Ethernet frames on the other with an AF_PACKET socket, in
batches of at most 200, each sent once dpmon has received the one before
(the veth's backlog and the PMD's ring drop silently when they overflow,
and DPDK 22.11's af_packet PMD reports no imissed for it: the exact
comparisons below are what shows a loss). One steady host gets a packet
every 20 ms from start to end, both directions, so it is touched in every
merge interval (merge_interval_ms 100).

test_live_exact (today's dpmon, default host table): two waves of new hosts
(500 IPv4, 300 IPv6, one packet each) and a probe host after each. Checked:
  - ports[0].ipackets and ibytes equal the frames and bytes sent, imissed,
    ierrors and rx_nombuf are 0; the kernel's counters of the veth ends
    show exactly those frames and no drop (the kernel sent nothing of its
    own on the link);
  - the totals (ingress, egress, internal, external), every subnet and
    every host (both directions, every protocol class, packets and bytes)
    equal what was sent; no parse error; no host_table_full.

test_soak_host_aging (needs host aging: host_idle_timeout_s, first_seen and
last_seen on hosts, workers[].host_evictions): host_table_capacity 1024,
host_idle_timeout_s 2; 7 waves of 1 024 new IPv4 hosts and a spray of
5 000 one-packet IPv6 hosts, 12 168 hosts in all (more than 10 x the
table's capacity). Checked:
  - at a wave's end the worker's table is full, less the entries it keeps
    free for the next interval's hosts (KEEP_FREE), and the snapshot lists
    exactly its hosts (one worker), and every wave host listed has exactly
    its one packet (an entry taken over starts from zero);
  - a probe host sent 0.5 s after each IPv4 wave and 1 s after the IPv6
    spray, while the table is full of their entries (older than one
    interval), is counted exactly, with first_seen <= last_seen in the
    test's wall-clock window;
  - after each wave the snapshot's hosts and the worker's table fall back
    to the steady host and the probe within host_idle_timeout_s + 1.5 s of
    the wave's last packet, and sampled wave hosts answer 404;
  - the steady host is never pushed out: its first_seen never changes and
    its counts are exact at the end;
  - a probe host that aged out and comes back starts from zero, with a
    later first_seen;
  - workers[].host_evictions > 0, and /metrics reports the same figure;
    host_table_full stays 0 (paced batches always leave entries older than
    the previous interval to take);
  - dpmon's RSS after all waves is within 10 % of its level after the first
    wave had aged out;
  - totals, every subnet and the port counters equal what was sent, exactly
    (as test_live_exact), and once traffic stops every host leaves: the
    snapshot and the worker's table end empty.
The measured figures (hosts per wave before and after, fall-back delays,
RSS, evictions, host_table_full) are printed as notes.

Runs as root (veth pair, network namespace): about 5 s and 35 s (55 s
when nothing ages out and every fall-back waits for its deadline).
"""
import ipaddress
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import TestFailure  # noqa: E402

MERGE_MS = 100
STEADY_PERIOD_S = 0.02
BATCH = 200
# Entries a full table keeps free (docs/architecture.md, "Host life cycle"):
# the most of its reserve (capacity / 64) and the last interval's demand,
# at most half the table.
KEEP_FREE = 1024 // 2

STEADY = '198.18.0.1'
EXT4 = '198.51.100.7'    # the remote peer: in no monitored subnet
EXT6 = '2001:db8:ffff::7'
SUBNETS = [
    ('198.18.0.0/24', 'steady'),
    ('198.18.1.0/24', 'probes'),
    ('198.19.0.0/16', 'waves'),
    ('2001:db8:6::/48', 'spray6'),
    ('2001:db8:7::/48', 'probes6'),
]
# Frame sizes (bytes, FCS excluded) and protocols, distinct per kind of packet.
STEADY_IN = (17, 90)    # UDP to the steady host
STEADY_OUT = (6, 120)   # TCP from it
WAVE4 = (17, 60)
WAVE6 = (17, 70)
PROBE_IN = (17, 100)
PROBE_OUT = (6, 80)

# What host aging adds to dpmon; everything else in this file is today's.
IDLE_TIMEOUT_S = 2
AGING_CONFIG = {'host_idle_timeout_s': IDLE_TIMEOUT_S}
WORKER_EVICTIONS = 'host_evictions'
# The soak's table, and a small mbuf pool: the less dpmon holds at start,
# the more a growth with the hosts seen shows in its RSS.
CAPACITY = 1024
SOAK_CONFIG = {'host_table_capacity': CAPACITY, 'mbufs_per_queue': 1024}
WAVES4 = 7
WAVE4_HOSTS = 1024
SPRAY6_HOSTS = 5000
PROBE4_DELAY_S = 0.5    # after a wave's last packet: its entries are > 1 interval old
PROBE6_DELAY_S = 1.0
FALLBACK_SLACK_S = 1.5  # beyond host_idle_timeout_s: 1 s of clock granularity + 5 intervals
RSS_TOLERANCE = 0.10


def zero_dir():
    d = {'packets': 0, 'bytes': 0}
    for p in harness.PROTOS:
        d[p] = {'packets': 0, 'bytes': 0}
    return d


PROTO_CLASS = {6: 'tcp', 17: 'udp', 1: 'icmp', 58: 'icmp'}


class Ledger:
    """What was sent, counted the way dpmon must count it (docs/api.md,
    "Directions"): per subnet, per host and the four totals."""

    def __init__(self, subnets):
        self.nets = [ipaddress.ip_network(p) for p, _ in subnets]
        self.subnets = {str(n): {d: zero_dir() for d in harness.DIRS} for n in self.nets}
        self.hosts = {}
        self.totals = {t: zero_dir() for t in harness.TOTALS}
        self.lock = threading.Lock()

    def _net(self, addr):
        a = ipaddress.ip_address(addr)
        best = None
        for n in self.nets:
            if a.version == n.version and a in n and (
                    best is None or n.prefixlen > best.prefixlen):
                best = n
        return best

    @staticmethod
    def _add(d, proto, size):
        d['packets'] += 1
        d['bytes'] += size
        c = d[PROTO_CLASS.get(proto, 'other')]
        c['packets'] += 1
        c['bytes'] += size

    def frame(self, src, dst, kind):
        """The frame of one packet src -> dst of `kind` ((proto, size)), recorded."""
        proto, size = kind
        v6 = ':' in src
        f = (harness.eth_ipv6 if v6 else harness.eth_ipv4)(src, dst, proto=proto, size=size)
        with self.lock:
            sn, dn = self._net(src), self._net(dst)
            for addr, net, direction in ((dst, dn, 'ingress'), (src, sn, 'egress')):
                if net is None:
                    continue
                self._add(self.subnets[str(net)][direction], proto, size)
                h = self.hosts.setdefault(harness.canon_addr(addr),
                                          {d: zero_dir() for d in harness.DIRS})
                self._add(h[direction], proto, size)
            if dn is not None:
                self._add(self.totals['ingress'], proto, size)
            if sn is not None:
                self._add(self.totals['egress'], proto, size)
            if sn is not None and dn is not None:
                self._add(self.totals['internal'], proto, size)
            if sn is None and dn is None:
                self._add(self.totals['external'], proto, size)
        return f

    def host(self, addr):
        with self.lock:
            h = self.hosts[harness.canon_addr(addr)]
            return {d: dict(h[d], **{p: dict(h[d][p]) for p in harness.PROTOS})
                    for d in harness.DIRS}

    def forget_host(self, addr):
        """A host that left the table: its next packets start a new record."""
        with self.lock:
            self.hosts.pop(harness.canon_addr(addr), None)


class Steady(threading.Thread):
    """Sends the steady host one packet every STEADY_PERIOD_S, alternately
    to it (UDP) and from it (TCP), until stop()."""

    def __init__(self, link, ledger):
        super().__init__(name='steady', daemon=True)
        self.link, self.ledger = link, ledger
        self.halt = threading.Event()
        self.error = None
        self.n = 0

    def run(self):
        try:
            while not self.halt.is_set():
                if self.n % 2 == 0:
                    f = self.ledger.frame(EXT4, STEADY, STEADY_IN)
                else:
                    f = self.ledger.frame(STEADY, EXT4, STEADY_OUT)
                self.link.send([f])
                self.n += 1
                self.halt.wait(STEADY_PERIOD_S)
        except BaseException as e:  # noqa: B902 - re-raised by stop()
            self.error = e

    def stop(self):
        self.halt.set()
        self.join(timeout=10)
        if self.error is not None:
            raise TestFailure('steady sender failed: %r' % self.error)


def host_counts(doc):
    return {d: harness.counts_of(doc[d]) for d in harness.DIRS}


def get_host(d, addr):
    """(status, host object or error) of GET /api/v1/hosts/ADDR."""
    status, _, doc = d.request('/api/v1/hosts/' + addr)
    return status, doc


def probe_frames(ledger, addr, ext, n_in=3, n_out=1):
    return ([ledger.frame(ext, addr, PROBE_IN) for _ in range(n_in)] +
            [ledger.frame(addr, ext, PROBE_OUT) for _ in range(n_out)])


def check_exact(c, d, link, ledger, s):
    """Port, kernel, totals and subnet counts against what was sent.
    `s`: a summary with every frame counted (wait_counts)."""
    port = s['ports'][0]
    c.eq('ports[0] ipackets, ibytes', (link.sent, link.sent_bytes),
         (port['ipackets'], port['ibytes']))
    c.eq('ports[0] imissed, ierrors, rx_nombuf', (0, 0, 0),
         (port['imissed'], port['ierrors'], port['rx_nombuf']))
    c.eq('sum(workers[].packets)', link.sent, sum(w['packets'] for w in s['workers']))
    k = link.counters()
    c.eq('kernel: veth a rx packets, bytes, dropped',
         (link.sent, link.sent_bytes, 0),
         (k['a']['rx_packets'], k['a']['rx_bytes'], k['a']['rx_dropped']))
    c.eq('kernel: veth b tx packets, bytes, dropped',
         (link.sent, link.sent_bytes, 0),
         (k['b']['tx_packets'], k['b']['tx_bytes'], k['b']['tx_dropped']))
    c.eq('kernel: veth a tx, b rx packets (nothing the other way)', (0, 0),
         (k['a']['tx_packets'], k['b']['rx_packets']))
    c.eq('parse errors', {}, {r: n for r, n in s['parse_errors'].items() if n})
    for t in harness.TOTALS:
        c.eq('totals.%s' % t, ledger.totals[t], harness.counts_of(s['totals'][t]))
    subnets = harness.by_prefix(d.get('/api/v1/subnets'))
    for prefix, dirs in ledger.subnets.items():
        got = subnets.get(prefix)
        c.true('subnet %s listed' % prefix, got is not None)
        if got:
            c.eq('subnet %s' % prefix, dirs,
                 {dr: harness.counts_of(got[dr]) for dr in harness.DIRS})
    c.note('%d frames, %d bytes sent; %d steady-host packets' % (
        link.sent, link.sent_bytes, sum(
            ledger.host(STEADY)[dr]['packets'] for dr in harness.DIRS)))


# ---------------------------------------------------------------------------
# Today's dpmon: live traffic is counted exactly.
# ---------------------------------------------------------------------------


def test_live_exact(h):
    c = h.checker('live exact')
    ledger = Ledger(SUBNETS)
    with harness.LiveLink(h) as link, \
            h.dpmon_run([], SUBNETS, 'live exact', iface=link.a,
                        merge_interval_ms=MERGE_MS) as d:
        d.wait_received(0)
        steady = Steady(link, ledger)
        steady.start()
        try:
            time.sleep(0.5)
            wave4 = ['198.19.200.%d' % i for i in range(250)] + \
                ['198.19.201.%d' % i for i in range(250)]
            link.send_paced(d, [ledger.frame(EXT4, a, WAVE4) for a in wave4], BATCH)
            link.send_paced(d, probe_frames(ledger, '198.18.1.200', EXT4), BATCH)
            wave6 = ['2001:db8:6::%x' % (0x1000 + i) for i in range(300)]
            link.send_paced(d, [ledger.frame(EXT6, a, WAVE6) for a in wave6], BATCH)
            link.send_paced(d, probe_frames(ledger, '2001:db8:7::200', EXT6), BATCH)
            time.sleep(0.3)
        finally:
            steady.stop()
        s = d.wait_counts(link.sent, ibytes=link.sent_bytes)
        check_exact(c, d, link, ledger, s)
        c.eq('workers[].host_table_full', [0] * len(s['workers']),
             [w['host_table_full'] for w in s['workers']])
        hd = d.get('/api/v1/hosts?limit=10000')
        got = {x['address']: host_counts(x) for x in hd['hosts']}
        c.eq('hosts in the snapshot', (len(ledger.hosts), len(ledger.hosts)),
             (s['hosts'], hd['total']))
        c.eq('hosts listed that were never sent to', [],
             sorted(set(got) - set(ledger.hosts)))
        c.eq('hosts sent to that are not listed', [],
             sorted(set(ledger.hosts) - set(got))[:10])
        bad = [a for a in ledger.hosts if a in got and got[a] != ledger.host(a)]
        c.eq('hosts whose counts differ from what was sent', [], bad[:10])
        for a in (STEADY, '198.18.1.200', '2001:db8:7::200'):
            c.eq('host %s' % a, ledger.host(a), got.get(a))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


# ---------------------------------------------------------------------------
# Host aging (host_idle_timeout_s): the parts that need the feature are
# marked "feature:"; the rest holds for today's dpmon as well.
# ---------------------------------------------------------------------------


def table_entries(s):
    return sum(w['hosts'] for w in s['workers'])


def wait_fallback(d, limit, deadline):
    """Poll the summary until the snapshot lists at most `limit` hosts and
    the worker tables hold at most `limit` entries: (time.monotonic() then,
    that summary), or (None, the last summary) at `deadline`."""
    while True:
        s = d.summary()
        if s['hosts'] <= limit and table_entries(s) <= limit:
            return time.monotonic(), s
        if time.monotonic() >= deadline:
            return None, s
        time.sleep(0.05)


def seen_ok(c, label, doc, lo, hi):
    """feature: first_seen and last_seen are Unix seconds in [lo, hi] (wall
    clock, with 1 s of slack for the merge clock's granularity), in order."""
    fs, ls = doc.get('first_seen'), doc.get('last_seen')
    ok = (isinstance(fs, (int, float)) and isinstance(ls, (int, float)) and
          lo - 1 <= fs <= ls <= hi + 1)
    c.true('%s: first_seen <= last_seen within [%.0f, %.0f]' % (label, lo, hi), ok,
           'first_seen %r, last_seen %r' % (fs, ls))
    return fs


def run_wave(c, d, link, ledger, steady_first, label, hosts, ext, kind, probe,
             probe_delay, figures):
    """Send a wave of one-packet hosts, then a probe host; check the probe,
    the wave's records and the fall-back. Returns the probe's first_seen."""
    t_wave = time.monotonic()
    link.send_paced(d, [ledger.frame(ext, a, kind) for a in hosts], BATCH)
    t_end = time.monotonic()
    s = d.wait_received(link.sent, settled=True)
    at_end = (s['hosts'], table_entries(s), s['merge_s'])
    # The wave filled the table (more hosts than room, all sent within less
    # than host_idle_timeout_s of the last), less what a full table keeps
    # free for the next interval's new hosts (KEEP_FREE), and with
    # one worker the snapshot lists exactly the table's hosts.
    c.true('%s: worker table entries at the wave\'s end within [%d, %d]' %
           (label, CAPACITY - KEEP_FREE, CAPACITY),
           CAPACITY - KEEP_FREE <= at_end[1] <= CAPACITY, 'got %d' % at_end[1])
    c.eq('%s: snapshot hosts at the wave\'s end' % label, at_end[1], at_end[0])
    wave = set(harness.canon_addr(a) for a in hosts)
    net = SUBNETS[2][0] if ':' not in ext else SUBNETS[3][0]
    listed = [x for x in d.get('/api/v1/hosts?subnet=%s&limit=10000' % net)['hosts']
              if x['address'] in wave]
    one = {'ingress': zero_dir(), 'egress': zero_dir()}
    Ledger._add(one['ingress'], kind[0], kind[1])
    c.eq('%s: wave hosts listed whose counts are not their one packet' % label, [],
         [x['address'] for x in listed if host_counts(x) != one][:10])

    # The probe: the table is full of the wave's entries, none touched in
    # the last interval: it takes one and is counted exactly.
    time.sleep(max(0.0, t_end + probe_delay - time.monotonic()))
    w0 = time.time()
    link.send_paced(d, probe_frames(ledger, probe, ext), BATCH)
    s = d.wait_received(link.sent, settled=True)
    status, doc = get_host(d, probe)
    c.eq('%s: probe %s answered' % (label, probe), 200, status)
    probe_first = None
    if status == 200:
        c.eq('%s: probe %s counts' % (label, probe), ledger.host(probe), host_counts(doc))
        probe_first = seen_ok(c, '%s: probe %s' % (label, probe), doc, w0, time.time())  # feature
    status, doc = get_host(d, STEADY)
    c.eq('%s: steady host present' % label, 200, status)
    if status == 200 and steady_first is not None:
        c.eq('%s: steady host first_seen unchanged' % label, steady_first,
             doc.get('first_seen'))  # feature

    # feature: the wave leaves the snapshot and the worker's table (the
    # steady host and this probe stay).
    t_fb, s = wait_fallback(d, 2, t_end + IDLE_TIMEOUT_S + FALLBACK_SLACK_S)
    after = (s['hosts'], table_entries(s), s['merge_s'])
    c.true('%s: snapshot and worker tables fall back to <= 2 hosts within %.1f s of the '
           'wave\'s end' % (label, IDLE_TIMEOUT_S + FALLBACK_SLACK_S), t_fb is not None,
           'still %d hosts, %d table entries' % after[:2])
    sample = sorted(wave)[::max(1, len(wave) // 5)][:5]
    gone = [a for a in sample if get_host(d, a)[0] != 404]
    c.eq('%s: sampled wave hosts still answered' % label, [], gone)
    rss = d.rss_kib()
    fig = {'wave': label, 'hosts_sent': len(hosts),
           'send_s': round(t_end - t_wave, 2),
           'hosts_at_end': at_end[0], 'table_at_end': at_end[1],
           'listed_at_end': len(listed), 'merge_s_at_end': at_end[2],
           'hosts_after': after[0], 'table_after': after[1], 'merge_s_after': after[2],
           'fallback_s': None if t_fb is None else round(t_fb - t_end, 2),
           'rss_kib': rss, 'rss_anon_kib': d.rss_kib('RssAnon'),
           'rss_file_kib': d.rss_kib('RssFile'), 'rss_shmem_kib': d.rss_kib('RssShmem'),
           'host_table_full': [w['host_table_full'] for w in s['workers']],
           WORKER_EVICTIONS: [w.get(WORKER_EVICTIONS) for w in s['workers']]}
    figures.append(fig)
    c.note('%s: %r' % (label, fig))
    return probe_first, rss


def test_soak_host_aging(h):
    c = h.checker('soak')
    ledger = Ledger(SUBNETS)
    figures = []
    t0 = time.monotonic()
    with harness.LiveLink(h) as link, \
            h.dpmon_run([], SUBNETS, 'soak', iface=link.a, merge_interval_ms=MERGE_MS,
                        extra_config=dict(SOAK_CONFIG, **AGING_CONFIG)) as d:
        d.wait_received(0)
        w_start = time.time()
        steady = Steady(link, ledger)
        steady.start()
        try:
            time.sleep(0.5)
            d.wait_received(link.sent, settled=True)
            status, doc = get_host(d, STEADY)
            c.eq('steady host answered', 200, status)
            steady_first = seen_ok(c, 'steady host', doc, w_start, time.time())  # feature
            rss0 = d.rss_kib()
            c.note('RSS before any wave: %d KiB (RssAnon %d, RssFile %d, RssShmem %d KiB)' % (
                rss0, d.rss_kib('RssAnon'), d.rss_kib('RssFile'), d.rss_kib('RssShmem')))

            rss_steady, probes = None, []
            for w in range(WAVES4):
                hosts = ['198.19.%d.%d' % (4 * w + i // 256, i % 256)
                         for i in range(WAVE4_HOSTS)]
                probe = '198.18.1.%d' % (w + 1)
                first, rss = run_wave(c, d, link, ledger, steady_first,
                                      'IPv4 wave %d' % (w + 1), hosts, EXT4, WAVE4, probe,
                                      PROBE4_DELAY_S, figures)
                probes.append((probe, first))
                if rss_steady is None:
                    rss_steady = rss
            spray = ['2001:db8:6::1:%x' % i for i in range(SPRAY6_HOSTS)]
            run_wave(c, d, link, ledger, steady_first, 'IPv6 spray', spray, EXT6, WAVE6,
                     '2001:db8:7::1', PROBE6_DELAY_S, figures)

            # A host that left and comes back starts from zero (feature).
            back, back_first = probes[0]
            status, _ = get_host(d, back)
            c.eq('comeback: %s aged out before' % back, 404, status)
            ledger.forget_host(back)
            w0 = time.time()
            link.send_paced(d, probe_frames(ledger, back, EXT4, n_in=2, n_out=0), BATCH)
            d.wait_received(link.sent, settled=True)
            status, doc = get_host(d, back)
            c.eq('comeback: %s answered' % back, 200, status)
            if status == 200:
                c.eq('comeback: %s counts start from zero' % back, ledger.host(back),
                     host_counts(doc))
                first = seen_ok(c, 'comeback: %s' % back, doc, w0, time.time())
                c.true('comeback: first_seen later than its first life\'s',
                       first is not None and back_first is not None and first > back_first,
                       'now %r, before %r' % (first, back_first))
            time.sleep(0.2)
        finally:
            steady.stop()

        s = d.wait_counts(link.sent, ibytes=link.sent_bytes)
        check_exact(c, d, link, ledger, s)
        status, doc = get_host(d, STEADY)
        c.eq('steady host answered at the end', 200, status)
        if status == 200:
            c.eq('steady host counts', ledger.host(STEADY), host_counts(doc))
            c.eq('steady host first_seen unchanged at the end', steady_first,
                 doc.get('first_seen'))  # feature
        evictions = [w.get(WORKER_EVICTIONS) for w in s['workers']]  # feature
        full = [w['host_table_full'] for w in s['workers']]
        c.note('workers[].%s %r, host_table_full %r' % (WORKER_EVICTIONS, evictions, full))
        # feature: pacing makes every batch land at least one interval after
        # the one before (send_paced waits for a snapshot that counted it),
        # so when a batch arrives the entries of the batch before the last
        # are older than the previous interval: a new host always finds an
        # entry to take, and no host update is lost to a full table.
        c.eq('workers[].host_table_full', [0] * len(full), full)
        c.true('workers[].%s > 0' % WORKER_EVICTIONS,
               all(isinstance(e, int) for e in evictions) and sum(evictions) > 0,
               repr(evictions))
        status, _, prom = d.request('/metrics')
        prom_ev = {}
        if status == 200 and isinstance(prom, str):
            for line in prom.splitlines():
                if line.startswith('dpmon_worker_' + WORKER_EVICTIONS):
                    name, _, value = line.rpartition(' ')
                    prom_ev[name] = float(value)
        c.note('/metrics: %r' % prom_ev)
        c.true('/metrics: %s for every worker, summing to the summary\'s' % WORKER_EVICTIONS,
               len(prom_ev) == len(evictions) and
               sum(prom_ev.values()) == sum(e for e in evictions if isinstance(e, int)),
               repr(prom_ev))

        # Traffic stopped: every host leaves (feature).
        t_stop = time.monotonic()
        t_fb, s = wait_fallback(d, 0, t_stop + IDLE_TIMEOUT_S + FALLBACK_SLACK_S)
        c.true('end: snapshot and worker tables empty within %.1f s of the last packet' % (
            IDLE_TIMEOUT_S + FALLBACK_SLACK_S), t_fb is not None,
            'still %d hosts, %d table entries' % (s['hosts'], table_entries(s)))
        c.note('end: empty after %s s, merge_s %r' % (
            None if t_fb is None else round(t_fb - t_stop, 2), s['merge_s']))
        rss_end = d.rss_kib()
        c.note('RSS: before the waves %d KiB, after wave 1 aged out %d KiB, after every '
               'wave %s KiB, at the end %d KiB (RssAnon %d KiB)' % (
                   rss0, rss_steady, [f['rss_kib'] for f in figures], rss_end,
                   d.rss_kib('RssAnon')))
        # Bounded: never more than 10 % above the steady level (the
        # allocator may also give pages back, and RSS then falls below it).
        c.true('RSS at the end at most %d %% above its level after wave 1 (%d KiB)' % (
            RSS_TOLERANCE * 100, rss_steady),
            rss_end - rss_steady <= RSS_TOLERANCE * rss_steady,
            '%d KiB, %+.1f %%' % (rss_end, 100.0 * (rss_end - rss_steady) / rss_steady))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.note('hosts sent: %d (%.1f x capacity %d); %.1f s in all' % (
        WAVES4 * WAVE4_HOSTS + SPRAY6_HOSTS,
        (WAVES4 * WAVE4_HOSTS + SPRAY6_HOSTS) / CAPACITY, CAPACITY, time.monotonic() - t0))
    c.done()


if __name__ == '__main__':
    harness.main(globals())
