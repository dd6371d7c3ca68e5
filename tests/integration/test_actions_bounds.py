#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The actions never hold dpmon hostage (docs/detection.md, docs/operations.md):

- the stop: a notify script that sleeps, notify_timeout_ms 1500, 40
  blackhole POSTs, then SIGTERM while a script runs: the state file and
  ExaBGP's lines are complete, the queued scripts are dropped and counted
  (exactly: the 40 bans less the scripts that started), and dpmon exits
  within the documented bound (the running script's one second of grace,
  then dpmon's own stop);
- a notify script's output: 6 runs of a script writing 5 MB each; the log
  gets the first run's 10 lines, and the rest is counted, not written;
- the capture directory's bound (actions.pcap_max_files): the oldest
  capture files go at the start, before an alert's capture and at a
  reload that lowers the bound; other files stay.

Expected values come from the documentation and from what the scripts
themselves record, not from dpmon's output.
"""
import json
import os
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_blackholes import Fifo, read_lines, wait_lines  # noqa: E402

SUBNETS = [('141.142.228.0/24', 'a'), ('192.150.187.0/24', 'b')]
PACKETS = 14  # zeek/http-vlan-0.pcap
NEXT_HOP = '192.0.2.1'
BANS = 40
# The stop's bound for the actions (docs/operations.md): a running script
# gets 1 s more at most; the rest of dpmon's stop (ports, memory) is short.
STOP_BOUND_S = 1.0 + 4.0


def write_script(d, body):
    path = os.path.join(d, 'notify.sh')
    with open(path, 'w') as f:
        f.write('#!/bin/sh\necho "$@" >> %s/args\n%s' % (d, body))
    os.chmod(path, 0o755)
    return path


def post_bans(c, d, n):
    for i in range(1, n + 1):
        status, _, _ = d.request('/api/v1/blackholes', 'POST',
                                 json.dumps({'address': '141.142.228.%d' % i}).encode(),
                                 {'Content-Type': 'application/json'})
        if status != 201:
            c.eq('POST 141.142.228.%d status' % i, 201, status)


def stderr_text(d):
    with open(os.path.join(d.dir, 'stderr'), 'rb') as f:
        return f.read().decode('utf-8', 'replace')


def test_stop_bound(h):
    c = h.checker('actions stop')
    work = tempfile.mkdtemp(prefix='dpmon-it-actions-stop-')
    fifo = Fifo(os.path.join(work, 'exabgp.cmd'))
    state = os.path.join(work, 'state.json')
    actions = {'notify_script': write_script(work, 'cat > /dev/null\nsleep 30\n'),
               'notify_timeout_ms': 1500, 'exabgp_pipe': fifo.path,
               'exabgp_next_hop': NEXT_HOP, 'state_file': state}
    pcap = h.td('pcaps', 'zeek', 'http-vlan-0.pcap')
    try:
        with h.dpmon_run([pcap], SUBNETS, 'actions stop',
                         extra_config={'actions': actions}) as d:
            d.wait_counts(PACKETS)
            post_bans(c, d, BANS)
            c.eq('one announce line per ban',
                 ['announce route 141.142.228.%d/32 next-hop %s' % (i, NEXT_HOP)
                  for i in range(1, BANS + 1)],
                 sorted(fifo.lines(BANS), key=lambda l: int(l.split()[2].split('.')[3][:-3])))
            c.true('a script runs', len(wait_lines(os.path.join(work, 'args'), 1)) >= 1)
            t0 = time.monotonic()
            rc = d.stop()
            took = time.monotonic() - t0
            c.eq('dpmon exit status after SIGTERM', 0, rc)
            h.log('stop with %d bans queued: %.2f s' % (BANS, took))
            c.true('stopped within %.1f s' % STOP_BOUND_S, took < STOP_BOUND_S,
                   '%.2f s' % took)
            started = read_lines(os.path.join(work, 'args'))
            c.true('the scripts that started are the first bans, in order',
                   started == ['141.142.228.%d none ban 0' % i
                               for i in range(1, len(started) + 1)] and started, started)
            log = stderr_text(d)
            dropped = re.findall(r'actions: stop: (\d+) queued notify script run\(s\) dropped',
                                 log)
            c.eq('queued scripts dropped at the stop: the bans whose script never started',
                 [str(BANS - len(started))], dropped)
            c.eq('the running script killed at the stop (its timeout is later)', 1,
                 log.count('none ban 0: killed at dpmon\'s stop'))
        with open(state) as f:
            saved = json.load(f)
        c.eq('state file: every ban', sorted('141.142.228.%d' % i for i in range(1, BANS + 1)),
             sorted(e['address'] for e in saved['blackholes'] if e['manual']))
        c.eq('state file: nothing else', BANS, len(saved['blackholes']))
    finally:
        fifo.close()
        shutil.rmtree(work, ignore_errors=True)
    c.done()


def test_script_output(h):
    c = h.checker('notify script output')
    work = tempfile.mkdtemp(prefix='dpmon-it-actions-output-')
    # 5 MB a run: 500 000 lines of "0123456789" (11 bytes with the newline)
    # minus 45 000 (the 5 000 000 bytes of the reproduction), on stdout.
    lines = 5000000 // 11
    script = write_script(work, 'cat > /dev/null\nyes 0123456789 | head -n %d\n' % lines)
    actions = {'notify_script': script, 'notify_timeout_ms': 20000}
    pcap = h.td('pcaps', 'zeek', 'http-vlan-0.pcap')
    try:
        with h.dpmon_run([pcap], SUBNETS, 'notify output',
                         extra_config={'actions': actions}) as d:
            d.wait_counts(PACKETS)
            post_bans(c, d, 6)
            c.eq('six runs', 6, len(wait_lines(os.path.join(work, 'args'), 6, timeout=60)))
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                _, _, m = d.request('/metrics')
                if re.search(r'^dpmon_notify_runs_total\{result="ok"\} 6$', m, re.M):
                    break
                time.sleep(0.2)
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
            log = stderr_text(d)
            out = re.findall(r'notify script \S+ 141\.142\.228\.(\d) none ban 0: output: (.*)',
                             log)
            c.eq('the first run\'s 10 lines, and nothing of the others (the budget)',
                 [('1', '0123456789')] * 10, out)
            c.eq('the rest counted when the budget is spent (run 1: its count line; '
                 'runs 2-6: 10 lines and a count each)',
                 ['suppressed 56 messages of kind notify'],
                 re.findall(r'suppressed \d+ messages of kind notify', log))
            h.log('log of 6 runs of 5 MB of output: %d bytes' % len(log))
            c.true('the log stays small', len(log) < 64 * 1024, '%d bytes' % len(log))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    c.done()


def test_capture_bound(h):
    c = h.checker('capture bound')
    tmp = tempfile.mkdtemp(prefix='dpmon-it-actions-captures-')
    pcap_dir = os.path.join(tmp, 'captures')
    os.mkdir(pcap_dir)
    try:
        # A flood to 10.0.0.5 above 4000 pps (as test_detection.py's).
        flood, _ = h.gen(tmp, 'in5', ['--subnet', '10.0.0.4/30', '--egress-percent', '0',
                                      '--hosts', '1', '--packets', '40000', '--mix', 'udp=1'])
        # An earlier run's captures, oldest first, and an operator's file.
        for i, name in enumerate(['5.pcap', '6.pcap', '7.20251130T170000Z.pcap']):
            path = os.path.join(pcap_dir, name)
            with open(path, 'wb') as f:
                f.write(b'earlier')
            os.utime(path, (1764500000 + i, 1764500000 + i))
        with open(os.path.join(pcap_dir, 'notes.txt'), 'w') as f:
            f.write('kept')
        os.utime(os.path.join(pcap_dir, 'notes.txt'), (1700000000, 1700000000))
        cfg = {'average_time_constant_ms': 1000,
               'detection': {'thresholds': {'ingress': {'pps': 4000}}},
               'actions': {'pcap_dir': pcap_dir, 'pcap_packets': 10, 'pcap_max_files': 2}}
        with h.dpmon_run([flood], [('10.0.0.0/24', 'lan')], 'capture bound', extra_config=cfg,
                         vdev_args=',infinite_rx=1') as d:
            harness.wait_pcap_records(os.path.join(pcap_dir, '1.pcap'), 10)
            c.eq('at the start 5.pcap went, at alert 1\'s capture 6.pcap',
                 ['1.pcap', '7.20251130T170000Z.pcap', 'notes.txt'], sorted(os.listdir(pcap_dir)))
            # A reload to one file: the oldest capture file goes at once.
            d.config['actions'] = dict(cfg['actions'], pcap_max_files=1)
            with open(os.path.join(d.dir, 'dpmon.json.tmp'), 'w') as f:
                json.dump(d.config, f)
            os.rename(os.path.join(d.dir, 'dpmon.json.tmp'), os.path.join(d.dir, 'dpmon.json'))
            os.kill(d.proc.pid, signal.SIGHUP)
            deadline = time.monotonic() + 20
            while d.summary()['config']['reloads'] < 1 and time.monotonic() < deadline:
                time.sleep(0.05)
            c.eq('reloads', 1, d.summary()['config']['reloads'])
            c.eq('after the reload to pcap_max_files 1', ['1.pcap', 'notes.txt'],
                 sorted(os.listdir(pcap_dir)))
            c.eq('dpmon exit status after SIGTERM', 0, d.stop())
            c.eq('one log line per removal round (start, capture, reload)', 3,
                 len(re.findall(r'sample: %s: 1 oldest capture file\(s\) removed' %
                                re.escape(pcap_dir), stderr_text(d))))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
