#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""FlowSpec rules for nine attacks through real components
(docs/detection.md, "FlowSpec"): dpmon's exabgp_pipe FIFO -> socat ->
Debian's exabgp on 127.0.0.2 -> Debian's gobgpd on 127.0.0.1 (bgp.py).

One capture per address family from `dpmon-gen --attack` (docs/dpmon-gen.md,
"Attacks"): nine victims, one per attack (DNS, NTP and memcached
amplification, SYN flood, fragment flood, ACK flood, UDP + SYN flood, one
source, spoofed random sources), each mixed with a third of its own
legitimate traffic (TCP 443 and 80, DNS, ICMP echo), and a labels file
saying which packet is which. The test sends the capture round and round
on a veth pair (harness.LiveLink, read by DPDK's pcap PMD) at RATE packets/s
per victim, against an ingress limit of 0.35 x RATE: the host's own
traffic (a third) stays under the limit, the attack takes the host over
it. With detection.mitigation "flowspec" each alert gets its rules once
its sample is in. For each victim the test reads them from gobgpd's table
(ipv4-flowspec, ipv6-flowspec) and from GET /api/v1/flowspec, checks both
say the same, checks the components the capture determines (destination,
protocol, the attack's port, TCP flags, fragment, source), and matches
the rules itself against the capture (parsed here, RFC 8955 / RFC 8956
semantics) with the labels: at least 95 % of the attack's packets and at
most 1 % of the legitimate ones. At dpmon's stop every rule is withdrawn.

Needs root (a network namespace and a veth pair of its own).
"""
import ipaddress
import json
import os
import re
import shutil
import struct
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from bgp import ExaBgp, GoBgp, open_writer, wait_for  # noqa: E402

SUBNETS = [('10.0.0.0/24', 'lan4'), ('2001:db8:10::/64', 'lan6')]
KINDS = ['dns-amp', 'ntp-amp', 'memcached', 'syn', 'frag', 'ack', 'udp-syn', 'one-source',
         'spoofed']
VICTIMS = {4: {k: '10.0.0.%d' % (11 + i) for i, k in enumerate(KINDS)},
           6: {k: '2001:db8:10::%x' % (0x11 + i) for i, k in enumerate(KINDS)}}
PACKETS_PER_VICTIM = 400
RATE = 100             # packets/s sent to each victim
LIMIT = 0.35 * RATE    # the ingress pps limit: just above the host's own third
ONE_SOURCE = {4: '203.0.113.66', 6: '2001:db8:66::66'}
TCP_FLAGS = {'F': 0x01, 'S': 0x02, 'R': 0x04, 'P': 0x08, 'A': 0x10, 'U': 0x20, 'E': 0x40,
             'C': 0x80, 'fin': 0x01, 'syn': 0x02, 'rst': 0x04, 'push': 0x08, 'ack': 0x10,
             'urgent': 0x20, 'ece': 0x40, 'cwr': 0x80}
PROTOCOLS = {'tcp': 6, 'udp': 17, 'icmp': 1, 'icmpv6': 58}
EXACT6 = 0x3f  # the six classic TCP flags dpmon's rules match exactly

# What the capture determines of each attack's rules: a list (one per rule)
# of {component: value}, family-dependent values as functions of it.
EXPECTED = {
    'dns-amp': [{'proto': 17, 'sport': {53}, 'dport': None, 'frag': False, 'src': None}],
    'ntp-amp': [{'proto': 17, 'sport': {123}, 'dport': None, 'frag': False, 'src': None}],
    'memcached': [{'proto': 17, 'sport': {11211}, 'dport': None, 'frag': False, 'src': None}],
    'syn': [{'proto': 6, 'dport': {443}, 'flags': {(0x02, EXACT6 & ~0x02)}, 'frag': False,
             'src': None}],
    'frag': [{'proto': 17, 'sport': None, 'dport': None, 'frag': True, 'src': None}],
    'ack': [{'proto': 6, 'sport': None, 'dport': None, 'flags': {(0x10, EXACT6 & ~0x10)},
             'frag': False, 'src': None}],
    'udp-syn': [{'proto': 6, 'dport': {80}, 'flags': {(0x02, EXACT6 & ~0x02)}, 'src': None},
                {'proto': 17, 'sport': None, 'dport': None, 'src': None}],
    'one-source': [{'proto': 17, 'src': 'ONE_SOURCE', 'frag': False}],
    'spoofed': [{'proto': 17, 'sport': None, 'dport': {27015}, 'src': None, 'frag': False}],
}


# ------------------------------------------------------------------------
# The capture, parsed here.
# ------------------------------------------------------------------------

class Pkt:
    """The fields a FlowSpec rule matches, read from one Ethernet frame."""
    __slots__ = ('frame', 'family', 'src', 'dst', 'proto', 'length', 'frag', 'sport', 'dport',
                 'flags', 'icmp_type', 'icmp_code')


def parse_frame(f):
    p = Pkt()
    p.frame = f
    p.sport = p.dport = p.flags = p.icmp_type = p.icmp_code = None
    ethertype = struct.unpack_from('!H', f, 12)[0]
    l3 = f[14:]
    if ethertype == 0x0800:
        p.family = 4
        ihl = (l3[0] & 15) * 4
        p.length = struct.unpack_from('!H', l3, 2)[0]
        fl = struct.unpack_from('!H', l3, 6)[0]
        offset, more = fl & 0x1fff, bool(fl & 0x2000)
        p.proto = l3[9]
        p.src = ipaddress.ip_address(l3[12:16])
        p.dst = ipaddress.ip_address(l3[16:20])
        l4 = l3[ihl:]
    elif ethertype == 0x86dd:
        p.family = 6
        p.length = 40 + struct.unpack_from('!H', l3, 4)[0]
        p.proto = l3[6]
        p.src = ipaddress.ip_address(l3[8:24])
        p.dst = ipaddress.ip_address(l3[24:40])
        l4 = l3[40:]
        offset, more = 0, False
        if p.proto == 44:  # the fragment header (RFC 8200 section 4.5)
            p.proto = l4[0]
            fo = struct.unpack_from('!H', l4, 2)[0]
            offset, more = fo >> 3, bool(fo & 1)
            l4 = l4[8:]
    else:
        raise harness.TestFailure('frame with ethertype %#x' % ethertype)
    p.frag = offset != 0 or more
    if offset == 0:  # a later fragment has no transport header
        if p.proto in (6, 17):
            p.sport, p.dport = struct.unpack_from('!HH', l4, 0)
            if p.proto == 6:
                p.flags = l4[13]
        elif p.proto in (1, 58):
            p.icmp_type, p.icmp_code = l4[0], l4[1]
    return p


def read_pcap(path):
    """The frames of a classic pcap file (microsecond, little-endian, as dpmon-gen writes)."""
    with open(path, 'rb') as f:
        data = f.read()
    if struct.unpack_from('<I', data, 0)[0] != 0xa1b2c3d4:
        raise harness.TestFailure('%s: not a little-endian pcap file' % path)
    frames, at = [], 24
    while at < len(data):
        caplen = struct.unpack_from('<I', data, at + 8)[0]
        frames.append(data[at + 16:at + 16 + caplen])
        at += 16 + caplen
    return frames


# ------------------------------------------------------------------------
# Rules: GoBGP's text and ExaBGP's text, read into one form.
# ------------------------------------------------------------------------

def numeric(alternatives):
    """'>=8&<=72' or ['=53', '=123']: a frozenset of conjunctions, each a
    tuple of (operator, value) (RFC 8955 section 4.2.1.1), '=' read as '=='."""
    out = set()
    for alt in alternatives:
        terms = []
        for t in alt.split('&'):
            m = re.fullmatch(r'(>=|<=|==|=|>|<|!=)?([0-9A-Za-z]+)', t.strip())
            if not m:
                raise harness.TestFailure('numeric term %r' % t)
            op = m.group(1) or '=='
            v = m.group(2)
            terms.append(('==' if op == '=' else op, PROTOCOLS.get(v, None) if not v.isdigit()
                          else int(v)))
        out.add(tuple(terms))
    return frozenset(out)


def flag_bits(text, sep):
    bits = 0
    for name in (text.split(sep) if sep else list(text)):
        bits |= TCP_FLAGS[name]
    return bits


def flags_value(alt, sep):
    """'=S&!FRPAU' (GoBGP) or '=syn&!fin+rst+push+ack+urgent' (ExaBGP):
    (bits that must be set, bits that must be clear) (RFC 8955 4.2.2.9)."""
    must, clear = 0, 0
    for t in alt.split('&'):
        if t.startswith('='):
            must |= flag_bits(t[1:], sep)
        elif t.startswith('!'):
            clear |= flag_bits(t[1:], sep)
        else:
            raise harness.TestFailure('TCP flags term %r' % t)
    return (must, clear)


def empty_rule():
    return {'dst': None, 'src': None, 'proto': None, 'sport': None, 'dport': None,
            'icmp_type': None, 'icmp_code': None, 'flags': None, 'len': None, 'frag': False}


def ports_set(n):
    """The values of a port component read by numeric(), when each is '==V'."""
    vals = set()
    for conj in n:
        if len(conj) != 1 or conj[0][0] != '==':
            return n
        vals.add(conj[0][1])
    return vals


def set_component(r, name, alts, sep, text):
    """Component `name` of rule `r` from its alternatives `alts` (the
    texts of GoBGP and ExaBGP alike, `sep` the TCP flags' separator)."""
    if name in ('protocol', 'next-header'):
        r['proto'] = {c[0][1] for c in numeric(alts)}
    elif name in ('source-port', 'destination-port'):
        r['sport' if name == 'source-port' else 'dport'] = ports_set(numeric(alts))
    elif name in ('icmp-type', 'icmp-code'):
        r[name.replace('-', '_')] = {c[0][1] for c in numeric(alts)}
    elif name == 'tcp-flags':
        r['flags'] = {flags_value(a, sep) for a in alts}
    elif name == 'packet-length':
        r['len'] = numeric(alts)
    elif name == 'fragment':
        r['frag'] = alts == ['is-fragment'] or ' '.join(alts)
    else:
        raise harness.TestFailure('component %r in %s' % (name, text))


def from_gobgp(text):
    """GoBGP's text of a route ('[destination: 10.0.0.5/32][protocol: ==udp]...')."""
    r = empty_rule()
    for name, value in re.findall(r'\[([a-z-]+): ([^\]]*)\]', text):
        if name in ('destination', 'source'):
            pfx = value.split('/')  # IPv6: PREFIX/LEN/OFFSET
            r['dst' if name == 'destination' else 'src'] = ipaddress.ip_network(
                '%s/%s' % (pfx[0], pfx[1]))
        else:
            set_component(r, name, value.split(), None, text)
    return r


def from_exabgp(text):
    """ExaBGP's text of a match ('destination 10.0.0.5/32; protocol udp; ...')."""
    r = empty_rule()
    for part in [p.strip() for p in text.split(';') if p.strip()]:
        name, _, value = part.partition(' ')
        if name in ('destination', 'source'):
            r['dst' if name == 'destination' else 'src'] = ipaddress.ip_network(value)
        else:
            set_component(r, name, value.replace('[', ' ').replace(']', ' ').split(), '+',
                          text)
    return r


def num_ok(conjs, v):
    ops = {'==': lambda a, b: a == b, '>=': lambda a, b: a >= b, '<=': lambda a, b: a <= b,
           '>': lambda a, b: a > b, '<': lambda a, b: a < b, '!=': lambda a, b: a != b}
    return any(all(ops[op](v, x) for op, x in conj) for conj in conjs)


def matches(r, p):
    """Does rule `r` match packet `p`? (RFC 8955 section 4.2.2, RFC 8956 section 3)."""
    if p.dst not in r['dst']:
        return False
    if r['src'] is not None and p.src not in r['src']:
        return False
    if r['proto'] is not None and p.proto not in r['proto']:
        return False
    for key, v in (('sport', p.sport), ('dport', p.dport)):
        if r[key] is not None:
            if v is None:  # a later fragment: no ports to match
                return False
            if not (v in r[key] if isinstance(r[key], set) else num_ok(r[key], v)):
                return False
    for key, v in (('icmp_type', p.icmp_type), ('icmp_code', p.icmp_code)):
        if r[key] is not None and v not in r[key]:
            return False
    if r['flags'] is not None:
        if p.flags is None or not any((p.flags & m) == m and not p.flags & c
                                      for m, c in r['flags']):
            return False
    if r['len'] is not None and not num_ok(r['len'], p.length):
        return False
    if r['frag'] is True and not p.frag:
        return False
    return True


def canonical(r):
    """A rule as a comparable, printable tuple."""
    return tuple((k, str(sorted(v)) if isinstance(v, (set, frozenset)) else str(v))
                 for k, v in sorted(r.items()))


# ------------------------------------------------------------------------
# The run.
# ------------------------------------------------------------------------

def send_forever(link, frames, pps, stop):
    """Send `frames` round and round at `pps` packets/s until `stop` is set;
    after a stall (a loaded machine) the deficit is dropped, never sent in
    a burst, so the rate dpmon sees stays at or under `pps`."""
    t0, sent, i, n = time.monotonic(), 0, 0, len(frames)
    while not stop.is_set() and not link.failed:
        due = int((time.monotonic() - t0) * pps)
        if due - sent > pps // 2:
            sent = due - pps // 2
        batch = []
        while sent < due:
            batch.append(frames[i])
            i = (i + 1) % n
            sent += 1
        try:
            link.send(batch)
        except (OSError, harness.TestFailure) as e:
            link.failed = '%s' % e
        time.sleep(0.02)


def run_family(h, c, link, gobgp, fifo, work, family, table):
    """One dpmon run on the capture of `family`'s nine victims; appends rows to `table`."""
    victims = VICTIMS[family]
    args = ['--packets', str(PACKETS_PER_VICTIM * len(KINDS)), '--seed', str(family),
            '--labels', os.path.join(work, 'v%d.labels' % family)]
    for k in KINDS:
        args += ['--attack', k, '--victim', victims[k]]
    pcap, summary = h.gen(work, 'attacks-v%d' % family, args)
    with open(os.path.join(work, 'v%d.labels' % family), 'rb') as f:
        labels = f.read()
    pkts = [parse_frame(f) for f in read_pcap(pcap)]
    c.eq('IPv%d: one label per packet' % family, len(pkts), len(labels))
    for v in summary['victims']:
        n = sum(1 for p, lab in zip(pkts, labels)
                if str(p.dst) == v['victim'] and lab == 1)
        c.eq('IPv%d %s: the attack packets of the summary are those labelled' % (
            family, v['attack']), v['attack_packets'], n)
    family_name = 'ipv%d-flowspec' % family
    want_rules = sum(len(EXPECTED[k]) for k in KINDS)
    cfg = {'average_time_constant_ms': 1000,
           'detection': {'thresholds': {'ingress': {'pps': LIMIT}}, 'ban': True,
                         'mitigation': 'flowspec', 'hold_s': 1},
           'actions': {'exabgp_pipe': fifo,
                       'flowspec': {'sample_packets': 500, 'sample_timeout_s': 30}}}
    stop = threading.Event()
    sender = threading.Thread(target=send_forever,
                              args=(link, [p.frame for p in pkts], RATE * len(KINDS), stop),
                              daemon=True)
    t0 = time.monotonic()
    # The pcap PMD reading the veth live (libpcap), not the af_packet PMD:
    # that one joins a fanout group with PACKET_FANOUT_FLAG_DEFRAG, and the
    # kernel would reassemble the IPv4 fragment flood before dpmon saw it.
    with h.dpmon_run([], SUBNETS, 'attacks-v%d' % family, extra_config=cfg,
                     vdev_args=',rx_iface=' + link.a) as d:
        sender.start()
        try:
            wait_for('every rule at gobgpd', lambda: len(gobgp.rib(family_name)) >= want_rules, 60)
            time.sleep(1)  # a rule past the count would be there by now
            rib = gobgp.rib(family_name)
            api = [r for r in d.get('/api/v1/flowspec')['rules'] if r['announced']]
        finally:
            stop.set()
            sender.join(10)
        c.eq('IPv%d: every frame sent' % family, None, link.failed)
        if len(rib) != want_rules:
            h.log('--- IPv%d: GET /api/v1/flowspec ---\n%s\n--- alerts ---\n%s' % (
                family, json.dumps(d.get('/api/v1/flowspec'), indent=1),
                json.dumps(d.get('/api/v1/alerts'), indent=1)[:20000]))
        c.note('IPv%d: %d routes at gobgpd after %.1f s' % (
            family, len(rib), time.monotonic() - t0))
        c.eq('IPv%d: routes at gobgpd' % family, want_rules, len(rib))
        c.eq('IPv%d: rules announced in GET /api/v1/flowspec' % family, want_rules,
             len(api))
        bgp_rules = [from_gobgp(t) for t in rib]
        api_rules = [from_exabgp(r['match']) for r in api]
        c.eq('IPv%d: gobgpd holds the rules of GET /api/v1/flowspec' % family,
             sorted(map(canonical, api_rules)), sorted(map(canonical, bgp_rules)))
        for k in KINDS:
            net = ipaddress.ip_network(victims[k])
            rules = [r for r in bgp_rules if r['dst'] == net]
            check_components(c, family, k, rules)
            att = [p for p, lab in zip(pkts, labels) if str(p.dst) == victims[k] and lab == 1]
            leg = [p for p, lab in zip(pkts, labels) if str(p.dst) == victims[k] and lab == 0]
            ma = sum(1 for p in att if any(matches(r, p) for r in rules))
            ml = sum(1 for p in leg if any(matches(r, p) for r in rules))
            texts = [t for t in rib if from_gobgp(t)['dst'] == net]
            table.append((family, k, texts, ma, len(att), ml, len(leg)))
            c.true('IPv%d %s: the rules match %d of %d attack packets (>= 95 %%)' % (
                family, k, ma, len(att)), len(att) > 0 and ma >= 0.95 * len(att), ' | '.join(texts))
            c.true('IPv%d %s: the rules match %d of %d legitimate packets (<= 1 %%)' % (
                family, k, ml, len(leg)), len(leg) > 0 and ml <= 0.01 * len(leg), ' | '.join(texts))
        c.eq('IPv%d: dpmon exit status after SIGTERM' % family, 0, d.stop())
    c.eq('IPv%d: no route after dpmon stopped' % family, set(),
         gobgp.wait_rib(family_name, set(), 30))


def check_components(c, family, kind, rules):
    """The components the capture determines, for each of the attack's rules."""
    want = EXPECTED[kind]
    c.eq('IPv%d %s: number of rules' % (family, kind), len(want), len(rules))
    if len(want) != len(rules):
        return
    rules = sorted(rules, key=lambda r: sorted(r['proto'] or []))
    for w, r in zip(sorted(want, key=lambda w: w['proto']), rules):
        for key, value in w.items():
            if key == 'src' and value == 'ONE_SOURCE':
                value = ipaddress.ip_network(ONE_SOURCE[family])
            got = r[key]
            if key == 'proto':
                value = {value}
            c.eq('IPv%d %s: %s of the rule' % (family, kind, key), value, got)


def test_flowspec_attacks(h):
    c = h.checker('flowspec_attacks')
    if os.geteuid() != 0:
        raise harness.TestFailure('needs root: a network namespace and a veth pair')
    work = tempfile.mkdtemp(prefix='dpmon-it-fs-attacks-')
    fifo = os.path.join(work, 'exabgp.cmd')
    os.mkfifo(fifo, 0o600)
    table = []
    keeper = None
    t0 = time.monotonic()
    try:
        with harness.LiveLink(h, 'attacks') as link, GoBgp() as gobgp:
            link.failed = None
            exa = ExaBgp(gobgp, fifo)
            exa.start()
            try:
                gobgp.wait_established()
                # A second writer holds the FIFO open between the two dpmon
                # runs, so that ExaBGP's socat sees no end of file when the
                # first one stops (test_flowspec.py, test_flowspec_restart).
                keeper = wait_for('socat reading the FIFO', lambda: open_writer(fifo), 20)
                c.true('a second writer on the FIFO', keeper is not None)
                for family in (4, 6):
                    run_family(h, c, link, gobgp, fifo, work, family, table)
            finally:
                if keeper is not None:
                    os.close(keeper)
                exa.__exit__(None, None, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.note('%-5s %-11s %9s %9s  rules (GoBGP)' % ('', 'attack', 'attack %', 'legit %'))
    for family, k, texts, ma, na, ml, nl in table:
        c.note('IPv%d  %-11s %8.1f  %8.1f   %s' % (
            family, k, 100.0 * ma / max(na, 1), 100.0 * ml / max(nl, 1), ' | '.join(texts)))
    c.note('run time %.1f s' % (time.monotonic() - t0))
    c.done()


if __name__ == '__main__':
    harness.main(globals())
