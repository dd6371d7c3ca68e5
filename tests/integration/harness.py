# SPDX-License-Identifier: BSD-3-Clause
"""Integration-test harness: runs the real dpmon on pcap files through DPDK's
pcap PMD, or on live frames through DPDK's af_packet PMD on a veth pair
(LiveLink), and reads its HTTP API.

Python 3 standard library only. Each test file does

    import harness
    def test_something(h):       # h: harness.Harness
        c = h.checker('label')
        with h.dpmon([pcap], subnets) as d:
            s = d.wait_counts(pkts)
            c.eq('subnet 10.0.0.0/24 ingress packets', 12, got)
            c.eq('exit status', 0, d.stop())
        c.done()
    if __name__ == '__main__':
        harness.main(globals())

and is run as `python3 tests/integration/test_x.py --build-dir B --source-dir S`.

Expected values come only from the third-party test data in
<source-dir>/../shared/testdata (or from dpmon-gen's summary), never from
dpmon's own output. A missing test data directory is a failure, not a skip.
"""

import argparse
import atexit
import ctypes
import ipaddress
import itertools
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.error
import urllib.request

# ---------------------------------------------------------------------------
# Failures and checks
# ---------------------------------------------------------------------------


class TestFailure(AssertionError):
    """A failed comparison or an unusable environment."""


class Checker:
    """Collects comparisons so that one run reports every mismatch.

    Every comparison prints one line: 'ok   ...' or 'FAIL ...' with the
    expected and the actual value. done() raises if any failed.
    """

    def __init__(self, label='', out=None):
        self.label = label
        self.failures = []
        self.n = 0
        self._out = out  # list to buffer lines (parallel jobs), or None

    def _print(self, line):
        if self._out is not None:
            self._out.append(line)
        else:
            print(line, flush=True)

    def _name(self, what):
        return '%s: %s' % (self.label, what) if self.label else what

    def note(self, text):
        self._print('     %s' % self._name(text))

    def eq(self, what, expected, got):
        self.n += 1
        if expected == got:
            self._print('ok   %s == %r' % (self._name(what), expected))
            return True
        msg = '%s: expected %r, got %r' % (self._name(what), expected, got)
        self._print('FAIL ' + msg)
        self.failures.append(msg)
        return False

    def true(self, what, cond, detail=''):
        self.n += 1
        if cond:
            self._print('ok   %s' % self._name(what))
            return True
        msg = '%s%s' % (self._name(what), (': ' + detail) if detail else '')
        self._print('FAIL ' + msg)
        self.failures.append(msg)
        return False

    def fail(self, msg):
        self.n += 1
        self._print('FAIL %s' % self._name(msg))
        self.failures.append(self._name(msg))

    def merge(self, other):
        self.n += other.n
        self.failures.extend(other.failures)

    def done(self):
        if self.failures:
            raise TestFailure('%d of %d comparisons failed:\n  %s' % (
                len(self.failures), self.n, '\n  '.join(self.failures)))


# ---------------------------------------------------------------------------
# Test data
# ---------------------------------------------------------------------------


def read_tsv(path):
    """Rows of a tab-separated file with a header line, as dicts."""
    with open(path, encoding='utf-8') as f:
        lines = [l.rstrip('\n') for l in f if l.strip()]
    head = lines[0].split('\t')
    rows = []
    for l in lines[1:]:
        cells = l.split('\t')
        if len(cells) != len(head):
            raise TestFailure('%s: row has %d cells, header %d: %r' % (
                path, len(cells), len(head), l[:80]))
        rows.append(dict(zip(head, cells)))
    return rows


def load_json(path):
    with open(path, encoding='utf-8') as f:
        return json.load(f)


def pcap_records(path):
    """(caplen, origlen) of every record of a classic pcap file.

    Independent of dpmon and of DPDK: reads the record headers only.
    """
    with open(path, 'rb') as f:
        data = f.read()
    magic = data[:4]
    if magic in (b'\xd4\xc3\xb2\xa1', b'\x4d\x3c\xb2\xa1'):
        endian = '<'
    elif magic in (b'\xa1\xb2\xc3\xd4', b'\xa1\xb2\x3c\x4d'):
        endian = '>'
    else:
        raise TestFailure('%s: not a classic pcap file (magic %s)' % (path, magic.hex()))
    off, recs = 24, []
    while off + 16 <= len(data):
        _, _, caplen, origlen = struct.unpack(endian + 'IIII', data[off:off + 16])
        recs.append((caplen, origlen))
        off += 16 + caplen
    if off != len(data):
        raise TestFailure('%s: trailing %d bytes after the last record' % (path, len(data) - off))
    return recs


def wait_pcap_records(path, n, timeout=30.0):
    """Wait until the capture file `path` (one dpmon writes) holds `n`
    complete records; a file not yet there or a record half flushed is
    waited on. Returns the records seen last ([] when none)."""
    deadline, recs = time.monotonic() + timeout, []
    while time.monotonic() < deadline:
        try:
            recs = pcap_records(path)
            if len(recs) == n:
                break
        except (FileNotFoundError, TestFailure):
            pass  # not yet written, or a record half flushed
        time.sleep(0.1)
    return recs


def in_any(addr, nets):
    a = ipaddress.ip_address(addr)
    return any(a.version == n.version and a in n for n in nets)


def canon_addr(text):
    return str(ipaddress.ip_address(text))


# ---------------------------------------------------------------------------
# API helpers
# ---------------------------------------------------------------------------

PROTOS = ('tcp', 'udp', 'icmp', 'other')
DIRS = ('ingress', 'egress')
TOTALS = ('ingress', 'egress', 'internal', 'external')


def counts_of(direction):
    """The packet/byte counters of a direction object (rates dropped)."""
    out = {'packets': direction['packets'], 'bytes': direction['bytes']}
    for p in PROTOS:
        out[p] = {'packets': direction[p]['packets'], 'bytes': direction[p]['bytes']}
    return out


def by_prefix(subnets_doc):
    return {s['prefix']: s for s in subnets_doc['subnets']}


def by_address(hosts_doc):
    return {h['address']: h for h in hosts_doc['hosts']}


# ---------------------------------------------------------------------------
# dpmon processes
# ---------------------------------------------------------------------------

_prefix_seq = itertools.count()
_live = set()
_live_lock = threading.Lock()
_stopping = False


def _kill_all_live():
    global _stopping
    with _live_lock:
        _stopping = True
        procs = list(_live)
    for p in procs:
        try:
            if p.poll() is None:
                p.kill()
                p.wait(timeout=10)
        except Exception:
            pass


atexit.register(_kill_all_live)


def _runtime_dir(prefix):
    """DPDK 22.11's runtime directory for a --file-prefix (eal_common_filesystem)."""
    if os.geteuid() == 0:
        base = '/var/run'
    else:
        base = os.environ.get('XDG_RUNTIME_DIR') or '/tmp'
    return os.path.join(base, 'dpdk', prefix)


PR_SET_PDEATHSIG = 1  # <sys/prctl.h>


def _die_with_parent():
    """In the child before exec: SIGKILL it when the test process dies."""
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


LCORES_ONE_WORKER = ['-l', '0-1']
# Same shape with the roles on the other CPU: for a second run in parallel.
LCORES_ONE_WORKER_ALT = ['--lcores', '0@1,1@0']
# Two workers on a two-CPU machine: lcore 2 shares CPU 1 with lcore 1.
LCORES_TWO_WORKERS = ['--lcores', '0@0,1@1,2@1']


class Dpmon:
    """One dpmon process on a net_pcap0 port with one RX queue per pcap, or,
    with `iface`, on a net_af_packet0 port with one RX queue reading that
    network interface (live traffic: see LiveLink)."""

    def __init__(self, h, pcaps, subnets, label, lcores=None, merge_interval_ms=200,
                 extra_config=None, rx_queues=None, vdev_args='', iface=None, env=None,
                 nofile=None):
        self.h = h
        # Variables added to dpmon's environment (DPMON_TEST_HOOKS, NOTIFY_SOCKET).
        self.env = dict(os.environ, **env) if env else None
        self.pcaps = list(pcaps)
        self.iface = iface
        # RLIMIT_NOFILE (soft and hard) for the dpmon process, or None.
        self.nofile = nofile
        if iface is not None and self.pcaps:
            raise TestFailure('%s: a dpmon reads pcaps or an interface, not both' % label)
        self.device = 'net_af_packet0' if iface is not None else 'net_pcap0'
        self.subnets = subnets
        self.label = label
        self.lcores = lcores or LCORES_ONE_WORKER
        self.prefix = 'dpmon-it-%d-%d' % (os.getpid(), next(_prefix_seq))
        self.dir = tempfile.mkdtemp(prefix=self.prefix + '-')
        self.config = {
            'ports': [{'device': self.device,
                       'rx_queues': rx_queues or max(1, len(self.pcaps))}],
            'subnets': [{'prefix': p, 'name': n} for p, n in subnets],
            'http': {'listen': '127.0.0.1', 'port': 0},
            'merge_interval_ms': merge_interval_ms,
        }
        if extra_config:
            self.config.update(extra_config)
        # Appended to the port's devargs (',infinite_rx=1'; ',framecnt=1024').
        self.vdev_args = vdev_args
        self.proc = None
        self.port = None
        self.rc = None

    # -- life cycle -------------------------------------------------------

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        try:
            if self.proc is not None and self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait(timeout=10)
            if exc_type is not None:
                self.h.log('--- %s: dpmon log tail (%s) ---\n%s' % (
                    self.label, self.dir, self.log_tail()))
        finally:
            with _live_lock:
                _live.discard(self.proc)
            for f in (getattr(self, 'stdout', None), getattr(self, 'stderr', None)):
                if f is not None:
                    f.close()
            shutil.rmtree(_runtime_dir(self.prefix), ignore_errors=True)
            shutil.rmtree(self.dir, ignore_errors=True)
        return False

    def start(self, timeout=20.0):
        for p in self.pcaps:
            if ',' in p:
                raise TestFailure('pcap path with a comma cannot be a devarg: %s' % p)
            if not os.path.isfile(p):
                raise TestFailure('missing pcap file %s' % p)
        cfg = os.path.join(self.dir, 'dpmon.json')
        with open(cfg, 'w') as f:
            json.dump(self.config, f)
        self.port_file = os.path.join(self.dir, 'port')
        if self.iface is not None:
            vdev = 'net_af_packet0,iface=' + self.iface + self.vdev_args
        else:
            vdev = 'net_pcap0' + ''.join(',rx_pcap=' + p for p in self.pcaps) + self.vdev_args
        self.argv = [self.h.dpmon, '--no-huge', '-m', '512', '--no-pci',
                     '--file-prefix', self.prefix] + list(self.lcores) + [
            '--vdev', vdev, '--', '--config', cfg, '--http-port-file', self.port_file]
        self.stdout = open(os.path.join(self.dir, 'stdout'), 'wb')
        self.stderr = open(os.path.join(self.dir, 'stderr'), 'wb')
        with _live_lock:
            if _stopping:
                raise TestFailure('%s: not started: the test run is stopping' % self.label)
            # A live dpmon dies with the test (PR_SET_PDEATHSIG), so that the
            # test's network namespace, and the veth pair in it, go away
            # even when the test process is killed outright.
            self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                         stdout=self.stdout, stderr=self.stderr, env=self.env,
                                         preexec_fn=self._preexec())
            _live.add(self.proc)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise TestFailure('%s: dpmon exited with %s before listening\n%s\n%s' % (
                    self.label, self.proc.returncode, ' '.join(self.argv), self.log_tail()))
            try:
                with open(self.port_file) as f:
                    text = f.read().strip()
                if text:
                    self.port = int(text)
                    return
            except FileNotFoundError:
                pass
            time.sleep(0.02)
        raise TestFailure('%s: dpmon did not write %s within %.0f s\n%s' % (
            self.label, self.port_file, timeout, self.log_tail()))

    def _preexec(self):
        """What the child runs before exec: the death signal (live links) and
        the descriptor limit, as asked."""
        if not self.iface and self.nofile is None:
            return None

        def run():
            if self.iface:
                _die_with_parent()
            if self.nofile is not None:
                import resource
                resource.setrlimit(resource.RLIMIT_NOFILE, (self.nofile, self.nofile))
        return run

    def stop(self, timeout=20.0):
        """SIGTERM, wait; return the exit status (killed and raised on a hang)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
                raise TestFailure('%s: dpmon did not exit within %.0f s of SIGTERM' % (
                    self.label, timeout))
        self.rc = self.proc.returncode
        self.stdout.close()
        self.stderr.close()
        return self.rc

    def log_tail(self, n=4000):
        out = []
        for name in ('stdout', 'stderr'):
            try:
                with open(os.path.join(self.dir, name), 'rb') as f:
                    data = f.read()
                out.append('[%s]\n%s' % (name, data[-n:].decode('utf-8', 'replace')))
            except OSError:
                pass
        return '\n'.join(out)

    # -- HTTP ---------------------------------------------------------------

    def request(self, path, method='GET', data=None, headers=None):
        """(status, headers, parsed JSON body or raw text) of one request.
        A method that may change state is sent with Content-Type:
        application/json unless @headers names another one."""
        url = 'http://127.0.0.1:%d%s' % (self.port, path)
        headers = dict(headers or {})
        if method not in ('GET', 'HEAD', 'OPTIONS') and not any(
                k.lower() == 'content-type' for k in headers):
            headers['Content-Type'] = 'application/json'
        req = urllib.request.Request(url, method=method, data=data, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                status, headers, body = r.status, r.headers, r.read()
        except urllib.error.HTTPError as e:
            status, headers, body = e.code, e.headers, e.read()
        try:
            doc = json.loads(body.decode('utf-8')) if body else None
        except ValueError:
            doc = body.decode('utf-8', 'replace')
        return status, headers, doc

    def telemetry_socket(self):
        """Path of this process's DPDK telemetry socket (SOCK_SEQPACKET)."""
        return os.path.join(_runtime_dir(self.prefix), 'dpdk_telemetry.v2')

    def get(self, path):
        status, _, doc = self.request(path)
        if status != 200:
            raise TestFailure('%s: GET %s answered %d: %r' % (self.label, path, status, doc))
        return doc

    def summary(self):
        return self.get('/api/v1/summary')

    def wait_counts(self, pkts, ibytes=None, ierrors=None, timeout=30.0, stall=3.0):
        """Wait until the snapshot has counted every packet, then return the
        summary of the snapshot after that (a counter of the last burst may
        land after the worker's packet counter was read by a merge).

        Done when ports[0].ipackets == pkts and sum(workers[].packets) == pkts
        (and ibytes / ierrors when given). If the values stop changing for
        `stall` seconds without matching (8 s at least while nothing at all
        has arrived), the summary of the next snapshot is returned and the
        caller's comparisons report the mismatch; after `timeout` it raises.
        """
        deadline = time.monotonic() + timeout
        last_key, last_change, s = None, time.monotonic(), None
        zero = (0, 0, 0, 0)
        while True:
            if self.proc.poll() is not None:
                raise TestFailure('%s: dpmon died (exit %s) while counting\n%s' % (
                    self.label, self.proc.returncode, self.log_tail()))
            status, _, doc = self.request('/api/v1/summary')
            now = time.monotonic()
            if status == 200:
                s = doc
                port = s['ports'][0]
                wsum = sum(w['packets'] for w in s['workers'])
                key = (port['ipackets'], port['ibytes'], port['ierrors'], wsum)
                if (port['ipackets'] == pkts and wsum == pkts and
                        (ibytes is None or port['ibytes'] == ibytes) and
                        (ierrors is None or port['ierrors'] == ierrors)):
                    return self._next_snapshot(s['snapshot_seq'], deadline)
                if key != last_key:
                    last_key, last_change = key, now
                elif now - last_change >= (max(stall, 8.0) if key == zero and pkts else stall):
                    self.h.log('%s: counts stalled at ipackets=%d ibytes=%d ierrors=%d '
                               'workers=%d (waiting for %d packets)'
                               % ((self.label,) + key + (pkts,)))
                    return self._next_snapshot(s['snapshot_seq'], deadline + 5)
            elif status != 503:
                raise TestFailure('%s: GET /api/v1/summary answered %d: %r' % (
                    self.label, status, doc))
            if now >= deadline:
                raise TestFailure('%s: timed out after %.0f s waiting for %d packets; '
                                  'last summary ports=%r workers=%r' % (
                                      self.label, timeout, pkts,
                                      s and s['ports'], s and s['workers']))
            time.sleep(0.05)

    def wait_received(self, pkts, timeout=10.0, settled=False):
        """Wait until dpmon has received and counted at least `pkts` frames:
        ports[0].ipackets >= pkts and sum(workers[].packets) >= pkts; return
        that summary, or with `settled` the one of the snapshot after it (in
        which every counter of those frames has landed, see wait_counts).
        For live traffic (LiveLink.send_paced), where more frames may be on
        their way. Raises after `timeout` seconds."""
        deadline = time.monotonic() + timeout
        s = None
        while True:
            if self.proc.poll() is not None:
                raise TestFailure('%s: dpmon died (exit %s) while receiving\n%s' % (
                    self.label, self.proc.returncode, self.log_tail()))
            status, _, doc = self.request('/api/v1/summary')
            if status == 200:
                s = doc
                if (s['ports'][0]['ipackets'] >= pkts and
                        sum(w['packets'] for w in s['workers']) >= pkts):
                    return self._next_snapshot(s['snapshot_seq'], deadline) if settled else s
            elif status != 503:
                raise TestFailure('%s: GET /api/v1/summary answered %d: %r' % (
                    self.label, status, doc))
            if time.monotonic() >= deadline:
                raise TestFailure('%s: timed out after %.0f s waiting to receive %d frames; '
                                  'last summary ports=%r workers=%r' % (
                                      self.label, timeout, pkts,
                                      s and s['ports'], s and s['workers']))
            time.sleep(0.02)

    def rss_kib(self, field='VmRSS'):
        """The dpmon process's resident set size, KiB: VmRSS of /proc/PID/status,
        or another of its fields in KiB (`field`: 'RssAnon', 'RssFile', ...)."""
        with open('/proc/%d/status' % self.proc.pid) as f:
            for line in f:
                if line.startswith(field + ':'):
                    return int(line.split()[1])
        raise TestFailure('%s: no %s in /proc/%d/status' % (self.label, field, self.proc.pid))

    def _next_snapshot(self, seq, deadline):
        while True:
            s = self.summary()
            if s['snapshot_seq'] > seq:
                return s
            if time.monotonic() >= deadline:
                raise TestFailure('%s: no snapshot after #%d' % (self.label, seq))
            time.sleep(0.05)


# ---------------------------------------------------------------------------
# Live traffic: a veth pair in a network namespace of the test's own
# ---------------------------------------------------------------------------

CLONE_NEWNET = 0x40000000  # <sched.h>
_netns_private = False
_links = set()
_links_lock = threading.Lock()


def enter_private_netns():
    """Move this process into a new network namespace of its own, with only
    `lo` (brought up, so dpmon's HTTP on 127.0.0.1 answers); idempotent.

    unshare(2) moves the calling thread, and every thread and child process
    it starts afterwards, so this is called from the main thread before any
    dpmon starts. Frames sent on interfaces created in there reach nothing
    outside it, and the kernel deletes those interfaces with the namespace
    when the process exits, however it exits. Needs root (CAP_SYS_ADMIN).
    """
    global _netns_private
    if _netns_private:
        return
    if threading.current_thread() is not threading.main_thread():
        raise TestFailure('enter_private_netns: call it from the main thread')
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise TestFailure('unshare(CLONE_NEWNET) failed: %s (live-traffic tests run as root)'
                          % os.strerror(err))
    _netns_private = True
    _ip('link', 'set', 'lo', 'up')


def _ip(*args):
    p = subprocess.run(['ip'] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=30)
    if p.returncode != 0:
        raise TestFailure('ip %s exited %d: %s' % (' '.join(args), p.returncode,
                                                 p.stderr.decode('utf-8', 'replace').strip()))
    return p.stdout.decode('utf-8', 'replace')


def _delete_links():
    with _links_lock:
        names = list(_links)
        _links.clear()
    for a in names:
        subprocess.run(['ip', 'link', 'del', a], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)


atexit.register(_delete_links)


def netdev_counters(ifname):
    """{rx_packets, rx_bytes, rx_dropped, tx_packets, tx_bytes, tx_dropped} of a
    network interface of this process's namespace, from /proc/net/dev (which,
    unlike /sys/class/net, shows the reading thread's namespace)."""
    with open('/proc/net/dev') as f:
        for line in f.readlines()[2:]:
            name, _, rest = line.partition(':')
            if name.strip() == ifname:
                v = [int(x) for x in rest.split()]
                return {'rx_bytes': v[0], 'rx_packets': v[1], 'rx_dropped': v[3],
                        'tx_bytes': v[8], 'tx_packets': v[9], 'tx_dropped': v[11]}
    raise TestFailure('no interface %s in /proc/net/dev' % ifname)


class LiveLink:
    """A veth pair for live traffic: dpmon reads end `a` through DPDK's
    af_packet PMD (h.dpmon_run([], subnets, label, iface=link.a)), and the
    test sends Ethernet frames on end `b` with an AF_PACKET socket (send,
    send_paced).

    The pair is created in the process's private network namespace
    (enter_private_netns) with names unique to the process. Both ends get
    IPv6 disabled before they go up and have no IPv4 address, so the kernel
    sends nothing of its own on them (no router or neighbour solicitation,
    no MLD report): every frame on the link is one of send()'s, which
    `sent` and `sent_bytes` count and counters() lets a test check on the
    kernel's side. The pair is deleted when the `with` block ends, at
    process exit (atexit) if that did not run, and by the kernel with the
    namespace in any case.

    A veth delivers a frame to its peer's per-CPU backlog (about 1 000
    frames, net.core.netdev_max_backlog) and the af_packet PMD reads it from
    a ring of `framecnt` frames (512 by default): send_paced sends in
    batches and waits for dpmon to have received each before the next, so
    neither overflows. send() may be called from several threads.
    """

    _seq = itertools.count()

    def __init__(self, h, label='live link'):
        self.h = h
        self.label = label
        n = next(self._seq)
        # IFNAMSIZ: at most 15 characters ('dpm' + pid <= 4194304 + '-' + n + 'a').
        self.a = 'dpm%d-%da' % (os.getpid(), n)
        self.b = 'dpm%d-%db' % (os.getpid(), n)
        self.sock = None
        self.sent = 0
        self.sent_bytes = 0
        self.lock = threading.Lock()

    def __enter__(self):
        enter_private_netns()
        with _links_lock:
            _links.add(self.a)
        try:
            _ip('link', 'add', self.a, 'type', 'veth', 'peer', 'name', self.b)
            for name in (self.a, self.b):
                with open('/proc/sys/net/ipv6/conf/%s/disable_ipv6' % name, 'w') as f:
                    f.write('1')
                _ip('link', 'set', name, 'up')
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)
            self.sock.bind((self.b, 0))
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        with _links_lock:
            _links.discard(self.a)
        subprocess.run(['ip', 'link', 'del', self.a], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=30)
        return False

    def send(self, frames):
        """Send each frame (bytes, a whole Ethernet frame without FCS) on end b."""
        with self.lock:
            for f in frames:
                if self.sock.send(f) != len(f):
                    raise TestFailure('%s: short send on %s' % (self.label, self.b))
                self.sent += 1
                self.sent_bytes += len(f)

    def send_paced(self, d, frames, batch=200, timeout=10.0):
        """Send `frames` in batches of at most `batch`; after each, wait until
        dpmon `d` has received every frame sent on the link so far (also the
        ones other threads sent). Returns the last summary seen."""
        frames = list(frames)
        s = None
        for i in range(0, len(frames), batch):
            self.send(frames[i:i + batch])
            s = d.wait_received(self.sent, timeout=timeout)
        return s

    def counters(self):
        """The kernel's counters of both ends: {'a': {...}, 'b': {...}} (netdev_counters)."""
        return {'a': netdev_counters(self.a), 'b': netdev_counters(self.b)}


def eth_ipv4(src, dst, proto=17, sport=4000, dport=5000, size=60, dmac=b'\x02\0\0\0\0\x01',
             smac=b'\x02\0\0\0\0\x02'):
    """An Ethernet frame of `size` bytes (FCS excluded) with an IPv4 header
    (checksum set, no options) and a UDP or TCP header (proto 17 or 6;
    checksum 0 for UDP, unset for TCP) or, for any other protocol, none.
    The MAC addresses are locally administered and not a veth's, so the
    kernel that receives the frame on a veth drops it as PACKET_OTHERHOST."""
    l4 = b''
    if proto == 17:
        l4 = struct.pack('!HHHH', sport, dport, size - 34, 0)
    elif proto == 6:
        l4 = struct.pack('!HHIIBBHHH', sport, dport, 1, 0, 0x50, 0x10, 65535, 0, 0)
    if size < 34 + len(l4):
        raise TestFailure('eth_ipv4: %d bytes is too short' % size)
    ip = bytearray(struct.pack('!BBHHHBBH4s4s', 0x45, 0, size - 14, 0, 0x4000, 64, proto, 0,
                               ipaddress.IPv4Address(src).packed,
                               ipaddress.IPv4Address(dst).packed))
    c = sum(struct.unpack('!10H', bytes(ip)))
    c = (c & 0xffff) + (c >> 16)
    c = (c & 0xffff) + (c >> 16)
    struct.pack_into('!H', ip, 10, ~c & 0xffff)
    frame = dmac + smac + b'\x08\x00' + bytes(ip) + l4
    return frame + bytes(size - len(frame))


def eth_ipv6(src, dst, proto=17, sport=4000, dport=5000, size=70, dmac=b'\x02\0\0\0\0\x01',
             smac=b'\x02\0\0\0\0\x02'):
    """An Ethernet frame of `size` bytes with an IPv6 header (no extension
    header) and a UDP header (checksum set) or, for another protocol, none.
    MAC addresses as eth_ipv4."""
    if size < 54 + (8 if proto == 17 else 0):
        raise TestFailure('eth_ipv6: %d bytes is too short' % size)
    s6, d6 = ipaddress.IPv6Address(src).packed, ipaddress.IPv6Address(dst).packed
    payload = bytes(size - 54)
    if proto == 17:
        n = size - 54
        udp = struct.pack('!HHHH', sport, dport, n, 0) + bytes(n - 8)
        pseudo = s6 + d6 + struct.pack('!IxxxB', n, 17) + udp + bytes(n % 2)
        c = sum(struct.unpack('!%dH' % (len(pseudo) // 2), pseudo))
        while c >> 16:
            c = (c & 0xffff) + (c >> 16)
        payload = udp[:6] + struct.pack('!H', (~c & 0xffff) or 0xffff) + udp[8:]
    ip = struct.pack('!IHBB16s16s', 6 << 28, size - 54, proto, 64, s6, d6)
    return dmac + smac + b'\x86\xdd' + ip + payload


# ---------------------------------------------------------------------------
# The harness object and the runner
# ---------------------------------------------------------------------------


class Harness:
    def __init__(self, source_dir, build_dir, testdata=None):
        self.source = os.path.abspath(source_dir)
        self.build = os.path.abspath(build_dir)
        self.testdata = os.path.abspath(testdata or os.path.join(
            self.source, '..', 'shared', 'testdata'))
        self.dpmon = os.path.join(self.build, 'app', 'dpmon')
        self.dpmon_gen = os.path.join(self.build, 'app', 'dpmon-gen')
        self._log_lock = threading.Lock()

    def check_environment(self):
        problems = []
        if not os.path.isdir(self.testdata):
            problems.append('shared test data not found at %s (expected <repo>/../shared/'
                            'testdata; the integration tests need it and do not skip)'
                            % self.testdata)
        else:
            for rel in ('README.md', 'MANIFEST.tsv', 'expected', 'pcaps'):
                if not os.path.exists(os.path.join(self.testdata, rel)):
                    problems.append('test data incomplete: %s missing'
                                    % os.path.join(self.testdata, rel))
        if not os.access(self.dpmon, os.X_OK):
            problems.append('dpmon binary not found at %s (build first)' % self.dpmon)
        if problems:
            raise TestFailure('\n'.join(problems))

    def td(self, *parts):
        return os.path.join(self.testdata, *parts)

    def log(self, text):
        with self._log_lock:
            print(text, flush=True)

    def checker(self, label='', out=None):
        return Checker(label, out)

    def dpmon_run(self, pcaps, subnets, label, **kw):
        return Dpmon(self, pcaps, subnets, label, **kw)

    def gen(self, tmp, name, args, timeout=120):
        """Write <tmp>/<name>.pcap with dpmon-gen and the options `args`
        (a list of strings); return (path, summary), the summary being
        dpmon-gen's --summary json output as a dict (docs/dpmon-gen.md).
        A failed run or a summary that is not JSON raises TestFailure
        naming `name`. `timeout` is in seconds."""
        out = os.path.join(tmp, name + '.pcap')
        argv = [self.dpmon_gen, '--output', out, '--summary', 'json'] + list(args)
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=timeout)
        if p.returncode != 0:
            raise TestFailure('%s: %s exited %d\n%s' % (
                name, ' '.join(argv), p.returncode, p.stderr.decode('utf-8', 'replace')))
        try:
            summary = json.loads(p.stdout.decode('utf-8'))
        except ValueError as e:
            raise TestFailure('%s: dpmon-gen --summary json is not JSON (%s): %r' % (
                name, e, p.stdout[:300]))
        return out, summary

    def manifest(self):
        rows = read_tsv(self.td('MANIFEST.tsv'))
        if not rows:
            raise TestFailure('MANIFEST.tsv has no rows')
        return rows


def run_parallel(jobs, workers=2):
    """Run callables jobs[i]() -> (lines, checker) on `workers` threads; print
    each job's lines as it finishes; return the list of checkers."""
    results = [None] * len(jobs)
    lock = threading.Lock()
    it = iter(enumerate(jobs))
    errors = []

    def worker():
        while not _stopping:
            with lock:
                try:
                    i, job = next(it)
                except StopIteration:
                    return
            try:
                lines, chk = job()
            except BaseException as e:  # noqa: B902 - reported, not swallowed
                chk = Checker('job %d' % i)
                lines = [traceback.format_exc()]
                chk.failures.append('job %d raised %s: %s' % (i, type(e).__name__, e))
                if not isinstance(e, Exception):
                    errors.append(e)
            results[i] = chk
            with lock:
                print('\n'.join(lines), flush=True)

    threads = [threading.Thread(target=worker, daemon=True) for _ in range(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


def _on_sigterm(signum, frame):
    raise KeyboardInterrupt('signal %d' % signum)


def main(namespace):
    """Parse --build-dir/--source-dir, run every test_* function of the
    calling module, print a summary line and exit 1 if any failed."""
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument('--source-dir', default=os.path.dirname(os.path.dirname(here)))
    ap.add_argument('--build-dir', default=None)
    ap.add_argument('--testdata', default=None,
                    help='default: <source-dir>/../shared/testdata')
    ap.add_argument('-k', dest='only', default=None, help='run tests whose name contains this')
    args = ap.parse_args()
    build = args.build_dir or os.path.join(args.source_dir, 'build')
    signal.signal(signal.SIGTERM, _on_sigterm)
    h = Harness(args.source_dir, build, args.testdata)
    tests = [(n, f) for n, f in sorted(namespace.items())
             if n.startswith('test_') and callable(f)]
    tests.sort(key=lambda nf: nf[1].__code__.co_firstlineno)
    if args.only:
        tests = [(n, f) for n, f in tests if args.only in n]
    passed, failed = 0, 0
    t_all = time.monotonic()
    try:
        h.check_environment()
    except TestFailure as e:
        print('FAIL environment: %s' % e, flush=True)
        print('0 passed, %d failed' % max(1, len(tests)), flush=True)
        sys.exit(1)
    for name, fn in tests:
        print('=== %s' % name, flush=True)
        t0 = time.monotonic()
        try:
            fn(h)
        except TestFailure as e:
            failed += 1
            print('--- FAIL %s (%.1f s)\n%s' % (name, time.monotonic() - t0, e), flush=True)
            continue
        except KeyboardInterrupt:
            _kill_all_live()
            print('--- INTERRUPTED %s' % name, flush=True)
            raise
        except Exception:
            failed += 1
            print('--- ERROR %s (%.1f s)\n%s' % (name, time.monotonic() - t0,
                                             traceback.format_exc()), flush=True)
            continue
        passed += 1
        print('--- PASS %s (%.1f s)' % (name, time.monotonic() - t0), flush=True)
    _kill_all_live()
    print('(%.1f s)' % (time.monotonic() - t_all))
    print('%d passed, %d failed' % (passed, failed), flush=True)
    sys.exit(1 if failed else 0)
