#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""scripts/quickstart.sh's steps, run in a copy of the script's tree with
stubs for deps.sh, meson, ninja, dpmon-gen and dpmon (no apt, no build):
one line per step, only dpmon, dpmon-gen and dpmonctl built, the hints at
the port dpmon really uses (--http-port), the arguments passed on to
dpmon, and a failed step that prints its log's end.
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

STUB = '#!/bin/sh\necho "%s $*" >>"$QS_CALLS"\n%s\n'


def tree(h, tmp, ninja_rc=0):
    """A copy of quickstart.sh with stubs; return (root, env, calls file)."""
    root = os.path.join(tmp, 'src')
    for d in ('scripts', 'bin', 'build/app'):
        os.makedirs(os.path.join(root, d))
    shutil.copy(os.path.join(h.source, 'scripts', 'quickstart.sh'), os.path.join(root, 'scripts'))
    calls = os.path.join(tmp, 'calls')
    stubs = {'scripts/deps.sh': STUB % ('deps.sh', ''),
             'bin/meson': STUB % ('meson', 'echo meson says a lot'),
             'bin/ninja': STUB % ('ninja', 'echo ninja says a lot; echo the error; exit %d'
                                  % ninja_rc),
             'build/app/dpmon-gen': STUB % ('dpmon-gen', ''),
             'build/app/dpmon': STUB % ('dpmon', '')}
    for rel, text in stubs.items():
        p = os.path.join(root, rel)
        with open(p, 'w') as f:
            f.write(text)
        os.chmod(p, 0o755)
    env = dict(os.environ, PATH=os.path.join(root, 'bin') + ':' + os.environ['PATH'],
               QS_CALLS=calls)
    return root, env, calls


def run(root, env, *args):
    p = subprocess.run(['bash', os.path.join(root, 'scripts', 'quickstart.sh')] + list(args),
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=env, timeout=60)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def test_quickstart_steps(h):
    c = h.checker('quickstart.sh')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-quickstart-') as tmp:
        root, env, calls = tree(h, tmp)
        rc, out, err = run(root, env, '--http-port', '8083')
        c.eq('exit status', 0, rc)
        c.eq('stdout: one line per step, hints at port 8083', [
            'quickstart: installing packages (those missing)',
            'quickstart: configuring (meson setup build)',
            'quickstart: building dpmon, dpmon-gen and dpmonctl (a few minutes)',
            'quickstart: generating run/default.pcap with dpmon-gen',
            '',
            'Query it from another terminal, e.g.:',
            '  build/app/dpmonctl --url http://127.0.0.1:8083 summary',
            '  curl -s http://127.0.0.1:8083/api/v1/summary',
            '  curl -s http://127.0.0.1:8083/api/v1/subnets',
            "  curl -s 'http://127.0.0.1:8083/api/v1/hosts?sort=bps&direction=ingress&limit=10'",
            '  curl -s http://127.0.0.1:8083/api/v1/hosts/10.0.0.1',
            '  curl -s http://127.0.0.1:8083/metrics',
            'or open the dashboard at http://127.0.0.1:8083/',
            '',
            'quickstart: starting dpmon (Ctrl-C stops it)'], out.splitlines())
        c.eq('stderr: empty', '', err)
        with open(calls) as f:
            c.eq('commands: only the three programs built, the arguments passed on', [
                'deps.sh --build',
                'meson setup build --buildtype=release',
                'ninja -C build app/dpmon app/dpmon-gen app/dpmonctl',
                'dpmon-gen --output run/default.pcap --packets 50000 --seed 1 --summary text',
                'dpmon --no-huge -m 1024 --no-pci --file-prefix dpmon-quickstart -l 0-1 '
                '--vdev net_pcap0,rx_pcap=run/default.pcap,infinite_rx=1 -- --config '
                'config/dpmon.json --http-port 8083'],
                f.read().splitlines())
        rc, out, err = run(root, env, '--http-port=9000')
        c.true('--http-port=N: hints at that port',
               'or open the dashboard at http://127.0.0.1:9000/' in out, out)
        rc, out, err = run(root, env)
        c.true('no --http-port: the configuration\'s 8080',
               'or open the dashboard at http://127.0.0.1:8080/' in out, out)

    with tempfile.TemporaryDirectory(prefix='dpmon-it-quickstart-') as tmp:
        root, env, calls = tree(h, tmp, ninja_rc=1)
        rc, out, err = run(root, env)
        c.eq('a failed build: status 1, the steps so far', (1, [
            'quickstart: installing packages (those missing)',
            'quickstart: configuring (meson setup build)',
            'quickstart: building dpmon, dpmon-gen and dpmonctl (a few minutes)']),
            (rc, out.splitlines()))
        c.eq('a failed build: the log\'s end on stderr', [
            'quickstart: building dpmon, dpmon-gen and dpmonctl (a few minutes) failed; '
            'the last lines of run/quickstart.log:',
            'meson says a lot', 'ninja says a lot', 'the error'], err.splitlines())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
