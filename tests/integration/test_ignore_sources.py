#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""detection.ignore_sources on live traffic (docs/detection.md, "Ignored
sources"): frames sent over a veth pair of the test's own network
namespace (harness.LiveLink), read by the real dpmon through DPDK's
af_packet PMD.

One dpmon, thresholds far below every flood (host ingress pps 200, subnet
ingress pps 400, average_time_constant_ms 1000), ignore_sources
198.51.100.0/24 and 2001:db8:99::/48:

  - ignored:     a UDP flood to 10.0.1.5 from 198.51.100.7 and one to
                 2001:db8:1::5 from 2001:db8:99::7 raise no alert, host
                 or subnet, while every counter holds them: the hosts', the
                 subnets' and the totals' ingress packets and bytes are
                 exactly what the test sent;
  - not ignored: the same flood to 10.0.1.6, every other frame from
                 203.0.113.7 (not ignored) and from 198.51.100.7,
                 raises a host alert (ingress, udp_pps or pps, udp_flood)
                 and a subnet alert on 10.0.1.0/24;
  - fingerprint: while that alert is active, the flood goes on: the
                 alert's sample shows both sources, its fingerprint only
                 203.0.113.7, and counts the others in ignored_packets;
  - reload:      a file whose ignored prefix overlaps a monitored subnet
                 is refused and the list stays (a flood from 198.51.100.7
                 to 10.0.1.7: no alert); one without 198.51.100.0/24 is
                 applied on SIGHUP (the same flood to 10.0.1.8 alerts).

The expected counts are the test's own (what it sent), never dpmon's.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import test_reload  # noqa: E402  (its configuration writer and reload wait)
from harness import TestFailure  # noqa: E402

SUBNETS = [('10.0.1.0/24', 'v4'), ('2001:db8:1::/48', 'v6')]
IGNORED = ['198.51.100.0/24', '2001:db8:99::/48']
FLOOD = 6000   # frames per flood
SIZE = 200     # bytes per frame
BATCH = 200
CONFIG = {
    'average_time_constant_ms': 1000,
    'detection': {'thresholds': {'ingress': {'pps': 200, 'udp_pps': 200}},
                  'subnet_thresholds': {'ingress': {'pps': 400}},
                  'hold_s': 600,
                  'ignore_sources': IGNORED},
    'actions': {'flowspec': {'sample_packets': 50, 'sample_timeout_s': 60}},
}


def v4(src, dst, i):
    return harness.eth_ipv4(src, dst, sport=1000 + i % 50, dport=53, size=SIZE)


def v6(src, dst, i):
    return harness.eth_ipv6(src, dst, sport=1000 + i % 50, dport=53, size=SIZE)


def ingress(d, address):
    status, _, doc = d.request('/api/v1/hosts/' + address)
    if status != 200:
        raise TestFailure('GET /api/v1/hosts/%s answered %d: %r' % (address, status, doc))
    return doc['ingress']['packets'], doc['ingress']['bytes']


def settle(d, seconds):
    """Let `seconds` of merges pass (the averages decay, an alert would start)."""
    seq = d.summary()['snapshot_seq']
    d._next_snapshot(seq + max(1, int(seconds * 1000 / 200)), time.monotonic() + seconds + 10)


def case_ignored(c, d, link):
    link.send_paced(d, [v4('198.51.100.7', '10.0.1.5', i) for i in range(FLOOD)], BATCH)
    link.send_paced(d, [v6('2001:db8:99::7', '2001:db8:1::5', i) for i in range(FLOOD)], BATCH)
    s = d.wait_counts(link.sent, ibytes=link.sent_bytes)
    settle(d, 1.0)
    alerts = d.get('/api/v1/alerts')
    c.eq('ignored floods: alerts started', 0, alerts['started'])
    c.eq('ignored floods: alerts listed', [], alerts['alerts'])
    sent = (FLOOD, FLOOD * SIZE)
    c.eq('host 10.0.1.5 ingress (packets, bytes)', sent, ingress(d, '10.0.1.5'))
    c.eq('host 2001:db8:1::5 ingress (packets, bytes)', sent, ingress(d, '2001:db8:1::5'))
    subnets = harness.by_prefix(d.get('/api/v1/subnets'))
    for prefix, _ in SUBNETS:
        got = subnets[prefix]['ingress']
        c.eq('subnet %s ingress (packets, bytes, udp packets)' % prefix,
             (FLOOD, FLOOD * SIZE, FLOOD),
             (got['packets'], got['bytes'], got['udp']['packets']))
    c.eq('totals.ingress (packets, bytes)', (2 * FLOOD, 2 * FLOOD * SIZE),
         (s['totals']['ingress']['packets'], s['totals']['ingress']['bytes']))
    c.eq('totals.external packets', 0, s['totals']['external']['packets'])
    c.eq('workers[].ignored_full', [0] * len(s['workers']),
         [w['ignored_full'] for w in s['workers']])


def wait_alert(d, address, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for a in d.get('/api/v1/alerts?state=active')['alerts']:
            if a.get('address') == address:
                return a
        time.sleep(0.1)
    return None


def mixed(n):
    """@p n frames to 10.0.1.6, every other one from the ignored 198.51.100.7."""
    return [v4('203.0.113.7' if i % 2 else '198.51.100.7', '10.0.1.6', i) for i in range(n)]


def case_not_ignored(c, d, link):
    link.send_paced(d, mixed(2 * FLOOD), BATCH)
    a = wait_alert(d, '10.0.1.6')
    c.true('a host alert on 10.0.1.6', a is not None)
    if a is None:
        return None
    c.eq('its direction and type', ('ingress', 'udp_flood'), (a['direction'], a['type']))
    c.true('its metric %r is pps or udp_pps' % a['metric'], a['metric'] in ('pps', 'udp_pps'))
    subnet = [x for x in d.get('/api/v1/alerts?target=subnet')['alerts']
              if x['prefix'] == '10.0.1.0/24']
    c.eq('a subnet alert on 10.0.1.0/24, ingress', ['ingress'],
         [x['direction'] for x in subnet])
    c.eq('no alert on the ignored flood\'s hosts', [],
         [x['address'] for x in d.get('/api/v1/alerts?target=host')['alerts']
          if x['address'] != '10.0.1.6'])
    return a


def case_fingerprint(c, d, link, alert_id):
    frames = mixed(1000)
    deadline = time.monotonic() + 30
    a = None
    while time.monotonic() < deadline:
        link.send_paced(d, frames, BATCH)
        a = d.get('/api/v1/alerts/%d' % alert_id)
        fp = a.get('fingerprint')
        if fp and fp['state'] != 'sampling':
            break
    fp = a and a.get('fingerprint')
    c.true('a ready fingerprint', bool(fp) and fp['state'] == 'ready', repr(fp))
    if not fp:
        return
    c.eq('fingerprint sources', [{'address': '203.0.113.7', 'packets': fp['packets']}],
         fp['sources'])
    c.true('fingerprint ignored_packets > 0: %r' % fp['ignored_packets'],
           fp['ignored_packets'] > 0)
    sources = {x['address'] for x in (a.get('sample') or {}).get('sources', [])}
    c.true('the sample shows both sources: %r' % sorted(sources),
           {'198.51.100.7', '203.0.113.7'} <= sources)


def detection_with(ignored):
    return dict(CONFIG['detection'], ignore_sources=ignored)


def case_reload(c, d, link):
    test_reload.reload_and_wait(d, SUBNETS, 0, failed=1,
                                detection=detection_with(IGNORED + ['10.0.1.128/25']))
    link.send_paced(d, [v4('198.51.100.7', '10.0.1.7', i) for i in range(FLOOD)], BATCH)
    settle(d, 1.0)
    c.eq('after a refused reload: no alert on 10.0.1.7', [],
         [a['id'] for a in d.get('/api/v1/alerts?target=host')['alerts']
          if a['address'] == '10.0.1.7'])
    test_reload.reload_and_wait(d, SUBNETS, 1, failed=1,
                                detection=detection_with(['2001:db8:99::/48']))
    link.send_paced(d, [v4('198.51.100.7', '10.0.1.8', i) for i in range(FLOOD)], BATCH)
    c.true('after a reload without 198.51.100.0/24: an alert on 10.0.1.8',
           wait_alert(d, '10.0.1.8') is not None)


def test_ignore_sources(h):
    c = h.checker('ignore_sources')
    with harness.LiveLink(h) as link, \
            h.dpmon_run([], SUBNETS, 'ignore_sources', iface=link.a,
                        extra_config=CONFIG) as d:
        d.wait_received(0)
        case_ignored(c, d, link)
        a = case_not_ignored(c, d, link)
        if a is not None:
            case_fingerprint(c, d, link, a['id'])
        case_reload(c, d, link)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main({'test_ignore_sources': test_ignore_sources})
