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
  - the old fixed temporary of --http-port-file (FILE.tmp): never opened,
    the port file is written.
Files dpmon writes (file_write.h) are never written through a link
planted at the target or at FILE.tmp, and have their modes: port file and
state file 0600, capture files 0640.
A credential file (export.clickhouse.password_file, export.influxdb.
token_file) that is a FIFO, a directory, /dev/zero, a 50 MB line, empty,
or a password without a user: refused at --check-config, at the start
and on SIGHUP, at once, with the JSON path, the file and the reason; the
merges and /health go on, and SIGTERM still stops dpmon.
A refused reload of an 11 MiB file (65 536 subnets, the last one invalid)
frees what it built: dpmon's resident set grows by less than 16 MiB.
"""
import json
import os
import shutil
import signal
import stat
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


def mode(path):
    """The permission bits of `path` itself (a link is not followed)."""
    return oct(os.lstat(path).st_mode & 0o7777)


def test_written_files_planted(h):
    """Links and a FIFO planted where dpmon writes are never written through:
    the port file's old fixed temporary (port.tmp) a link to a victim, the
    port file itself a link to another; the port file (0600), the state
    file (0600) and a capture file (0640) are regular files of their own
    with those modes, whatever the umask of the test process."""
    c = h.checker('written files: planted links, modes')
    tmp = tempfile.mkdtemp(prefix='dpmon-it-files-written-')
    old_umask = os.umask(0o022)
    try:
        pcap_dir, state = os.path.join(tmp, 'captures'), os.path.join(tmp, 'state.json')
        os.mkdir(pcap_dir)
        victim, victim2 = os.path.join(tmp, 'victim'), os.path.join(tmp, 'victim2')
        with open(victim, 'w') as f:
            f.write('precious\n')
        open(victim2, 'w').close()  # empty: what the harness reads while waiting
        # A flood to 10.0.0.5 above 4000 pps: alert 1 and its capture file.
        flood, _ = h.gen(tmp, 'in5', ['--subnet', '10.0.0.4/30', '--egress-percent', '0',
                                      '--hosts', '1', '--packets', '40000', '--mix', 'udp=1'])
        cfg = {'average_time_constant_ms': 1000,
               'detection': {'thresholds': {'ingress': {'pps': 4000}}},
               'actions': {'pcap_dir': pcap_dir, 'pcap_packets': 10, 'state_file': state}}
        d = h.dpmon_run([flood], [('10.0.0.0/24', 'lan')], 'planted links', extra_config=cfg,
                        vdev_args=',infinite_rx=1')
        port_file = os.path.join(d.dir, 'port')
        os.symlink(victim, port_file + '.tmp')
        os.symlink(victim2, port_file)
        with d:
            c.eq('the victim behind port.tmp is unchanged', 'precious\n', open(victim).read())
            c.eq('the victim behind the port file is unchanged', '', open(victim2).read())
            c.true('the port file is a regular file now', os.path.isfile(port_file) and
                   not os.path.islink(port_file))
            c.eq('the port file holds the port', '%d\n' % d.port, open(port_file).read())
            c.eq('port file mode', oct(0o600), mode(port_file))
            c.true('port.tmp is still the planted link', os.path.islink(port_file + '.tmp'))
            status, _, _ = d.request('/api/v1/blackholes', 'POST', b'{"address": "10.0.0.6"}')
            c.eq('POST blackhole', 201, status)
            deadline = time.monotonic() + 20
            while not os.path.exists(state) and time.monotonic() < deadline:
                time.sleep(0.05)
            c.eq('state file mode', oct(0o600), mode(state))
            path = os.path.join(pcap_dir, '1.pcap')
            c.eq('capture file records', 10, len(harness.wait_pcap_records(path, 10)))
            c.eq('capture file mode', oct(0o640), mode(path))
            c.eq('no temporary left in the capture directory', ['1.pcap'],
                 sorted(os.listdir(pcap_dir)))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
        c.eq('no temporary left beside the state file',
             ['captures', 'in5.pcap', 'state.json', 'victim', 'victim2'], sorted(os.listdir(tmp)))
    finally:
        os.umask(old_umask)
        shutil.rmtree(tmp, ignore_errors=True)
    c.done()


def test_fifo_port_tmp(h):
    """A FIFO nobody reads at the port file's old fixed temporary: dpmon
    neither opens nor waits on it, and writes the port file."""
    c = h.checker('FIFO at port.tmp')
    d = h.dpmon_run([h.td(*PCAP)], SUBNETS, 'fifo port.tmp')
    port_file = os.path.join(d.dir, 'port')
    os.mkfifo(port_file + '.tmp')
    t0 = time.monotonic()
    with d:
        c.true('the port file within %.0f s' % PROMPT_S, time.monotonic() - t0 < PROMPT_S,
               '%.2f s' % (time.monotonic() - t0))
        c.eq('the port file holds the port', '%d\n' % d.port, open(port_file).read())
        c.true('port.tmp is still the FIFO', stat.S_ISFIFO(os.lstat(port_file + '.tmp').st_mode))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


# ---------------------------------------------------------------------------
# Credentials: export.*.password_file, export.influxdb.token_file.

MIB50 = 50 << 20


def bad_secrets(tmp):
    """(label, export section, expected error after the config file's name)
    for each credential file dpmon must refuse: a FIFO nobody writes, a
    directory, /dev/zero, a 50 MB line, an empty file, no user."""
    fifo, big, empty = (os.path.join(tmp, n) for n in ('fifo', 'big', 'empty'))
    if not os.path.exists(fifo):
        os.mkfifo(fifo)
        with open(big, 'wb') as f:
            f.write(b'x' * MIB50 + b'\n')
        open(empty, 'w').close()
    good = os.path.join(tmp, 'pw')
    with open(good, 'w') as f:
        f.write('s3cret\n')

    def ch(pw, user='dpmon'):
        sec = {'url': 'http://127.0.0.1:9/', 'password_file': pw}
        if user:
            sec['user'] = user
        return {'clickhouse': sec}
    pre = '$.export.clickhouse.password_file: '
    return [
        ('FIFO', ch(fifo), pre + 'cannot read "%s": not a regular file (FIFO)' % fifo),
        ('directory', ch(tmp), pre + 'cannot read "%s": Is a directory' % tmp),
        ('/dev/zero', ch('/dev/zero'),
         pre + 'cannot read "/dev/zero": not a regular file (character device)'),
        ('50 MB line', ch(big), pre + 'cannot read "%s": longer than 511 bytes' % big),
        ('empty', ch(empty), pre + 'cannot read "%s": empty' % empty),
        ('no user', ch(good, user=None),
         pre + 'a password needs "user" (HTTP basic authentication sends both)'),
        ('InfluxDB token FIFO', {'influxdb': {'url': 'http://127.0.0.1:9/', 'org': 'o',
                                              'bucket': 'b', 'token_file': fifo}},
         '$.export.influxdb.token_file: cannot read "%s": not a regular file (FIFO)' % fifo),
    ]


def test_secrets_check_config(h):
    c = h.checker('bad credential files at --check-config and at start')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-files-secrets-') as tmp:
        base = {'ports': [{'device': 'net_pcap0'}],
                'subnets': [{'prefix': p, 'name': n} for p, n in SUBNETS]}
        for i, (label, export, want) in enumerate(bad_secrets(tmp)):
            cfg = os.path.join(tmp, 'c%d.json' % i)
            with open(cfg, 'w') as f:
                json.dump(dict(base, export=export), f)
            rc, out, secs = run_dpmon(h, ['--check-config', cfg], 30)
            c.eq('%s: --check-config exit status and output' % label,
                 (1, '%s: %s\n' % (cfg, want)), (rc, out))
            c.true('%s: --check-config answers within %.0f s' % (label, PROMPT_S),
                   secs < PROMPT_S, '%.2f s' % secs)
            if label not in ('FIFO', '50 MB line', 'InfluxDB token FIFO'):
                continue
            prefix = 'dpmon-it-files-sec-%d-%d' % (os.getpid(), i)
            try:
                rc, out, secs = run_dpmon(h, eal_args(h, prefix) + ['--config', cfg], 30)
            finally:
                shutil.rmtree(harness._runtime_dir(prefix), ignore_errors=True)
            c.eq('%s: start: exit status (invalid configuration)' % label, 1, rc)
            c.true('%s: start: exits within %.0f s' % (label, PROMPT_S), secs < PROMPT_S,
                   '%.2f s' % secs)
            c.true('%s: start: the error line' % label, ('%s: %s\n' % (cfg, want)) in out,
                   out[-600:])
    c.done()


def test_secrets_on_sighup(h):
    """A reload to an export section whose credential file is bad is
    refused at once, with its reason: the merges and /health go on, and
    SIGTERM still stops dpmon."""
    c = h.checker('bad credential files on SIGHUP')
    with tempfile.TemporaryDirectory(prefix='dpmon-it-files-secrets-') as tmp, \
            h.dpmon_run([h.td(*PCAP)], SUBNETS, 'secret reload', merge_interval_ms=200) as d:
        d.wait_counts(14)
        path = os.path.join(d.dir, 'dpmon.json')
        for n, (label, export, want) in enumerate(bad_secrets(tmp), 1):
            with open(path + '.tmp', 'w') as f:
                json.dump(dict(d.config, export=export), f)
            os.rename(path + '.tmp', path)
            d.proc.send_signal(signal.SIGHUP)
            s = wait_refusals(d, n)
            c.eq('%s: refused, the reason' % label, (1, want),
                 (s['config']['last_refusal']['errors'], s['config']['last_refusal']['reason']))
            c.eq('%s: reloads' % label, 0, s['config']['reloads'])
            s = wait_seq(d, s['snapshot_seq'] + 3)
            status, _, _ = d.request('/health')
            c.eq('%s: /health' % label, 200, status)
        c.eq('no exporter started', [], d.summary()['exporters'])
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
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
