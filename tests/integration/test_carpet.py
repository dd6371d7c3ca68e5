#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Carpet bombing: subnet thresholds on the real dpmon (docs/detection.md),
from captures made by dpmon-gen and read once through the pcap PMD.

The carpet is 80000 UDP packets spread over every host of 10.9.0.0/24
(.1 to .254), read in a few milliseconds; with average_time_constant_ms
1000 the subnet's averaged pps jumps to about 72000 while each host's
stays near 300. The background is 4000 packets over 64 hosts of
10.0.1.0/24 (about 3600 pps for its subnet at the peak). The host limit
(4000 pps) sits a factor of 12 above every host, the subnet limit
(15000 pps) a factor of 4 above the background and below the carpet, so
the outcome does not depend on the machine's speed; the tests assert on
the alerts' fields, never on timing.

  - carpet:    exactly one alert: target subnet, prefix 10.9.0.0/24,
               ingress, pps, udp_flood, no ban, no host alert; the
               background subnet raises none; target= filters, /metrics;
  - own limit: the subnet's own thresholds (pps 1e6) replace the global
               ones: no alert;
  - off:       subnets[].detection false: no alert;
  - live:      the carpet replayed without end (infinite_rx; host limits
               out of reach, the replay's rate being the machine's) with a
               notify script and an ExaBGP pipe: the script gets the prefix, no
               blackhole is announced, the sample's destinations are
               inside the prefix and its sources outside the monitored
               subnets.
"""
import ipaddress
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_blackholes  # noqa: E402  (its FIFO reader and recording script)
from harness import TestFailure  # noqa: E402

CARPET = '10.9.0.0/24'
HOST_LIMIT = 4000.0
SUBNET_LIMIT = 15000.0
DETECTION = {'thresholds': {'ingress': {'pps': HOST_LIMIT}, 'egress': {'pps': HOST_LIMIT}},
             'subnet_thresholds': {'ingress': {'pps': SUBNET_LIMIT},
                                   'egress': {'pps': SUBNET_LIMIT}},
             'ban': True}


def subnets(carpet_extra=None):
    carpet = dict({'prefix': CARPET, 'name': 'customer-a'}, **(carpet_extra or {}))
    return [carpet, {'prefix': '10.0.1.0/24', 'name': 'bg'}]


def captures(h, tmp):
    return {
        'carpet': h.gen(tmp, 'carpet', ['--subnet', CARPET, '--hosts', '254',
                                        '--packets', '80000', '--mix', 'udp=1',
                                        '--egress-percent', '0', '--seed', '5'])[0],
        'bg': h.gen(tmp, 'bg', ['--subnet', '10.0.1.0/24', '--hosts', '64',
                                '--packets', '4000', '--seed', '6'])[0],
    }


def alerts_after(h, pcaps, label, subnet_conf, packets):
    """The /api/v1/alerts documents (all, target=subnet, target=host) once
    every packet was counted (plus two merges), and /metrics then."""
    cfg = {'average_time_constant_ms': 1000, 'detection': DETECTION, 'subnets': subnet_conf}
    with h.dpmon_run(pcaps, [], label, extra_config=cfg) as d:
        d.wait_counts(packets)
        seq = d.summary()['snapshot_seq']
        d._next_snapshot(seq + 1, time.monotonic() + 10)
        doc = d.get('/api/v1/alerts')
        by_target = {t: d.get('/api/v1/alerts?target=' + t) for t in ('subnet', 'host')}
        _, _, metrics = d.request('/metrics')
        blackholes = d.get('/api/v1/blackholes')['blackholes']
        if d.stop() != 0:
            raise TestFailure('%s: dpmon exit status after SIGTERM not 0' % label)
    return doc, by_target, metrics, blackholes


def case_carpet(h, caps):
    c = h.checker('carpet')
    doc, by_target, metrics, blackholes = alerts_after(
        h, [caps['carpet'], caps['bg']], 'carpet', subnets(), 84000)
    c.eq('alerts listed', 1, len(doc['alerts']))
    c.eq('alerts active, started', (1, 1), (doc['active'], doc['started']))
    if doc['alerts']:
        a = doc['alerts'][0]
        c.eq('alert', ('subnet', CARPET, 'customer-a', 'ingress', 'pps', 'udp_flood', False,
                       None, 'active', SUBNET_LIMIT),
             (a['target'], a['prefix'], a['subnet'], a['direction'], a['metric'], a['type'],
              a['ban'], a['hostgroup'], a['state'], a['threshold']))
        c.true('no address key', 'address' not in a, repr(a))
        c.true('value %r above the threshold' % a['value'], a['value'] > SUBNET_LIMIT)
        c.true('peak %r >= value' % a['peak']['pps'], a['peak']['pps'] >= a['value'])
        c.eq('target=subnet', [a['id']], [x['id'] for x in by_target['subnet']['alerts']])
    c.eq('target=host: no host alert', [], by_target['host']['alerts'])
    c.eq('no blackhole for a subnet alert', [], blackholes)
    c.true('dpmon_alerts_active 1', '\ndpmon_alerts_active 1\n' in metrics)
    c.true('dpmon_subnet_alerts_active 1', '\ndpmon_subnet_alerts_active 1\n' in metrics)
    c.true('dpmon_subnet_alerts_started_total 1',
           '\ndpmon_subnet_alerts_started_total 1\n' in metrics)
    c.done()


def case_quiet(h, caps, label, carpet_extra):
    c = h.checker(label)
    doc, _, metrics, _ = alerts_after(h, [caps['carpet'], caps['bg']], label,
                                      subnets(carpet_extra), 84000)
    c.eq('alerts listed', [], doc['alerts'])
    c.eq('alerts started', 0, doc['started'])
    c.true('dpmon_subnet_alerts_started_total 0',
           '\ndpmon_subnet_alerts_started_total 0\n' in metrics)
    c.done()


def case_live(h, caps):
    c = h.checker('live')
    tmp = tempfile.mkdtemp(prefix='dpmon-it-carpet-')
    fifo = test_blackholes.Fifo(os.path.join(tmp, 'exabgp.cmd'))
    try:
        script = test_blackholes.write_script(tmp)
        # Replayed without end, each host's rate follows the machine's speed:
        # host limits out of reach keep the only alert the subnet's.
        detection = dict(DETECTION, thresholds={'ingress': {'pps': 1e12}})
        cfg = {'average_time_constant_ms': 1000, 'detection': detection, 'subnets': subnets(),
               'actions': {'notify_script': script, 'exabgp_pipe': fifo.path}}
        with h.dpmon_run([caps['carpet']], [], 'live', extra_config=cfg,
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
            args = test_blackholes.wait_lines(os.path.join(tmp, 'args'), 1)
            blackholes = d.get('/api/v1/blackholes')['blackholes']
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
        announced = fifo.lines(1, timeout=1.0)
        if alert is None:
            c.done()
            return
        c.eq('alert', ('subnet', CARPET, 'ingress'),
             (alert['target'], alert['prefix'], alert['direction']))
        c.eq('notify script arguments: the prefix (docs/detection.md)',
             ['%s ingress attack_start %d' % (CARPET, alert['id'])], args[:1])
        c.eq('no blackhole, no ExaBGP line', ([], []), (blackholes, announced))
        net = ipaddress.ip_network(CARPET)
        sample = alert['sample']
        c.true('sample destinations inside %s, several' % CARPET,
               len(sample['destinations']) > 1 and
               all(ipaddress.ip_address(x['address']) in net for x in sample['destinations']),
               repr(sample['destinations']))
        c.true('sample sources outside the monitored subnets',
               bool(sample['sources']) and
               all(ipaddress.ip_address(x['address']) not in net for x in sample['sources']),
               repr(sample['sources']))
    finally:
        fifo.close()
        shutil.rmtree(tmp, ignore_errors=True)
    c.done()


def test_carpet(h):
    if not os.access(h.dpmon_gen, os.X_OK):
        raise TestFailure('dpmon-gen not built: %s' % h.dpmon_gen)
    tmp = tempfile.mkdtemp(prefix='dpmon-it-carpet-')
    try:
        caps = captures(h, tmp)
        case_carpet(h, caps)
        case_quiet(h, caps, 'own limit', {'thresholds': {'ingress': {'pps': 1e6}}})
        case_quiet(h, caps, 'detection off', {'detection': False})
        case_live(h, caps)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == '__main__':
    harness.main({'test_carpet': test_carpet})
