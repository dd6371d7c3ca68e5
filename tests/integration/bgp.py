# SPDX-License-Identifier: BSD-3-Clause
"""A real BGP chain on loopback for the FlowSpec and blackhole tests:
Debian's gobgpd listening on 127.0.0.1 at a free high port, and Debian's
exabgp (4.2.21) on 127.0.0.2 connecting to it, with a process that reads
a FIFO through socat (as docs/detection.md, "ExaBGP", configures it for
dpmon's exabgp_pipe). Both run as user processes in a temporary
directory and are stopped by the context managers.

GoBgp.rib(family) reads the peer's table with `gobgp global rib -a
FAMILY -j`: a dict from GoBGP's own text of each route (for FlowSpec,
'[destination: 10.0.0.5/32][protocol: ==udp]...') to its paths.
"""
import json
import os
import signal
import subprocess
import time

from harness import TestFailure
from servers import _Server, find_binary, free_port


def wait_for(what, fn, timeout=60.0):
    """`fn()` once it is true, polled every 0.3 s for at most `timeout` s;
    its last value otherwise (`what` names the wait for the reader)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = fn()
        if v:
            return v
        time.sleep(0.3)
    return fn()


def open_writer(fifo):
    """A non-blocking write descriptor of `fifo`, or None while it has no reader."""
    try:
        return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
    except OSError:
        return None

GOBGP_AS = 65000
EXABGP_AS = 65001


def _children(pid):
    """The process ids whose parent is `pid` (from /proc)."""
    out = []
    for name in os.listdir('/proc'):
        if not name.isdigit():
            continue
        try:
            with open('/proc/%s/stat' % name) as f:
                stat = f.read()
        except OSError:
            continue
        if int(stat[stat.rindex(')') + 2:].split()[1]) == pid:
            out.append(int(name))
    return out


class _Proc(_Server):
    """A daemon in a process group of its own; its children (ExaBGP puts
    its API processes, the socat reading the FIFO, in sessions of their
    own) are stopped with it, as a service manager stops a unit."""
    label = 'bgp'

    def _spawn(self, argv, env=None):
        self.log = open(os.path.join(self.dir, 'console.log'), 'ab')
        self.proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True)

    def stop(self):
        """SIGTERM to the process group and the children, then SIGKILL to what is left."""
        kids = _children(self.proc.pid) if self.proc is not None else []
        for k in kids:
            try:
                os.kill(k, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                pass
        if self.proc is not None:
            for k in kids:
                try:
                    os.kill(k, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        super().stop()


class GoBgp(_Proc):
    """gobgpd on 127.0.0.1:port, peering with ExaBGP on 127.0.0.2."""
    label = 'gobgpd'

    def __init__(self):
        super().__init__()
        self.port = free_port()
        self.api = free_port()
        self.gobgpd = find_binary(['gobgpd'])
        self.gobgp = find_binary(['gobgp'])
        families = ['ipv4-unicast', 'ipv6-unicast', 'ipv4-flowspec', 'ipv6-flowspec']
        conf = ['[global.config]', '  as = %d' % GOBGP_AS, '  router-id = "127.0.0.1"',
                '  port = %d' % self.port, '  local-address-list = ["127.0.0.1"]',
                '[[neighbors]]', '  [neighbors.config]',
                '    neighbor-address = "127.0.0.2"', '    peer-as = %d' % EXABGP_AS]
        for f in families:
            conf += ['  [[neighbors.afi-safis]]', '    [neighbors.afi-safis.config]',
                     '      afi-safi-name = "%s"' % f]
        self.conf = os.path.join(self.dir, 'gobgpd.toml')
        with open(self.conf, 'w') as f:
            f.write('\n'.join(conf) + '\n')

    def start(self):
        self._spawn([self.gobgpd, '-f', self.conf, '--api-hosts', '127.0.0.1:%d' % self.api,
                     '-l', 'info'])
        self._wait_ready(lambda: self._cli(['global'], check=False).returncode == 0, 30.0)

    def _cli(self, args, check=True):
        p = subprocess.run([self.gobgp, '-u', '127.0.0.1', '-p', str(self.api)] + args,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=30)
        if check and p.returncode != 0:
            raise TestFailure('gobgp %s: %s' % (' '.join(args), p.stderr.decode()))
        return p

    def established(self):
        out = json.loads(self._cli(['neighbor', '-j']).stdout.decode() or '[]')
        return any(n.get('state', {}).get('session_state') == 6 or
                   n.get('state', {}).get('session_state') == 'established' for n in out)

    def wait_established(self, timeout=60.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.established():
                return
            time.sleep(0.3)
        raise TestFailure('ExaBGP never established its session with gobgpd:\n%s'
                          % self.console_tail()[-3000:])

    def rib(self, family):
        """The routes of `family` ('ipv4-flowspec', 'ipv6-flowspec', 'ipv4'):
        {GoBGP's text of the route: [paths]}."""
        out = self._cli(['global', 'rib', '-a', family, '-j']).stdout.decode().strip()
        return json.loads(out) if out and out != 'null' else {}

    def wait_rib(self, family, want, timeout=30.0):
        """Poll until the set of route texts of `family` is `want`; return the last set."""
        deadline = time.monotonic() + timeout
        got = set()
        while time.monotonic() < deadline:
            got = set(self.rib(family))
            if got == want:
                break
            time.sleep(0.3)
        return got


class ExaBgp(_Proc):
    """exabgp on 127.0.0.2 connecting to `peer` (a GoBgp), whose process is
    `socat -u PIPE:fifo STDOUT`: the lines written to the FIFO are its API
    commands."""
    label = 'exabgp'

    def __init__(self, peer, fifo):
        super().__init__()
        self.exabgp = find_binary(['exabgp'])
        socat = find_binary(['socat'])
        self.fifo = fifo
        conf = '''process dpmon {
    run %s -u PIPE:%s STDOUT;
    encoder text;
}
neighbor 127.0.0.1 {
    router-id 127.0.0.2;
    local-address 127.0.0.2;
    local-as %d;
    peer-as %d;
    connect %d;
    family { ipv4 unicast; ipv6 unicast; ipv4 flow; ipv6 flow; }
    api { processes [ dpmon ]; }
}
''' % (socat, fifo, EXABGP_AS, GOBGP_AS, peer.port)
        self.conf = os.path.join(self.dir, 'exabgp.conf')
        with open(self.conf, 'w') as f:
            f.write(conf)

    def start(self):
        env = dict(os.environ)
        env.update({'exabgp.daemon.drop': 'false',
                    'exabgp.log.destination': 'stdout', 'exabgp.api.cli': 'false',
                    'exabgp.tcp.bind': '', 'exabgp.log.level': 'INFO'})
        self._spawn([self.exabgp, '-d', self.conf], env=env)
