#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""HTTPS (http.tls_cert_file, http.tls_key_file; docs/api.md, "HTTPS"), on a
running dpmon with a self-signed certificate made here by openssl:

- the start line names the https URL; curl reaches the API with --cacert
  and refuses it without; dpmonctl
  --cacert reads the summary and the health;
- plain HTTP to the HTTPS port gets a JSON 400 at once;
- a client that opens TCP and sends nothing, and one that sends its
  ClientHello and never finishes the handshake, are cut at the handshake
  deadline (3 s);
- a slowloris under TLS (handshake done, one header line every 0.5 s) is
  cut at the header deadline (5 s from the opening);
- the guard's head limits hold under TLS (414, 431) and so does the
  framing check (400), each a JSON answer with Connection: close;
- a reload with a key file others may read is refused, naming it, and
  the listener serves on.

At --check-config: a key file others may read, a key of another
certificate, a FIFO as the key, a file that is no certificate, and a
certificate without its key, each with file, JSON path and reason.

Expected values come from docs/api.md and docs/configuration.md.
"""
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_check_config import check_config  # noqa: E402

SUBNETS = [('141.142.228.0/24', 'a')]
HANDSHAKE_DEADLINE_S = 3.0
HEADER_DEADLINE_S = 5.0
PLAIN_MSG = 'this port speaks HTTPS (TLS): use an https:// URL'


def make_cert(tmp, name):
    """A self-signed certificate for 127.0.0.1 and localhost, and its key
    (mode 0600): (cert path, key path)."""
    cert, key = os.path.join(tmp, name + '.pem'), os.path.join(tmp, name + '.key')
    subprocess.run(['openssl', 'req', '-x509', '-newkey', 'ec', '-pkeyopt',
                    'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key, '-out', cert,
                    '-days', '1', '-subj', '/CN=127.0.0.1', '-addext',
                    'subjectAltName=IP:127.0.0.1,DNS:localhost'], check=True, timeout=60,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.chmod(key, 0o600)
    return cert, key


def curl(*args):
    """(exit status, stdout) of curl ARGS, silent but for errors."""
    p = subprocess.run(['curl', '-sS', '--max-time', '10'] + list(args),
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    return p.returncode, p.stdout.decode('utf-8', 'replace')


def answer_of(raw):
    """(status, header fields in lower case, parsed JSON body) of one HTTP/1.1 answer."""
    head, _, body = raw.partition(b'\r\n\r\n')
    lines = head.decode('latin-1').split('\r\n')
    fields = dict((k.strip().lower(), v.strip()) for k, _, v in
                  (line.partition(':') for line in lines[1:]))
    return int(lines[0].split()[1]), fields, json.loads(body.decode()) if body else None


def read_all(sock, timeout=10.0):
    """Every byte until EOF (or a reset) within @timeout."""
    sock.settimeout(timeout)
    data = b''
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                return data
            data += chunk
    except (ConnectionResetError, ssl.SSLError, OSError):
        return data


def tls_request(port, ctx, raw):
    """Send @raw over a TLS connection; the answer (answer_of)."""
    with ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=10),
                         server_hostname='127.0.0.1') as s:
        s.sendall(raw)
        return answer_of(read_all(s))


def seconds_to_eof(sock, limit=15.0):
    """Seconds from now until the server ends @sock (EOF or reset), or None."""
    start = time.monotonic()
    sock.settimeout(limit)
    try:
        while sock.recv(65536):
            pass
    except socket.timeout:
        return None
    except OSError:
        pass
    return time.monotonic() - start


def check_deadlines(c, port, ctx):
    """The handshake deadline (silent client, stalled handshake) and the
    header deadline under TLS (slowloris)."""
    silent = socket.create_connection(('127.0.0.1', port), timeout=10)
    took = seconds_to_eof(silent)
    silent.close()
    c.true('no byte sent: cut at the handshake deadline (%.1f..%.1f s, took %s)' % (
        HANDSHAKE_DEADLINE_S - 0.2, HANDSHAKE_DEADLINE_S + 1.5, took),
        took is not None and HANDSHAKE_DEADLINE_S - 0.2 <= took <= HANDSHAKE_DEADLINE_S + 1.5)

    # A ClientHello, then nothing: the server's flight is read, never answered.
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    half = ctx.wrap_bio(incoming, outgoing, server_hostname='127.0.0.1')
    try:
        half.do_handshake()
    except ssl.SSLWantReadError:
        pass
    stalled = socket.create_connection(('127.0.0.1', port), timeout=10)
    start = time.monotonic()
    stalled.sendall(outgoing.read())
    took = seconds_to_eof(stalled)
    if took is not None:
        took = time.monotonic() - start
    stalled.close()
    c.true('handshake never finished: cut at the handshake deadline (%.1f..%.1f s, took %s)' % (
        HANDSHAKE_DEADLINE_S - 0.2, HANDSHAKE_DEADLINE_S + 1.5, took),
        took is not None and HANDSHAKE_DEADLINE_S - 0.2 <= took <= HANDSHAKE_DEADLINE_S + 1.5)

    # Slowloris under TLS: the handshake done, then one header line every 0.5 s.
    start = time.monotonic()
    s = ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=10),
                        server_hostname='127.0.0.1')
    s.sendall(b'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n')
    took, got = None, b''
    s.settimeout(0.5)
    while time.monotonic() - start < HEADER_DEADLINE_S + 10:
        try:
            chunk = s.recv(65536)
            got += chunk
            if not chunk:
                took = time.monotonic() - start
                break
        except socket.timeout:
            pass
        except (OSError, ssl.SSLError):
            took = time.monotonic() - start
            break
        try:
            s.sendall(b'X-Slow: 1\r\n')
        except (OSError, ssl.SSLError):
            took = time.monotonic() - start
            break
    s.close()
    c.true('slowloris under TLS: cut at the header deadline (%.1f..%.1f s, took %s)' % (
        HEADER_DEADLINE_S - 0.5, HEADER_DEADLINE_S + 2, took),
        took is not None and HEADER_DEADLINE_S - 0.5 <= took <= HEADER_DEADLINE_S + 2)
    c.eq('slowloris under TLS: no answer', b'', got)


def check_heads(c, port, ctx):
    """The guard's head limits and the framing check, under TLS."""
    def with_fields(n):
        """A GET /health with Host and n - 1 more header fields."""
        return (b'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
                b''.join(b'X-F%d: v\r\n' % i for i in range(n - 1)) + b'\r\n')

    for label, raw, status, msg in [
            ('65 header fields', with_fields(65), 431, 'more than 64 header fields'),
            ('a head over 16384 bytes', b'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ' +
             b'a' * 16400 + b'\r\n\r\n', 431, 'request head over 16384 bytes'),
            ('a target over 8182 bytes', b'GET /health?' + b'a' * 8180 +
             b' HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', 414, 'request line over 8192 bytes'),
            ('Content-Length with Transfer-Encoding',
             b'POST /api/v1/blackholes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 3\r\n'
             b'Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400,
             'both Content-Length and Transfer-Encoding in one request')]:
        st, hdrs, body = tls_request(port, ctx, raw)
        c.eq('%s under TLS: status, JSON error, Connection: close' % label,
             (status, 'application/json', {'error': msg}, 'close'),
             (st, hdrs.get('content-type'), body, hdrs.get('connection')))
    # The limits hold for a later request of a keep-alive connection too.
    first = b'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'
    with ctx.wrap_socket(socket.create_connection(('127.0.0.1', port), timeout=10),
                         server_hostname='127.0.0.1') as s:
        s.sendall(first + with_fields(65))
        raw = read_all(s)
    second = raw[raw.index(b'HTTP/1.1', 1):] if raw.count(b'HTTP/1.1 ') == 2 else b''
    c.eq('keep-alive under TLS: 200, then 431 for 65 fields',
         (b'HTTP/1.1 200 ', 431, {'error': 'more than 64 header fields'}),
         (raw[:13], *answer_of(second)[::2]) if second else (raw[:13], None, None))
    # 64 fields (the last one Connection: close) are within the limits.
    st, _, body = tls_request(port, ctx, with_fields(63)[:-2] + b'Connection: close\r\n\r\n')
    c.eq('64 header fields under TLS: 200', (200, 'ok'), (st, (body or {}).get('status')))


def check_clients(c, h, port, cert):
    """curl and dpmonctl with and without the certificate."""
    url = 'https://127.0.0.1:%d' % port
    deadline = time.monotonic() + 10  # the first snapshot: 503 before it
    while True:
        rc, out = curl('--cacert', cert, url + '/api/v1/summary')
        doc = json.loads(out) if rc == 0 else {}
        if 'totals' in doc or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    c.eq('curl --cacert: the summary over HTTPS', (0, True), (rc, 'totals' in doc))
    rc, out = curl('--cacert', cert, 'https://localhost:%d/health' % port)
    c.eq('curl --cacert, Host localhost: /health', (0, 'ok'),
         (rc, json.loads(out).get('status') if rc == 0 else out))
    rc, out = curl(url + '/health')
    c.eq('curl without the certificate: exit 60 (peer certificate not trusted)', (60, ''),
         (rc, out))
    ctl = [os.path.join(h.build, 'app', 'dpmonctl'), '--url', url]
    env = {k: v for k, v in os.environ.items() if k not in ('DPMON_URL', 'DPMON_TOKEN_FILE')}
    p = subprocess.run(ctl + ['--cacert', cert, 'health'], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30, env=env)
    c.eq('dpmonctl --cacert health: exit status 0, nothing on stderr', (0, ''),
         (p.returncode, p.stderr.decode()))
    p = subprocess.run(ctl + ['health'], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30, env=env)
    c.true('dpmonctl without --cacert: exit status 1, the certificate named',
           p.returncode == 1 and 'SSL certificate problem' in p.stderr.decode(),
           p.stderr.decode())


def test_https_live(h):
    c = h.checker('https')
    work = tempfile.mkdtemp(prefix='dpmon-it-https-')
    cert, key = make_cert(work, 'server')
    ctx = ssl.create_default_context(cafile=cert)
    pcap = h.td('pcaps', 'zeek', 'http-vlan-0.pcap')
    try:
        with h.dpmon_run([pcap], SUBNETS, 'https', extra_config={'http': {
                'listen': '127.0.0.1', 'port': 0, 'tls_cert_file': cert,
                'tls_key_file': key}}) as d:
            with open(os.path.join(d.dir, 'stdout')) as f:
                c.true('the start line names the https URL',
                       'API at https://127.0.0.1:%d/api/v1/summary\n' % d.port in f.read())
            check_clients(c, h, d.port, cert)

            plain = socket.create_connection(('127.0.0.1', d.port), timeout=10)
            start = time.monotonic()
            plain.sendall(b'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
            st, hdrs, body = answer_of(read_all(plain))
            took = time.monotonic() - start
            plain.close()
            c.eq('plain HTTP to the HTTPS port: JSON 400, Connection: close',
                 (400, {'error': PLAIN_MSG}, 'close'), (st, body, hdrs.get('connection')))
            c.true('plain HTTP to the HTTPS port: answered within 1 s (took %.2f s)' % took,
                   took < 1.0)

            check_heads(c, d.port, ctx)
            check_deadlines(c, d.port, ctx)

            # A reload with a key others may read: refused with the reason,
            # the listener serves on with the certificate it started with.
            os.chmod(key, 0o644)
            d.proc.send_signal(signal.SIGHUP)
            want = ('$.http.tls_key_file: key file "%s": group or others may access it '
                    '(mode 0644; chmod 600)' % key)
            deadline = time.monotonic() + 10
            while want not in d.log_tail(20000) and time.monotonic() < deadline:
                time.sleep(0.1)
            c.true('a reload with a readable key: refused, with file, path and reason',
                   want in d.log_tail(20000) and 'refused' in d.log_tail(20000),
                   d.log_tail())
            rc, out = curl('--cacert', cert, 'https://127.0.0.1:%d/health' % d.port)
            c.eq('after the floods: /health over HTTPS', (0, 'ok'),
                 (rc, json.loads(out).get('status') if rc == 0 else out))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


def test_https_check_config(h):
    c = h.checker('https --check-config')
    work = tempfile.mkdtemp(prefix='dpmon-it-https-cfg-')
    cert, key = make_cert(work, 'server')
    _, other_key = make_cert(work, 'other')
    fifo = os.path.join(work, 'fifo.key')
    os.mkfifo(fifo, 0o600)
    open_key = os.path.join(work, 'open.key')
    shutil.copy(key, open_key)
    os.chmod(open_key, 0o644)
    base = ('{"ports": [{"device": "net_pcap0"}], "subnets": [{"prefix": "10.0.0.0/8"}], '
            '"http": %s}')
    cfg = os.path.join(work, 'cfg.json')
    try:
        for label, http, want in [
                ('a key file others may read', {'tls_cert_file': cert, 'tls_key_file': open_key},
                 '$.http.tls_key_file: key file "%s": group or others may access it '
                 '(mode 0644; chmod 600)' % open_key),
                ('the key of another certificate',
                 {'tls_cert_file': cert, 'tls_key_file': other_key},
                 '$.http.tls_key_file: key file "%s": the key does not belong to the '
                 'certificate of %s' % (other_key, cert)),
                ('a FIFO as the key', {'tls_cert_file': cert, 'tls_key_file': fifo},
                 '$.http.tls_key_file: key file "%s": not a regular file (FIFO)' % fifo),
                ('a key as the certificate', {'tls_cert_file': key, 'tls_key_file': key},
                 '$.http.tls_cert_file: certificate file "%s": no X.509 certificate in PEM '
                 'form: ' % key),
                ('a certificate without its key', {'tls_cert_file': cert},
                 '$.http.tls_cert_file: needs http.tls_key_file too'),
                ('a relative path', {'tls_cert_file': 'server.pem', 'tls_key_file': key},
                 '$.http.tls_cert_file: must be an absolute path, got "server.pem"')]:
            with open(cfg, 'w') as f:
                f.write(base % json.dumps(http))
            rc, out = check_config(h, cfg)
            c.true('%s: exit status non-zero' % label, rc != 0, out)
            c.true('%s: file, JSON path and reason' % label, '%s: %s' % (cfg, want) in out, out)
        with open(cfg, 'w') as f:
            f.write(base % json.dumps({'tls_cert_file': cert, 'tls_key_file': key}))
        rc, out = check_config(h, cfg)
        c.eq('certificate and key: valid', (0, '%s: valid (1 ports, 1 subnets)\n' % cfg),
             (rc, out))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
