#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""FlowSpec mitigation through real components (docs/detection.md,
"FlowSpec"): dpmon's exabgp_pipe FIFO -> socat -> Debian's exabgp on
127.0.0.2 -> Debian's gobgpd on 127.0.0.1 at a free port (bgp.py).

A capture of a DNS amplification to 10.0.0.5 (970 answers from port 53
of 1214..1514-byte frames) with some of the host's own traffic (TCP 443,
DNS queries to it), replayed without end through the pcap PMD. With
detection.mitigation "flowspec" the alert gets one rule once its sample
of 200 packets is in; the test checks, on gobgpd's table:

  - the rule's components as GoBGP decodes them (destination 10.0.0.5/32,
    protocol udp, source port 53, a packet-length range), and no blackhole;
  - that the rule, matched against the capture by the test, covers
    >= 95 % of the attack's packets and <= 1 % of the legitimate ones;
  - that it comes back after a restart of ExaBGP (the pipe's new reader
    gets every live rule);
  - that it is gone after the alert ends (a reload raises the threshold);
  - that a manual rule (POST /api/v1/flowspec) reaches gobgpd with its
    components, a rule outside the monitored subnets is refused with 422,
    and DELETE withdraws it;
  - that a new alert's rule is gone at dpmon's stop (keep_on_stop false).

With keep_on_stop and a state file, the rule stays at gobgpd after the
stop, the file holds it, and a new dpmon started on a capture without the
attack withdraws it (gobgpd's table empty, the file without rules).

Expected values come from the capture the test writes, never from dpmon.
"""
import ipaddress
import json
import os
import random
import re
import shutil
import signal
import struct
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from bgp import ExaBgp, GoBgp  # noqa: E402

SUBNETS = [('10.0.0.0/24', 'lan')]
VICTIM = '10.0.0.5'
ROUTE = re.compile(r'^\[destination: 10\.0\.0\.5/32\]\[protocol: ==udp\]\[source-port: ==53\]'
                   r'\[packet-length: >=(\d+)&<=(\d+)\]$')
MANUAL = {'destination': '10.0.0.9', 'protocol': 'tcp', 'destination_ports': [22]}
MANUAL_ROUTE = '[destination: 10.0.0.9/32][protocol: ==tcp][destination-port: ==22]'


def write_capture(path):
    """The capture; returns [(is_attack, proto, sport, dport, ip_len)] of its packets."""
    rnd = random.Random(22)
    frames, truth = [], []
    for i in range(1000):
        if i % 33 == 0:  # the host's own: HTTPS clients
            src = '100.64.%d.%d' % (rnd.randrange(256), rnd.randrange(1, 255))
            f = harness.eth_ipv4(src, VICTIM, proto=6, sport=rnd.randrange(32768, 60000),
                                 dport=443, size=66)
            truth.append((False, 6, None, 443, 52))
        elif i % 33 == 1:  # queries to its resolver
            src = '100.64.%d.%d' % (rnd.randrange(256), rnd.randrange(1, 255))
            sport = rnd.randrange(32768, 60000)
            f = harness.eth_ipv4(src, VICTIM, proto=17, sport=sport, dport=53, size=80)
            truth.append((False, 17, sport, 53, 66))
        else:  # DNS answers it never asked for
            src = '198.18.%d.%d' % (rnd.randrange(4), rnd.randrange(1, 51))
            size = rnd.randrange(1214, 1515)
            dport = rnd.randrange(1024, 65536)
            f = harness.eth_ipv4(src, VICTIM, proto=17, sport=53, dport=dport, size=size)
            truth.append((True, 17, 53, dport, size - 14))
        frames.append(f)
    with open(path, 'wb') as out:
        out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for n, f in enumerate(frames):
            out.write(struct.pack('<IIII', 1764522000 + n // 1000, n % 1000, len(f), len(f)))
            out.write(f)
    return truth


def coverage(truth, lo, hi):
    """Shares of attack and legitimate packets the rule udp, sport 53, length lo..hi matches."""
    att = [t for t in truth if t[0]]
    leg = [t for t in truth if not t[0]]

    def match(t):
        return t[1] == 17 and t[2] == 53 and lo <= t[4] <= hi
    return (sum(map(match, att)) / len(att), sum(map(match, leg)) / len(leg))


def wait_for(what, fn, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.3)
    return fn()


def reload(d, limit):
    """Rewrite dpmon's configuration with ingress pps `limit` and SIGHUP it."""
    before = d.summary()['config']['reloads']
    cfg = dict(d.config)
    cfg['detection'] = dict(cfg['detection'], thresholds={'ingress': {'pps': limit}})
    tmp = os.path.join(d.dir, 'dpmon.json.tmp')
    with open(tmp, 'w') as f:
        json.dump(cfg, f)
    os.rename(tmp, os.path.join(d.dir, 'dpmon.json'))
    d.config = cfg
    os.kill(d.proc.pid, signal.SIGHUP)
    return wait_for('reload', lambda: d.summary()['config']['reloads'] > before, 20)


def workdir(prefix):
    """A temporary directory and the path of the FIFO made in it for ExaBGP."""
    work = tempfile.mkdtemp(prefix=prefix)
    fifo = os.path.join(work, 'exabgp.cmd')
    os.mkfifo(fifo, 0o600)
    return work, fifo


def test_flowspec_chain(h):
    c = h.checker('flowspec')
    work, fifo = workdir('dpmon-it-flowspec-')
    pcap = os.path.join(work, 'dns-amp.pcap')
    truth = write_capture(pcap)
    cfg = {'average_time_constant_ms': 1000,
           'detection': {'thresholds': {'ingress': {'pps': 1000}}, 'ban': True,
                         'mitigation': 'flowspec', 'hold_s': 1},
           'actions': {'exabgp_pipe': fifo,
                       'flowspec': {'sample_packets': 200, 'sample_timeout_s': 30}}}
    try:
        with GoBgp() as gobgp:
            exa = ExaBgp(gobgp, fifo)
            exa.start()
            gobgp.wait_established()
            with h.dpmon_run([pcap], SUBNETS, 'flowspec', extra_config=cfg,
                             vdev_args=',infinite_rx=1') as d:
                rib = wait_for('the rule', lambda: gobgp.rib('ipv4-flowspec'))
                c.eq('one FlowSpec route at gobgpd', 1, len(rib))
                key = next(iter(rib), '')
                m = ROUTE.match(key)
                c.true('its components: destination, udp, source port 53, a length range',
                       m is not None, key)
                if m:
                    att, leg = coverage(truth, int(m.group(1)), int(m.group(2)))
                    c.note('rule %s: attack %.1f %%, legitimate %.1f %%' % (
                        key, 100 * att, 100 * leg))
                    c.true('attack coverage %.3f >= 0.95' % att, att >= 0.95)
                    c.true('legitimate coverage %.3f <= 0.01' % leg, leg <= 0.01)
                c.eq('no blackhole route (mitigation flowspec)', {}, gobgp.rib('ipv4'))
                alerts = d.get('/api/v1/alerts')['alerts']
                fs = alerts[0].get('flowspec') if alerts else None
                c.eq('the alert says one rule added', 1, (fs or {}).get('added'))
                c.eq('its fingerprint is ready', 'ready',
                     ((alerts[0].get('fingerprint') or {}) if alerts else {}).get('state'))
                rules = d.get('/api/v1/flowspec')['rules']
                c.eq('GET /api/v1/flowspec: one rule of the alert, announced',
                     [(alerts[0]['id'] if alerts else None, True)],
                     [(r['alert_id'], r['announced']) for r in rules])

                # ExaBGP restarts: its session drops, the new reader gets the rule.
                exa.__exit__(None, None, None)
                c.eq('no route while ExaBGP is away', set(),
                     gobgp.wait_rib('ipv4-flowspec', set(), 30))
                exa = ExaBgp(gobgp, fifo)
                exa.start()
                gobgp.wait_established()
                if not c.eq('the rule again after ExaBGP restarted', [key],
                            list(wait_for('again', lambda: gobgp.rib('ipv4-flowspec')))):
                    h.log('--- ExaBGP ---\n%s\n--- dpmon ---\n%s' % (
                        exa.console_tail(6000), d.log_tail()))

                # The alert ends: the rule is withdrawn.
                c.true('reload with a threshold above the traffic', reload(d, 1e12))
                c.eq('no route after the alert ended', set(),
                     gobgp.wait_rib('ipv4-flowspec', set(), 30))

                # A manual rule: announced as an alert's, gone on DELETE.
                status, _, doc = d.request('/api/v1/flowspec', 'POST',
                                           json.dumps(MANUAL).encode())
                rule = doc if isinstance(doc, dict) else {}
                c.eq('POST of a manual rule: 201, no alert', (201, None),
                     (status, rule.get('alert_id')))
                c.eq('the manual rule at gobgpd', {MANUAL_ROUTE},
                     gobgp.wait_rib('ipv4-flowspec', {MANUAL_ROUTE}, 30))
                c.eq('GET /api/v1/flowspec: the manual rule, announced', [(None, True)],
                     [(r['alert_id'], r['announced'])
                      for r in d.get('/api/v1/flowspec')['rules']])
                status, _, doc = d.request('/api/v1/flowspec', 'POST', json.dumps(
                    dict(MANUAL, destination='192.168.0.9')).encode())
                c.eq('a manual rule outside the subnets: 422',
                     (422, {'error': 'destination: not inside a monitored subnet'}),
                     (status, doc))
                status, _, _ = d.request('/api/v1/flowspec/%d' % rule.get('id', 0), 'DELETE')
                c.eq('DELETE of the manual rule', 200, status)
                c.eq('no route after the DELETE', set(),
                     gobgp.wait_rib('ipv4-flowspec', set(), 30))

                # A new alert's rule goes at the stop.
                c.true('reload with the threshold back', reload(d, 1000))
                c.eq('a route for the new alert', 1,
                     len(wait_for('new rule', lambda: gobgp.rib('ipv4-flowspec'))))
                c.eq('dpmon exit status after SIGTERM', 0, d.stop())
                c.eq('no route after dpmon stopped', set(),
                     gobgp.wait_rib('ipv4-flowspec', set(), 30))
            exa.__exit__(None, None, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


def write_quiet_capture(path):
    """A capture of the host's own traffic only (HTTPS clients): no alert."""
    rnd = random.Random(23)
    with open(path, 'wb') as out:
        out.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for n in range(100):
            src = '100.64.%d.%d' % (rnd.randrange(256), rnd.randrange(1, 255))
            f = harness.eth_ipv4(src, VICTIM, proto=6, sport=rnd.randrange(32768, 60000),
                                 dport=443, size=66)
            out.write(struct.pack('<IIII', 1764522000, n * 1000, len(f), len(f)))
            out.write(f)


def open_writer(fifo):
    """A non-blocking write descriptor of `fifo`, or None while it has no reader."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return None


def state_rules(path):
    """The FlowSpec rules of the state file `path` ([] without a file)."""
    try:
        with open(path) as f:
            return json.load(f).get('flowspec', [])
    except FileNotFoundError:
        return []


def test_flowspec_restart(h):
    c = h.checker('flowspec_restart')
    work, fifo = workdir('dpmon-it-flowspec-restart-')
    state = os.path.join(work, 'state.json')
    attack, quiet = os.path.join(work, 'dns-amp.pcap'), os.path.join(work, 'quiet.pcap')
    write_capture(attack)
    write_quiet_capture(quiet)
    keeper = None
    cfg = {'average_time_constant_ms': 1000,
           'detection': {'thresholds': {'ingress': {'pps': 1000}}, 'ban': True,
                         'mitigation': 'flowspec', 'hold_s': 1},
           'actions': {'exabgp_pipe': fifo, 'state_file': state,
                       'flowspec': {'sample_packets': 200, 'sample_timeout_s': 30,
                                    'keep_on_stop': True}}}
    try:
        with GoBgp() as gobgp:
            exa = ExaBgp(gobgp, fifo)
            exa.start()
            gobgp.wait_established()
            # A second writer holds the FIFO open, so that ExaBGP's socat sees
            # no end of file when dpmon stops (a respawned socat runs as
            # ExaBGP's unprivileged user here, who cannot open the FIFO, and
            # ExaBGP would shut down, dropping every route by itself).
            keeper = wait_for('socat reading the FIFO', lambda: open_writer(fifo), 20)
            c.true('a second writer on the FIFO', keeper is not None)
            with h.dpmon_run([attack], SUBNETS, 'flowspec-keep', extra_config=cfg,
                             vdev_args=',infinite_rx=1') as d:
                rib = wait_for('the rule', lambda: gobgp.rib('ipv4-flowspec'))
                c.eq('one FlowSpec route at gobgpd', 1, len(rib))
                c.eq('dpmon exit status after SIGTERM', 0, d.stop())
            time.sleep(3)
            c.eq('the rule stays after the stop (keep_on_stop)', set(rib),
                 set(gobgp.rib('ipv4-flowspec')))
            c.eq('the state file holds the rule', 1, len(state_rules(state)))
            with h.dpmon_run([quiet], SUBNETS, 'flowspec-restart', extra_config=cfg,
                             vdev_args=',infinite_rx=1') as d:
                c.eq('no route once the new dpmon started', set(),
                     gobgp.wait_rib('ipv4-flowspec', set(), 30))
                wait_for('no rule in the file', lambda: not state_rules(state), 10)
                c.eq('the state file holds no rule', [], state_rules(state))
                c.eq('the new dpmon has no rule', [], d.get('/api/v1/flowspec')['rules'])
                c.eq('dpmon exit status after SIGTERM', 0, d.stop())
            exa.__exit__(None, None, None)
    finally:
        if keeper is not None:
            os.close(keeper)
        shutil.rmtree(work, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
