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
  - that a new alert's rule is gone at dpmon's stop (keep_on_stop false),
    through dpmon's withdraw: a second writer holds the FIFO open, so
    ExaBGP's session stays up (gobgpd's session is the same before and
    after, one more withdraw UPDATE came) and ExaBGP's last command is
    the rule's withdraw line.

With keep_on_stop and a state file, the alert's rule and a manual rule
stay at gobgpd after the stop and the file holds both; a new dpmon
started on a capture without the attack withdraws the alert's rule and
keeps the manual one (listed under the same id). Its stop without
keep_on_stop withdraws the manual rule, which stays in the file, and the
next start announces it again; DELETE removes it for good.

With ExaBGP away (the FIFO has no reader) for 10 s while three victims'
alerts start and 400 manual rules are added, every rule waits in dpmon;
when ExaBGP comes, it reads each rule's line whole and once, about 80 KB
in all, more than the pipe holds (so the writer meets a full pipe), and
gobgpd has every rule. The mechanism does not depend on how long ExaBGP
is away: dpmon retries the FIFO every 100 ms, minutes or seconds alike.

Expected values come from the capture the test writes, never from dpmon
(the ExaBGP lines ExaBGP must have read are built from the rules dpmon
lists).
"""
import contextlib
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
from bgp import ExaBgp, GoBgp, open_writer, wait_for  # noqa: E402

SUBNETS = [('10.0.0.0/24', 'lan')]
VICTIM = '10.0.0.5'
ROUTE = re.compile(r'^\[destination: 10\.0\.0\.5/32\]\[protocol: ==udp\]\[source-port: ==53\]'
                   r'\[packet-length: >=(\d+)&<=(\d+)\]$')
MANUAL = {'destination': '10.0.0.9', 'protocol': 'tcp', 'destination_ports': [22]}
MANUAL_ROUTE = '[destination: 10.0.0.9/32][protocol: ==tcp][destination-port: ==22]'


def write_capture(path, victims=(VICTIM,)):
    """The capture, its attack dealt in turn to `victims`; returns [(is_attack,
    proto, sport, dport, ip_len)] of its packets."""
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
            f = harness.eth_ipv4(src, victims[i % len(victims)], proto=17, sport=53,
                                 dport=dport, size=size)
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


@contextlib.contextmanager
def second_writer(fifo):
    """A second write descriptor of `fifo` (None while it has no reader),
    closed at the end: when dpmon closes the FIFO, ExaBGP's socat sees no
    end of file, so ExaBGP's session and its routes stay up."""
    fd = open_writer(fifo)
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def session(gobgp):
    """gobgpd's session with ExaBGP: (state, the time it came up, withdraw
    UPDATEs received); the same time before and after means the same session."""
    n = json.loads(gobgp._cli(['neighbor', '-j']).stdout.decode() or '[]')
    n = n[0] if n else {}
    st = n.get('state', {})
    return (st.get('session_state'),
            n.get('timers', {}).get('state', {}).get('uptime', {}).get('seconds'),
            st.get('messages', {}).get('received', {}).get('withdraw_update', 0))


def commands(exa):
    """The lines ExaBGP read from its process (the FIFO), in order."""
    out = []
    with open(os.path.join(exa.dir, 'console.log'), 'rb') as f:
        for line in f.read().decode('utf-8', 'replace').splitlines():
            m = re.search(r'\| command from process dpmon : (.*)$', line)
            if m:
                out.append(m.group(1).rstrip())
    return out


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

                # A new alert's rule goes at the stop, by dpmon's withdraw: a
                # second writer keeps the FIFO open, so ExaBGP's socat sees no
                # end of file and its session (and its routes) stays up; the
                # route can only leave gobgpd's table through the withdraw.
                c.true('reload with the threshold back', reload(d, 1000))
                c.eq('a route for the new alert', 1,
                     len(wait_for('new rule', lambda: gobgp.rib('ipv4-flowspec'))))
                rules = d.get('/api/v1/flowspec')['rules']
                withdraw = 'withdraw flow route { match { %s } }' % (
                    rules[0]['match'] if rules else '?')
                with second_writer(fifo) as keeper:
                    c.true('a second writer on the FIFO', keeper is not None)
                    before = session(gobgp)
                    c.eq('dpmon exit status after SIGTERM', 0, d.stop())
                    c.eq('no route after dpmon stopped', set(),
                         gobgp.wait_rib('ipv4-flowspec', set(), 30))
                    time.sleep(1)
                    after = session(gobgp)
                c.eq('the same BGP session before and after the stop (state, up since)',
                     before[:2], after[:2])
                c.eq('one withdraw UPDATE received at the stop', before[2] + 1, after[2])
                c.eq("ExaBGP's last command: dpmon's withdraw line", withdraw,
                     (commands(exa) or [''])[-1])
            exa.__exit__(None, None, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


VICTIMS = ('10.0.0.5', '10.0.0.6', '10.0.0.7')
ABSENT_S = 10       # how long ExaBGP is away (dpmon retries the FIFO every 100 ms)
BULK_RULES = 400    # manual rules posted while it is away: their lines exceed 64 KiB


def bulk_rule(k):
    """Manual rule `k` of the ExaBGP-absent test: four ports each way, so
    that its ExaBGP line is about 200 bytes."""
    return {'destination': '10.0.0.%d' % (10 + k % 200), 'protocol': 'tcp',
            'source_ports': [10000 + 4 * k + j for j in range(4)],
            'destination_ports': [20000 + 4 * k + j for j in range(4)],
            'packet_length': {'min': 40, 'max': 1500}}


def test_flowspec_exabgp_absent(h):
    """ExaBGP away while alerts start and rules are added: the rules wait in
    dpmon (the FIFO has no reader: ENXIO, retried every 100 ms, the same
    whether ExaBGP is away for seconds or minutes); when it comes, it reads
    every rule's line whole, through a full pipe, and gobgpd has them all."""
    c = h.checker('flowspec_exabgp_absent')
    work, fifo = workdir('dpmon-it-flowspec-absent-')
    pcap = os.path.join(work, 'dns-amp3.pcap')
    write_capture(pcap, VICTIMS)
    cfg = {'average_time_constant_ms': 1000,
           'detection': {'thresholds': {'ingress': {'pps': 1000}}, 'ban': True,
                         'mitigation': 'flowspec'},
           'actions': {'exabgp_pipe': fifo,
                       'flowspec': {'sample_packets': 200, 'sample_timeout_s': 30,
                                    'max_rules': 500}}}
    try:
        with GoBgp() as gobgp:
            with h.dpmon_run([pcap], SUBNETS, 'flowspec-absent', extra_config=cfg,
                             vdev_args=',infinite_rx=1') as d:
                t0 = time.monotonic()
                def alert_rules():
                    rules = [r for r in d.get('/api/v1/flowspec')['rules'] if r['alert_id']]
                    dsts = {r['match'].split()[1].split('/')[0] for r in rules}
                    return rules if dsts == set(VICTIMS) else None
                by_alert = wait_for('the alerts\' rules', alert_rules) or []
                c.eq('rules for every victim, while ExaBGP is away', sorted(VICTIMS),
                     sorted({r['match'].split()[1].split('/')[0] for r in by_alert}))
                posted = 0
                for k in range(BULK_RULES):
                    status, _, _ = d.request('/api/v1/flowspec', 'POST',
                                             json.dumps(bulk_rule(k)).encode())
                    posted += status == 201
                c.eq('manual rules added while ExaBGP is away', BULK_RULES, posted)
                rules = d.get('/api/v1/flowspec')['rules']
                c.eq('every rule listed, none announced', (BULK_RULES + len(by_alert), 0),
                     (len(rules), sum(r['announced'] for r in rules)))
                c.true('dpmon_exabgp_pipe_connected 0 while ExaBGP is away',
                       re.search(r'^dpmon_exabgp_pipe_connected 0$',
                                 d.request('/metrics')[2], re.M) is not None)
                time.sleep(max(0.0, ABSENT_S - (time.monotonic() - t0)))
                want = ['announce flow route { match { %s } then { %s; } }' % (
                    r['match'], r['action']) for r in rules]
                size = sum(len(w) + 1 for w in want)
                c.true('the lines (%d bytes) exceed the pipe (64 KiB)' % size, size > 65536)

                exa = ExaBgp(gobgp, fifo)
                exa.start()
                c.note('ExaBGP away for %.1f s' % (time.monotonic() - t0))
                gobgp.wait_established()
                got = wait_for('every rule at gobgpd', lambda: len(
                    gobgp.rib('ipv4-flowspec')) == len(want), 180)
                c.eq('every rule at gobgpd', len(want), len(gobgp.rib('ipv4-flowspec')))
                cmds = commands(exa)
                c.eq('ExaBGP read %d commands' % len(want), len(want), len(cmds))
                c.eq('commands that are not a whole line of a rule (a partial line)', [],
                     [x for x in cmds if x not in set(want)])
                c.eq('rules ExaBGP never read', [], [w for w in want if w not in set(cmds)])
                c.eq('rules ExaBGP read twice', [], sorted({x for x in cmds if cmds.count(x) > 1}))
                if not got:
                    h.log('--- ExaBGP ---\n%s\n--- dpmon ---\n%s' % (
                        exa.console_tail(6000), d.log_tail()))
                c.eq('every rule announced now', len(want),
                     sum(r['announced'] for r in d.get('/api/v1/flowspec')['rules']))
                with second_writer(fifo):
                    c.eq('dpmon exit status after SIGTERM', 0, d.stop())
                    c.eq('every rule withdrawn at the stop', set(),
                         gobgp.wait_rib('ipv4-flowspec', set(), 120))
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
                status, _, doc = d.request('/api/v1/flowspec', 'POST',
                                           json.dumps(MANUAL).encode())
                manual_id = doc.get('id') if isinstance(doc, dict) else None
                c.eq('POST of a manual rule', 201, status)
                c.eq("the alert's rule and the manual rule at gobgpd", set(rib) | {MANUAL_ROUTE},
                     gobgp.wait_rib('ipv4-flowspec', set(rib) | {MANUAL_ROUTE}, 30))
                c.eq('dpmon exit status after SIGTERM', 0, d.stop())
            time.sleep(3)
            c.eq('both rules stay after the stop (keep_on_stop)', set(rib) | {MANUAL_ROUTE},
                 set(gobgp.rib('ipv4-flowspec')))
            c.eq('the state file holds both rules, the manual one with its components',
                 [(False, None), (True, MANUAL['destination'])],
                 sorted((r['alert_id'] == 0, r.get('rule', {}).get('destination'))
                        for r in state_rules(state)))
            # The next start withdraws the alert's rule and keeps the manual one;
            # without keep_on_stop, its stop withdraws the manual rule too.
            # (The quiet capture replayed without end is fast enough to alert at
            # 1000 pps: these runs take a limit above it, so no alert adds a rule.)
            again = json.loads(json.dumps(cfg))
            again['actions']['flowspec']['keep_on_stop'] = False
            again['detection']['thresholds'] = {'ingress': {'pps': 1e12}}
            with h.dpmon_run([quiet], SUBNETS, 'flowspec-restart', extra_config=again,
                             vdev_args=',infinite_rx=1') as d:
                c.eq('only the manual rule once the new dpmon started', {MANUAL_ROUTE},
                     gobgp.wait_rib('ipv4-flowspec', {MANUAL_ROUTE}, 30))
                wait_for('one rule in the file', lambda: len(state_rules(state)) == 1, 10)
                c.eq('the state file holds the manual rule only', [(manual_id, 0)],
                     [(r['id'], r['alert_id']) for r in state_rules(state)])
                c.eq('the new dpmon lists the manual rule, same id, announced',
                     [(manual_id, None, True)],
                     [(r['id'], r['alert_id'], r['announced'])
                      for r in d.get('/api/v1/flowspec')['rules']])
                c.eq('dpmon exit status after SIGTERM', 0, d.stop())
            c.eq('no route after the stop (keep_on_stop false)', set(),
                 gobgp.wait_rib('ipv4-flowspec', set(), 30))
            c.eq('the state file still holds the manual rule', [manual_id],
                 [r['id'] for r in state_rules(state)])
            # The start after that announces it again; DELETE removes it for good.
            with h.dpmon_run([quiet], SUBNETS, 'flowspec-restart2', extra_config=again,
                             vdev_args=',infinite_rx=1') as d:
                c.eq('the manual rule announced again at the next start', {MANUAL_ROUTE},
                     gobgp.wait_rib('ipv4-flowspec', {MANUAL_ROUTE}, 30))
                status, _, _ = d.request('/api/v1/flowspec/%s' % manual_id, 'DELETE')
                c.eq('DELETE of the manual rule', 200, status)
                c.eq('no route after the DELETE', set(),
                     gobgp.wait_rib('ipv4-flowspec', set(), 30))
                wait_for('no rule in the file', lambda: not state_rules(state), 10)
                c.eq('the state file holds no rule', [], state_rules(state))
                c.eq('dpmon exit status after SIGTERM', 0, d.stop())
            exa.__exit__(None, None, None)
    finally:
        if keeper is not None:
            os.close(keeper)
        shutil.rmtree(work, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
