#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpmon's FlowSpec and blackhole lines judged by the real programs:
the rules the rule choice makes for nine attacks (IPv4, three of them in
IPv6) and one rule per action, as ExaBGP text (tests/test_flowspec
--exabgp-announce, --exabgp-withdraw), written to a FIFO that Debian's
exabgp reads through socat, sent to Debian's gobgpd over loopback. The
test reads gobgpd's tables: every rule is there with the components
GoBGP decodes from the BGP update (its own text of each route, below),
and after the withdraws none is left. A blackhole route in dpmon's
format goes the same way.
"""
import errno
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from bgp import ExaBgp, GoBgp  # noqa: E402

# GoBGP's text of each rule, as it decodes them from the UPDATE messages.
FLOW4 = {
    '[destination: 10.0.0.5/32][protocol: ==udp][source-port: ==53]'
    '[packet-length: >=1168&<=1531]',
    '[destination: 10.0.0.5/32][protocol: ==udp][source-port: ==123]'
    '[packet-length: >=436&<=500]',
    '[destination: 10.0.0.5/32][protocol: ==udp][source-port: ==11211]'
    '[packet-length: >=1368&<=1531]',
    '[destination: 10.0.0.5/32][protocol: ==tcp][destination-port: ==443]'
    '[tcp-flags: =S&!FRPAU][packet-length: >=8&<=72]',
    '[destination: 10.0.0.5/32][protocol: ==udp][fragment: is-fragment]',
    '[destination: 10.0.0.5/32][protocol: ==tcp][tcp-flags: =A&!FSRPU]'
    '[packet-length: >=8&<=46]',
    '[destination: 10.0.0.5/32][protocol: ==tcp][destination-port: ==80]'
    '[tcp-flags: =S&!FRPAU][packet-length: >=8&<=46]',
    '[destination: 10.0.0.5/32][protocol: ==udp][packet-length: >=508&<=572]',
    '[destination: 10.0.0.5/32][source: 192.0.2.66/32][protocol: ==udp]',
    '[destination: 10.0.0.5/32][protocol: ==udp][destination-port: ==27015]',
    '[destination: 10.0.1.0/24][protocol: ==udp][destination-port: ==123]',
    '[destination: 10.0.0.5/32][protocol: ==icmp][icmp-type: ==8][icmp-code: ==0]',
}
FLOW6 = {
    '[destination: 2001:db8::5/128/0][protocol: ==udp][source-port: ==53]'
    '[packet-length: >=1168&<=1531]',
    '[destination: 2001:db8::5/128/0][protocol: ==tcp][destination-port: ==443]'
    '[tcp-flags: =S&!FRPAU][packet-length: >=8&<=72]',
    '[destination: 2001:db8::5/128/0][protocol: ==udp][fragment: is-fragment]',
    '[destination: 2001:db8::6/128/0][protocol: ==58][icmp-type: ==128]',
}
# The actions as GoBGP shows the extended communities (RFC 8955 section 7).
ACTIONS = {
    '[destination: 10.0.1.0/24][protocol: ==udp][destination-port: ==123]': 'rate: 125000',
    '[destination: 10.0.0.5/32][protocol: ==icmp][icmp-type: ==8][icmp-code: ==0]':
        'redirect: 65000:666',
    '[destination: 2001:db8::6/128/0][protocol: ==58][icmp-type: ==128]': 'remark: 8',
    '[destination: 10.0.0.5/32][protocol: ==udp][fragment: is-fragment]': 'discard',
}
BLACKHOLE = 'announce route 10.0.0.9/32 next-hop 192.0.2.1 community [65535:666]\n'
BLACKHOLE_WITHDRAW = 'withdraw route 10.0.0.9/32 next-hop 192.0.2.1\n'


class Writer:
    """The writing end of the FIFO, opened as dpmon opens exabgp_pipe."""

    def __init__(self, path, timeout=60.0):
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                return
            except OSError as e:
                if e.errno != errno.ENXIO or time.monotonic() > deadline:
                    raise harness.TestFailure('no reader on %s: %s' % (path, e))
                time.sleep(0.2)

    def write(self, text):
        for line in text.splitlines(keepends=True):
            os.write(self.fd, line.encode())  # one line per write(), as dpmon does

    def close(self):
        os.close(self.fd)


def lines(h, mode):
    exe = os.path.join(h.build, 'tests', 'test_flowspec')
    p = subprocess.run([exe, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
    if p.returncode != 0:
        raise harness.TestFailure('%s %s: %s' % (exe, mode, p.stderr.decode()))
    return p.stdout.decode()


def communities(path):
    for a in path[0].get('attrs', []):
        if a.get('type') == 16:
            return a.get('value', [])
    return []


def action_text(c):
    """GoBGP's JSON of one extended community as the text its CLI prints."""
    if c.get('subtype') == 6:
        return 'discard' if c.get('rate') == 0 else 'rate: %d' % c.get('rate')
    if c.get('subtype') == 8:
        return 'redirect: %s' % c.get('value')
    if c.get('subtype') == 9:
        return 'remark: %d' % c.get('value')
    return repr(c)


def test_exabgp_judges_the_lines(h):
    c = h.checker('flowspec exabgp')
    announce = lines(h, '--exabgp-announce')
    withdraw = lines(h, '--exabgp-withdraw')
    c.eq('lines', len(FLOW4) + len(FLOW6), len(announce.splitlines()))
    work = tempfile.mkdtemp(prefix='dpmon-it-flowspec-')
    fifo = os.path.join(work, 'exabgp.cmd')
    os.mkfifo(fifo, 0o600)
    try:
        with GoBgp() as gobgp, ExaBgp(gobgp, fifo) as exa:
            gobgp.wait_established()
            w = Writer(fifo)
            w.write(announce + BLACKHOLE)
            got4 = gobgp.wait_rib('ipv4-flowspec', FLOW4)
            got6 = gobgp.wait_rib('ipv6-flowspec', FLOW6)
            c.eq('IPv4 FlowSpec routes at gobgpd', sorted(FLOW4), sorted(got4))
            c.eq('IPv6 FlowSpec routes at gobgpd', sorted(FLOW6), sorted(got6))
            rib = dict(gobgp.rib('ipv4-flowspec'))
            rib.update(gobgp.rib('ipv6-flowspec'))
            for route, want in sorted(ACTIONS.items()):
                got = [action_text(x) for x in communities(rib.get(route, [{}]))]
                c.eq('action of %s' % route, [want], got)
            c.eq('blackhole route at gobgpd', {'10.0.0.9/32'},
                 gobgp.wait_rib('ipv4', {'10.0.0.9/32'}))
            w.write(withdraw + BLACKHOLE_WITHDRAW)
            c.eq('IPv4 FlowSpec routes after the withdraws', set(),
                 gobgp.wait_rib('ipv4-flowspec', set()))
            c.eq('IPv6 FlowSpec routes after the withdraws', set(),
                 gobgp.wait_rib('ipv6-flowspec', set()))
            c.eq('blackhole routes after the withdraw', set(), gobgp.wait_rib('ipv4', set()))
            w.close()
            if c.failures:
                print(exa.console_tail(4000))
    finally:
        for f in os.listdir(work):
            os.unlink(os.path.join(work, f))
        os.rmdir(work)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
