#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Manual blackholes on a running dpmon (docs/detection.md, docs/api.md):
POST/GET/DELETE /api/v1/blackholes, the exact lines on ExaBGP's command
FIFO (read here), the notify script's exact arguments and stdin (a script
that records them), and the state file across a restart.

Expected values come from the documentation of the lines and arguments,
not from dpmon's output.
"""
import errno
import json
import os
import select
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SUBNETS = [('141.142.228.0/24', 'a'), ('192.150.187.0/24', 'b'), ('2001:db8:1::/48', 'v6')]
PACKETS = 14  # zeek/http-vlan-0.pcap
NEXT_HOP = '192.0.2.1'
NEXT_HOP6 = '2001:db8:ffff::1'
COMMUNITY = '65535:666'


class Fifo:
    """The reading end of ExaBGP's command pipe, as ExaBGP would hold it."""

    def __init__(self, path):
        self.path = path
        os.mkfifo(path, 0o600)
        self.fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.buf = b''

    def lines(self, n, timeout=5.0):
        """The next @n lines (fewer if they do not come within @timeout s)."""
        deadline = time.monotonic() + timeout
        while self.buf.count(b'\n') < n and time.monotonic() < deadline:
            r, _, _ = select.select([self.fd], [], [], 0.05)
            if not r:
                continue
            try:
                data = os.read(self.fd, 4096)
            except OSError as e:
                if e.errno == errno.EAGAIN:
                    continue
                raise
            if not data:  # no writer at the moment
                time.sleep(0.05)
            self.buf += data
        out = []
        while len(out) < n and b'\n' in self.buf:
            line, self.buf = self.buf.split(b'\n', 1)
            out.append(line.decode())
        return out

    def close(self):
        os.close(self.fd)


def write_script(d):
    path = os.path.join(d, 'notify.sh')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\necho "$@" >> %s/args\ncat >> %s/stdin\n' % (d, d))
    os.chmod(path, 0o755)
    return path


def read_lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def wait_lines(path, n, timeout=5.0):
    deadline = time.monotonic() + timeout
    while len(read_lines(path)) < n and time.monotonic() < deadline:
        time.sleep(0.05)
    return read_lines(path)


def test_blackholes(h):
    c = h.checker('blackholes')
    work = tempfile.mkdtemp(prefix='dpmon-it-blackholes-')
    fifo = Fifo(os.path.join(work, 'exabgp.cmd'))
    state = os.path.join(work, 'state.json')
    actions = {'notify_script': write_script(work), 'notify_timeout_ms': 5000,
               'exabgp_pipe': fifo.path, 'exabgp_next_hop': NEXT_HOP,
               'exabgp_next_hop6': NEXT_HOP6,
               'exabgp_community': COMMUNITY, 'state_file': state}
    pcap = h.td('pcaps', 'zeek', 'http-vlan-0.pcap')
    try:
        with h.dpmon_run([pcap], SUBNETS, 'blackholes',
                         extra_config={'actions': actions}) as d:
            d.wait_counts(PACKETS)
            status, _, body = d.request('/api/v1/blackholes')
            c.eq('GET /api/v1/blackholes at start', (200, {'blackholes': []}), (status, body))

            # POST inside a monitored subnet.
            status, headers, body = d.request('/api/v1/blackholes', 'POST',
                                              b'{"address": "141.142.228.5"}',
                                              {'Content-Type': 'application/json'})
            c.eq('POST 141.142.228.5 status', 201, status)
            c.eq('POST 141.142.228.5 Content-Type', 'application/json',
                 headers.get('Content-Type'))
            c.eq('POST 141.142.228.5 entry', ('141.142.228.5', 'manual', None),
                 (body.get('address'), body.get('source'), body.get('alert_id')))
            c.eq('announce line on the FIFO',
                 ['announce route 141.142.228.5/32 next-hop %s community [%s]' %
                  (NEXT_HOP, COMMUNITY)], fifo.lines(1))
            c.eq('notify script arguments', ['141.142.228.5 none ban 0'],
                 wait_lines(os.path.join(work, 'args'), 1))
            stdin = wait_lines(os.path.join(work, 'stdin'), 1)
            doc = json.loads(stdin[0]) if stdin else {}
            c.eq('notify script stdin', ('141.142.228.5', 'manual', None),
                 (doc.get('address'), doc.get('source'), doc.get('alert_id')))
            status, _, body = d.request('/api/v1/blackholes')
            listed = [(e['address'], e['source'], e['announced']) for e in body['blackholes']]
            c.eq('GET lists it, announced', [('141.142.228.5', 'manual', True)], listed)
            status, _, body = d.request('/api/v1/blackholes', 'POST',
                                        b'{"address": "2001:db8:1::5"}')
            c.eq('POST 2001:db8:1::5 status', 201, status)
            c.eq('IPv6 announce line: a /128',
                 ['announce route 2001:db8:1::5/128 next-hop %s community [%s]' %
                  (NEXT_HOP6, COMMUNITY)], fifo.lines(1))

            # Refused: outside every subnet, bad bodies.
            for data, want in [
                    (b'{"address": "10.1.2.3"}',
                     'address 10.1.2.3 is outside every monitored subnet'),
                    (b'{"address": "141.142.228.0/24"}', "invalid address '141.142.228.0/24'"),
                    (b'{"address": 141}', "'address' must be a string"),
                    (b'{"addr": "141.142.228.6"}',
                     "unknown key 'addr' in the body (only \"address\")"),
                    (b'{}', "missing key 'address' in the body"),
                    (b'"141.142.228.6"', 'the body must be a JSON object {"address": "..."}'),
                    (b'{"address": "141.142.228.6"',
                     'invalid JSON body: line 1 column 27: \'}\' expected near end of file')]:
                status, headers, body = d.request('/api/v1/blackholes', 'POST', data)
                c.eq('POST %r' % data, (400, {'error': want}), (status, body))
            status, _, body = d.request('/api/v1/blackholes', 'POST', b' ' * 5000)
            c.eq('POST of 5000 bytes', (413, {'error': 'request body over 4096 bytes'}),
                 (status, body))

            # What a page of another site or a DNS-rebinding page sends (a
            # no-cors fetch, a form) is refused and changes nothing: the
            # FIFO, the notify script and the state file checked below see
            # none of it.
            evil = {'Origin': 'http://evil.example'}
            body = b'{"address": "141.142.228.6"}'
            type_msg = 'a request that changes state needs Content-Type: application/json'
            origin_msg = "Origin is not one of http.cors_origins nor this server's own"
            host_msg = 'Host is not one of http.allowed_hosts'
            for what, headers, want in [
                    ('text/plain from another origin',
                     dict(evil, **{'Content-Type': 'text/plain'}), (403, origin_msg)),
                    ('text/plain', {'Content-Type': 'text/plain'}, (415, type_msg)),
                    ('a form', {'Content-Type': 'application/x-www-form-urlencoded'},
                     (415, type_msg)),
                    ('Origin null', {'Origin': 'null'}, (403, origin_msg)),
                    ('an origin not in cors_origins', evil, (403, origin_msg)),
                    ('Host evil.example', {'Host': 'evil.example'}, (403, host_msg))]:
                status, _, doc = d.request('/api/v1/blackholes', 'POST', body, headers)
                c.eq('cross-site POST, %s' % what, (want[0], {'error': want[1]}), (status, doc))
            status, _, doc = d.request('/api/v1/blackholes/141.142.228.5', 'DELETE', None,
                                       {'Host': 'evil.example:8080'})
            c.eq('DELETE with Host evil.example', (403, {'error': host_msg}), (status, doc))
            status, _, doc = d.request('/api/v1/blackholes', headers={'Host': 'evil.example'})
            c.eq('GET with Host evil.example', (403, {'error': host_msg}), (status, doc))
            status, _, doc = d.request('/api/v1/blackholes')
            c.eq('the list after the refused requests', ['141.142.228.5', '2001:db8:1::5'],
                 sorted(e['address'] for e in doc['blackholes']))

            # DELETE twice: 200 both times, one withdraw line.
            status, _, body = d.request('/api/v1/blackholes/2001:db8:1::5', 'DELETE')
            c.eq('first DELETE', (200, {'address': '2001:db8:1::5', 'removed': True}),
                 (status, body))
            status, _, body = d.request('/api/v1/blackholes/2001:db8:1::5', 'DELETE')
            c.eq('second DELETE', (200, {'address': '2001:db8:1::5', 'removed': False}),
                 (status, body))
            c.eq('one withdraw line',
                 ['withdraw route 2001:db8:1::5/128 next-hop %s' % NEXT_HOP6],
                 fifo.lines(2, timeout=2.5))
            status, _, body = d.request('/api/v1/blackholes/not-an-address', 'DELETE')
            c.eq('DELETE of a non-address', (400, {'error': "invalid address 'not-an-address'"}),
                 (status, body))
            c.eq('notify script arguments after the DELETEs',
                 ['141.142.228.5 none ban 0', '2001:db8:1::5 none ban 0',
                  '2001:db8:1::5 none unban 0'],
                 wait_lines(os.path.join(work, 'args'), 3))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())

        with open(state) as f:
            saved = json.load(f)
        c.eq('state file', (1, [('141.142.228.5', True, [])]),
             (saved.get('version'), [(e['address'], e['manual'], e['alert_ids'])
                                     for e in saved.get('blackholes', [])]))
        c.eq('no temporary file left', ['args', 'exabgp.cmd', 'notify.sh', 'state.json', 'stdin'],
             sorted(os.listdir(work)))

        # Restart with the same state file: still listed, announced again.
        with h.dpmon_run([pcap], SUBNETS, 'blackholes restart',
                         extra_config={'actions': actions}) as d:
            d.wait_counts(PACKETS)
            c.eq('announce line again after the restart',
                 ['announce route 141.142.228.5/32 next-hop %s community [%s]' %
                  (NEXT_HOP, COMMUNITY)], fifo.lines(1))
            status, _, body = d.request('/api/v1/blackholes')
            c.eq('GET after the restart', [('141.142.228.5', 'manual')],
                 [(e['address'], e['source']) for e in body['blackholes']])
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())

        # A corrupt state file: dpmon does not start, and names the file.
        with open(state, 'w') as f:
            f.write('{"version": 1, "blackholes": [')
        d = h.dpmon_run([pcap], SUBNETS, 'blackholes corrupt',
                        extra_config={'actions': actions})
        try:
            d.start()
            c.fail('dpmon started with a corrupt state file')
        except harness.TestFailure as e:
            c.true('start refused, naming the state file', 'state file %s' % state in str(e),
                   str(e)[-600:])
        finally:
            d.__exit__(None, None, None)
    finally:
        fifo.close()
        shutil.rmtree(work, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
