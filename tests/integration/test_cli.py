#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""dpmon's command line and life cycle (docs/operations.md): strict option
values, --duration honoured even when shorter than the merge interval, a
stop signal during start-up ends in a clean exit, and two configuration
entries naming the same DPDK port are refused at start-up.
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SUBNETS = [{'prefix': '10.0.0.0/24'}]


class Run:
    """dpmon with a null port, its own runtime prefix and temp dir."""

    def __init__(self, h, tag, config, app_args=(), vdevs=('net_null0',)):
        self.dir = tempfile.mkdtemp(prefix='dpmon-cli-%s-' % tag)
        self.prefix = 'dpmon-cli-%d-%s' % (os.getpid(), tag)
        cfg = os.path.join(self.dir, 'dpmon.json')
        with open(cfg, 'w') as f:
            json.dump(config, f)
        self.argv = [h.dpmon, '--no-huge', '-m', '256', '--no-pci', '--file-prefix',
                     self.prefix, '-l', '0-1']
        for v in vdevs:
            self.argv += ['--vdev', v]
        self.argv += ['--', '--config', cfg] + list(app_args)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        shutil.rmtree(self.dir, ignore_errors=True)
        shutil.rmtree('/var/run/dpdk/' + self.prefix, ignore_errors=True)
        return False

    def run(self, timeout=30):
        p = subprocess.run(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
        return p.returncode, (p.stdout + p.stderr).decode('utf-8', 'replace')


def config(**extra):
    c = {'ports': [{'device': 'net_null0'}], 'subnets': SUBNETS,
         'http': {'listen': '127.0.0.1', 'port': 0}}
    c.update(extra)
    return c


def test_bad_option_values(h):
    c = h.checker('option values')
    for tag, args in [('empty-port', ['--http-port', '']),
                      ('space-port', ['--http-port', ' 80']),
                      ('big-port', ['--http-port', '70000']),
                      ('neg-duration', ['--duration', '-1']),
                      ('word-duration', ['--duration', 'abc'])]:
        with Run(h, tag, config(), args) as r:
            rc, out = r.run()
            c.eq('%s: exit status' % tag, 2, rc)
            c.true('%s: the message names the option' % tag, args[0] in out, out[-2000:])
    c.done()


def test_duration_shorter_than_interval(h):
    c = h.checker('duration')
    with Run(h, 'duration', config(merge_interval_ms=10000), ['--duration', '1']) as r:
        t0 = time.monotonic()
        rc, out = r.run(timeout=30)
        took = time.monotonic() - t0
        c.eq('exit status', 0, rc)
        c.true('exits within 6 s of a 1 s --duration with a 10 s interval (took %.1f s)'
               % took, took < 6.0, out[-2000:])
    c.done()


def test_same_port_twice(h):
    c = h.checker('same port twice')
    cfg = config(ports=[{'device': 'net_null0'}, {'device': '0'}])
    with Run(h, 'sameport', cfg) as r:
        rc, out = r.run()
        c.eq('exit status', 3, rc)
        c.true('the message says both entries name one device',
               'same device' in out and "ports[1] '0'" in out, out[-2000:])
    c.done()


def test_stop_during_startup(h):
    c = h.checker('stop during start-up')
    for delay in (0.15, 0.3):
        with Run(h, 'early%d' % int(delay * 1000), config()) as r:
            p = subprocess.Popen(r.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
            time.sleep(delay)
            p.send_signal(signal.SIGTERM)
            try:
                out, _ = p.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                out, _ = p.communicate()
            c.eq('SIGTERM after %.2f s: exit status' % delay, 0, p.returncode)
            c.true('SIGTERM after %.2f s: runtime directory removed' % delay,
                   not os.path.exists('/var/run/dpdk/%s/mp_socket' % r.prefix),
                   out.decode('utf-8', 'replace')[-2000:])
    c.done()


if __name__ == '__main__':
    harness.main(globals())
