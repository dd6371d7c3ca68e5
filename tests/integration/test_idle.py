#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Idle sleep ("idle_sleep_us", lib/dataplane/idle.h): a worker or distributor lcore
whose RX queues stay empty sleeps instead of busy polling, and loses
nothing when packets come.

Checked, on pcapplusplus/example.pcap (read once: after the last packet the
queue stays empty):
  - with "idle_sleep_us": 2000 the totals, every subnet and every host are
    identical to a busy-polling run, and ports[0].imissed == 0;
  - once the capture is read, the worker lcore's thread uses less than a
    quarter of a CPU over 2 s (/proc/PID/task/TID/stat utime + stime); a
    busy-polling worker uses what the scheduler gives it (noted, not
    asserted: on a shared VM that varies);
  - the same with software RSS: the distributor and both workers sleep,
    and the counts equal the busy-polling single-worker run.
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from harness import LCORES_ONE_WORKER  # noqa: E402
from test_srss import LCORES_SRSS, example, view  # noqa: E402

IDLE = {'idle_sleep_us': 2000}
TICKS = os.sysconf('SC_CLK_TCK')


def lcore_threads(pid):
    """{thread name: tid} of the process's DPDK lcore threads (not the main one)."""
    out = {}
    for tid in os.listdir('/proc/%d/task' % pid):
        with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
            name = f.read().strip()
        if name.startswith(('lcore-worker', 'rte-worker')):
            out['%s/%s' % (name, tid)] = int(tid)
    return out


def cpu_s(pid, tid):
    with open('/proc/%d/task/%d/stat' % (pid, tid)) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


def idle_cpu(d, secs=2.0):
    """CPU share of each lcore thread over @secs of wall time."""
    pid = d.proc.pid
    threads = lcore_threads(pid)
    before = {n: cpu_s(pid, t) for n, t in threads.items()}
    t0 = time.monotonic()
    time.sleep(secs)
    wall = time.monotonic() - t0
    return {n: (cpu_s(pid, t) - before[n]) / wall for n, t in threads.items()}


def run(h, c, pcap, packets, subnets, label, lcores, extra, busy):
    with h.dpmon_run([pcap], subnets, label, lcores=lcores, extra_config=extra) as d:
        s = d.wait_counts(packets)
        c.eq('%s: ports[0].imissed' % label, 0, s['ports'][0]['imissed'])
        c.eq('%s: sum(workers[].packets)' % label, packets,
             sum(w['packets'] for w in s['workers']))
        v = view(d)
        share = idle_cpu(d)
        c.note('%s: lcore CPU share while idle %s' % (
            label, {n: round(x, 3) for n, x in sorted(share.items())}))
        c.true('%s: lcore threads found' % label, len(share) > 0, repr(share))
        if not busy:
            over = {n: x for n, x in share.items() if x >= 0.25}
            c.eq('%s: idle lcores using >= 25 %% of a CPU' % label, {}, over)
        c.eq('%s: dpmon exit status after SIGTERM' % label, 0, d.stop())
    return v


def test_example(h):
    pcap, packets, subnets = example(h)
    c = h.checker('idle example')
    busy = run(h, c, pcap, packets, subnets, 'busy polling', LCORES_ONE_WORKER, None, True)
    idle = run(h, c, pcap, packets, subnets, 'idle sleep', LCORES_ONE_WORKER, IDLE, False)
    srss = run(h, c, pcap, packets, subnets, 'idle sleep, software RSS', LCORES_SRSS,
               dict(IDLE, software_rss=True), False)
    for label, v in (('idle sleep', idle), ('idle sleep, software RSS', srss)):
        for k in ('parse_errors', 'totals', 'subnets', 'n_hosts', 'hosts'):
            c.eq('%s: %s == busy polling' % (label, k), busy[k], v[k])
    c.done()


if __name__ == '__main__':
    harness.main(globals())
