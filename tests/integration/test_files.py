#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Files that are not regular files never block dpmon (docs/configuration.md,
"Errors"; docs/operations.md, "Reloading the configuration").

A FIFO that nobody ever writes, in place of:
  - the configuration at start: dpmon exits at once (status 1) with
    `FILE: cannot read: not a regular file (FIFO)`;
  - the configuration on SIGHUP: the reload is refused, counted
    (config.reload_refusals, dpmon_config_reload_refusals_total) and shown
    in config.last_refusal with its reason, and the merges go on
    (snapshot_seq advances); a /dev/zero symlink is refused the same way,
    and a regular file afterwards is applied;
  - the configuration of `--check-config`: exit 1 with the same line, no hang;
  - the blackholes' state file: dpmon does not start, naming the key;
  - the temporary file of --http-port-file (written, not read): dpmon says
    it cannot write it and runs on, merging.
A refused reload of an 11 MiB file (65 536 subnets, the last one invalid)
frees what it built: dpmon's resident set grows by less than 16 MiB.
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
from harness import TestFailure  # noqa: E402

SUBNETS = [('141.142.228.0/24', 'a'), ('192.150.187.0/24', 'b')]
PCAP = ('pcaps', 'zeek', 'http-vlan-0.pcap')
# A refusal must come at once: far less than this, which only bounds a hang.
PROMPT_S = 5.0


def run_dpmon(h, args, timeout):
    """(exit status, stdout + stderr, seconds) of dpmon run with `args`;
    TestFailure when it does not end within `timeout` seconds."""
    t0 = time.monotonic()
    try:
        p = subprocess.run([h.dpmon] + args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise TestFailure('dpmon %s still running after %.0f s' % (' '.join(args), timeout))
    return (p.returncode, (p.stdout + p.stderr).decode('utf-8', 'replace'),
            time.monotonic() - t0)


def eal_args(h, prefix):
    return ['--no-huge', '-m', '512', '--no-pci', '--file-prefix', prefix, '-l', '0-1',
            '--vdev', 'net_pcap0,rx_pcap=' + h.td(*PCAP), '--']


def test_fifo_config_at_start(h):
    c = h.checker('FIFO configuration at start')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-files-') as tmp:
        fifo = os.path.join(tmp, 'dpmon.json')
        os.mkfifo(fifo)
        prefix = 'dpmon-it-files-%d' % os.getpid()
        try:
            rc, out, secs = run_dpmon(h, eal_args(h, prefix) + ['--config', fifo], 30)
        finally:
            shutil.rmtree(harness._runtime_dir(prefix), ignore_errors=True)
        c.eq('exit status (invalid configuration)', 1, rc)
        c.true('exits within %.0f s' % PROMPT_S, secs < PROMPT_S, '%.2f s' % secs)
        c.eq('the error line', ['%s: cannot read: not a regular file (FIFO)' % fifo],
             [x for x in out.splitlines() if x.startswith(fifo)])
    c.done()


def test_fifo_check_config(h):
    c = h.checker('FIFO for --check-config')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-files-') as tmp:
        fifo = os.path.join(tmp, 'dpmon.json')
        os.mkfifo(fifo)
        rc, out, secs = run_dpmon(h, ['--check-config', fifo], 30)
        c.eq('exit status', 1, rc)
        c.true('answers within %.0f s' % PROMPT_S, secs < PROMPT_S, '%.2f s' % secs)
        c.eq('output', '%s: cannot read: not a regular file (FIFO)\n' % fifo, out)
        rc, out, _ = run_dpmon(h, ['--check-config', '/dev/zero'], 30)
        c.eq('/dev/zero: exit status and output',
             (1, '/dev/zero: cannot read: not a regular file (character device)\n'), (rc, out))
    c.done()


def test_fifo_capture(h):
    c = h.checker('FIFO as an rx_pcap capture')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-files-') as tmp:
        cfg = os.path.join(tmp, 'dpmon.json')
        with open(cfg, 'w') as f:
            json.dump({'ports': [{'device': 'net_pcap0'}],
                       'subnets': [{'prefix': p, 'name': n} for p, n in SUBNETS]}, f)
        fifo = os.path.join(tmp, 'in.pcap')
        os.mkfifo(fifo)  # nobody writes it
        prefix = 'dpmon-it-files-cap-%d' % os.getpid()
        try:
            rc, out, secs = run_dpmon(h, [
                '--no-huge', '-m', '512', '--no-pci', '--file-prefix', prefix, '-l', '0-1',
                '--vdev', 'net_pcap0,rx_pcap=%s,infinite_rx=1' % fifo, '--', '--config', cfg], 30)
        finally:
            shutil.rmtree(harness._runtime_dir(prefix), ignore_errors=True)
        c.eq('exit status (could not start)', 3, rc)
        c.true('exits within %.0f s' % PROMPT_S, secs < PROMPT_S, '%.2f s' % secs)
        c.eq('the error line',
             ['dpmon: --vdev: rx_pcap=%s: not a regular file (FIFO)' % fifo],
             [x for x in out.splitlines() if 'rx_pcap=' in x])
    c.done()


def wait_refusals(d, n, timeout=10.0):
    """The summary once config.reload_refusals == n."""
    deadline = time.monotonic() + timeout
    while True:
        s = d.summary()
        if s['config']['reload_refusals'] == n:
            return s
        if time.monotonic() >= deadline:
            raise TestFailure('%s: config %r after %.0f s, waiting for %d refusals' % (
                d.label, s['config'], timeout, n))
        time.sleep(0.05)


def wait_seq(d, seq, timeout=10.0):
    """The summary once snapshot_seq >= seq; TestFailure if the merges stall."""
    deadline = time.monotonic() + timeout
    while True:
        s = d.summary()
        if s['snapshot_seq'] >= seq:
            return s
        if time.monotonic() >= deadline:
            raise TestFailure('%s: snapshot_seq %d after %.0f s, waiting for %d' % (
                d.label, s['snapshot_seq'], timeout, seq))
        time.sleep(0.05)


def metric(d, name):
    _, _, text = d.request('/metrics')
    for line in text.splitlines():
        if line.startswith(name + ' '):
            return line.split(' ', 1)[1]
    raise TestFailure('/metrics has no sample %s' % name)


def stderr_text(d):
    with open(os.path.join(d.dir, 'stderr'), 'rb') as f:
        return f.read().decode('utf-8', 'replace')


def test_fifo_config_on_sighup(h):
    c = h.checker('FIFO configuration on SIGHUP')
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'fifo reload', merge_interval_ms=200) as d:
        d.wait_counts(14)
        path = os.path.join(d.dir, 'dpmon.json')
        regular = path + '.regular'
        os.rename(path, regular)
        os.mkfifo(path)  # nobody ever opens it for writing
        seq0 = d.summary()['snapshot_seq']
        d.proc.send_signal(signal.SIGHUP)
        s = wait_refusals(d, 1)
        c.true('dpmon still running', d.proc.poll() is None)
        cf = s['config']
        c.eq('reloads, failures, refusals, last ok', (0, 1, 1, False),
             (cf['reloads'], cf['reload_failures'], cf['reload_refusals'], cf['last_reload_ok']))
        c.eq('last_refusal', {'unix_s': cf['last_reload_unix_s'], 'file': path, 'errors': 1,
                              'reason': 'cannot read: not a regular file (FIFO)'},
             cf['last_refusal'])
        # The merges go on: 5 more snapshots (1 s at 200 ms) well within 10 s.
        s = wait_seq(d, s['snapshot_seq'] + 5)
        c.true('snapshot_seq advanced past the SIGHUP', s['snapshot_seq'] > seq0 + 5,
               '%d -> %d' % (seq0, s['snapshot_seq']))
        c.eq('subnets kept', [p for p, _ in SUBNETS],
             [x['prefix'] for x in d.get('/api/v1/subnets')['subnets']])
        c.eq('/metrics: dpmon_config_reload_refusals_total', '1',
             metric(d, 'dpmon_config_reload_refusals_total'))
        err = stderr_text(d)
        c.true('logged: refused, the file and the reason',
               ('reload of %s refused, the running configuration stays:' % path) in err and
               ('%s: cannot read: not a regular file (FIFO)' % path) in err, err[-600:])
        # A symlink to /dev/zero: refused too, never read.
        os.unlink(path)
        os.symlink('/dev/zero', path)
        d.proc.send_signal(signal.SIGHUP)
        s = wait_refusals(d, 2)
        c.eq('/dev/zero: last_refusal reason',
             'cannot read: not a regular file (character device)',
             s['config']['last_refusal']['reason'])
        wait_seq(d, s['snapshot_seq'] + 2)
        # A regular file again: applied; the last refusal stays shown.
        os.unlink(path)
        os.rename(regular, path)
        d.proc.send_signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while d.summary()['config']['reloads'] != 1:
            if time.monotonic() >= deadline:
                raise TestFailure('the regular file was not reloaded: %r' % d.summary()['config'])
            time.sleep(0.05)
        cf = d.summary()['config']
        c.eq('after a good reload: reloads, failures, refusals, last ok', (1, 2, 2, True),
             (cf['reloads'], cf['reload_failures'], cf['reload_refusals'], cf['last_reload_ok']))
        c.eq('the last refusal is still shown', 'cannot read: not a regular file (character '
             'device)', cf['last_refusal']['reason'])
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


def test_fifo_state_file(h):
    c = h.checker('FIFO state file')
    work = tempfile.mkdtemp(prefix='dpmon-it-files-')
    try:
        state = os.path.join(work, 'state.json')
        os.mkfifo(state)
        d = h.dpmon_run([h.td(*PCAP)], SUBNETS, 'fifo state file',
                        extra_config={'actions': {'state_file': state}})
        t0 = time.monotonic()
        try:
            d.start(timeout=30)
            c.fail('dpmon started with a FIFO as its state file')
        except TestFailure as e:
            c.true('refused within %.0f s' % PROMPT_S, time.monotonic() - t0 < PROMPT_S)
            c.true('the error names the key and the file',
                   '$.actions.state_file: "%s" exists and is not a regular file' % state
                   in str(e), str(e)[-600:])
        finally:
            d.__exit__(None, None, None)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


def test_fifo_port_file(h):
    c = h.checker('FIFO as the port file\'s temporary')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-files-') as tmp:
        cfg = os.path.join(tmp, 'dpmon.json')
        with open(cfg, 'w') as f:
            json.dump({'ports': [{'device': 'net_pcap0'}],
                       'subnets': [{'prefix': p, 'name': n} for p, n in SUBNETS],
                       'http': {'listen': '127.0.0.1', 'port': 0},
                       'merge_interval_ms': 200}, f)
        port_file = os.path.join(tmp, 'port')
        os.mkfifo(port_file + '.tmp')  # nobody reads it
        prefix = 'dpmon-it-files-port-%d' % os.getpid()
        out_path, err_path = os.path.join(tmp, 'stdout'), os.path.join(tmp, 'stderr')
        with open(out_path, 'wb') as out, open(err_path, 'wb') as err:
            proc = subprocess.Popen([h.dpmon] + eal_args(h, prefix) + [
                '--config', cfg, '--http-port-file', port_file],
                stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        try:
            deadline, port = time.monotonic() + 30, None
            while port is None:
                with open(out_path) as f:
                    for line in f:
                        if 'API at http://127.0.0.1:' in line:
                            port = int(line.split('127.0.0.1:')[1].split('/')[0])
                if proc.poll() is not None or time.monotonic() >= deadline:
                    raise TestFailure('dpmon did not announce its API (status %r)' % proc.poll())
                time.sleep(0.05)
            d = harness.Dpmon(h, [], [], 'port file')
            d.port = port
            shutil.rmtree(d.dir, ignore_errors=True)
            while d.request('/api/v1/summary')[0] != 200:  # 503 until the first merge
                if time.monotonic() >= deadline:
                    raise TestFailure('no snapshot within 30 s')
                time.sleep(0.05)
            s = wait_seq(d, 5)
            c.true('merges go on', s['snapshot_seq'] >= 5, str(s['snapshot_seq']))
            with open(err_path) as f:
                text = f.read()
            c.true('the error names the file',
                   'dpmon: cannot write %s: its temporary file exists and is not a regular '
                   'file\n' % port_file in text, text[-600:])
            c.true('no port file written', not os.path.exists(port_file))
            proc.send_signal(signal.SIGTERM)
            c.eq('dpmon exit status after SIGTERM', 0, proc.wait(timeout=20))
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=10)
            shutil.rmtree(harness._runtime_dir(prefix), ignore_errors=True)
    c.done()


def big_config(d, n=65536):
    """dpmon's configuration with n subnets (names and thresholds: about
    11 MiB), the last one invalid (host bits set): refused after every
    subnet was read."""
    cfg = dict(d.config)
    th = {'ingress': {'pps': 100000, 'bps': 1000000000, 'udp_pps': 50000},
          'egress': {'pps': 200000}}
    subs = [{'prefix': '10.%d.%d.0/24' % (i >> 8, i & 255), 'name': 'customer-%05d' % i,
             'thresholds': th} for i in range(n - 1)]
    subs.append({'prefix': '11.0.0.1/24', 'name': 'bad'})
    cfg['subnets'] = subs
    return json.dumps(cfg)


def test_refused_big_reload_frees(h):
    c = h.checker('refused 11 MiB reload')
    with h.dpmon_run([h.td(*PCAP)], SUBNETS, 'big refusal', merge_interval_ms=200) as d:
        d.wait_counts(14)
        path = os.path.join(d.dir, 'dpmon.json')
        text = big_config(d)
        with open(path + '.tmp', 'w') as f:
            f.write(text)
        os.rename(path + '.tmp', path)
        wait_seq(d, d.summary()['snapshot_seq'] + 3)
        before = d.rss_kib()
        d.proc.send_signal(signal.SIGHUP)
        s = wait_refusals(d, 1, timeout=60)
        c.eq('refused with one error, the last subnet',
             (1, '$.subnets[65535].prefix: host bits set (address is not the network address '
                 'of the prefix), got "11.0.0.1/24"'),
             (s['config']['last_refusal']['errors'], s['config']['last_refusal']['reason']))
        wait_seq(d, s['snapshot_seq'] + 3)
        after = d.rss_kib()
        h.log('refused reload of %d bytes: VmRSS %d KiB before, %d KiB after (%+d KiB)' % (
            len(text), before, after, after - before))
        c.true('file of 10..12 MiB', 10 << 20 <= len(text) <= 12 << 20, str(len(text)))
        c.true('VmRSS grew by less than 16 MiB', after - before < 16 * 1024,
               '%d -> %d KiB' % (before, after))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
