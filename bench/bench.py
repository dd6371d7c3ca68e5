# SPDX-License-Identifier: BSD-3-Clause
"""dpmon's benchmark driver (run it with `bash bench/run`; docs/performance.md).

Design: every row is a ratio against a reference measured in the same run,
because this machine is a shared 2-core VM whose absolute speed drifts.
Sections, each a function returning plain dicts that end up in the JSON:

  e2e    dpdk-testpmd --forward-mode=rxonly (the receive reference) and dpmon,
         both one forwarding/worker lcore on net_pcap with infinite_rx=1 on
         the same capture, alternated `--reps` times; Mpps from testpmd's
         Rx-pps and from dpmon's own API (delta of sum(workers[].packets)
         over delta of uptime_s between snapshots); for --sketches-off-mixes
         also dpmon with "flow_sketches": false.
  srss   dpmon with the software-RSS distributor (one distributor lcore,
         workers behind rte_rings) on the same capture.
  scale  two workers on a 2-queue net_pcap port, one CPU each, against one;
         the table then prints the scaling model (worker cores per 100GbE
         and 10GbE port of 64-byte frames at each measured per-core rate).
  hot    dpmon-bench hotpath: dpmon_worker_count on mbufs in memory.
  merge  dpmon-bench merge: merge time vs hosts and worker tables.
  http   wrk on the API while the data plane runs flat out. Placement as an
         appliance is deployed: the worker lcore alone on CPU 1; the main
         lcore, the HTTP thread (it inherits the main lcore's affinity), wrk
         and this driver on CPU 0. Data-plane Mpps with and without HTTP
         load. With --http-ref BIN, the same rows for a reference dpmon
         binary in the same run, alternated (before/after figures). Then
         the stall rows, at 65 536 hosts and 10 000 subnets: /health and
         /api/v1/summary polled (p50, p99, max, failures) alone, while
         4 clients pull /api/v1/hosts?limit=10000 and /api/v1/history in a
         loop, and while 120 connections (3 addresses) request that page
         and never read; dpmon's RSS before and at its peak.
         --http-rows stalls measures only these.
  metrics  GET /metrics, one scrape at a time (curl on CPU 0), while the
         data plane runs flat out as in http: wall time per scrape and the
         peak of dpmon's resident memory above its level before the scrape
         (VmHWM after resetting it through /proc/PID/clear_refs) and the CPU
         time of libmicrohttpd's thread (/proc/PID/task/TID/schedstat), at 65 536
         subnets (the capture's 256 and IPv6 /48s without traffic) and at the
         capture's 256; with --http-ref, the same for the reference binary.
  fnm    FastNetMon (AF_PACKET) and dpmon (net_af_packet) on one end of a
         veth pair in a private network namespace, tcpreplay on the other;
         packets per CPU-second and whether each engine counted every packet.

Python 3 standard library only. Needs root (apt, netns). Every process it
starts is stopped by its pid; the namespace it creates is deleted at exit.
"""

import argparse
import http.client
import json
import multiprocessing
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

APT_PACKAGES = {'wrk': 'wrk', 'tcpreplay': 'tcpreplay', 'fastnetmon': 'fastnetmon',
                'dpdk-testpmd': 'dpdk'}
MBUF_KB = 3.5  # one 2176-byte data room mbuf, its header, mempool and EAL overhead
CPU_MAIN, CPU_WORKER = 0, 1


def log(msg):
    print('bench: ' + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# Set-up: packages, build, captures
# ---------------------------------------------------------------------------

def ensure_packages(need):
    missing = sorted({APT_PACKAGES[t] for t in need if shutil.which(t) is None and
                      not os.path.exists('/usr/sbin/' + t)})
    if not missing:
        return
    log('installing ' + ' '.join(missing))
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    subprocess.run(['apt-get', 'update', '-q'], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    subprocess.run(['apt-get', 'install', '-y', '-q', '--no-install-recommends'] + missing,
                   check=True, env=env, stdout=subprocess.DEVNULL)


def build(src, bld):
    subprocess.run(['bash', os.path.join(src, 'scripts', 'deps.sh')], check=True)
    if not os.path.exists(os.path.join(bld, 'build.ninja')):
        subprocess.run(['meson', 'setup', bld, src], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(['ninja', '-C', bld], check=True, stdout=subprocess.DEVNULL)


class Env:
    def __init__(self, args):
        self.args = args
        self.src = args.source_dir
        self.bld = args.build_dir
        self.data = os.path.join(self.bld, 'bench-data')
        self.bench = os.path.join(self.bld, 'bench', 'dpmon-bench')
        self.dpmon = os.path.join(self.bld, 'app', 'dpmon')
        self.mixes = {}
        self.seq = 0

    def eal(self, mem_mb, lcores):
        self.seq += 1
        return ['--no-huge', '-m', str(int(mem_mb)), '--no-pci', '--no-telemetry',
                '--file-prefix', 'dpmon-bench-%d-%d' % (os.getpid(), self.seq),
                '--log-level', 'lib.eal:error'] + lcores

    def list_mixes(self):
        out = subprocess.run([self.bench, '--list'], check=True, capture_output=True,
                             text=True).stdout
        for line in out.splitlines():
            name, packets, hosts, title = line.split('\t')
            self.mixes[name] = {'name': name, 'packets': int(packets), 'hosts': int(hosts),
                                'title': title}

    def capture(self, mix):
        """Path of the mix's capture, generated once (dpmon-gen, seed 1)."""
        os.makedirs(self.data, exist_ok=True)
        pcap = os.path.join(self.data, mix + '.pcap')
        meta = os.path.join(self.data, mix + '.gen.json')
        if not (os.path.exists(pcap) and os.path.exists(meta)):
            log('generating %s' % pcap)
            out = subprocess.run([self.bench] + self.eal(512, ['-l', '0']) +
                                 ['--', 'gen', mix, self.data], check=True,
                                 capture_output=True, text=True).stdout
            with open(meta, 'w') as f:
                f.write(out)
        with open(meta) as f:
            self.mixes[mix]['gen'] = json.loads(f.read())
        return pcap

    def subnets(self, mix):
        with open(os.path.join(self.data, mix + '.subnets.json')) as f:
            return json.load(f)

    def mem_for(self, packets):
        return 768 + packets * MBUF_KB / 1024


# ---------------------------------------------------------------------------
# Processes
# ---------------------------------------------------------------------------

def stop_proc(p, sig=signal.SIGINT, timeout=20):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(timeout=10)


def cpu_seconds(pid):
    """User + system CPU seconds of a process and its threads (/proc)."""
    with open('/proc/%d/stat' % pid) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def testpmd_mpps(env, pcap, packets, secs):
    """Median Rx-pps of testpmd rxonly on net_pcap infinite_rx, one core."""
    argv = ['dpdk-testpmd'] + env.eal(env.mem_for(packets), ['-l', '0-1']) + [
        '--vdev', 'net_pcap0,rx_pcap=%s,infinite_rx=1' % pcap, '--',
        '--forward-mode=rxonly', '--nb-cores=1', '--rxq=1', '--txq=1', '--burst=32',
        '--total-num-mbufs=%d' % (packets + 8192), '--stats-period', '1', '--auto-start']
    p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    rates, t_end = [], None
    try:
        for line in p.stdout:
            m = re.search(r'Rx-pps:\s+(\d+)', line)
            if m:
                v = int(m.group(1))
                if v > 0:
                    if t_end is None:
                        t_end = time.monotonic() + secs
                    rates.append(v)
                if t_end and time.monotonic() >= t_end:
                    break
    finally:
        stop_proc(p)
    rates = rates[2:]  # the first seconds include start-up
    if not rates:
        raise RuntimeError('testpmd printed no Rx-pps (%s)' % ' '.join(argv))
    return statistics.median(rates) / 1e6


class Dpmon:
    """dpmon with one JSON configuration, read through its HTTP API."""

    def __init__(self, env, vdev, subnets, lcores, mem_mb, mbufs, capacity,
                 extra=None, label='dpmon', netns=None, binary=None):
        self.env = env
        self.dir = tempfile.mkdtemp(prefix='dpmon-bench-')
        cfg = {'ports': [{'device': vdev.split(',')[0], 'rx_queues': 1, 'mbufs': mbufs}],
               'subnets': subnets, 'http': {'listen': '127.0.0.1', 'port': 0},
               'host_table_capacity': capacity, 'merge_interval_ms': 500}
        cfg.update(extra or {})
        self.cfg_path = os.path.join(self.dir, 'dpmon.json')
        with open(self.cfg_path, 'w') as f:
            json.dump(cfg, f)
        self.port_file = os.path.join(self.dir, 'port')
        self.netns = netns
        self.argv = ([] if netns is None else ['ip', 'netns', 'exec', netns]) + \
            [binary or env.dpmon] + env.eal(mem_mb, lcores) + [
            '--vdev', vdev, '--', '--config', self.cfg_path, '--http-port-file',
            self.port_file]
        self.label = label
        self.out = open(os.path.join(self.dir, 'log'), 'w+')
        self.p = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=self.out,
                                  stderr=subprocess.STDOUT)
        self.port = None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.p.poll() is not None:
                raise RuntimeError('%s exited (%s): %s' % (label, self.p.returncode,
                                                          self.log()[-2000:]))
            try:
                with open(self.port_file) as f:
                    t = f.read().strip()
                if t:
                    self.port = int(t)
                    return
            except FileNotFoundError:
                pass
            time.sleep(0.05)
        raise RuntimeError('%s did not start' % label)

    def log(self):
        self.out.flush()
        self.out.seek(0)
        return self.out.read()

    def get(self, path):
        url = 'http://127.0.0.1:%d%s' % (self.port, path)
        if self.netns is not None:  # the API listens on the namespace's loopback
            r = subprocess.run(['ip', 'netns', 'exec', self.netns, 'curl', '-sf', url],
                               capture_output=True, text=True)
            if r.returncode != 0:
                raise urllib.error.HTTPError(url, 503, 'curl failed', None, None)
            return json.loads(r.stdout)
        with urllib.request.urlopen(url, timeout=10) as r:
            return json.loads(r.read())

    def summary(self):
        while True:
            try:
                return self.get('/api/v1/summary')
            except urllib.error.HTTPError as e:
                if e.code != 503:
                    raise
                time.sleep(0.1)

    def rates(self, secs, warmup=True, min_samples=3):
        """Mpps between consecutive snapshots over `secs` seconds of traffic,
        and longer (up to 5 x `secs` more) until `min_samples` samples are
        there after the warm-up: with 1 M hosts a merge takes ~0.3 s and the
        first snapshots come late."""
        samples, last = [], None
        t_end = None
        need = min_samples + (2 if warmup else 0)
        while True:
            s = self.summary()
            pk = sum(w['packets'] for w in s['workers'])
            if last is not None and s['snapshot_seq'] != last[0] and pk > 0 and last[2] > 0:
                dt = s['uptime_s'] - last[1]
                if dt > 0:
                    samples.append((pk - last[2]) / dt / 1e6)
            if pk > 0 and t_end is None:
                t_end = time.monotonic() + secs
            last = (s['snapshot_seq'], s['uptime_s'], pk)
            if t_end is not None and time.monotonic() >= t_end and (
                    len(samples) >= need or time.monotonic() >= t_end + 5 * secs):
                break
            time.sleep(0.25)
        if warmup:
            samples = samples[2:]
        if not samples:
            raise RuntimeError('%s: no rate samples' % self.label)
        return statistics.median(samples), s

    def stop(self):
        stop_proc(self.p, signal.SIGTERM)
        out = self.log()
        self.out.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return out


def dpmon_for_mix(env, mix, extra=None, lcores=None, label='dpmon', binary=None):
    pcap = env.capture(mix)
    m = env.mixes[mix]
    cap = 1024
    while cap < m['hosts'] and cap < (1 << 24):
        cap *= 2
    return Dpmon(env, 'net_pcap0,rx_pcap=%s,infinite_rx=1' % pcap, env.subnets(mix),
                 lcores or ['-l', '0-1'],
                 env.mem_for(m['packets']) + cap * 0.0003 * (len(lcores or [0]) + 1),
                 m['packets'] + 8192, cap, extra, label, binary=binary)


# ---------------------------------------------------------------------------
# Sections
# ---------------------------------------------------------------------------

def section_e2e(env):
    rows = []
    for mix in env.args.mixes:
        try:
            rows.append(e2e_mix(env, mix))
        except Exception as e:  # one mix failing does not hide the others
            log('e2e %s failed: %s' % (mix, e))
            rows.append({'mix': mix, 'error': str(e)[:300]})
    return rows


def e2e_mix(env, mix):
    """testpmd rxonly, dpmon, and for the mixes in --sketches-off-mixes
    dpmon with "flow_sketches": false, alternated within each repetition."""
    pcap = env.capture(mix)
    m = env.mixes[mix]
    ref, dp, off = [], [], []
    for r in range(env.args.reps):
        ref.append(testpmd_mpps(env, pcap, m['packets'], env.args.secs))
        for runs, extra in ((dp, None), (off, {'flow_sketches': False})):
            if extra is not None and mix not in env.args.sketches_off_mixes:
                continue
            d = dpmon_for_mix(env, mix, extra=extra)
            try:
                runs.append(d.rates(env.args.secs)[0])
            finally:
                d.stop()
        log('e2e %s rep %d: testpmd %.2f Mpps, dpmon %.2f Mpps%s' % (
            mix, r, ref[-1], dp[-1], ', flow_sketches off %.2f Mpps' % off[-1] if off else ''))
    row = {'mix': mix, 'title': m['title'], 'packets': m['packets'],
           'testpmd_mpps': statistics.median(ref), 'dpmon_mpps': statistics.median(dp),
           'ratio': statistics.median(dp) / statistics.median(ref),
           'testpmd_runs': ref, 'dpmon_runs': dp}
    if off:
        row.update(dpmon_no_sketches_mpps=statistics.median(off),
                   ratio_no_sketches=statistics.median(off) / statistics.median(ref),
                   dpmon_no_sketches_runs=off)
    return row


def section_scale(env):
    """Two workers on a 2-queue port: net_pcap0 with one rx_pcap (the same
    capture, infinite_rx=1) per RX queue, each worker lcore pinned to a CPU
    of its own (the main lcore shares CPU 0 with the first: it sleeps between
    merges), against one worker on the same machine in the same repetition.
    Mpps per worker = what the workers counted / workers. On a 2-vCPU VM
    the two workers also share the L3 and the other tenants' load, so this
    is a lower bound of what two dedicated cores do."""
    mix = '64k-hosts' if '64k-hosts' in env.args.mixes else env.args.mixes[0]
    pcap = env.capture(mix)
    m = env.mixes[mix]
    one, two = [], []
    for r in range(env.args.reps):
        d = dpmon_for_mix(env, mix, label='dpmon 1 worker')
        try:
            one.append(d.rates(env.args.secs)[0])
        finally:
            d.stop()
        mbufs = 2 * (m['packets'] + 8192)
        cap = 1024
        while cap < m['hosts'] and cap < (1 << 24):
            cap *= 2
        d = Dpmon(env, 'net_pcap0,rx_pcap=%s,rx_pcap=%s,infinite_rx=1' % (pcap, pcap),
                  env.subnets(mix), ['--lcores', '0@0,1@0,2@1'],
                  env.mem_for(2 * m['packets']) + cap * 0.0003 * 3, mbufs, cap,
                  {'ports': [{'device': 'net_pcap0', 'rx_queues': 2, 'mbufs': mbufs}]},
                  'dpmon 2 workers')
        try:
            mpps, s = d.rates(env.args.secs)
            two.append(mpps)
            workers = len(s['workers'])
        finally:
            d.stop()
        log('scale %s rep %d: 1 worker %.2f Mpps, %d workers %.2f Mpps' % (
            mix, r, one[-1], workers, two[-1]))
    return {'mix': mix, 'one_worker_mpps': statistics.median(one),
            'two_workers_mpps': statistics.median(two),
            'per_worker_mpps': statistics.median(two) / 2,
            'one_worker_runs': one, 'two_workers_runs': two}


LINE_RATES = (('100GbE', 148.81), ('10GbE', 14.88))  # Mpps of 64-byte frames (84 B on the wire)


def scaling_model(res):
    """Lines of the scaling model: worker cores one port of 64-byte frames
    needs at the per-core rates measured in this run (N workers on N RX
    queues run N independent copies of the hot path: docs/performance.md)."""
    rates = []
    for r in res.get('e2e', []):
        if r.get('mix') == '64k-hosts' and 'dpmon_mpps' in r:
            rates.append(('e2e 64k-hosts, 1 worker, every analytic on', r['dpmon_mpps']))
            if 'dpmon_no_sketches_mpps' in r:
                rates.append(('e2e 64k-hosts, 1 worker, flow_sketches off',
                              r['dpmon_no_sketches_mpps']))
    for r in res.get('hot', []):
        if r.get('mix') in ('64k-hosts', '1m-hosts') and 'mpps' in r:
            rates.append(('hot path alone, %s' % r['mix'], r['mpps']))
    sc = res.get('scale')
    if sc:
        rates.append(('e2e %s, per worker of 2 on a 2-queue port' % sc['mix'],
                      sc['per_worker_mpps']))
    out = []
    for what, mpps in rates:
        if mpps <= 0:
            continue
        cores = ', '.join('%s %d' % (name, -(-line // mpps)) for name, line in LINE_RATES)
        out.append('  %-58s %6.2f Mpps per core -> worker cores: %s' % (what, mpps, cores))
    for r in res.get('merge', []):
        if r['hosts'] == 1000000 and r['tables'] == 16:
            out.append('  merge, 1 M hosts over 16 worker tables, %d%% touched: %.1f ms' % (
                r['touched_percent'], r['merge_ms_best']))
    return out


def section_srss(env):
    """Software RSS on the 2-CPU machine, same capture, alternated `--reps`.

    reference: no distributor, one worker alone on CPU 1 ('-l 0-1').
    1 worker:  distributor lcore on CPU 0 (with the main lcore, which sleeps
               between merges), the worker alone on CPU 1.
    2 workers: the same, both workers time-sharing CPU 1: this machine has
               no third CPU, so the row shows the distributor's overhead and
               that nothing is lost, not scaling.
    Mpps = what the workers counted; drops = ports[0].imissed (the
    distributor's full-ring drops are added there).
    """
    mix = '64k-hosts' if '64k-hosts' in env.args.mixes else env.args.mixes[0]
    env.capture(mix)
    cases = [('reference', None, ['-l', '0-1']),
             ('1 worker', {'software_rss': True}, ['--lcores', '0@0,1@0,2@1']),
             ('2 workers', {'software_rss': True}, ['--lcores', '0@0,1@0,2@1,3@1'])]
    runs = {c[0]: [] for c in cases}
    drops = {c[0]: 0 for c in cases}
    for r in range(env.args.reps):
        for name, extra, lc in cases:
            d = dpmon_for_mix(env, mix, extra=extra, lcores=lc, label='dpmon-srss ' + name)
            try:
                mpps, s = d.rates(env.args.secs)
                runs[name].append(mpps)
                drops[name] = max(drops[name], s['ports'][0]['imissed'])
            finally:
                d.stop()
            log('srss %s %s rep %d: %.2f Mpps' % (mix, name, r, mpps))
    ref = statistics.median(runs['reference'])
    return [{'mix': mix, 'case': name, 'dpmon_mpps': statistics.median(runs[name]),
             'ratio_to_reference': statistics.median(runs[name]) / ref,
             'imissed': drops[name], 'runs': runs[name]} for name, _, _ in cases]


def section_hot(env):
    rows = []
    for mix in env.args.mixes:
        env.capture(mix)
        m = env.mixes[mix]
        runs = []
        # Alternated with "flow_sketches": false for --sketches-off-mixes.
        variants = [[], ['--no-flow-sketches']] if mix in env.args.sketches_off_mixes else [[]]
        for r in range(env.args.reps + 1):
            for v in variants:
                out = subprocess.run(
                    ['taskset', '-c', str(CPU_WORKER), env.bench] +
                    env.eal(env.mem_for(m['packets']) + 256, ['-l', '0']) +
                    ['--', 'hotpath', mix, '--dir', env.data, '--seconds',
                     str(env.args.hot_secs)] + v, capture_output=True, text=True)
                if out.returncode != 0:
                    break
                runs.append(json.loads(out.stdout))
        if not runs:
            log('hot %s failed: %s' % (mix, out.stderr[-300:]))
            rows.append({'mix': mix, 'error': out.stderr[-300:]})
            continue
        best = min(runs, key=lambda x: x['ns_per_packet'])
        med = statistics.median(x['ns_per_packet'] for x in runs)
        row = {'mix': mix, 'ns_per_packet': med, 'ns_per_packet_best': best['ns_per_packet'],
               'mpps': 1e3 / med, 'hosts': best['hosts'], 'runs': runs}
        if mix in env.args.sketches_off_mixes:
            off = [x for x in runs if not x.get('flow_sketches', True)]
            on = [x for x in runs if x.get('flow_sketches', True)]
            med = statistics.median(x['ns_per_packet'] for x in on)
            row.update(ns_per_packet=med, mpps=1e3 / med, runs=on)
            if off:
                med_off = statistics.median(x['ns_per_packet'] for x in off)
                row.update(ns_per_packet_no_sketches=med_off, runs_no_sketches=off)
        rows.append(row)
        log('hot %s: %.1f ns/packet%s' % (mix, row['ns_per_packet'],
                                          ', flow_sketches off %.1f' % row[
                                              'ns_per_packet_no_sketches']
                                          if 'ns_per_packet_no_sketches' in row else ''))
    return rows


def section_merge(env):
    rows = []
    hosts = [1000, 10000, 100000, 1000000]
    tables = [1, 2, 4, 8, 16]
    if env.args.quick:
        hosts, tables = [1000, 100000], [1, 16]
    points = [(h, t, 100) for h in hosts for t in tables] + [(1000000, 16, 10),
                                                             (1000000, 16, 1)]
    for h, t, pct in points:
        mem = 512 + h * 0.004 + t * 16
        out = subprocess.run(['taskset', '-c', str(CPU_WORKER), env.bench] +
                             env.eal(mem, ['-l', '0']) +
                             ['--', 'merge', '--hosts', str(h), '--tables', str(t),
                              '--touched', str(pct), '--repeat', '3', '--warmup', '30'],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)
        rows.append(r)
        log('merge %d hosts x %d tables, %d%% touched: %.2f ms (fold %.2f, snapshot %.2f), '
            '%.0f B/entry' % (h, t, pct, r['merge_ms_best'], r['fold_ms_best'],
                              r['snapshot_ms_best'], r['bytes_per_entry']))
    return rows


# A ClickHouse stand-in for the export section: reads each request whole and
# answers 200, on the main lcore's CPU (never the worker's); GET answers the
# body bytes received so far.
EXPORT_SINK = r'''
import http.server, sys
received = [0]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def do_POST(self):
        n = int(self.headers.get('Content-Length') or 0)
        while n > 0:
            k = len(self.rfile.read(min(n, 1 << 20)) or b'x' * n)
            received[0] += k
            n -= k
        self.send_response(200)
        self.send_header('Content-Length', '0')
        self.end_headers()
    def do_GET(self):
        body = str(received[0]).encode()
        self.send_response(200)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(('127.0.0.1', 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()
'''


def export_sink():
    p = subprocess.Popen(['taskset', '-c', str(CPU_MAIN), sys.executable, '-c', EXPORT_SINK],
                         stdout=subprocess.PIPE, text=True)
    return p, int(p.stdout.readline())


def sink_bytes(port):
    with urllib.request.urlopen('http://127.0.0.1:%d/' % port, timeout=10) as r:
        return int(r.read())


def export_window(env, d, port):
    """One measured window of a dpmon run: Mpps, the worker's CPU ns per
    packet (see section_export), merges per second, and the summaries and
    sink bytes at both ends."""
    s0 = d.summary()
    b0 = sink_bytes(port)
    c0 = thread_cpu_seconds(d.p.pid, 'rte-worker')
    t0 = time.monotonic()
    mpps, s = d.rates(env.args.secs)
    c1 = thread_cpu_seconds(d.p.pid, 'rte-worker')
    t1 = time.monotonic()
    pk = sum(w['packets'] for w in s['workers']) - sum(w['packets'] for w in s0['workers'])
    busy = sum(w['busy_s'] for w in s['workers']) - sum(w['busy_s'] for w in s0['workers'])
    share = min(1.0, (c1 - c0) / max(1e-9, t1 - t0))
    return {'mpps': mpps, 'ns': share * busy * 1e9 / max(1, pk),
            'merges': (s['snapshot_seq'] - s0['snapshot_seq']) /
            max(1e-9, s['uptime_s'] - s0['uptime_s']),
            's0': s0, 's': s, 'bytes': sink_bytes(port) - b0}


def section_export(env):
    """The exporter's cost: the data plane with export on and off (same
    capture, alternated), and the exporter's CPU per interval and rows per
    interval at 64 k and 1 M active hosts (every host in every interval:
    the capture replayed forever).

    The cost to the data plane is the worker's CPU time per packet, on
    over off. Both of its parts are read where they agree in time: the
    worker's busy seconds and packets come from the same two snapshots
    (the worker counts both, dpmon_snap_worker), and the share of that
    time the worker thread really ran (its utime + stime over wall time,
    read back to back, so time stolen by the hypervisor of a shared
    machine is left out) from /proc. Thread CPU time over snapshot
    packets would mix a read taken now with counts up to an interval old,
    and the exporter's CPU delays the merges: that error is as large as
    the effect at 1 M hosts.

    Two more arms with export off are the controls, so that "no cost" is
    not a measure that cannot see one: a busy loop on CPU 0 (where the
    exporter runs: what its CPU alone costs the worker), and dd streaming
    32 MB buffers there (what touching more memory than the last-level
    cache holds costs it, as the exporter's walk of the snapshot does).

    The merge interval is dpmon's default, 1000 ms (--export-interval-ms
    sets another): the exporter's work is per interval."""
    rows = []
    sink, port = export_sink()
    try:
        for mix in ('64k-hosts', '1m-hosts'):
            on_cfg = {'export': {'instance': 'bench', 'spool_intervals': 4,
                                 'flush_timeout_ms': 1000,
                                 'clickhouse': {'url': 'http://127.0.0.1:%d' % port,
                                                'create_tables': False,
                                                'timeout_ms': 60000}}}
            base = {'merge_interval_ms': env.args.export_interval_ms}
            on_cfg.update(base)
            arms = {'off': [], 'on': [], 'spin': [], 'stream': []}
            enc, nrows, cpu, row_bytes = [], [], [], []
            for r in range(env.args.reps):
                for arm in ('off', 'on', 'spin', 'stream'):
                    spin = None
                    d = dpmon_for_mix(env, mix, extra=on_cfg if arm == 'on' else base,
                                      label='export-%s' % arm)
                    try:
                        if arm == 'spin':
                            spin = subprocess.Popen(['taskset', '-c', str(CPU_MAIN), 'sh', '-c',
                                                     'while :; do :; done'])
                        elif arm == 'stream':
                            spin = subprocess.Popen(['taskset', '-c', str(CPU_MAIN), 'dd',
                                                     'if=/dev/zero', 'of=/dev/null', 'bs=32M'],
                                                    stderr=subprocess.DEVNULL)
                        w = export_window(env, d, port)
                        arms[arm].append(w)
                        if arm == 'on':
                            e = [x for x in w['s']['exporters'] if x['name'] == 'clickhouse'][0]
                            e0 = [x for x in w['s0']['exporters'] if x['name'] == 'clickhouse'][0]
                            row_bytes.append(w['bytes'] / max(1, e['rows'] - e0['rows']))
                            enc.append(e['encode_s'])
                            nrows.append(e['last_rows'])
                            cpu.append(e['cpu_s'] / max(1, e['intervals']))
                    finally:
                        if spin is not None:
                            spin.kill()
                            spin.wait()
                        d.stop()
                log('export %s rep %d: ' % (mix, r) + ', '.join(
                    '%s %.3f Mpps %.1f ns/packet' % (a, arms[a][-1]['mpps'], arms[a][-1]['ns'])
                    for a in arms) + '; encode %.3f s, %d rows' % (enc[-1], nrows[-1]))

            def med(arm, key):
                return statistics.median(w[key] for w in arms[arm])
            rows.append({'mix': mix, 'off_mpps': med('off', 'mpps'),
                         'on_mpps': med('on', 'mpps'),
                         'ratio': med('on', 'mpps') / med('off', 'mpps'),
                         'off_ns_per_packet': med('off', 'ns'),
                         'on_ns_per_packet': med('on', 'ns'),
                         'cost_ratio': med('on', 'ns') / med('off', 'ns'),
                         'spin_ns_per_packet': med('spin', 'ns'),
                         'spin_cost_ratio': med('spin', 'ns') / med('off', 'ns'),
                         'stream_ns_per_packet': med('stream', 'ns'),
                         'stream_cost_ratio': med('stream', 'ns') / med('off', 'ns'),
                         'encode_s': statistics.median(enc),
                         'cpu_s_per_interval': statistics.median(cpu),
                         'merges_per_s_off': med('off', 'merges'),
                         'merges_per_s_on': med('on', 'merges'),
                         'bytes_per_row': statistics.median(row_bytes),
                         'rows_per_interval': statistics.median(nrows),
                         'interval_ms': env.args.export_interval_ms,
                         'runs': {a: [{k: w[k] for k in ('mpps', 'ns', 'merges')} for w in ws]
                                  for a, ws in arms.items()}})
    finally:
        sink.kill()
        sink.wait()
    return rows


class BenchClickHouse:
    """Debian's clickhouse-server as the export tests start it
    (tests/integration/servers.py: a user process, free loopback ports, a
    temporary directory), pinned to CPU 0 with the main lcore and at nice
    `nice`: on this 2-CPU machine the database shares the main lcore's CPU,
    and at nice 19 it takes, like the exporter, only what the merge leaves."""

    def __init__(self, env, nice):
        sys.path.insert(0, os.path.join(env.src, 'tests', 'integration'))
        import servers  # noqa: E402 (the tests' server set-up, reused)
        wrap = ['taskset', '-c', str(CPU_MAIN), 'nice', '-n', str(nice)]

        class Pinned(servers.ClickHouse):
            def _spawn(self, argv):
                super()._spawn(wrap + argv)
        self.ch = Pinned()
        self.ch.start()
        self.url = self.ch.url

    def rows(self, sql):
        return self.ch.rows(sql)

    def query(self, sql):
        return self.ch.query(sql)

    def close(self):
        self.ch.__exit__(None, None, None)


def exporter_of(s, name='clickhouse'):
    return [x for x in s['exporters'] if x['name'] == name][0]


def main_lcore_cpu_seconds(pid):
    """User + system CPU seconds of the main lcore (the process's first thread)."""
    with open('/proc/%d/task/%d/stat' % (pid, pid)) as f:
        fields = f.read().rsplit(')', 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')


def export1m_arm(env, ch, binary, label, secs, perf_secs=0):
    """One run of export1m: dpmon (`binary`) on 1m-hosts forever into `ch`
    for `secs` seconds after the warm-up, then stopped with SIGTERM (its
    last merge and its spool go out before it exits) and the sums in
    ClickHouse compared with its final snapshot and its worker's packets."""
    mix = '1m-hosts'
    ch.query('DROP DATABASE IF EXISTS dpmon')
    cfg = {'merge_interval_ms': 1000,
           'export': {'instance': label, 'flush_timeout_ms': 300000, 'spool_mb': 8192,
                      'clickhouse': {'url': ch.url, 'timeout_ms': 120000}}}
    d = dpmon_for_mix(env, mix, extra=cfg, label=label, binary=binary)
    res = {'label': label, 'binary': binary or env.dpmon}
    try:
        # Warm-up: every host listed, a few intervals exported.
        t_end = time.monotonic() + 240
        while True:
            s0 = d.summary()
            e0 = exporter_of(s0)
            if (s0['hosts'] >= env.mixes[mix]['gen']['hosts_used'] and
                    e0['intervals'] >= 3) or \
                    time.monotonic() > t_end:
                break
            time.sleep(0.5)
        c0 = main_lcore_cpu_seconds(d.p.pid)
        w0 = time.monotonic()
        merge_s, seen = [], s0['snapshot_seq']
        perf = None
        if perf_secs:
            perf = subprocess.Popen(['perf', 'record', '-g', '-o',
                                     os.path.join(d.dir, 'perf.data'), '-p', str(d.p.pid),
                                     '--', 'sleep', str(perf_secs)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        while time.monotonic() < w0 + secs:
            time.sleep(0.25)
            s = d.summary()
            if s['snapshot_seq'] != seen:
                seen = s['snapshot_seq']
                merge_s.append(s['merge_s'])
        c1 = main_lcore_cpu_seconds(d.p.pid)
        e = exporter_of(s)
        n_merges = s['snapshot_seq'] - s0['snapshot_seq']
        n_iv = max(1, e['intervals'] - e0['intervals'])
        pk = sum(w['packets'] for w in s['workers']) - sum(w['packets'] for w in s0['workers'])
        res.update({
            'secs': s['uptime_s'] - s0['uptime_s'],
            'mpps': pk / max(1e-9, s['uptime_s'] - s0['uptime_s']) / 1e6,
            'merges_per_s': n_merges / max(1e-9, s['uptime_s'] - s0['uptime_s']),
            'merge_s': statistics.mean(merge_s) if merge_s else None,
            'merge_s_max': max(merge_s) if merge_s else None,
            'main_cpu_s_per_merge': (c1 - c0) / max(1, n_merges),
            'exporter_intervals': e['intervals'] - e0['intervals'],
            'handoff_skipped': e['handoff_skipped'] - e0['handoff_skipped'],
            'exporter_cpu_s_per_interval': (e['cpu_s'] - e0['cpu_s']) / n_iv,
            'encode_s_last': e['encode_s'],
            # Rows the server took per batch sent in the window; without a
            # batch sent in it, the last encoded interval's rows.
            'rows_per_interval': ((e['rows'] - e0['rows']) / (e['batches'] - e0['batches'])
                                  if e['batches'] > e0['batches'] else e['last_rows']),
            'last_rows': e['last_rows'],
            'spool_depth_end': e['spool_depth'],
            'hosts': s['hosts']})
        # merge_s is wall time: when it exceeds the thread's CPU per merge
        # the main lcore waited for its CPU, and the rest is not known.
        other = res['main_cpu_s_per_merge'] - (res['merge_s'] or 0)
        res['other_s_per_merge'] = other if other >= 0 else None
        if perf is not None:
            perf.wait()
            rep = subprocess.run(['perf', 'report', '-i', os.path.join(d.dir, 'perf.data'),
                                  '--no-children', '--sort', 'comm,symbol', '--stdio',
                                  '--percent-limit', '0.5', '-g', 'none'],
                                 capture_output=True, text=True).stdout
            res['perf'] = [line for line in rep.splitlines()
                           if line.strip() and not line.startswith('#')][:60]
    finally:
        stop_proc(d.p, signal.SIGTERM, timeout=600)
        log_text = d.log()
        d.out.close()
        shutil.rmtree(d.dir, ignore_errors=True)
    # Exactness: what the stop printed against what ClickHouse holds.
    m = re.search(r'final snapshot \d+ at [0-9.]+ s: ingress (\d+) packets (\d+) bytes, '
                  r'egress (\d+) packets (\d+) bytes', log_text)
    wk = [int(x) for x in re.findall(r'worker lcore \d+: (\d+) packets', log_text)]
    if m is None or not wk:
        raise RuntimeError('%s: no final snapshot or worker line at stop:\n%s'
                           % (label, log_text[-2000:]))
    final = {'ingress': (int(m.group(1)), int(m.group(2))),
             'egress': (int(m.group(3)), int(m.group(4)))}
    where = "WHERE instance = '%s'" % label
    got = {}
    for table in ('totals', 'hosts'):
        for r in ch.rows('SELECT toString(direction), sum(packets), sum(bytes) FROM dpmon.%s '
                         '%s GROUP BY direction' % (table, where)):
            got[(table, r[0])] = (int(r[1]), int(r[2]))
    diffs = []
    for table in ('totals', 'hosts'):
        for dr in ('ingress', 'egress'):
            have = got.get((table, dr), (0, 0))
            if have != final[dr]:
                diffs.append('%s %s: ClickHouse %d packets %d bytes, dpmon %d packets %d bytes'
                             % (table, dr, have[0], have[1], final[dr][0], final[dr][1]))
    tot = {k[1]: v for k, v in got.items() if k[0] == 'totals'}
    counted = (tot.get('ingress', (0, 0))[0] + tot.get('egress', (0, 0))[0] -
               tot.get('internal', (0, 0))[0] + tot.get('external', (0, 0))[0])
    if counted != sum(wk):
        diffs.append('totals ingress + egress - internal + external %d packets, worker '
                     'received %d' % (counted, sum(wk)))
    dropped = re.findall(r'export to clickhouse[^\n]*(?:dropped|failed)[^\n]*', log_text)
    res.update({'final': final, 'clickhouse': {'%s/%s' % k: v for k, v in got.items()},
                'worker_packets': sum(wk), 'exact': not diffs, 'differences': diffs,
                'export_log': dropped[:5]})
    return res


def section_export1m(env):
    """1 M active hosts at merge_interval_ms 1000 with the ClickHouse
    exporter on, into a real ClickHouse (Debian's clickhouse-server on
    loopback, CPU 0, nice --export1m-ch-nice), one worker on 1m-hosts
    replayed forever: merges per second, snapshots the exporter skipped,
    its CPU seconds and rows per interval, the main lcore's time per
    interval (the merge as dpmon reports it, merge_s, and the rest of the
    main lcore thread's CPU per merge: detection, rankings, publication),
    and whether the sums in ClickHouse are exact once dpmon stopped. With
    --export1m-ref BIN the reference build runs too, alternated."""
    env.capture('1m-hosts')
    secs = env.args.secs if env.args.secs_given else 60
    builds = [('new', None)]
    if env.args.export1m_ref:
        builds = [('ref', env.args.export1m_ref)] + builds
    ch = BenchClickHouse(env, env.args.export1m_ch_nice)
    rows = []
    try:
        for r in range(env.args.export1m_reps):
            for name, binary in builds:
                label = 'bench-%s-%d' % (name, r)
                try:
                    w = export1m_arm(env, ch, binary, label, secs,
                                     perf_secs=env.args.export1m_perf if r == 0 else 0)
                except Exception as e:  # the other arm still runs
                    w = {'label': label, 'error': str(e)}
                w['build'] = name
                rows.append(w)
                log('export1m %s: %s' % (label, json.dumps(
                    {k: v for k, v in w.items() if k not in ('perf', 'final', 'clickhouse')})))
    finally:
        ch.close()
    return rows


def wrk(url, secs, conns=4, pace_ms=None):
    """wrk -t1 on CPU 0: flat out, or paced (each connection waits pace_ms
    before each request: at most conns / pace_ms requests per ms)."""
    script = []
    if pace_ms:
        fd, path = tempfile.mkstemp(suffix='.lua', prefix='dpmon-bench-')
        with os.fdopen(fd, 'w') as f:
            f.write('function delay()\n  return %d\nend\n' % pace_ms)
        script = ['-s', path]
    try:
        out = subprocess.run(['taskset', '-c', str(CPU_MAIN), 'wrk', '-t1', '-c%d' % conns,
                              '-d%ds' % secs, '--latency'] + script + [url],
                             capture_output=True, text=True).stdout
    finally:
        if script:
            os.unlink(script[1])

    def lat(pct):
        m = re.search(r'^\s+%s%%\s+([\d.]+)(us|ms|s)\s*$' % pct, out, re.M)
        if not m:
            return None
        v = float(m.group(1))
        return v / 1000 if m.group(2) == 'us' else v * 1000 if m.group(2) == 's' else v

    m = re.search(r'Requests/sec:\s+([\d.]+)', out)
    total = re.search(r'(\d+) requests in', out)
    non2xx = re.search(r'Non-2xx or 3xx responses:\s+(\d+)', out)
    return {'rps': float(m.group(1)) if m else 0.0, 'p50_ms': lat('50'), 'p99_ms': lat('99'),
            'requests': int(total.group(1)) if total else 0,
            'non_2xx': int(non2xx.group(1)) if non2xx else 0}


def section_http(env):
    rows = []
    bins = [('current', env.dpmon)]
    if env.args.http_ref:
        bins = [('reference', env.args.http_ref)] + bins
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {CPU_MAIN})  # this driver's polling stays off the worker's CPU
    try:
        for rep in range(env.args.http_reps):
            for name, binary in bins:
                got = http_rows(env, binary) if env.args.http_rows == 'all' else []
                for r in got + stall_rows(env, name, binary):
                    r.update({'binary': name, 'rep': rep})
                    rows.append(r)
    finally:
        os.sched_setaffinity(0, saved)
    return rows


def thread_cpu_seconds(pid, prefix):
    """User + system CPU seconds of the threads of `pid` whose name starts with `prefix`."""
    tot = 0.0
    for tid in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
                if not f.read().startswith(prefix):
                    continue
            with open('/proc/%d/task/%s/stat' % (pid, tid)) as f:
                fields = f.read().rsplit(')', 1)[1].split()
            tot += (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')
        except OSError:
            pass
    return tot


def http_rows(env, binary):
    mix = '64k-hosts'
    env.capture(mix)
    d = dpmon_for_mix(env, mix, label='dpmon-http', binary=binary)
    rows = []
    try:
        base = url = None
        secs = env.args.secs
        base1 = d.rates(secs)[0]
        # Control: CPU 0 kept busy by a plain spin loop, no HTTP at all. On a
        # VM whose vCPUs share physical cores, this alone slows CPU 1; the
        # HTTP rows are compared with it as well as with the idle rate.
        burn = subprocess.Popen(['taskset', '-c', str(CPU_MAIN), 'sh', '-c', 'while :; do :; done'])
        try:
            time.sleep(1.0)
            burned = d.rates(secs - 1, warmup=False)[0]
        finally:
            burn.kill()
            burn.wait()
        base2 = d.rates(secs)[0]
        rows.append({'path': 'control: CPU 0 spin loop, no HTTP', 'rps': 0.0, 'p50_ms': None,
                     'p99_ms': None, 'dataplane_mpps_idle': (base1 + base2) / 2,
                     'dataplane_mpps_loaded': burned,
                     'dataplane_loss': 1 - burned / ((base1 + base2) / 2)})
        log('http control: CPU 0 spin loop: data plane %.2f -> %.2f Mpps'
            % ((base1 + base2) / 2, burned))
        base1 = base2
        # (path, connections, pace): flat out with 4 connections, and the
        # summary paced at the target (48 connections, each waiting 3 ms
        # before each request: at most 16 k requests/s, about 11-12 k with
        # each request's own time; 4 ms gave 8.6-9.5 k; more than 63
        # connections would take every slot one client address gets,
        # HTTP_MAX_PER_IP, and lock out the rate polls), which is the
        # data-plane cost to quote. The HTTP thread's own CPU time per
        # request is measured too (libmicrohttpd's thread, /proc). The
        # host listings (two rankings, flat out) are compared with the
        # summary's flat-out row of the same run (ratio_to_summary); one
        # is also paced like the summary, above the 5 000 requests/s its
        # p99 is quoted at (flat out, the p99 is the shared CPU's).
        summary_rps = None
        for path, conns, pace in (('/api/v1/summary', 4, None), ('/api/v1/summary', 48, 3),
                                  ('/api/v1/hosts?sort=bps&limit=100', 4, None),
                                  ('/api/v1/hosts?sort=bps&limit=100', 48, 3),
                                  ('/api/v1/hosts?sort=packets&direction=egress&limit=100', 4,
                                   None),
                                  ('/metrics', 4, None)):
            url = 'http://127.0.0.1:%d%s' % (d.port, path)
            try:
                urllib.request.urlopen(url, timeout=10).read()
            except urllib.error.HTTPError as e:
                if e.code == 404:
                    rows.append({'path': path, 'skipped': 'HTTP 404 (not in this build)'})
                    continue
                raise
            res = {}
            import threading
            t = threading.Thread(target=lambda: res.update(wrk(url, secs + 3, conns, pace)))
            h0 = thread_cpu_seconds(d.p.pid, 'MHD')
            t.start()
            time.sleep(1.0)
            loaded = d.rates(secs - 1, warmup=False)[0]
            t.join()
            h1 = thread_cpu_seconds(d.p.pid, 'MHD')
            res['http_thread_cpu_s'] = h1 - h0
            res['http_thread_us_per_request'] = \
                1e6 * (h1 - h0) / res['requests'] if res.get('requests') else None
            base2 = d.rates(secs)[0]
            base = (base1 + base2) / 2
            res.update({'path': path if pace is None else '%s (paced: %d conns, %d ms)'
                        % (path, conns, pace),
                        'connections': conns, 'pace_ms': pace,
                        'dataplane_mpps_idle': base, 'dataplane_mpps_loaded': loaded,
                        'dataplane_loss': 1 - loaded / base})
            if path == '/api/v1/summary' and pace is None:
                summary_rps = res['rps']
            if path.startswith('/api/v1/hosts') and summary_rps:
                res['ratio_to_summary'] = res['rps'] / summary_rps
            rows.append(res)
            log('http %s %s: %.0f req/s p50 %s ms p99 %s ms, data plane %.2f -> %.2f Mpps, '
                'HTTP thread %s us/request'
                % (os.path.basename(os.path.dirname(os.path.dirname(binary))), res['path'],
                   res['rps'], res['p50_ms'], res['p99_ms'], base, loaded,
                   fmt(res['http_thread_us_per_request'], '%.1f')))
            base1 = base2
    finally:
        d.stop()
    return rows


STALL_PAGE = '/api/v1/hosts?limit=10000'
STALL_SUBNETS = 10000
STALL_READERS = 4
STALL_NON_READERS = 120
STALL_POLL_S = 10.0


def stall_reader(port, stop, out):
    """Pull the largest answers until @stop is set; put the count in @out."""
    n = 0
    while not stop.is_set():
        for path in (STALL_PAGE, '/api/v1/history'):
            c = http.client.HTTPConnection('127.0.0.1', port, timeout=60)
            try:
                c.request('GET', path)
                r = c.getresponse()
                r.read()
                n += r.status == 200
            except (OSError, http.client.HTTPException):
                pass  # a reference build may cut a slow answer
            finally:
                c.close()
    out.put(n)


def stall_poll(d, secs, peak):
    """/health and /api/v1/summary in turn, a new connection each, every
    20 ms for @secs: (latencies ms, failures by status or exception); the
    RSS peak into @peak."""
    lat, failed = [], {}
    end = time.monotonic() + secs
    i = 0
    while time.monotonic() < end:
        t0 = time.monotonic()
        c = http.client.HTTPConnection('127.0.0.1', d.port, timeout=10)
        try:
            c.request('GET', ('/health', '/api/v1/summary')[i % 2])
            r = c.getresponse()
            body = r.read()
            if r.status != 200:
                why = '%d %s' % (r.status, body[:80].decode('utf-8', 'replace'))
                failed[why] = failed.get(why, 0) + 1
        except (OSError, http.client.HTTPException) as e:
            failed[type(e).__name__] = failed.get(type(e).__name__, 0) + 1
        finally:
            c.close()
        i += 1
        lat.append(1e3 * (time.monotonic() - t0))
        peak.append(proc_status_mb(d.p.pid, 'VmRSS'))
        time.sleep(0.02)
    return lat, failed


def stall_row(d, what, secs, extra=None):
    rss0 = proc_status_mb(d.p.pid, 'VmRSS')
    peak = [rss0]
    lat, failed = stall_poll(d, secs, peak)
    lat.sort()
    row = {'path': '/health + summary: ' + what, 'polls': len(lat),
           'failed': sum(failed.values()), 'failures': failed,
           'p50_ms': lat[len(lat) // 2], 'p99_ms': lat[min(len(lat) - 1, len(lat) * 99 // 100)],
           'max_ms': lat[-1], 'rss_mb_before': rss0, 'rss_mb_peak': max(peak)}
    row.update(extra or {})
    return row


def stall_rows(env, name, binary):
    """/health and the summary while others pull or leave large answers
    (module docstring, http)."""
    mix = '64k-hosts'
    pcap = env.capture(mix)
    subnets = env.subnets(mix)
    for i in range(STALL_SUBNETS - len(subnets)):
        subnets.append({'prefix': '2001:db8:%x::/48' % i, 'name': 'idle %d' % i})
    m = env.mixes[mix]
    d = Dpmon(env, 'net_pcap0,rx_pcap=%s,infinite_rx=1' % pcap, subnets,
              ['-l', '0-1'], env.mem_for(m['packets']) + 256, m['packets'] + 8192, 131072,
              {'merge_interval_ms': 1000}, 'dpmon-stalls', binary=binary)
    rows = []
    try:
        d.rates(2, warmup=False, min_samples=1)
        rows.append(stall_row(d, 'alone', STALL_POLL_S))
        stop, out = multiprocessing.Event(), multiprocessing.Queue()
        procs = [multiprocessing.Process(target=stall_reader, args=(d.port, stop, out))
                 for _ in range(STALL_READERS)]
        for p in procs:
            p.start()
        try:
            time.sleep(1.0)
            row = stall_row(d, '%d clients pulling the largest answers' % STALL_READERS,
                            STALL_POLL_S)
        finally:
            stop.set()
            row['large_answers'] = sum(out.get(timeout=120) for _ in procs)
            for p in procs:
                p.join(timeout=60)
        rows.append(row)
        socks = []
        try:
            for i in range(STALL_NON_READERS):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.bind(('127.0.0.%d' % (2 + i % 3), 0))
                s.connect(('127.0.0.1', d.port))
                s.sendall(('GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n' % STALL_PAGE).encode())
                socks.append(s)
            rows.append(stall_row(d, '%d connections that never read' % STALL_NON_READERS,
                                  STALL_POLL_S))
        finally:
            for s in socks:
                s.close()
    finally:
        d.stop()
    for r in rows:
        log('http stalls %s %s: p50 %.1f ms p99 %.1f ms max %.1f ms, %d of %d failed %s, '
            'RSS %.0f -> peak %.0f MB' % (name, r['path'], r['p50_ms'], r['p99_ms'],
                                          r['max_ms'], r['failed'], r['polls'], r['failures'],
                                          r['rss_mb_before'], r['rss_mb_peak']))
    return rows


def proc_status_mb(pid, key):
    with open('/proc/%d/status' % pid) as f:
        for line in f:
            if line.startswith(key + ':'):
                return int(line.split()[1]) / 1024
    return None


def thread_run_seconds(pid, prefix):
    """Seconds on a CPU of the threads of `pid` whose name starts with
    `prefix`, to the nanosecond (/proc/PID/task/TID/schedstat)."""
    tot = 0
    for tid in os.listdir('/proc/%d/task' % pid):
        try:
            with open('/proc/%d/task/%s/comm' % (pid, tid)) as f:
                if not f.read().startswith(prefix):
                    continue
            with open('/proc/%d/task/%s/schedstat' % (pid, tid)) as f:
                tot += int(f.read().split()[0])
        except OSError:
            pass
    return tot / 1e9


def scrape_once(d, url):
    """One GET /metrics: (wall seconds, body bytes, peak MB above the RSS
    before, CPU seconds of libmicrohttpd's thread)."""
    rss0 = proc_status_mb(d.p.pid, 'VmRSS')
    cpu0 = thread_run_seconds(d.p.pid, 'MHD')
    with open('/proc/%d/clear_refs' % d.p.pid, 'w') as f:
        f.write('5')  # VmHWM := VmRSS
    out = subprocess.run(['taskset', '-c', str(CPU_MAIN), 'curl', '-s', '-o', '/dev/null',
                          '-w', '%{http_code} %{size_download} %{time_total}', url],
                         capture_output=True, text=True, timeout=120).stdout.split()
    if not out or out[0] != '200':
        raise RuntimeError('GET /metrics answered %s' % (out[0] if out else 'nothing'))
    return (float(out[2]), int(out[1]), proc_status_mb(d.p.pid, 'VmHWM') - rss0,
            thread_run_seconds(d.p.pid, 'MHD') - cpu0)


def metrics_rows(env, name, binary, n_subnets, top_subnets=None, scrapes=8):
    mix = '64k-hosts'
    env.capture(mix)
    subnets = env.subnets(mix)
    for i in range(n_subnets - len(subnets)):
        subnets.append({'prefix': '2001:db8:%x::/48' % i, 'name': 'idle %d' % i})
    m = env.mixes[mix]
    extra = {'metrics': {'top_subnets': top_subnets}} if top_subnets is not None else None
    d = Dpmon(env, 'net_pcap0,rx_pcap=%s,infinite_rx=1' % env.capture(mix), subnets,
              ['-l', '0-1'], env.mem_for(m['packets']) + 256, m['packets'] + 8192, 131072,
              extra, 'dpmon-metrics', binary=binary)
    try:
        d.rates(2, warmup=False, min_samples=1)  # counting, snapshots published
        url = 'http://127.0.0.1:%d/metrics' % d.port
        # Each pair: the first scrape of a snapshot (rendered, then sent;
        # what a Prometheus scraping every few seconds always gets: the
        # scrape follows the first summary that shows a newer snapshot),
        # then at once the same snapshot again (sent from the cache, unless
        # a merge came in between).
        fresh, cached = [], []
        seq = d.summary()['snapshot_seq']
        for _ in range(scrapes):
            while d.summary()['snapshot_seq'] == seq:
                time.sleep(0.02)
            seq = d.summary()['snapshot_seq']
            fresh.append(scrape_once(d, url))
            cached.append(scrape_once(d, url))
        # Control: the same moment after a publication, no scrape: how far
        # dpmon's memory rises anyway (the main lcore's work after a merge).
        control = []
        for _ in range(scrapes):
            while d.summary()['snapshot_seq'] == seq:
                time.sleep(0.02)
            seq = d.summary()['snapshot_seq']
            rss0 = proc_status_mb(d.p.pid, 'VmRSS')
            with open('/proc/%d/clear_refs' % d.p.pid, 'w') as f:
                f.write('5')
            time.sleep(max(0.05, statistics.median(r[0] for r in fresh)))
            control.append(proc_status_mb(d.p.pid, 'VmHWM') - rss0)
        rss = proc_status_mb(d.p.pid, 'VmRSS')
    finally:
        d.stop()
    runs = fresh + cached
    row = {'binary': name, 'subnets': n_subnets, 'top_subnets': top_subnets,
           'scrapes': scrapes, 'body_bytes': fresh[-1][1],
           'scrape_ms_median': 1e3 * statistics.median(r[0] for r in fresh),
           'scrape_ms_max': 1e3 * max(r[0] for r in fresh),
           'cached_ms_median': 1e3 * statistics.median(r[0] for r in cached),
           'http_cpu_ms_median': 1e3 * statistics.median(r[3] for r in fresh),
           'http_cpu_ms_max': 1e3 * max(r[3] for r in fresh),
           'peak_extra_mb_max': max(r[2] for r in runs),
           'peak_extra_mb_median': statistics.median(r[2] for r in fresh),
           'control_peak_extra_mb_max': max(control),
           'rss_mb_after': rss, 'fresh': fresh, 'cached': cached, 'control': control}
    log('metrics %s %d subnets%s: %d bytes, first scrape of a snapshot %.1f ms median '
        '(max %.1f; HTTP thread CPU %.1f ms, max %.1f), again %.1f ms, peak extra RSS %.1f MB '
        '(without a scrape %.1f MB)'
        % (name, n_subnets, '' if top_subnets is None else ' top_subnets %d' % top_subnets,
           row['body_bytes'], row['scrape_ms_median'], row['scrape_ms_max'],
           row['http_cpu_ms_median'], row['http_cpu_ms_max'], row['cached_ms_median'],
           row['peak_extra_mb_max'], row['control_peak_extra_mb_max']))
    return row


def section_metrics(env):
    """/metrics scrape cost at 65 536 subnets and at 256 (module docstring)."""
    rows = []
    bins = [('current', env.dpmon)]
    if env.args.http_ref:
        bins = [('reference', env.args.http_ref)] + bins
    saved = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {CPU_MAIN})
    try:
        for name, binary in bins:
            for n in (65536, 256):
                rows.append(metrics_rows(env, name, binary, n,
                                         scrapes=2 if name == 'reference' and n > 256 else 8))
        # Every subnet exported (metrics.top_subnets 65536): the whole text.
        rows.append(metrics_rows(env, 'current', env.dpmon, 65536, top_subnets=65536, scrapes=4))
    finally:
        os.sched_setaffinity(0, saved)
    return rows


# ---------------------------------------------------------------------------
# FastNetMon side by side
# ---------------------------------------------------------------------------

NS = 'dpmonbench%d' % os.getpid()


def sh(*argv, check=True):
    return subprocess.run(list(argv), check=check, capture_output=True, text=True)


def netns_up():
    sh('ip', 'netns', 'add', NS)
    sh('ip', '-n', NS, 'link', 'add', 'vb0', 'type', 'veth', 'peer', 'name', 'vb1')
    for i in ('vb0', 'vb1'):
        sh('ip', '-n', NS, 'link', 'set', i, 'mtu', '9000')
        sh('ip', '-n', NS, 'link', 'set', i, 'up')
    sh('ip', '-n', NS, 'link', 'set', 'lo', 'up')


def netns_down():
    sh('ip', 'netns', 'del', NS, check=False)


def in_ns(argv):
    return ['ip', 'netns', 'exec', NS] + argv


def replay(pcap, loops):
    """tcpreplay the capture `loops` times as fast as possible; returns packets sent."""
    r = sh(*in_ns(['taskset', '-c', str(CPU_MAIN), 'tcpreplay', '-i', 'vb0', '--topspeed',
                   '--loop=%d' % loops, pcap]))
    m = re.search(r'Actual:\s+(\d+) packets', r.stdout)
    return int(m.group(1)) if m else 0


def fnm_config(dirpath, subnets):
    nets = os.path.join(dirpath, 'networks_list')
    with open(nets, 'w') as f:
        for s in subnets:
            f.write(s['prefix'] + '\n')
    white = os.path.join(dirpath, 'networks_whitelist')
    open(white, 'w').close()
    conf = os.path.join(dirpath, 'fastnetmon.conf')
    opts = {
        'logging_level': 'info', 'disable_usage_report': 'on', 'enable_ban': 'off',
        'enable_ban_ipv6': 'off', 'process_incoming_traffic': 'on',
        'process_outgoing_traffic': 'on', 'networks_list_path': nets,
        'white_list_path': white, 'check_period': '1', 'enable_connection_tracking': 'off',
        'mirror_afpacket': 'on', 'mirror_af_packet_fanout_mode': 'cpu',
        'mirror_af_packet_custom_sampling_rate': '1', 'interfaces': 'vb1',
        'average_calculation_time': '5', 'speed_calculation_delay': '1',
        'pcap': 'off', 'netflow': 'off', 'sflow': 'off', 'redis_enabled': 'off',
        'mongodb_enabled': 'off', 'exabgp': 'off', 'gobgp': 'off', 'influxdb': 'off',
        'graphite': 'off', 'monitor_local_ip_addresses': 'off',
        'pid_path': os.path.join(dirpath, 'fnm.pid'),
        'cli_stats_file_path': os.path.join(dirpath, 'fnm.dat'),
        'cli_stats_ipv6_file_path': os.path.join(dirpath, 'fnm6.dat'),
        'enable_api': 'off', 'prometheus': 'on', 'prometheus_port': '9209',
        'prometheus_host': '127.0.0.1', 'sort_parameter': 'packets', 'max_ips_in_list': '7',
    }
    with open(conf, 'w') as f:
        for k, v in opts.items():
            f.write('%s = %s\n' % (k, v))
    return conf


def fnm_counters(text):
    """Total packets FastNetMon counted, from its Prometheus text."""
    tot = {}
    for line in text.splitlines():
        if line.startswith('#'):
            continue
        m = re.match(r'(\w+)(\{[^}]*\})?\s+([\d.e+]+)$', line)
        if m and 'packets' in m.group(1) and 'total' in m.group(1):
            tot[m.group(1) + (m.group(2) or '')] = float(m.group(3))
    return tot


def fnm_processed(text):
    m = re.search(r'^fastnetmon_total_simple_packets_processed\s+([\d.e+]+)', text, re.M)
    v4 = re.search(r'^fastnetmon_total_ipv4_packets\s+([\d.e+]+)', text, re.M)
    return (int(float(m.group(1))) if m else None, int(float(v4.group(1))) if v4 else None)


def run_fastnetmon(env, tmp, pcap, subnets, loops):
    conf = fnm_config(tmp, subnets)
    p = subprocess.Popen(in_ns(['taskset', '-c', str(CPU_WORKER), '/usr/sbin/fastnetmon',
                                '--configuration_file', conf, '--log_file',
                                os.path.join(tmp, 'fnm.log'), '--disable_pid_logic']),
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    try:
        time.sleep(5)  # reads its configuration, opens AF_PACKET
        c0 = cpu_seconds(p.pid)
        t0 = time.monotonic()
        sent = replay(pcap, loops)
        time.sleep(3)  # let it drain its ring
        c1 = cpu_seconds(p.pid)
        wall = time.monotonic() - t0
        prom = sh(*in_ns(['curl', '-s', 'http://127.0.0.1:9209/metrics']), check=False).stdout
    finally:
        stop_proc(p, signal.SIGTERM)
    processed, v4 = fnm_processed(prom)
    return {'sent': sent, 'counted': processed, 'counted_ipv4': v4, 'cpu_s': c1 - c0,
            'wall_s': wall,
            'packets_per_cpu_s': (v4 or 0) / (c1 - c0) if c1 > c0 else None,
            'counted_every_packet': v4 is not None and v4 >= sent}


def dpmon_ip_counted(s):
    """IP packets a summary counted: every packet is in exactly one of ingress,
    egress, internal (counted in both ingress and egress) or external."""
    t = s['totals']
    return t['ingress']['packets'] + t['egress']['packets'] - t['internal']['packets'] + \
        t['external']['packets']


def run_dpmon_afp(env, pcap, subnets, loops, idle_sleep_us=0):
    # framecnt 65536: the TPACKET ring holds 65 536 frames, 0.6 s of the
    # offered ~0.1 Mpps, far more than one idle sleep.
    d = Dpmon(env, 'net_af_packet0,iface=vb1,qpairs=1,blocksz=4096,framesz=2048,framecnt=65536',
              subnets, ['-l', '0-1'], 1024, 16384,
              1 << 17, extra={'idle_sleep_us': idle_sleep_us},
              label='dpmon-afp-idle%d' % idle_sleep_us, netns=NS)
    try:
        time.sleep(1)
        s0 = d.summary()
        ip0 = dpmon_ip_counted(s0)
        c0 = cpu_seconds(d.p.pid)  # `ip netns exec` execs dpmon: same pid
        t0 = time.monotonic()
        sent = replay(pcap, loops)
        # The window ends as soon as every packet is counted (or 10 s after
        # the replay): a busy-polling worker is charged for that wait too.
        deadline = time.monotonic() + 10
        while True:
            s1 = d.summary()
            if dpmon_ip_counted(s1) - ip0 >= sent or time.monotonic() >= deadline:
                break
            time.sleep(0.05)
        c1 = cpu_seconds(d.p.pid)
        wall = time.monotonic() - t0
    finally:
        out = d.stop()
    counted = sum(w['packets'] for w in s1['workers']) - sum(w['packets'] for w in s0['workers'])
    ip = dpmon_ip_counted(s1) - ip0
    m = re.search(r'worker lcore \d+: (\d+) packets, ([\d.]+) s busy', out)
    busy = float(m.group(2)) if m else None
    total = int(m.group(1)) if m else None
    return {'sent': sent, 'counted': counted, 'counted_ip': ip, 'cpu_s': c1 - c0,
            'wall_s': wall, 'packets_per_cpu_s': ip / (c1 - c0) if c1 > c0 else None,
            'busy_cpu_s': busy, 'packets_total': total,
            'packets_per_busy_cpu_s': total / busy if busy else None,
            'counted_every_packet': ip >= sent}


def section_fnm(env):
    """FastNetMon (AF_PACKET) and dpmon (net_af_packet) on one veth end.

    Both: the analyzer process's user + system time, all its threads
    (/proc/PID/stat), from just before the replay until it has counted
    every packet (dpmon) or 3 s after the replay (FastNetMon, which sleeps
    when idle). tcpreplay runs on CPU 0 as another process: its CPU, and the
    veth's softirq that it triggers (where both AF_PACKET sockets are fed),
    is charged to neither. Headline: IP packets counted / that CPU time.
    dpmon runs twice: busy polling (the default), whose worker burns its
    CPU whether or not packets come, so its figure is a lower bound of its
    efficiency unless the offered rate saturates it; and with
    "idle_sleep_us" (idle.h), whose worker sleeps while the TPACKET ring is
    empty, as FastNetMon does, so its CPU time follows the work. The busy
    time of the busy-polling worker (non-empty bursts, printed at exit)
    gives a third, work-proportional figure.
    """
    mix = env.args.fnm_mix
    pcap = env.capture(mix)
    subnets = env.subnets(mix)
    loops = env.args.fnm_loops
    netns_down()
    netns_up()
    tmp = tempfile.mkdtemp(prefix='dpmon-bench-fnm-')
    try:
        fnm = run_fastnetmon(env, tmp, pcap, subnets, loops)
        log('fnm: FastNetMon %s' % fnm)
        dp = run_dpmon_afp(env, pcap, subnets, loops)
        log('fnm: dpmon %s' % dp)
        dpi = run_dpmon_afp(env, pcap, subnets, loops, env.args.fnm_idle_sleep_us)
        log('fnm: dpmon idle sleep %s' % dpi)
    finally:
        netns_down()
        shutil.rmtree(tmp, ignore_errors=True)
    ratio = ratio_busy = ratio_idle = None
    if fnm['packets_per_cpu_s'] and dp['packets_per_cpu_s']:
        ratio = dp['packets_per_cpu_s'] / fnm['packets_per_cpu_s']
    if fnm['packets_per_cpu_s'] and dpi['packets_per_cpu_s']:
        ratio_idle = dpi['packets_per_cpu_s'] / fnm['packets_per_cpu_s']
    if fnm['packets_per_cpu_s'] and dp.get('packets_per_busy_cpu_s'):
        ratio_busy = dp['packets_per_busy_cpu_s'] / fnm['packets_per_cpu_s']
    return {'mix': mix, 'loops': loops, 'fastnetmon': fnm, 'dpmon': dp, 'ratio': ratio,
            'ratio_busy': ratio_busy, 'dpmon_idle': dpi, 'ratio_idle': ratio_idle,
            'idle_sleep_us': env.args.fnm_idle_sleep_us}


# ---------------------------------------------------------------------------
# Output
# ---------------------------------------------------------------------------

def fmt(v, f='%.2f'):
    return '-' if v is None else f % v


def print_table(res):
    out = []
    add = out.append
    if 'e2e' in res:
        add('End to end, one core, net_pcap infinite_rx=1 (Mpps; ratio = dpmon / testpmd rxonly)')
        add('%-12s %-52s %9s %9s %7s' % ('mix', 'capture', 'testpmd', 'dpmon', 'ratio'))
        for r in res['e2e']:
            if 'error' in r:
                add('%-12s failed: %s' % (r['mix'], r['error'][:100]))
                continue
            add('%-12s %-52s %9.2f %9.2f %7.3f' % (r['mix'], r['title'][:52], r['testpmd_mpps'],
                                                  r['dpmon_mpps'], r['ratio']))
            if 'dpmon_no_sketches_mpps' in r:
                add('%-12s %-52s %9s %9.2f %7.3f' % ('', '  the same, "flow_sketches": false', '',
                                                    r['dpmon_no_sketches_mpps'],
                                                    r['ratio_no_sketches']))
        add('')
    if 'scale' in res:
        sc = res['scale']
        add('Two workers on a 2-queue net_pcap port (%s), one CPU each' % sc['mix'])
        add('  1 worker %.2f Mpps; 2 workers %.2f Mpps, %.2f per worker (%.2f x one)' % (
            sc['one_worker_mpps'], sc['two_workers_mpps'], sc['per_worker_mpps'],
            sc['per_worker_mpps'] / sc['one_worker_mpps']))
        add('')
    if 'export' in res:
        add('Export to ClickHouse (a stand-in server): data plane on/off, exporter per interval')
        add('%-10s %8s %8s %7s %8s %8s %7s %7s %7s %8s %9s %8s %6s %9s' % (
            'mix', 'off Mpps', 'on Mpps', 'ratio', 'off ns/p', 'on ns/p', 'cost', 'spin',
            'stream', 'rows', 'encode s', 'cpu s', 'B/row', 'merges/s'))
        for r in res['export']:
            add('%-10s %8.3f %8.3f %7.3f %8.1f %8.1f %7.3f %7.3f %7.3f %8d %9.3f %8.3f %6.0f '
                '%4.2f/%4.2f' % (
                    r['mix'], r['off_mpps'], r['on_mpps'], r['ratio'], r['off_ns_per_packet'],
                    r['on_ns_per_packet'], r['cost_ratio'], r.get('spin_cost_ratio', 0),
                    r.get('stream_cost_ratio', 0), r['rows_per_interval'], r['encode_s'],
                    r['cpu_s_per_interval'], r.get('bytes_per_row', 0),
                    r.get('merges_per_s_off', 0), r.get('merges_per_s_on', 0)))
        add('  merge interval %d ms; ns/p: the worker\'s CPU time per packet (busy time per'
            ' packet from the' % res['export'][0].get('interval_ms', 500))
        add('  snapshots, times the share of wall time its thread ran); cost: on / off;'
            ' the controls, / off:')
        add('  spin: a busy loop on CPU 0; stream: dd of 32 MB blocks on CPU 0;'
            ' merges/s: off/on')
        add('')
    if 'export1m' in res:
        add('1 M active hosts, merge_interval_ms 1000, ClickHouse exporter on (a real server'
            ' on CPU 0), one worker')
        add('%-12s %7s %8s %8s %8s %9s %8s %8s %8s %9s %s' % (
            'run', 'Mpps', 'merges/s', 'skipped', 'exp cpu', 'rows', 'merge s', 'main cpu',
            'other s', 'intervals', 'sums in ClickHouse'))
        for r in res['export1m']:
            if 'error' in r:
                add('%-12s failed: %s' % (r['label'], r['error'][:100]))
                continue
            add('%-12s %7.3f %8.2f %8d %8.3f %9.0f %8.3f %8.3f %8s %9d %s' % (
                r['label'], r['mpps'], r['merges_per_s'], r['handoff_skipped'],
                r['exporter_cpu_s_per_interval'], r['rows_per_interval'], r['merge_s'] or 0,
                r['main_cpu_s_per_merge'], fmt(r['other_s_per_merge'], '%.3f'),
                r['exporter_intervals'],
                'exact' if r['exact'] else '; '.join(r['differences'])))
        add('  skipped: snapshots not handed to the exporter; exp cpu: its CPU s per interval;'
            ' merge s: merge_s;')
        add('  main cpu: the main lcore thread\'s CPU s per merge; other: main cpu - merge s'
            ' (detection, rankings,')
        add('  publication; "-": merge_s, a wall time, exceeds it: the main lcore waited for'
            ' its CPU)')
        add('')
    if 'srss' in res:
        add('Software RSS (distributor lcore -> workers through rte_rings), 2 CPUs')
        for r in res['srss']:
            add('  %-12s %-10s %6.2f Mpps  %.2f x reference  imissed %d'
                % (r['mix'], r['case'], r['dpmon_mpps'], r['ratio_to_reference'], r['imissed']))
        add('')
    if 'hot' in res:
        add('Hot path alone (dpmon_worker_count on mbufs in memory, burst 32)')
        add('%-12s %10s %8s %8s' % ('mix', 'ns/packet', 'Mpps', 'hosts'))
        for r in res['hot']:
            if 'error' in r:
                add('%-12s failed' % r['mix'])
                continue
            add('%-12s %10.1f %8.2f %8d' % (r['mix'], r['ns_per_packet'], r['mpps'], r['hosts']))
            if 'ns_per_packet_no_sketches' in r:
                add('%-12s %10.1f %8.2f   flow_sketches off' % (
                    '', r['ns_per_packet_no_sketches'], 1e3 / r['ns_per_packet_no_sketches']))
        add('')
    if 'merge' in res:
        add('Merge (ms, best of 3) vs hosts and worker tables; bytes per host entry per core')
        add('%9s %6s %8s %9s %8s %9s %8s' % ('hosts', 'tables', 'touched', 'merge', 'fold',
                                             'snapshot', 'B/entry'))
        for r in res['merge']:
            add('%9d %6d %7d%% %9.2f %8.2f %9.2f %8.1f' % (
                r['hosts'], r['tables'], r['touched_percent'], r['merge_ms_best'],
                r['fold_ms_best'], r['snapshot_ms_best'], r['bytes_per_entry']))
        add('')
    model = scaling_model(res)
    if model:
        add('Scaling model: worker cores for one port of 64-byte frames at the measured rates')
        out.extend(model)
        add('')
    if 'http' in res:
        add('HTTP under load (wrk -t1 -c4 on the main lcore CPU; data plane on the other)')
        for r in res['http']:
            if 'polls' in r:  # a stall row
                add('  %-9s %-56s p50 %s ms  p99 %s ms  max %s ms  %d/%d failed  RSS %.0f -> '
                    'peak %.0f MB' % (r.get('binary', ''), r['path'], fmt(r['p50_ms'], '%.1f'),
                                      fmt(r['p99_ms'], '%.1f'), fmt(r['max_ms'], '%.1f'),
                                      r['failed'], r['polls'], r['rss_mb_before'],
                                      r['rss_mb_peak']))
                continue
            if 'skipped' in r:
                add('  %-9s %-56s skipped: %s' % (r.get('binary', ''), r['path'], r['skipped']))
                continue
            add('  %-9s %-56s %8.0f req/s  p50 %s ms  p99 %s ms  data plane %.2f -> %.2f Mpps '
                '(%.1f%% lost)  HTTP thread %s us/req%s'
                % (r.get('binary', ''), r['path'], r['rps'], fmt(r['p50_ms']), fmt(r['p99_ms']),
                   r['dataplane_mpps_idle'], r['dataplane_mpps_loaded'],
                   100 * r['dataplane_loss'], fmt(r.get('http_thread_us_per_request'), '%.1f'),
                   '  %.3f x summary' % r['ratio_to_summary'] if 'ratio_to_summary' in r
                   else ''))
        add('')
    if 'metrics' in res:
        add('GET /metrics, one scrape at a time (curl on the main lcore CPU; data plane on '
            'the other)')
        add('  %-9s %7s %11s %12s %10s %10s %10s %10s %14s %12s'
            % ('binary', 'subnets', 'top_subnets', 'body bytes', 'first ms', 'first max',
               'HTTP CPU', 'again ms', 'peak extra MB', 'no scrape'))
        for r in res['metrics']:
            add('  %-9s %7d %11s %12d %10.1f %10.1f %10s %10.1f %14.1f %12s'
                % (r['binary'], r['subnets'],
                   'default' if r['top_subnets'] is None else r['top_subnets'],
                   r['body_bytes'], r['scrape_ms_median'], r['scrape_ms_max'],
                   fmt(r.get('http_cpu_ms_median'), '%.1f'), r['cached_ms_median'],
                   r['peak_extra_mb_max'], fmt(r.get('control_peak_extra_mb_max'), '%.1f')))
        add('')
    if 'fnm' in res:
        f, d = res['fnm']['fastnetmon'], res['fnm']['dpmon']
        add('FastNetMon 1.2.4 (AF_PACKET) vs dpmon (net_af_packet), veth + tcpreplay, %s x %d'
            % (res['fnm']['mix'], res['fnm']['loops']))
        add('  %-11s %10s %10s %9s %14s  %s' % ('engine', 'sent', 'counted', 'CPU s',
                                              'packets/CPU-s', 'every packet'))
        add('  %-11s %10d %10s %9.3f %14s  %s' % ('FastNetMon', f['sent'], f['counted_ipv4'],
                                               f['cpu_s'], fmt(f['packets_per_cpu_s'], '%.0f'),
                                               f['counted_every_packet']))
        add('  %-11s %10d %10s %9s %14s  %s' % ('dpmon', d['sent'], d['counted_ip'],
                                             fmt(d.get('cpu_s'), '%.3f'),
                                             fmt(d['packets_per_cpu_s'], '%.0f'),
                                             d['counted_every_packet']))
        di = res['fnm'].get('dpmon_idle')
        if di:
            add('  %-11s %10d %10s %9s %14s  %s' % ('dpmon idle', di['sent'], di['counted_ip'],
                                                 fmt(di.get('cpu_s'), '%.3f'),
                                                 fmt(di['packets_per_cpu_s'], '%.0f'),
                                                 di['counted_every_packet']))
        add('  dpmon worker busy time (non-empty bursts): %s s, %s packets per busy CPU-s'
            % (fmt(d['busy_cpu_s'], '%.3f'), fmt(d.get('packets_per_busy_cpu_s'), '%.0f')))
        add('  ratio (dpmon / FastNetMon packets per process CPU-second): busy polling %s; '
            'idle_sleep_us %s: %s; with dpmon busy time: %s'
            % (fmt(res['fnm']['ratio']), res['fnm'].get('idle_sleep_us'),
               fmt(res['fnm'].get('ratio_idle')), fmt(res['fnm'].get('ratio_busy'))))
    return '\n'.join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--source-dir', required=True)
    ap.add_argument('--build-dir', required=True)
    ap.add_argument('--out', default=None, help='JSON file (default BUILD/bench/results.json)')
    ap.add_argument('--export-interval-ms', type=int, default=1000,
                    help='merge_interval_ms of the export section (default: dpmon\'s, 1000)')
    ap.add_argument('--only', default='e2e,srss,scale,hot,merge,http,metrics,fnm,export',
                    help='sections: e2e,srss,scale,hot,merge,http,metrics,fnm,export,export1m')
    ap.add_argument('--mixes', default='udp64-254h,64k-hosts,1m-hosts,v4v6,imix')
    ap.add_argument('--sketches-off-mixes', default='64k-hosts',
                    help='e2e: the mixes also measured with "flow_sketches": false')
    ap.add_argument('--reps', type=int, default=3)
    ap.add_argument('--secs', type=float, default=None,
                    help='seconds measured per run (default 6; export1m: 60)')
    ap.add_argument('--hot-secs', type=float, default=2)
    ap.add_argument('--fnm-mix', default='udp64-254h')
    ap.add_argument('--fnm-loops', type=int, default=20)
    ap.add_argument('--fnm-idle-sleep-us', type=int, default=1000,
                    help='fnm: idle_sleep_us of the second dpmon run (default 1000)')
    ap.add_argument('--http-ref', default=None, metavar='BIN',
                    help='http, metrics: also measure this dpmon binary (a reference build)')
    ap.add_argument('--http-reps', type=int, default=1)
    ap.add_argument('--http-rows', choices=('all', 'stalls'), default='all',
                    help='http: every row, or only the stall rows')
    ap.add_argument('--export1m-ref', default=None, metavar='BIN',
                    help='export1m: also run this dpmon binary (a reference build), alternated')
    ap.add_argument('--export1m-reps', type=int, default=1,
                    help='export1m: runs of each build (default 1)')
    ap.add_argument('--export1m-ch-nice', type=int, default=19,
                    help='export1m: nice level of clickhouse-server on CPU 0 (default 19)')
    ap.add_argument('--export1m-perf', type=int, default=0, metavar='SECS',
                    help='export1m: perf record -g of dpmon for SECS s in the first run')
    ap.add_argument('--quick', action='store_true')
    ap.add_argument('--no-build', action='store_true')
    args = ap.parse_args()
    args.mixes = args.mixes.split(',')
    args.sketches_off_mixes = args.sketches_off_mixes.split(',')
    sections = args.only.split(',')
    args.secs_given = args.secs is not None
    if args.secs is None:
        args.secs = 6
    if args.quick:
        args.reps, args.secs, args.hot_secs = 1, 4, 1
    if os.geteuid() != 0:
        sys.exit('bench: run as root (apt, network namespaces)')
    need = ['dpdk-testpmd']
    if 'http' in sections:
        need.append('wrk')
    if 'fnm' in sections:
        need += ['tcpreplay', 'fastnetmon']
    ensure_packages(need)
    if not args.no_build:
        build(args.source_dir, args.build_dir)
    env = Env(args)
    env.list_mixes()
    res = {'machine': {'cpus': os.cpu_count(), 'model': cpu_model(),
                       'kernel': os.uname().release},
           'started': time.strftime('%Y-%m-%dT%H:%M:%S%z'),
           'git': sh('git', '-C', args.source_dir, 'describe', '--always', '--dirty',
                     check=False).stdout.strip()}
    for name in ('e2e', 'srss', 'scale', 'hot', 'merge', 'http', 'metrics', 'fnm', 'export',
                 'export1m'):
        if name in sections:
            log('section ' + name)
            try:
                res[name] = globals()['section_' + name](env)
            except Exception as e:  # reported in the table and JSON, the others still run
                log('section %s failed: %s' % (name, e))
                res.setdefault('errors', {})[name] = str(e)
    out = args.out or os.path.join(args.build_dir, 'bench', 'results.json')
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, 'w') as f:
        json.dump(res, f, indent=1)
    print(print_table(res))
    for k, v in res.get('errors', {}).items():
        print('section %s failed: %s' % (k, v))
    print('JSON: %s' % out)
    return 1 if res.get('errors') else 0


def cpu_model():
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('model name'):
                    return line.split(':', 1)[1].strip()
    except OSError:
        pass
    return 'unknown'


if __name__ == '__main__':
    sys.exit(main())
