# SPDX-License-Identifier: BSD-3-Clause
"""Database servers for the export tests, started as user processes on free
loopback ports with a temporary directory: Debian's clickhouse-server
(18.16) and influxd (1.6), and a small HTTP server that stands for
InfluxDB 2.x or for a misbehaving server (tests/integration/test_export.py).

Each is a context manager; stop() and start() again on the same ports and
directory make an outage.
"""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

from harness import TestFailure


def free_port():
    """A TCP port nobody listens on now (bound, then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


def find_binary(names):
    for n in names:
        p = shutil.which(n) or (os.path.exists('/usr/sbin/' + n) and '/usr/sbin/' + n)
        if p:
            return p
    raise TestFailure('none of %s installed (scripts/deps.sh installs the export test '
                      'servers)' % ', '.join(names))


class _Server:
    label = 'server'

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix='dpmon-%s-' % self.label)
        self.proc = None
        self.log = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def _spawn(self, argv):
        self.log = open(os.path.join(self.dir, 'console.log'), 'ab')
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT)

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
        self.proc = None
        if self.log is not None:
            self.log.close()
            self.log = None

    def _wait_ready(self, probe, timeout=60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TestFailure('%s exited with %s at start:\n%s' % (
                    self.label, self.proc.returncode, self.console_tail()))
            try:
                if probe():
                    return
            except (OSError, urllib.error.URLError):
                pass
            time.sleep(0.2)
        raise TestFailure('%s not ready within %.0f s:\n%s' % (
            self.label, timeout, self.console_tail()))

    def console_tail(self, n=3000):
        out = []
        for name in sorted(os.listdir(self.dir)):
            if name.endswith('.log'):
                with open(os.path.join(self.dir, name), 'rb') as f:
                    out.append('[%s]\n%s' % (name, f.read()[-n:].decode('utf-8', 'replace')))
        return '\n'.join(out)


class ClickHouse(_Server):
    """clickhouse-server with a minimal config: HTTP and native ports on
    127.0.0.1, data in a temporary directory, users `default` (no password)
    and `dpmon` (password `s3cret`)."""
    label = 'clickhouse'
    PASSWORD = 's3cret'

    def __init__(self):
        super().__init__()
        self.http_port = free_port()
        self.tcp_port = free_port()
        self.url = 'http://127.0.0.1:%d' % self.http_port
        d = self.dir
        with open(os.path.join(d, 'config.xml'), 'w') as f:
            f.write('''<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>%(d)s/server.log</log>
    <errorlog>%(d)s/error.log</errorlog><console>0</console></logger>
  <http_port>%(http)d</http_port>
  <tcp_port>%(tcp)d</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>%(d)s/data/</path>
  <tmp_path>%(d)s/tmp/</tmp_path>
  <user_files_path>%(d)s/user_files/</user_files_path>
  <format_schema_path>%(d)s/format_schemas/</format_schema_path>
  <users_config>%(d)s/users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
</yandex>
''' % {'d': d, 'http': self.http_port, 'tcp': self.tcp_port})
        with open(os.path.join(d, 'users.xml'), 'w') as f:
            f.write('''<?xml version="1.0"?>
<yandex>
  <profiles><default></default></profiles>
  <users>
    <default><password></password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></default>
    <dpmon><password>%s</password><networks><ip>127.0.0.1</ip></networks>
      <profile>default</profile><quota>default</quota></dpmon>
  </users>
  <quotas><default></default></quotas>
</yandex>
''' % self.PASSWORD)

    def start(self):
        self._spawn([find_binary(['clickhouse-server']),
                     '--config-file=' + os.path.join(self.dir, 'config.xml')])
        self._wait_ready(lambda: self.query('SELECT 1').strip() == '1')

    def query(self, sql):
        """The answer of `sql` as text (TSV); raises on an error answer."""
        req = urllib.request.Request(self.url + '/', data=sql.encode(), method='POST')
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.read().decode()
        except urllib.error.HTTPError as e:
            raise TestFailure('ClickHouse: %s\n-> %s' % (sql, e.read().decode()))

    def rows(self, sql):
        """The answer of `sql` as a list of lists of strings."""
        text = self.query(sql + ' FORMAT TSV')
        return [line.split('\t') for line in text.splitlines() if line]


class InfluxDB(_Server):
    """influxd 1.x with HTTP on a free loopback port, meta/data/wal in a
    temporary directory, no authentication."""
    label = 'influxdb'

    def __init__(self):
        super().__init__()
        self.http_port = free_port()
        self.bind_port = free_port()
        self.url = 'http://127.0.0.1:%d' % self.http_port
        d = self.dir
        with open(os.path.join(d, 'influxdb.conf'), 'w') as f:
            f.write('''reporting-disabled = true
bind-address = "127.0.0.1:%(bind)d"
[meta]
  dir = "%(d)s/meta"
[data]
  dir = "%(d)s/data"
  wal-dir = "%(d)s/wal"
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:%(http)d"
  log-enabled = false
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
''' % {'d': d, 'http': self.http_port, 'bind': self.bind_port})

    def start(self):
        self._spawn([find_binary(['influxd']), '-config', os.path.join(self.dir, 'influxdb.conf')])
        self._wait_ready(self._ping)

    def _ping(self):
        with urllib.request.urlopen(self.url + '/ping', timeout=5) as r:
            return r.status == 204

    def query(self, db, q):
        """InfluxQL `q` on database `db`: the 'series' of the first result."""
        url = '%s/query?%s' % (self.url, urllib.parse.urlencode({'db': db, 'q': q}))
        with urllib.request.urlopen(url, timeout=30) as r:
            doc = json.loads(r.read().decode())
        res = doc['results'][0]
        if 'error' in res:
            raise TestFailure('InfluxDB: %s -> %s' % (q, res['error']))
        return res.get('series', [])


class FakeHTTP:
    """A threaded HTTP server on a free loopback port; `handler(req)` gets
    each request (method, path, headers, body) and returns (status, text).
    Every request is kept in `requests`."""

    def __init__(self, handler):
        self.handler = handler
        self.requests = []
        self.lock = threading.Lock()
        outer = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = 'HTTP/1.1'

            def _any(self):
                n = int(self.headers.get('Content-Length') or 0)
                body = self.rfile.read(n) if n else b''
                req = {'method': self.command, 'path': self.path,
                       'headers': dict(self.headers), 'body': body}
                with outer.lock:
                    outer.requests.append(req)
                status, text = outer.handler(req)
                data = text.encode()
                self.send_response(status)
                self.send_header('Content-Length', str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _any

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = 'http://127.0.0.1:%d' % self.port
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        return False
