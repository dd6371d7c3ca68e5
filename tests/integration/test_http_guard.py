#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The HTTP server against hostile clients (docs/operations.md, "HTTP
limits"; docs/api.md, "Errors"):

- slow-connection floods, from many loopback addresses and from the
  poller's own address, while a poller asks for /health and
  /api/v1/summary: at least 95 % of its requests answered within 100 ms;
- the header deadline: a head that trickles is cut with a 408, a body
  that trickles is cut, an idle keep-alive connection is closed;
- request smuggling (Content-Length with Transfer-Encoding, a POST hidden
  after a chunked body): one 400, the connection closed, no blackhole
  created, as a first request and on a keep-alive connection;
- every malformed framing case answered by one status line and a close;
- too many or too long header fields or parameters: 431, 414 or 400;
- bytes that are not HTTP: a 400 at once, and a close.

Every answer checked here is one status line, Content-Type
application/json and a body {"error": "..."}.
"""
import http.client
import json
import multiprocessing
import os
import random
import resource
import selectors
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SUBNETS = [('141.142.228.0/24', 'a'), ('192.150.187.0/24', 'b')]
PCAP = ('pcaps', 'zeek', 'http-vlan-0.pcap')
PACKETS = 14

# The limits the server documents (lib/serve/http_guard.h).
HEADER_DEADLINE_S = 5.0
MAX_PER_ADDR = 64

# The poller's requirement, as docs/operations.md states it.
ANSWER_MS = 100
ANSWERED_SHARE = 0.95

# ---------------------------------------------------------------------------
# Raw exchanges
# ---------------------------------------------------------------------------


def exchange(port, data, timeout=3.0, source='127.0.0.1'):
    """Send @data at once; return (bytes received until EOF, seconds to EOF,
    closed): closed is False when the server kept the connection open past
    @timeout."""
    s = socket.create_connection(('127.0.0.1', port), timeout=timeout,
                                 source_address=(source, 0))
    t0 = time.monotonic()
    out, closed = b'', True
    try:
        s.sendall(data)
    except OSError:
        pass  # the server may answer and close before taking it all
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except socket.timeout:
        closed = False
    except ConnectionResetError:
        pass
    s.close()
    return out, time.monotonic() - t0, closed


def responses(raw):
    """The responses in @raw, in order, as (status line, headers dict with
    lower-case names, body); bytes after the last whole one that do not
    start another are returned as a last entry (None, {}, rest)."""
    out = []
    while raw:
        head, sep, rest = raw.partition(b'\r\n\r\n')
        if not raw.startswith(b'HTTP/1.') or not sep:
            out.append((None, {}, raw))
            break
        lines = head.decode('latin-1').split('\r\n')
        headers = {}
        for l in lines[1:]:
            k, _, v = l.partition(':')
            headers[k.strip().lower()] = v.strip()
        n = int(headers.get('content-length', '0'))
        out.append((lines[0], headers, rest[:n]))
        raw = rest[n:]
    return out


def status_lines(raw):
    return [r[0] for r in responses(raw)]


def check_error(c, what, raw, closed, want_status, want_error=None, after=None):
    """One JSON error answer @want_status (after answers with the statuses
    @after, to earlier requests on the connection), then the close."""
    got = responses(raw)
    c.eq('%s: statuses' % what, (after or []) + [want_status],
         [int(r[0].split()[1]) if r[0] else r[2][:40] for r in got])
    line, headers, body = got[-1] if got else (None, {}, b'')
    c.eq('%s: Content-Type' % what, 'application/json', headers.get('content-type'))
    try:
        doc = json.loads(body.decode('utf-8'))
    except ValueError:
        doc = body
    c.true('%s: body is {"error": "..."} (got %r)' % (what, doc),
           isinstance(doc, dict) and list(doc) == ['error'] and isinstance(doc['error'], str)
           and doc['error'] != '')
    if want_error is not None and isinstance(doc, dict):
        c.eq('%s: error' % what, want_error, doc.get('error'))
    c.eq('%s: Connection header' % what, 'close', headers.get('connection'))
    c.true('%s: connection closed after the answer' % what, closed)


def get(path):
    return ('GET %s HTTP/1.1\r\nHost: localhost\r\n\r\n' % path).encode()


# ---------------------------------------------------------------------------
# The flood (a child process, so that it does not slow the poller's timing)
# ---------------------------------------------------------------------------


def _flood(port, sources, per_source, line_every_s, seconds, ready, result):
    """Keep @per_source slow connections open from each address of @sources:
    a request line, then one header line every @line_every_s; a connection
    the server cuts is opened again at once. Puts (connections opened, cut)
    on @result."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    state = {}
    opened = cut = 0
    end = time.monotonic() + seconds

    def open_one(src):
        nonlocal opened
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setblocking(False)
        s.bind((src, 0))
        try:
            s.connect(('127.0.0.1', port))
        except BlockingIOError:
            pass
        except OSError:
            s.close()
            return
        opened += 1
        state[s] = [src, time.monotonic(), 0]  # next send time, lines sent
        sel.register(s, selectors.EVENT_READ)

    def drop(s):
        sel.unregister(s)
        state.pop(s)
        s.close()

    for src in sources:
        for _ in range(per_source):
            open_one(src)
    ready.set()
    while time.monotonic() < end:
        for key, _ in sel.select(timeout=0.05):
            s = key.fileobj
            try:
                data = s.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b''
            src = state[s][0]
            drop(s)  # an answer (408) or a close: cut either way
            cut += 1
            del data
            open_one(src)
        now = time.monotonic()
        for s, st in list(state.items()):
            if st[1] <= now:
                line = (b'GET /health HTTP/1.1\r\nHost: localhost\r\n' if st[2] == 0
                        else b'X-Slow-%d: 1\r\n' % st[2])
                try:
                    s.send(line)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError:
                    drop(s)
                    cut += 1
                    open_one(st[0])
                    continue
                st[1] = now + line_every_s
                st[2] += 1
    open_now = len(state)
    for s in list(state):
        drop(s)
    result.put((opened, cut, open_now))


class Flood:
    def __init__(self, port, sources, per_source, line_every_s=3.0, seconds=14.0):
        ctx = multiprocessing.get_context('fork')
        self.ready = ctx.Event()
        self.result = ctx.Queue()
        self.proc = ctx.Process(target=_flood, args=(port, sources, per_source, line_every_s,
                                                     seconds, self.ready, self.result),
                                daemon=True)

    def __enter__(self):
        self.proc.start()
        if not self.ready.wait(30):
            raise harness.TestFailure('the flood did not open its connections within 30 s')
        return self

    def __exit__(self, *exc):
        self.proc.join(60)
        if self.proc.is_alive():
            self.proc.kill()
        return False

    def stats(self):
        return self.result.get(timeout=30)


# ---------------------------------------------------------------------------
# The poller
# ---------------------------------------------------------------------------

PATHS = ('/health', '/api/v1/summary')


def poll(port, seconds, source, keep_alive, every_s=0.05):
    """GET /health and /api/v1/summary in turn for @seconds from @source,
    on one keep-alive connection (opened again if it fails) or on a new
    connection each time. @return the latencies in ms (None: no 200
    answer within the 1 s deadline)."""
    out, errors = [], []
    conn = None
    end = time.monotonic() + seconds
    i = 0
    while time.monotonic() < end:
        path = PATHS[i % 2]
        i += 1
        t0 = time.monotonic()
        try:
            if conn is None:
                conn = http.client.HTTPConnection('127.0.0.1', port, timeout=1.0,
                                                  source_address=(source, 0))
            conn.request('GET', path, headers={} if keep_alive else {'Connection': 'close'})
            r = conn.getresponse()
            r.read()
            ok = r.status == 200
            if not keep_alive or r.getheader('Connection') == 'close':
                conn.close()
                conn = None
        except (OSError, http.client.HTTPException) as e:
            ok = False
            errors.append(type(e).__name__)
            if conn is not None:
                conn.close()
            conn = None
        ms = (time.monotonic() - t0) * 1000.0
        out.append(ms if ok else None)
        time.sleep(max(0.0, every_s - (time.monotonic() - t0)))
    if conn is not None:
        conn.close()
    if errors:
        print('     poller errors: %s' % ', '.join(errors), flush=True)
    return out


def pct(values, p):
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))] if v else float('nan')


def report(c, what, lat):
    """Check and print the share answered within ANSWER_MS (with p50/p99)."""
    answered = [x for x in lat if x is not None]
    fast = [x for x in answered if x <= ANSWER_MS]
    c.note('%s: %d/%d answered, %d within %d ms; p50 %.1f ms, p99 %.1f ms, max %.1f ms' % (
        what, len(answered), len(lat), len(fast), ANSWER_MS, pct(answered, 50),
        pct(answered, 99), max(answered) if answered else float('nan')))
    c.true('%s: at least %d %% of %d requests answered within %d ms (%d)' % (
        what, ANSWERED_SHARE * 100, len(lat), ANSWER_MS, len(fast)),
        len(lat) >= 50 and len(fast) >= ANSWERED_SHARE * len(lat))


# ---------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------


def test_flood_many_addresses(h):
    """2 000 slow connections from 40 addresses (one header line every 3 s,
    opened again when cut); a poller from another address. dpmon runs with
    a descriptor limit of 1 024, so that its connection limit (1 024 less
    the 512 it keeps for itself) is far below the flood."""
    c = h.checker('flood from 40 addresses')
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'flood 40', nofile=1024) as d:
        d.wait_counts(PACKETS)
        sources = ['127.0.0.%d' % i for i in range(2, 42)]
        with Flood(d.port, sources, 50) as f:
            time.sleep(1.0)  # every slow connection open
            fresh = poll(d.port, 5.0, '127.0.0.200', keep_alive=False)
            kept = poll(d.port, 5.0, '127.0.0.201', keep_alive=True)
            opened, cut, open_now = f.stats()
        c.note('flood: %d connections opened, %d cut by the server, %d open at the end' % (
            opened, cut, open_now))
        c.true('the flood opened its 2000 connections (%d)' % opened, opened >= 2000)
        c.true('the server cut slow connections (%d)' % cut, cut >= 1000)
        report(c, 'new connection per request', fresh)
        report(c, 'keep-alive connection', kept)
        status, _, body = d.request('/health')
        c.eq('GET /health after the flood', 200, status)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
        c.true('the connection limit fitted to the descriptor limit is logged',
               'http: file-descriptor limit 1024: at most 512 connections (not 4096)'
               in d.log_tail(100000), d.log_tail(600))
    c.done()


def test_flood_own_address(h):
    """200 slow connections from the poller's own address (over the
    per-address limit of 64, opened again at once when cut)."""
    c = h.checker('flood from the poller\'s address')
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'flood 1') as d:
        d.wait_counts(PACKETS)
        with Flood(d.port, ['127.0.0.50'], 200, seconds=12.0) as f:
            time.sleep(1.0)
            kept = poll(d.port, 5.0, '127.0.0.50', keep_alive=True)
            fresh = poll(d.port, 5.0, '127.0.0.50', keep_alive=False)
            opened, cut, open_now = f.stats()
        c.note('flood: %d connections opened, %d cut by the server, %d open at the end' % (
            opened, cut, open_now))
        c.true('the server cut connections over the per-address limit (%d)' % cut,
               cut >= 200 - MAX_PER_ADDR)
        report(c, 'keep-alive connection, same address', kept)
        report(c, 'new connection per request, same address', fresh)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_header_deadline(h):
    c = h.checker('header deadline')
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'deadline') as d:
        d.wait_counts(PACKETS)
        # A head trickling one line a second: cut with a 408.
        s = socket.create_connection(('127.0.0.1', d.port), timeout=10)
        t0 = time.monotonic()
        s.sendall(b'GET /health HTTP/1.1\r\nHost: localhost\r\n')
        raw, k = b'', 0
        s.settimeout(1.0)
        while time.monotonic() - t0 < 10:
            try:
                b = s.recv(4096)
                if not b:
                    break
                raw += b
            except socket.timeout:
                k += 1
                try:
                    s.sendall(b'X-Trickle-%d: 1\r\n' % k)
                except OSError:
                    break
            except ConnectionResetError:
                break
        took = time.monotonic() - t0
        s.close()
        check_error(c, 'trickling head', raw, True, 408,
                    'request head not complete within 5 s')
        c.true('cut between %.0f and %.0f s (%.2f s)' % (
            HEADER_DEADLINE_S - 0.5, HEADER_DEADLINE_S + 2, took),
            HEADER_DEADLINE_S - 0.5 <= took <= HEADER_DEADLINE_S + 2)
        # A body trickling one byte a second (the head was whole): cut, no answer.
        s = socket.create_connection(('127.0.0.1', d.port), timeout=10)
        t0 = time.monotonic()
        s.sendall(b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n')
        raw, k = b'', 0
        s.settimeout(1.0)
        while time.monotonic() - t0 < 10:
            try:
                b = s.recv(4096)
                if not b:
                    break
                raw += b
            except socket.timeout:
                k += 1
                try:
                    s.sendall(b'x')
                except OSError:
                    break
            except ConnectionResetError:
                break
        took = time.monotonic() - t0
        s.close()
        c.eq('trickling body: no answer', b'', raw)
        c.true('trickling body cut between %.0f and %.0f s (%.2f s)' % (
            HEADER_DEADLINE_S - 0.5, HEADER_DEADLINE_S + 2, took),
            HEADER_DEADLINE_S - 0.5 <= took <= HEADER_DEADLINE_S + 2)
        # A keep-alive connection waiting for its next request: closed.
        s = socket.create_connection(('127.0.0.1', d.port), timeout=10)
        s.sendall(get('/health'))
        t0 = time.monotonic()
        raw = b''
        try:
            while True:
                b = s.recv(4096)
                if not b:
                    break
                raw += b
        except (socket.timeout, ConnectionResetError):
            pass
        took = time.monotonic() - t0
        s.close()
        c.eq('idle keep-alive: one 200 answer', ['HTTP/1.1 200 OK'], status_lines(raw))
        c.true('idle keep-alive closed between %.0f and %.0f s (%.2f s)' % (
            HEADER_DEADLINE_S - 0.5, HEADER_DEADLINE_S + 2, took),
            HEADER_DEADLINE_S - 0.5 <= took <= HEADER_DEADLINE_S + 2)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


SMUGGLED = (b'POST /api/v1/blackholes HTTP/1.1\r\nHost: localhost\r\n'
            b'Content-Type: application/json\r\nContent-Length: 28\r\n\r\n'
            b'{"address": "141.142.228.5"}')
SMUGGLER = (b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n'
            b'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n' % (5 + len(SMUGGLED))) + SMUGGLED

# (what, request bytes, status, error text or None)
FRAMING = [
    ('Content-Length -1', b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: -1\r\n\r\n', 400,
     'invalid Content-Length: expected 1 to 18 decimal digits'),
    ('Content-Length abc', b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n',
     400, 'invalid Content-Length: expected 1 to 18 decimal digits'),
    ('Content-Length of 30 digits',
     b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: ' + b'9' * 30 + b'\r\n\r\n', 400,
     'invalid Content-Length: expected 1 to 18 decimal digits'),
    ('empty Content-Length', b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length:\r\n\r\n', 400,
     'invalid Content-Length: expected 1 to 18 decimal digits'),
    ('Content-Length 1,1', b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1,1\r\n\r\nab',
     400, 'invalid Content-Length: expected 1 to 18 decimal digits'),
]
# Also refused on a keep-alive connection, after a first request.
FRAMING_LATER = [
    ('Content-Length and Transfer-Encoding', SMUGGLER, 400,
     'both Content-Length and Transfer-Encoding in one request'),
    ('repeated Content-Length',
     b'GET /health HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\nContent-Length: 0\r\n\r\n', 400,
     'repeated Content-Length'),
    ('two different Content-Length',
     b'POST /api/v1/blackholes HTTP/1.1\r\nHost: localhost\r\nContent-Length: 28\r\n'
     b'Content-Length: 0\r\n\r\n{"address": "141.142.228.5"}', 400, 'repeated Content-Length'),
    ('Transfer-Encoding gzip',
     b'POST /api/v1/blackholes HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n', 501,
     'unsupported Transfer-Encoding: only chunked'),
    ('Transfer-Encoding twice',
     b'GET /health HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n'
     b'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 501,
     'unsupported Transfer-Encoding: only chunked'),
]


def blackholes(d):
    status, _, body = d.request('/api/v1/blackholes')
    return status, [e['address'] for e in body.get('blackholes', [])]


def test_framing(h):
    c = h.checker('framing')
    tmp = tempfile.mkdtemp(prefix='dpmon-it-http-guard-')
    actions = {'state_file': os.path.join(tmp, 'state.json')}
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'framing', extra_config={'actions': actions}) as d:
        d.wait_counts(PACKETS)
        # Positive control: the hidden POST, sent plainly, creates a blackhole.
        status, _, _ = d.request('/api/v1/blackholes', 'POST', b'{"address": "141.142.228.5"}')
        c.eq('plain POST creates the blackhole', 201, status)
        status, _, _ = d.request('/api/v1/blackholes/141.142.228.5', 'DELETE')
        c.eq('and DELETE removes it', 200, status)
        c.eq('blackhole list before the smuggling', (200, []), blackholes(d))
        # The smuggling request, as a first request and after one on the connection.
        raw, _, closed = exchange(d.port, SMUGGLER)
        check_error(c, 'smuggling request', raw, closed, 400,
                    'both Content-Length and Transfer-Encoding in one request')
        raw, _, closed = exchange(d.port, get('/health') + SMUGGLER)
        check_error(c, 'smuggling request after a GET', raw, closed, 400,
                    'both Content-Length and Transfer-Encoding in one request', after=[200])
        time.sleep(0.5)
        c.eq('no blackhole created', (200, []), blackholes(d))
        for what, data, want, err in FRAMING + FRAMING_LATER:
            raw, _, closed = exchange(d.port, data)
            check_error(c, what, raw, closed, want, err)
        for what, data, want, err in FRAMING_LATER:
            raw, _, closed = exchange(d.port, get('/health') + data)
            check_error(c, what + ' after a GET', raw, closed, want, err, after=[200])
        c.eq('still no blackhole', (200, []), blackholes(d))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_limits(h):
    c = h.checker('limits')
    many_params = '&'.join('p%d=1' % i for i in range(500))
    cases = [
        ('500 query parameters', get('/api/v1/hosts?' + many_params), 400,
         'too many query parameters'),
        ('17 query parameters', get('/api/v1/hosts?' + '&'.join('p%d=1' % i for i in range(17))),
         400, 'too many query parameters'),
        ('100 header fields', b'GET /health HTTP/1.1\r\nHost: localhost\r\n' +
         b''.join(b'X-F%d: 1\r\n' % i for i in range(100)) + b'\r\n', 431,
         'more than 64 header fields'),
        ('a 20 000-byte header field', b'GET /health HTTP/1.1\r\nHost: localhost\r\nX-Big: ' +
         b'v' * 20000 + b'\r\n\r\n', 431, 'request head over 16384 bytes'),
        ('a 9 000-byte target', get('/' + 'a' * 9000), 414, 'request line over 8192 bytes'),
        ('a 100 000-byte target', get('/' + 'a' * 100000), 414, 'request line over 8192 bytes'),
    ]
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'limits') as d:
        d.wait_counts(PACKETS)
        for what, data, want, err in cases:
            raw, took, closed = exchange(d.port, data)
            check_error(c, what, raw, closed, want, err)
            c.true('%s: answered within 1 s (%.2f s)' % (what, took), took < 1.0)
        # Within the limits: 64 fields of 200 bytes, 16 parameters.
        raw, _, _ = exchange(d.port, b'GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n' +
                             b''.join(b'X-F%d: %s\r\n' % (i, b'v' * 200) for i in range(62)) +
                             b'\r\n')
        c.eq('64 header fields of 200 bytes: 200', ['HTTP/1.1 200 OK'], status_lines(raw))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def client_hello():
    """A TLS 1.2 ClientHello record (RFC 5246 7.4.1.2) for 'localhost'."""
    rnd = random.Random(14)
    sni = b'localhost'
    ext_sni = b'\x00\x00' + (len(sni) + 5).to_bytes(2, 'big') + (len(sni) + 3).to_bytes(
        2, 'big') + b'\x00' + len(sni).to_bytes(2, 'big') + sni
    body = (b'\x03\x03' + bytes(rnd.getrandbits(8) for _ in range(32)) + b'\x00' +
            b'\x00\x04\xc0\x2f\x00\xff' + b'\x01\x00' + len(ext_sni).to_bytes(2, 'big') + ext_sni)
    hs = b'\x01' + len(body).to_bytes(3, 'big') + body
    return b'\x16\x03\x01' + len(hs).to_bytes(2, 'big') + hs


def test_not_http(h):
    c = h.checker('not HTTP')
    rnd = random.Random(1402)
    cases = [
        ('TLS ClientHello', client_hello(), 400),
        ('random bytes', bytes(rnd.getrandbits(8) for _ in range(300)), 400),
        ('NUL bytes', b'\x00' * 64, 400),
        ('a method with a control byte', b'GE\x01T / HTTP/1.1\r\n\r\n', 400),
        ('HTTP/0.9 request', b'GET /\r\n\r\n', 400),
        ('SSH banner', b'SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n', 400),
        ('HTTP/2 preface', b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 505),
    ]
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'not http') as d:
        d.wait_counts(PACKETS)
        for what, data, want in cases:
            raw, took, closed = exchange(d.port, data)
            check_error(c, what, raw, closed, want)
            c.true('%s: answered within 1 s (%.2f s)' % (what, took), took < 1.0)
        status, _, _ = d.request('/health')
        c.eq('GET /health after them', 200, status)
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
