#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpmon's commands on DPDK's telemetry socket
(/var/run/dpdk/<file-prefix>/dpdk_telemetry.v2, SOCK_SEQPACKET), read like
DPDK's own dpdk-telemetry.py does, compared with the JSON API.

dpmon counts pcapplusplus/example.pcap (17 monitored /24s). Once every
packet is counted, counters no longer move, so telemetry and the API agree
on every packet and byte count whichever snapshot each one read:
  - /dpmon/summary: totals, parse errors, ports, workers, subnets, hosts;
  - /dpmon/subnets and /dpmon/subnets,FIRST (paging);
  - /dpmon/hosts,<subnet>: the subnet's hosts by bytes, best first;
  - /dpmon/alerts: none;
  - errors answer {"error": ...}; the commands are listed by "/";
  - dpdk-telemetry.py (package dpdk) reads them too, when installed.
"""
import json
import os
import shutil
import socket
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import TestFailure  # noqa: E402
from test_metrics import _addr_key  # noqa: E402

PACKETS = 4631


def query(path, cmd):
    """One command on a fresh connection, as dpdk-telemetry.py sends it."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.settimeout(10)
    try:
        s.connect(path)
        hello = json.loads(s.recv(1024).decode())
        s.send(cmd.encode())
        reply = json.loads(s.recv(hello['max_output_len']).decode())
    finally:
        s.close()
    if list(reply) != [cmd.split(',')[0]]:
        raise TestFailure('telemetry %s: unexpected reply %r' % (cmd, reply))
    return reply[cmd.split(',')[0]]


def test_telemetry(h):
    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    subnets = [(r['dst_prefix'], 's%d' % i) for i, r in enumerate(rows)]
    c = h.checker('telemetry')
    with h.dpmon_run([h.td('pcaps', 'pcapplusplus', 'example.pcap')], subnets, 'telemetry') as d:
        d.wait_counts(PACKETS)
        sock = d.telemetry_socket()
        c.true('telemetry socket %s exists' % sock, os.path.exists(sock))
        summary = d.summary()
        api_subnets = d.get('/api/v1/subnets')['subnets']
        api_hosts = d.get('/api/v1/hosts?limit=10000')['hosts']

        cmds = query(sock, '/')
        for cmd in ('/dpmon/summary', '/dpmon/subnets', '/dpmon/hosts', '/dpmon/alerts'):
            c.true('%s is listed by "/"' % cmd, cmd in cmds)

        t = query(sock, '/dpmon/summary')
        c.true('summary snapshot_seq >= the API\'s',
               t['snapshot_seq'] >= summary['snapshot_seq'])
        c.eq('summary version', summary['version'], t['version'])
        c.eq('summary subnets', summary['subnets'], t['subnets'])
        c.eq('summary hosts', summary['hosts'], t['hosts'])
        c.eq('summary alerts_active', 0, t['alerts_active'])
        for k in harness.TOTALS:
            c.eq('totals.%s (packets, bytes)' % k,
                 (summary['totals'][k]['packets'], summary['totals'][k]['bytes']),
                 (t['totals'][k]['packets'], t['totals'][k]['bytes']))
            c.eq('totals.%s pps, bps (idle)' % k, (0, 0),
                 (t['totals'][k]['pps'], t['totals'][k]['bps']))
        c.eq('parse_errors', summary['parse_errors'], t['parse_errors'])
        for p in summary['ports']:
            got = t['ports'].get(str(p['port_id']), {})
            for key in ('device', 'rx_queues', 'ipackets', 'ibytes', 'imissed', 'ierrors',
                        'rx_nombuf'):
                c.eq('port %s %s' % (p['port_id'], key), p[key], got.get(key))
        for w in summary['workers']:
            got = t['workers'].get(str(w['lcore']), {})
            for key in ('packets', 'bursts', 'host_table_full', 'hosts', 'host_capacity'):
                c.eq('worker %s %s' % (w['lcore'], key), w[key], got.get(key))
            c.true('worker %s polls >= the API\'s' % w['lcore'], got.get('polls', -1) >= w['polls'])
            c.true('worker %s busy_percent 0..100' % w['lcore'],
                   0 <= got.get('busy_percent', -1) <= 100)

        def check_subnet_page(first):
            page = query(sock, '/dpmon/subnets' + (',%d' % first if first is not None else ''))
            first = first or 0
            c.eq('subnets,%d count' % first, len(api_subnets), page['count'])
            c.eq('subnets,%d first' % first, first, page['first'])
            want = {str(i): s for i, s in enumerate(api_subnets)
                    if first <= i < first + 32}
            c.eq('subnets,%d keys' % first, sorted(want), sorted(page['subnets']))
            for i, s in want.items():
                got = page['subnets'].get(i, {})
                c.eq('subnet %s prefix, name' % i, (s['prefix'], s['name']),
                     (got.get('prefix'), got.get('name')))
                for dr in harness.DIRS:
                    c.eq('subnet %s %s (packets, bytes)' % (s['prefix'], dr),
                         (s[dr]['packets'], s[dr]['bytes']),
                         (got.get(dr + '_packets'), got.get(dr + '_bytes')))
        check_subnet_page(None)
        check_subnet_page(10)
        c.eq('subnets,99: nothing listed', {}, query(sock, '/dpmon/subnets,99')['subnets'])

        for s in api_subnets[:4]:
            mine = [x for x in api_hosts if x['subnet'] == s['prefix']]
            ranked = sorted(mine, key=lambda x: (-(x['ingress']['bytes'] + x['egress']['bytes']),
                                                 _addr_key(x['address'])))[:32]
            got = query(sock, '/dpmon/hosts,' + s['prefix'])
            c.eq('hosts,%s subnet' % s['prefix'], s['prefix'], got['subnet'])
            c.eq('hosts,%s hosts_in_subnet' % s['prefix'], len(mine), got['hosts_in_subnet'])
            c.eq('hosts,%s order' % s['prefix'], [x['address'] for x in ranked],
                 [got['hosts'][str(i)]['address'] for i in range(len(got['hosts']))])
            for i, x in enumerate(ranked):
                g = got['hosts'].get(str(i), {})
                for dr in harness.DIRS:
                    c.eq('host %s %s (packets, bytes)' % (x['address'], dr),
                         (x[dr]['packets'], x[dr]['bytes']),
                         (g.get(dr + '_packets'), g.get(dr + '_bytes')))

        a = query(sock, '/dpmon/alerts')
        c.eq('alerts active', 0, a['active'])
        c.eq('alerts list', {}, a['alerts'])

        for cmd, want in (('/dpmon/hosts', 'usage: /dpmon/hosts,SUBNET'),
                          ('/dpmon/hosts,10.0.0.1/24', 'usage: /dpmon/hosts,SUBNET'),
                          ('/dpmon/hosts,198.18.0.0/15', 'subnet 198.18.0.0/15 is not monitored'),
                          ('/dpmon/subnets,x', 'usage: /dpmon/subnets[,FIRST]')):
            got = query(sock, cmd)
            c.true('%s answers an error starting %r (got %r)' % (cmd, want, got),
                   isinstance(got, dict) and str(got.get('error', '')).startswith(want))

        tool = shutil.which('dpdk-telemetry.py')
        if tool is None:
            c.note('dpdk-telemetry.py not installed; raw socket only')
        else:
            p = subprocess.run([tool, '-f', d.prefix], input=b'/dpmon/alerts\n',
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
            out = p.stdout.decode('utf-8', 'replace')
            c.eq('dpdk-telemetry.py exit status', 0, p.returncode)
            line = [x for x in out.splitlines() if x.startswith('{"/dpmon/alerts"')]
            c.true('dpdk-telemetry.py prints /dpmon/alerts (%r)' % out[-300:], len(line) == 1)
            if line:
                c.eq('dpdk-telemetry.py /dpmon/alerts active', 0,
                     json.loads(line[0])['/dpmon/alerts']['active'])
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
