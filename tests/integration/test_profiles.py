#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every traffic profile in pktgen-profiles/ is rendered with
`dpmon-gen --profile`, checked against its own header, and replayed
through the real dpmon (pcap PMD).

A profile's header states what dpmon should read (pktgen-profiles/README.md):

    # subnets: 10.0.0.0/24 ...
    # test-packets: N
    # rate: [link_bps=B percent=P] pps=R dpmon_bps=D [tolerance=T]
    # expect: subnet=S direction=ingress|egress protocol=P frame_bytes=F share=X
    #         [syn_share=Y] [vlan=V] [tolerance=T]
    # expect-hosts: subnet=S hosts=H

Three independent comparisons per profile:
 1. the rendered pcap, decoded here (not by dpmon-gen or dpmon), against the
    header: every (subnet, direction, protocol, frame size) class and its
    share of packets, the SYN share, the VLAN id, the hosts per subnet, and
    the header's rate arithmetic (pps from link rate and mean wire frame
    size; dpmon's bps = pps x mean captured bytes x 8);
 2. dpmon's counters against the pcap: per subnet, direction and protocol,
    packets and bytes, exactly;
 3. dpmon's counters against the header: the sums of share x N packets and
    share x N x frame_bytes bytes, exactly unless the header gives a
    tolerance (the kernel draws IMIX sizes at random), and the hosts.

Also: a profile line dpmon-gen does not understand is an error naming file
and line (several cases); the kernel scripts' dry run writes exactly their
pg_set lines.
"""
import glob
import ipaddress
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import TestFailure  # noqa: E402

PROTO_NUM = {6: 'tcp', 17: 'udp', 1: 'icmp', 58: 'icmp'}


# ---------------------------------------------------------------- headers

def parse_kv(text, what):
    out = {}
    for tok in text.split():
        if '=' not in tok:
            raise TestFailure('%s: %r is not KEY=VALUE' % (what, tok))
        k, v = tok.split('=', 1)
        out[k] = v
    return out


def parse_header(path):
    """The machine-readable header lines of a profile, as a dict."""
    h = {'expect': [], 'hosts': {}, 'subnets': [], 'packets': None, 'rate': None}
    with open(path, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'#\s*(subnets|test-packets|rate|expect|expect-hosts):\s*(.*)$',
                         line.rstrip('\n'))
            if not m:
                continue
            key, val = m.group(1), m.group(2)
            what = '%s:%d' % (path, n)
            if key == 'subnets':
                h['subnets'] = [str(ipaddress.ip_network(s)) for s in val.split()]
            elif key == 'test-packets':
                h['packets'] = int(val)
            elif key == 'rate':
                h['rate'] = parse_kv(val, what)
            elif key == 'expect':
                kv = parse_kv(val, what)
                kv['subnet'] = str(ipaddress.ip_network(kv['subnet']))
                kv['share'] = Fraction(kv['share'])
                kv['frame_bytes'] = int(kv['frame_bytes'])
                h['expect'].append(kv)
            else:
                kv = parse_kv(val, what)
                h['hosts'][str(ipaddress.ip_network(kv['subnet']))] = int(kv['hosts'])
    if not h['subnets'] or not h['packets'] or not h['expect'] or h['rate'] is None:
        raise TestFailure('%s: header lacks subnets, test-packets, rate or expect' % path)
    return h


# ---------------------------------------------------------------- pcap

def decode(path):
    """Every frame of a classic little-endian pcap: a dict of what dpmon looks at."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] != b'\xd4\xc3\xb2\xa1':
        raise TestFailure('%s: not a little-endian microsecond pcap' % path)
    off, out = 24, []
    while off + 16 <= len(data):
        _, _, caplen, origlen = struct.unpack('<IIII', data[off:off + 16])
        fr = data[off + 16:off + 16 + caplen]
        off += 16 + caplen
        p = {'len': caplen, 'vlan': None, 'syn': False}
        et, l3 = struct.unpack('>H', fr[12:14])[0], 14
        if et == 0x8100:
            p['vlan'] = struct.unpack('>H', fr[14:16])[0] & 0xfff
            et, l3 = struct.unpack('>H', fr[16:18])[0], 18
        if et == 0x0800:
            ihl = (fr[l3] & 15) * 4
            proto = fr[l3 + 9]
            p['src'] = ipaddress.ip_address(fr[l3 + 12:l3 + 16])
            p['dst'] = ipaddress.ip_address(fr[l3 + 16:l3 + 20])
            l4 = l3 + ihl
            if struct.unpack('>H', fr[l3 + 2:l3 + 4])[0] != caplen - l3:
                raise TestFailure('%s: IPv4 total length does not match the frame' % path)
        elif et == 0x86dd:
            proto = fr[l3 + 6]
            p['src'] = ipaddress.ip_address(fr[l3 + 8:l3 + 24])
            p['dst'] = ipaddress.ip_address(fr[l3 + 24:l3 + 40])
            l4 = l3 + 40
            if struct.unpack('>H', fr[l3 + 4:l3 + 6])[0] != caplen - l4:
                raise TestFailure('%s: IPv6 payload length does not match the frame' % path)
        else:
            raise TestFailure('%s: frame with ethertype 0x%04x' % (path, et))
        p['proto'] = PROTO_NUM.get(proto, 'other')
        if proto == 6:
            flags = fr[l4 + 13]
            p['syn'] = (flags & 0x12) == 0x02
        out.append(p)
    return out


def classes_of(frames, nets):
    """Per (subnet, direction, protocol, frame bytes): packets, SYNs, VLAN ids.
    Also the distinct hosts per subnet. An address belongs to the most
    specific listed subnet (the profiles' subnets do not overlap)."""
    cls, hosts = {}, {str(n): set() for n in nets}

    def subnet_of(a):
        best = None
        for n in nets:
            if a.version == n.version and a in n and (best is None or n.prefixlen > best.prefixlen):
                best = n
        return best

    for p in frames:
        for end, direction in (('dst', 'ingress'), ('src', 'egress')):
            n = subnet_of(p[end])
            if n is None:
                continue
            hosts[str(n)].add(p[end])
            c = cls.setdefault((str(n), direction, p['proto'], p['len']),
                               {'packets': 0, 'syn': 0, 'vlans': set()})
            c['packets'] += 1
            c['syn'] += p['syn']
            c['vlans'].add(p['vlan'])
    return cls, {k: len(v) for k, v in hosts.items()}


# ---------------------------------------------------------------- checks

def profiles(h):
    root = os.path.join(h.source, 'pktgen-profiles')
    found = sorted(glob.glob(os.path.join(root, 'pktgen-dpdk', '*.pkt'))) + sorted(
        p for p in glob.glob(os.path.join(root, 'linux-pktgen', '*.sh'))
        if os.path.basename(p) != 'kpktgen.sh')
    if len(found) < 11:
        raise TestFailure('expected at least 11 profiles under %s, found %d' % (root, len(found)))
    return found


def render(h, profile, out, packets):
    argv = [h.dpmon_gen, '--profile', profile, '--output', out, '--packets', str(packets),
            '--summary', 'json']
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        raise TestFailure('%s exited %d:\n%s' % (' '.join(argv), p.returncode,
                                                 p.stderr.decode('utf-8', 'replace')))
    return json.loads(p.stdout.decode('utf-8'))


def near(expected, got, tol):
    return abs(got - expected) <= tol


def check_shares(c, hd, cls, n):
    """pcap classes against the header's expect lines."""
    want = {(e['subnet'], e['direction'], e['protocol'], e['frame_bytes']): e
            for e in hd['expect']}
    c.eq('classes (subnet, direction, protocol, frame bytes) in the capture',
         sorted(want), sorted(cls))
    for key, e in sorted(want.items()):
        got = cls.get(key, {'packets': 0, 'syn': 0, 'vlans': set()})
        name = '%s %s %s %dB' % key
        if 'tolerance' in e:
            share = Fraction(got['packets'], n)
            c.true('%s share %.4f within %s of %s' % (name, float(share), e['tolerance'],
                                                       e['share']),
                   near(e['share'], share, Fraction(e['tolerance'])))
        else:
            c.eq('%s packets (share %s of %d)' % (name, e['share'], n), e['share'] * n,
                 got['packets'])
        if 'syn_share' in e and got['packets']:
            c.eq('%s SYN share' % name, Fraction(e['syn_share']),
                 Fraction(got['syn'], got['packets']))
        if 'vlan' in e:
            c.eq('%s VLAN ids' % name, {int(e['vlan'])}, got['vlans'])
        elif got['packets']:
            c.eq('%s untagged' % name, {None}, got['vlans'])


def file_setting(path, pattern):
    with open(path, encoding='utf-8') as f:
        m = re.findall(pattern, f.read(), re.M)
    return m[-1] if m else None


def check_rate(c, hd, path, summary):
    """The header's rate arithmetic, from the rendered mean frame size."""
    r = hd['rate']
    mean = Fraction(summary['bytes'], summary['packets'])
    pps = int(r['pps'])
    tol = Fraction(r.get('tolerance', 0))
    if path.endswith('.pkt'):
        pct = file_setting(path, r'^set 0 rate (\d+)\s*$')
        c.eq('rate: percent == the profile\'s "set 0 rate"', pct, r['percent'])
        line = Fraction(int(r['link_bps']) * int(r['percent']), 100)
        c.eq('rate: pps == link / ((mean wire frame + 20) x 8)',
             int(line / ((mean + 4 + 20) * 8)), pps)
    else:
        c.eq('rate: pps == the profile\'s ratep', file_setting(path, r'^pg_set "ratep (\d+)"'),
             r['pps'])
    bps = pps * mean * 8
    if tol:
        c.true('rate: dpmon_bps %s within %s of pps x mean bytes x 8 = %.0f' % (
            r['dpmon_bps'], r['tolerance'], float(bps)),
            near(bps, int(r['dpmon_bps']), bps * tol))
    else:
        c.eq('rate: dpmon_bps == pps x mean bytes x 8', round(bps), int(r['dpmon_bps']))


def expected_dpmon(hd, n):
    """Per (subnet, direction, protocol): packets and bytes the header implies."""
    out = {}
    for e in hd['expect']:
        k = (e['subnet'], e['direction'], e['protocol'])
        pk, by = out.get(k, (0, 0))
        out[k] = (pk + e['share'] * n, by + e['share'] * n * e['frame_bytes'])
    return out


def check_dpmon(c, h, hd, pcap, cls, hosts, n, nbytes, label):
    from_pcap = {}
    for (s, d, p, size), v in cls.items():
        pk, by = from_pcap.get((s, d, p), (0, 0))
        from_pcap[(s, d, p)] = (pk + v['packets'], by + v['packets'] * size)
    want = expected_dpmon(hd, n)
    tol = max((Fraction(e.get('tolerance', 0)) for e in hd['expect']), default=0)
    subnets = [(s, 'n%d' % i) for i, s in enumerate(hd['subnets'])]
    with h.dpmon_run([pcap], subnets, label) as d:
        s = d.wait_counts(n, nbytes, 0)
        c.eq('parse_errors (all zero)', {k: 0 for k in s['parse_errors']}, s['parse_errors'])
        got = harness.by_prefix(d.get('/api/v1/subnets'))
        for sub in hd['subnets']:
            for direction in harness.DIRS:
                for proto in harness.PROTOS:
                    g = got[sub][direction][proto]
                    k = (sub, direction, proto)
                    pair = (g['packets'], g['bytes'])
                    c.eq('dpmon %s %s %s == capture' % k, from_pcap.get(k, (0, 0)), pair)
                    wp, wb = want.get(k, (0, 0))
                    if tol:
                        c.true('dpmon %s %s %s packets %d within %s of %s' % (
                            k + (pair[0], float(tol), float(wp))), near(wp, pair[0], tol * n))
                    else:
                        c.eq('dpmon %s %s %s == header' % k, (wp, wb), pair)
            if sub in hd['hosts']:
                c.eq('dpmon hosts in %s == header' % sub, hd['hosts'][sub],
                     d.get('/api/v1/hosts?subnet=%s&limit=1' % sub)['total'])
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    for sub, want_hosts in hd['hosts'].items():
        c.eq('capture hosts in %s == header' % sub, want_hosts, hosts[sub])


def run_profile(h, tmp, path):
    name = os.path.relpath(path, os.path.join(h.source, 'pktgen-profiles'))
    c = h.checker(name)
    hd = parse_header(path)
    n = hd['packets']
    out = os.path.join(tmp, os.path.basename(path) + '.pcap')
    sm = render(h, path, out, n)
    frames = decode(out)
    nbytes = sum(p['len'] for p in frames)
    c.eq('capture packets == --packets', n, len(frames))
    c.eq('summary (packets, bytes, tcp_syn) == capture',
         (len(frames), nbytes, sum(p['syn'] for p in frames)),
         (sm['packets'], sm['bytes'], sm['tcp_syn']))
    nets = [ipaddress.ip_network(s) for s in hd['subnets']]
    cls, hosts = classes_of(frames, nets)
    check_shares(c, hd, cls, n)
    check_rate(c, hd, path, sm)
    check_dpmon(c, h, hd, out, cls, hosts, n, nbytes, name)
    c.done()


def test_profiles_render_and_replay(h):
    failures = []
    with tempfile.TemporaryDirectory(prefix='dpmon-it-prof-') as tmp:
        for path in profiles(h):
            h.log('--- %s' % os.path.relpath(path, h.source))
            try:
                run_profile(h, tmp, path)
            except TestFailure as e:
                failures.append(str(e))
    if failures:
        raise TestFailure('\n'.join(failures))


# ---------------------------------------------------------------- errors

BAD = [
    # (file name, content, exit status, message that must appear)
    ('typo.pkt', '# a comment\n\nset 0 sizee 64\nstart 0\n', 2,
     'typo.pkt:3: set sizee 64: not a setting dpmon-gen renders'),
    ('nomask.pkt', 'set 0 type ipv4\nset 0 src ip 10.0.0.1\nset 0 dst ip 10.0.0.2\n', 2,
     "nomask.pkt:2: set src ip '10.0.0.1': needs ADDRESS/MASK"),
    ('unknown.pkt', 'set 0 src ip 10.0.0.1/24\nset 0 dst ip 10.0.0.2\npage range\n', 2,
     "unknown.pkt:3: unknown or unsupported command 'page'"),
    ('port.pkt', 'set 1 size 64\n', 2, "port.pkt:1: port list '1': dpmon-gen renders port 0"),
    ('rnd.pkt', 'set 0 rnd 0 26 XXXXXXXX\n', 2, 'rnd.pkt:1: unknown or unsupported'),
    ('range.pkt', 'enable 0 range\nrange 0 proto udp\nrange 0 dst ip start 10.0.0.1\n', 2,
     "range.pkt: range mode: 'range 0 dst ip min' is not set"),
    ('icmp6.pkt', 'set 0 type ipv6\nset 0 proto icmp\nset 0 src ip 2001:db8::1/64\n'
     'set 0 dst ip 2001:db8::2\n', 2, 'pktgen sends ICMP over IPv4 only'),
    ('typo.sh', '#!/bin/sh\nset -eu\npg_set "pkt_size 60"\npgset "dst 10.0.0.1"\n', 2,
     'typo.sh:4: not a line dpmon-gen understands'),
    ('flows.sh', 'pg_set "dst 10.0.0.1"\npg_set "src_min 10.0.0.2"\npg_set "flows 4"\n', 2,
     'flows.sh:3: pg_set "flows": not a parameter dpmon-gen renders'),
    ('flag.sh', 'pg_set "flag MPLS_RND"\n', 2, 'flag.sh:1: flag MPLS_RND: not a flag'),
    ('profile.txt', 'set 0 size 64\n', 2, 'profile.txt: unknown profile kind'),
]


def test_profile_errors_name_file_and_line(h):
    c = h.checker('profile errors')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-prof-') as tmp:
        for name, text, status, msg in BAD:
            path = os.path.join(tmp, name)
            with open(path, 'w') as f:
                f.write(text)
            out = os.path.join(tmp, name + '.pcap')
            p = subprocess.run([h.dpmon_gen, '--profile', path, '-o', out, '--packets', '10'],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
            err = p.stderr.decode('utf-8', 'replace')
            c.eq('%s: exit status' % name, status, p.returncode)
            c.true('%s: stderr names the problem: %r' % (name, msg), (path + msg[len(name):])
                   in err or msg in err, err)
            c.true('%s: no capture written' % name, not os.path.exists(out))
        # count 0 (send until stopped) without --packets, and a mixed-up command line
        udp = os.path.join(h.source, 'pktgen-profiles', 'pktgen-dpdk', 'udp-flood-64.pkt')
        out = os.path.join(tmp, 'x.pcap')
        for argv, msg in (([udp, '-o', out], 'give --packets N'),
                          ([udp, '-o', out, '--packets', '5', '--mix', 'tcp=1'],
                           '--mix cannot be combined with --profile')):
            p = subprocess.run([h.dpmon_gen, '--profile'] + argv, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=60)
            err = p.stderr.decode('utf-8', 'replace')
            c.eq('%s: exit status' % msg, 2, p.returncode)
            c.true('stderr says %r' % msg, msg in err, err)
    c.done()


def test_profile_deterministic(h):
    c = h.checker('determinism')
    path = os.path.join(h.source, 'pktgen-profiles', 'linux-pktgen', 'imix.sh')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-prof-') as tmp:
        a, b, o = (os.path.join(tmp, x) for x in ('a.pcap', 'b.pcap', 'c.pcap'))
        render(h, path, a, 500)
        render(h, path, b, 500)
        subprocess.run([h.dpmon_gen, '--profile', path, '-o', o, '--packets', '500',
                        '--seed', '2'], stdout=subprocess.DEVNULL, check=True, timeout=60)
        data = [open(x, 'rb').read() for x in (a, b, o)]
        c.true('same profile and seed: byte-identical captures', data[0] == data[1])
        c.true('another seed: other random IMIX sizes', data[0] != data[2])
    c.done()


def test_kernel_scripts_dry_run(h):
    """Each kernel script, run with PKTGEN_DRY_RUN=1, writes exactly its pg_set lines
    to the device file, after attaching the device to the chosen thread."""
    c = h.checker('kernel dry run')
    for path in profiles(h):
        if not path.endswith('.sh'):
            continue
        with open(path, encoding='utf-8') as f:
            params = re.findall(r'^pg_set "(.*)"$', f.read(), re.M)
        params = ['dst_mac 00:11:22:33:44:55' if x.startswith('dst_mac ') else x
                  for x in params]
        env = dict(os.environ, PKTGEN_DRY_RUN='1')
        p = subprocess.run(['sh', path, '-i', 'veth-pg0', '-t', '1', '-d', '00:11:22:33:44:55'],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=60)
        want = (['/proc/net/pktgen/pgctrl <- reset',
                 '/proc/net/pktgen/kpktgend_1 <- rem_device_all',
                 '/proc/net/pktgen/kpktgend_1 <- add_device veth-pg0'] +
                ['/proc/net/pktgen/veth-pg0 <- ' + x for x in params] +
                ['/proc/net/pktgen/pgctrl <- start'])
        name = os.path.basename(path)
        c.eq('%s exit status' % name, 0, p.returncode)
        c.eq('%s writes' % name, want, p.stdout.decode().splitlines())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
