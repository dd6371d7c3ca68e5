#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Attack detection on the real dpmon (docs/detection.md): captures made by
dpmon-gen, read once through the pcap PMD.

Each flood is 40000 UDP packets to (or from) one host, read in a few
milliseconds; with average_time_constant_ms 1000 the host's averaged pps
jumps to about 40000 (packets / tau) and decays afterwards. The background
is 20000 packets spread over 64 hosts (about 220 pps each at the peak).
The thresholds (4000 pps) sit a factor of 10 from both, so the outcome does
not depend on the machine's speed; the tests assert on the alerts' fields,
never on timing.

  - flood:      one ingress flood plus background: exactly one alert, with
                the flooded host, ingress, metric pps, type udp_flood, the
                threshold and a value above it; the background raises none;
                /api/v1/alerts/{id}, filters and /metrics agree;
  - disabled:   a hostgroup /32 (inside the monitored /24) with
                enabled:false: no alert at all;
  - precedence: a hostgroup with a higher pps limit is not overridden by a
                global udp_pps limit; a flooded host outside it alerts on
                udp_pps;
  - egress:     a flood sent by a monitored host: one alert, egress;
  - actions:    the flood replayed without end (infinite_rx) with every
                action configured: the notify script's arguments, the
                ExaBGP announce line, the alert's sample (the flood's
                sources, its destination port) and its capture file
                (pcap_packets packets, every one to the host);
  - captures:   actions.pcap_dir across a restart: the flood replayed
                forever (infinite_rx=1), twice; each run's alert 1 writes
                1.pcap with pcap_packets records of the flood, and the
                second run first moves the first run's file aside to
                1.MTIME.pcap (never overwritten);
  - reload pcap_dir: a reload that sets actions.pcap_dir makes the active
                alert's capture file appear with pcap_packets records.
"""
import json
import os
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_blackholes  # noqa: E402  (its FIFO reader and recording script)
from harness import TestFailure  # noqa: E402

SUBNETS = [('10.0.0.0/24', 'lan'), ('10.0.1.0/24', 'bg')]
LIMIT = 4000.0


def captures(h, tmp):
    flood = ['--hosts', '1', '--packets', '40000', '--mix', 'udp=1']
    return {
        'in5': h.gen(tmp, 'in5', ['--subnet', '10.0.0.4/30', '--egress-percent', '0'] + flood)[0],
        'in13': h.gen(tmp, 'in13', ['--subnet', '10.0.0.12/30', '--egress-percent', '0',
                                    '--seed', '2'] + flood)[0],
        'out9': h.gen(tmp, 'out9', ['--subnet', '10.0.0.8/30', '--egress-percent', '100',
                                    '--seed', '3'] + flood)[0],
        'bg': h.gen(tmp, 'bg', ['--subnet', '10.0.1.0/24', '--hosts', '64',
                                '--packets', '20000', '--seed', '4'])[0],
    }


def alerts_after(h, pcaps, label, detection, packets):
    """The /api/v1/alerts document once every packet was counted (plus two
    merges), and the /metrics text of that moment."""
    cfg = {'average_time_constant_ms': 1000, 'detection': detection}
    with h.dpmon_run(pcaps, SUBNETS, label, extra_config=cfg) as d:
        d.wait_counts(packets)
        seq = d.summary()['snapshot_seq']
        d._next_snapshot(seq + 1, time.monotonic() + 10)
        doc = d.get('/api/v1/alerts')
        status, _, metrics = d.request('/metrics')
        one = [d.request('/api/v1/alerts/%d' % a['id']) for a in doc['alerts']]
        filtered = d.get('/api/v1/alerts?state=active&direction=ingress&type=udp_flood')
        # The actions thread adds a banning alert's blackhole within milliseconds.
        deadline = time.monotonic() + 5
        while True:
            blackholes = d.get('/api/v1/blackholes')['blackholes']
            if blackholes or time.monotonic() > deadline or not detection.get('ban'):
                break
            time.sleep(0.05)
        summary = d.summary()
        if d.stop() != 0:
            raise TestFailure('%s: dpmon exit status after SIGTERM not 0' % label)
        with open(os.path.join(d.dir, 'stdout'), encoding='utf-8', errors='replace') as f:
            alerts_after.stdout, alerts_after.summary = f.read(), summary
    return doc, metrics, one, filtered, blackholes


def check_one(c, doc, address, direction, metric, hostgroup=None):
    c.eq('alerts listed', 1, len(doc['alerts']))
    c.eq('alerts active', 1, doc['active'])
    c.eq('alerts started', 1, doc['started'])
    if not doc['alerts']:
        return None
    a = doc['alerts'][0]
    c.eq('address', address, a['address'])
    c.eq('direction', direction, a['direction'])
    c.eq('metric', metric, a['metric'])
    c.eq('type', 'udp_flood', a['type'])
    c.eq('state', 'active', a['state'])
    c.eq('threshold', LIMIT, a['threshold'])
    c.true('value %r above the threshold' % a['value'], a['value'] > LIMIT)
    c.true('peak %r >= value' % a['peak'][metric], a['peak'][metric] >= a['value'])
    c.eq('hostgroup', hostgroup, a['hostgroup'])
    c.eq('end', None, a['end_unix_s'])
    c.true('start is a recent unix time', abs(a['start_unix_s'] - time.time()) < 600)
    return a


def case_flood(h, caps):
    c = h.checker('flood')
    doc, metrics, one, filtered, blackholes = alerts_after(
        h, [caps['in5'], caps['bg']], 'flood',
        {'thresholds': {'ingress': {'pps': LIMIT}, 'egress': {'pps': LIMIT}}, 'ban': True},
        60000)
    a = check_one(c, doc, '10.0.0.5', 'ingress', 'pps')
    if a is not None:
        c.eq('ban', True, a['ban'])
        c.eq('GET /api/v1/alerts/{id}', (200, a['id']), (one[0][0], one[0][2]['id']))
        c.eq('filtered list', [a['id']], [x['id'] for x in filtered['alerts']])
        c.eq('the banning alert holds a blackhole (actions)',
             [('10.0.0.5', 'alert', a['id'])],
             [(b['address'], b['source'], b['alert_id']) for b in blackholes])
    c.true('dpmon_alerts_active 1 on /metrics', '\ndpmon_alerts_active 1\n' in metrics)
    c.true('dpmon_alerts_started_total 1 on /metrics',
           '\ndpmon_alerts_started_total 1\n' in metrics)
    # The stop's record: the final snapshot holds every packet, and the
    # alert still active is logged (docs/operations.md).
    out, summary = alerts_after.stdout, alerts_after.summary
    final = [l for l in out.splitlines() if l.startswith('dpmon: final snapshot ')]
    tot = summary['totals']
    c.eq('final snapshot line', 1, len(final))
    if final:
        c.true('final line counts %s' % final[0],
               ('ingress %d packets %d bytes, egress %d packets %d bytes, '
                % (tot['ingress']['packets'], tot['ingress']['bytes'],
                   tot['egress']['packets'], tot['egress']['bytes'])) in final[0] and
               final[0].endswith(', 1 alerts active'))
    if a is not None:
        c.eq('alert still active at stop, logged',
             ['dpmon: alert %d still active at stop: 10.0.0.5 ingress pps' % a['id']],
             [l[:len('dpmon: alert %d still active at stop: 10.0.0.5 ingress pps' % a['id'])]
              for l in out.splitlines() if 'still active at stop' in l])
    c.done()


def case_disabled_hostgroup(h, caps):
    c = h.checker('disabled')
    doc, metrics, _, _, blackholes = alerts_after(
        h, [caps['in5'], caps['bg']], 'disabled',
        {'thresholds': {'ingress': {'pps': LIMIT}},
         'hostgroups': [{'name': 'quiet', 'prefixes': ['10.0.0.5/32'], 'enabled': False}]},
        60000)
    c.eq('alerts listed', [], doc['alerts'])
    c.eq('alerts started', 0, doc['started'])
    c.eq('blackholes', [], blackholes)
    c.true('dpmon_alerts_active 0 on /metrics', '\ndpmon_alerts_active 0\n' in metrics)
    c.done()


def case_hostgroup_precedence(h, caps):
    c = h.checker('precedence')
    doc, _, _, _, _ = alerts_after(
        h, [caps['in5'], caps['in13']], 'precedence',
        {'thresholds': {'ingress': {'udp_pps': LIMIT}},
         'hostgroups': [{'name': 'big', 'prefixes': ['10.0.0.4/30'],
                         'thresholds': {'ingress': {'pps': 1e7}}}]},
        80000)
    check_one(c, doc, '10.0.0.13', 'ingress', 'udp_pps')
    c.done()


def case_egress(h, caps):
    c = h.checker('egress')
    doc, _, _, _, _ = alerts_after(
        h, [caps['out9'], caps['bg']], 'egress',
        {'thresholds': {'ingress': {'pps': LIMIT}, 'egress': {'pps': LIMIT}}}, 60000)
    check_one(c, doc, '10.0.0.9', 'egress', 'pps')
    c.done()


def ipv4_destinations(path):
    """Destination address of every record of a pcap of Ethernet/IPv4 frames."""
    with open(path, 'rb') as f:
        data = f.read()
    off, out = 24, []
    while off + 16 <= len(data):
        caplen = int.from_bytes(data[off + 8:off + 12], 'little')
        frame = data[off + 16:off + 16 + caplen]
        out.append('.'.join(str(b) for b in frame[30:34]) if len(frame) >= 34 else None)
        off += 16 + caplen
    return out


def case_actions_live(h, caps):
    c = h.checker('actions')
    tmp = tempfile.mkdtemp(prefix='dpmon-it-actions-')
    fifo = test_blackholes.Fifo(os.path.join(tmp, 'exabgp.cmd'))
    try:
        script = test_blackholes.write_script(tmp)
        os.mkdir(os.path.join(tmp, 'pcap'))
        cfg = {'average_time_constant_ms': 1000,
               'detection': {'thresholds': {'ingress': {'pps': LIMIT}}, 'ban': True},
               'actions': {'notify_script': script, 'exabgp_pipe': fifo.path,
                           'pcap_dir': os.path.join(tmp, 'pcap'), 'pcap_packets': 50,
                           'state_file': os.path.join(tmp, 'state.json')}}
        with h.dpmon_run([caps['in5']], SUBNETS, 'actions', extra_config=cfg,
                         vdev_args=',infinite_rx=1') as d:
            deadline = time.monotonic() + 20
            alert = None
            while time.monotonic() < deadline:
                status, _, doc = d.request('/api/v1/alerts?state=active')
                if status == 503:  # before the first snapshot
                    time.sleep(0.1)
                    continue
                alert = doc['alerts'][0] if doc['alerts'] else None
                if alert and alert.get('sample') and alert['sample']['packets'] >= 50:
                    break
                time.sleep(0.1)
            c.true('an active alert with a sample of >= 50 packets', alert is not None and
                   bool(alert.get('sample')) and alert['sample']['packets'] >= 50, repr(alert))
            announce = fifo.lines(1)
            args = test_blackholes.wait_lines(os.path.join(tmp, 'args'), 1)
            # The script has run and the pipe has a reader: the next
            # snapshot's counters say so (summary.actions, docs/api.md).
            deadline = time.monotonic() + 10
            acts = d.summary()['actions']
            while acts['notify']['ok'] < 1 and time.monotonic() < deadline:
                time.sleep(0.1)
                acts = d.summary()['actions']
            c.eq('summary.actions: one script run ok, none failed or killed, pipe connected, '
                 'one blackhole',
                 ({'ok': 1, 'failed': 0, 'killed': 0}, True, 1, 0),
                 (acts['notify'], acts['exabgp_connected'], acts['blackholes'],
                  acts['events_dropped']))
            c.true('summary.actions.sample.copied %d >= 50' % acts['sample']['copied'],
                   acts['sample']['copied'] >= 50)
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
        if alert is None:
            c.done()
            return
        c.eq('alert', ('10.0.0.5', 'ingress', 'pps', 'udp_flood'),
             (alert['address'], alert['direction'], alert['metric'], alert['type']))
        c.eq('notify script arguments (docs/detection.md)',
             ['10.0.0.5 ingress attack_start %d' % alert['id']], args[:1])
        c.eq('ExaBGP line', ['announce route 10.0.0.5/32 next-hop 192.0.2.1'], announce)
        sample = alert['sample']
        c.true('sample sources are the flood\'s (outside the monitored subnets)',
               bool(sample['sources']) and
               all(not x['address'].startswith('10.0.') for x in sample['sources']),
               repr(sample['sources']))
        c.true('sample destination ports listed', bool(sample['destination_ports']),
               repr(sample))
        pcap = os.path.join(tmp, 'pcap', '%d.pcap' % alert['id'])
        c.true('capture file %s exists' % pcap, os.path.exists(pcap))
        if os.path.exists(pcap):
            dst = ipv4_destinations(pcap)
            c.eq('capture file: pcap_packets packets, every one to the host',
                 ['10.0.0.5'] * 50, dst)
    finally:
        fifo.close()
        shutil.rmtree(tmp, ignore_errors=True)
    c.done()


def pcap_records(path):
    """Records in a capture file (classic pcap), or None when it is absent
    or not complete yet (libpcap buffers until the file is closed)."""
    try:
        return len(harness.pcap_records(path))
    except (FileNotFoundError, TestFailure):
        return None


def case_reload_pcap_dir(h, caps):
    """A reload that sets actions.pcap_dir: the active alert's copies go to
    DIR/ID.pcap from then on (configuration.md: "actions": applied)."""
    c = h.checker('reload pcap_dir')
    tmp = tempfile.mkdtemp(prefix='dpmon-it-detect-pcapdir-')
    detection = {'thresholds': {'ingress': {'pps': LIMIT}}}
    try:
        with h.dpmon_run([caps['in5']], SUBNETS, 'reload pcap_dir', vdev_args=',infinite_rx=1',
                         extra_config={'average_time_constant_ms': 1000,
                                       'detection': detection}) as d:
            deadline = time.monotonic() + 20
            status, _, doc = d.request('/api/v1/alerts')
            while (status != 200 or not doc['alerts']) and time.monotonic() < deadline:
                time.sleep(0.1)
                status, _, doc = d.request('/api/v1/alerts')
            c.eq('one alert before the reload', 1, len(doc['alerts']))
            if doc['alerts']:
                path = os.path.join(tmp, '%d.pcap' % doc['alerts'][0]['id'])
                c.eq('no capture file without pcap_dir', [], os.listdir(tmp))
                cfg = dict(d.config, actions={'pcap_dir': tmp, 'pcap_packets': 5})
                with open(os.path.join(d.dir, 'dpmon.json.tmp'), 'w') as f:
                    json.dump(cfg, f)
                os.rename(os.path.join(d.dir, 'dpmon.json.tmp'), os.path.join(d.dir, 'dpmon.json'))
                os.kill(d.proc.pid, signal.SIGHUP)
                deadline = time.monotonic() + 20
                while d.summary()['config']['reloads'] < 1 and time.monotonic() < deadline:
                    time.sleep(0.05)
                c.eq('reloads', 1, d.summary()['config']['reloads'])
                while pcap_records(path) != 5 and time.monotonic() < deadline:
                    time.sleep(0.1)
                c.eq('records in %s after the reload' % os.path.basename(path), 5,
                     pcap_records(path))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.done()


def capture_run(h, pcap, pcap_dir, label, records, moved=None):
    """One dpmon on @p pcap replayed forever until its alert 1's capture
    file holds @p records records (and, when given, the earlier run's file
    was @p moved there first); then SIGTERM. @return its stderr."""
    cfg = {'average_time_constant_ms': 1000,
           'detection': {'thresholds': {'ingress': {'pps': LIMIT}}},
           'actions': {'pcap_dir': pcap_dir, 'pcap_packets': records}}
    path = os.path.join(pcap_dir, '1.pcap')
    with h.dpmon_run([pcap], SUBNETS, label, extra_config=cfg,
                     vdev_args=',infinite_rx=1') as d:
        deadline = time.monotonic() + 30
        while True:
            status, _, doc = d.request('/api/v1/alerts')  # 503 before the first merge
            ids = [a['id'] for a in doc['alerts']] if status == 200 else []
            try:
                done = (ids == [1] and (moved is None or os.path.exists(moved)) and
                        len(harness.pcap_records(path)) == records)
            except (FileNotFoundError, TestFailure):
                done = False  # not yet written, or a record half flushed
            if done:
                break
            if time.monotonic() > deadline:
                raise TestFailure('%s: no complete %s within 30 s (alerts %r)' %
                                  (label, path, ids))
            time.sleep(0.1)
        if d.stop() != 0:
            raise TestFailure('%s: dpmon exit status after SIGTERM not 0' % label)
        with open(os.path.join(d.dir, 'stderr'), encoding='utf-8', errors='replace') as f:
            return f.read()


def case_captures(h, caps, tmp):
    c = h.checker('captures')
    pcap_dir = os.path.join(tmp, 'captures')
    os.mkdir(pcap_dir)
    capture_run(h, caps['in5'], pcap_dir, 'captures-1', 10)
    first = os.path.join(pcap_dir, '1.pcap')
    stamp = time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(os.stat(first).st_mtime))
    aside = '1.%s.pcap' % stamp
    err = capture_run(h, caps['in5'], pcap_dir, 'captures-2', 10,
                      moved=os.path.join(pcap_dir, aside))
    c.eq('files after the restart', sorted(['1.pcap', aside]), sorted(os.listdir(pcap_dir)))
    for name in sorted(os.listdir(pcap_dir)):
        recs = harness.pcap_records(os.path.join(pcap_dir, name))
        c.eq('%s: records (caplen, origlen) of the 64-byte flood' % name, [(64, 64)] * 10, recs)
    c.true('the move is logged', 'dpmon: sample: %s was an earlier run\'s capture: moved to %s'
           % (first, os.path.join(pcap_dir, aside)) in err)
    c.done()


def test_detection(h):
    if not os.access(h.dpmon_gen, os.X_OK):
        raise TestFailure('dpmon-gen not built: %s' % h.dpmon_gen)
    tmp = tempfile.mkdtemp(prefix='dpmon-it-detect-')
    try:
        caps = captures(h, tmp)
        case_flood(h, caps)
        case_disabled_hostgroup(h, caps)
        case_hostgroup_precedence(h, caps)
        case_egress(h, caps)
        case_actions_live(h, caps)
        case_captures(h, caps, tmp)
        case_reload_pcap_dir(h, caps)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    harness.main({'test_detection': test_detection})
