#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cg_stages.py — instructions per packet of each hot-path stage, from a
callgrind profile of `dpmon-bench hotpath` (docs/performance.md, "Where the
instructions go").

It runs callgrind on `dpmon-bench hotpath MIX` twice (1 and 3 passes over
the capture after the warm-up pass) and prints the difference per packet:
the steady state, hosts already inserted. Each pass of the worker (lib/dataplane/worker.c) is a function of its own,
so callgrind gives its inclusive cost. Inside a pass, inlined helpers keep
their source lines: a line's cost goes to the source function that holds
it (a definition starts at column 0, as in the tree's style), and that
function's stage comes from the table below. Usage:

  cg_stages.py CALLGRIND_OUT PACKETS [--json]
"""
import argparse
import json
import os
import re
import subprocess
import tempfile
from collections import defaultdict

# (pass, inlined source function) -> stage; '*' = any other function in that pass.
STAGES = {
    ('parse_pass', '*'): 'parse',
    ('count_notes', '*'): 'parse',
    ('classify_pass', '*'): 'classify',
    ('count_pass', 'count_flags'): 'totals and subnets',
    ('count_pass', 'dpmon_ctr_add'): 'totals and subnets',
    ('count_pass', 'count_pass'): 'totals and subnets',
    ('count_pass', 'host_key'): 'hosts',
    ('count_pass', 'key_from_v4'): 'hosts',
    ('count_pass', 'dpmon_addr_mask'): 'hosts',
    ('count_pass', 'dpmon_addr_is_v4'): 'hosts',
    ('count_pass', 'dpmon_count_inc'): 'hosts',
    ('count_pass', 'flow_hash'): 'flow and peer sketches',
    ('count_pass', 'dpmon_hash64'): 'flow and peer sketches',
    ('count_pass', 'dpmon_sketch_hash'): 'flow and peer sketches',
    ('count_pass', 'rte_hash_crc'): 'flow and peer sketches',
    ('count_pass', 'rte_hash_crc_8byte'): 'flow and peer sketches',
    ('count_pass', 'rte_hash_crc_4byte'): 'flow and peer sketches',
    ('count_pass', 'crc32c_sse42_u64'): 'flow and peer sketches',
    ('count_pass', 'crc32c_sse42_u32'): 'flow and peer sketches',
    ('count_pass', 'flow_reg'): 'subnet sketches',
    ('count_pass', 'sub_sketch'): 'subnet sketches',
    ('count_pass', 'rte_prefetch0'): 'subnet sketches',
    ('count_pass', 'dpmon_flow_pool_take'): 'subnet sketches',
    ('count_pass', '*'): 'totals and subnets',
    ('flow_pass', '*'): 'subnet sketches',
    ('host_hash_stage', '*'): 'hosts',
    ('host_probe_stage', '*'): 'hosts',
    ('host_count_stage', 'dpmon_host_flow_add'): 'flow and peer sketches',
    ('host_count_stage', 'dpmon_hll_add'): 'flow and peer sketches',
    ('host_count_stage', 'dpmon_host_promote'): 'flow and peer sketches',
    ('host_count_stage', 'peer_hash'): 'flow and peer sketches',
    ('host_count_stage', 'dpmon_hash64'): 'flow and peer sketches',
    ('host_count_stage', 'dpmon_sketch_hash'): 'flow and peer sketches',
    ('host_count_stage', 'rte_hash_crc'): 'flow and peer sketches',
    ('host_count_stage', 'rte_hash_crc_8byte'): 'flow and peer sketches',
    ('host_count_stage', 'rte_hash_crc_4byte'): 'flow and peer sketches',
    ('host_count_stage', 'crc32c_sse42_u64'): 'flow and peer sketches',
    ('host_count_stage', 'crc32c_sse42_u32'): 'flow and peer sketches',
    ('host_count_stage', '*'): 'hosts',
}
ORDER = ['parse', 'classify', 'totals and subnets', 'hosts', 'flow and peer sketches',
         'subnet sketches', 'rest']
PASSES = {p for p, _ in STAGES}
_func_cache = {}


def functions_of(path):
    """Sorted (first line, name) of the function definitions in @path."""
    if path in _func_cache:
        return _func_cache[path]
    out = []
    try:
        with open(path, errors='replace') as f:
            for n, line in enumerate(f, 1):
                m = re.match(r'([A-Za-z_]\w*)\(', line)
                if m and not line.startswith(('if', 'for', 'while', 'return', 'switch')):
                    out.append((n, m.group(1)))
    except OSError:
        pass
    _func_cache[path] = out
    return out


def source_function(path, line):
    name = '?'
    for start, fn in functions_of(path):
        if start > line:
            break
        name = fn
    return name


def parse(path):
    """Self cost per (fn, file, line), and call costs per (caller, callee)."""
    names = {'fl': {}, 'fn': {}}
    self_cost = defaultdict(int)
    calls = defaultdict(int)
    fn = fl = fi = None
    cfn = None
    pending_call = False
    last = 0
    base = os.path.dirname(os.path.abspath(path))

    def name(kind, v):
        m = re.match(r'\((\d+)\)(?: (.*))?', v)
        if not m:
            return v
        if m.group(2) is not None:
            names[kind][m.group(1)] = m.group(2)
        return names[kind].get(m.group(1), v)

    with open(path) as f:
        for raw in f:
            line = raw.rstrip('\n')
            if not line:
                continue
            c = line[0]
            if c.isdigit() or c in '+-*':
                parts = line.split()
                p = parts[0]
                if p == '*':
                    pos = last
                elif p[0] in '+-':
                    pos = last + int(p)
                else:
                    pos = int(p)
                last = pos
                cost = int(parts[1]) if len(parts) > 1 else 0
                if pending_call:
                    calls[(fn, cfn)] += cost
                    pending_call = False
                else:
                    self_cost[(fn, fi or fl, pos)] += cost
                continue
            key, _, v = line.partition('=')
            if key == 'fl':
                fl = name('fl', v)
                fi = None
            elif key in ('fi', 'fe'):
                fi = name('fl', v)
            elif key == 'fn':
                fn = name('fn', v)
                fi = None
            elif key in ('cfi', 'cfl'):
                name('fl', v)
            elif key == 'cfn':
                cfn = name('fn', v)
            elif key == 'calls':
                pending_call = True
    return self_cost, calls


def stages(path):
    """Instructions of each stage (ORDER) in the profile at @path."""
    self_cost, calls = parse(path)
    stage = defaultdict(int)
    roots = ('dpmon_worker_count_generation', 'dpmon_worker_count_generation.part.0')
    # Self cost of the passes, split by the inlined source function.
    for (fn, file, line), cost in self_cost.items():
        if fn not in PASSES and fn not in roots + ('dpmon_worker_count', 'reasons_store'):
            continue
        src = source_function(file, line) if file else '?'
        stage[STAGES.get((fn, src)) or STAGES.get((fn, '*')) or 'rest'] += cost
    # Calls out of the passes (parser, LPM, insert, flag lines, promotion):
    # inclusive cost, to the caller's stage.
    for (caller, callee), cost in calls.items():
        if caller not in PASSES and caller not in roots:
            continue
        if callee in PASSES or callee.startswith('dpmon_worker_count_generation'):
            continue
        stage[STAGES.get((caller, callee)) or STAGES.get((caller, '*')) or 'rest'] += cost
    return stage


def mix_packets(binary, mix):
    """Packets in one pass over @mix's capture (`dpmon-bench --list`)."""
    out = subprocess.run([binary, '--list'], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        name, packets = line.split('\t')[:2]
        if name == mix:
            return int(packets)
    raise SystemExit('cg_stages.py: no mix %s in %s --list' % (mix, binary))


def profile(binary, mix, data, passes, extra, out):
    """callgrind of `dpmon-bench hotpath MIX --passes N` into @out."""
    packets = mix_packets(binary, mix)
    mem = int(768 + packets * 3.5 / 1024 + 512)  # mbufs, then the host table
    subprocess.run(['valgrind', '--tool=callgrind', '--callgrind-out-file=' + out, binary,
                    '--no-huge', '-m', str(mem), '--no-pci', '--no-shconf', '-l', '1',
                    '--file-prefix', 'cgst%d' % os.getpid(), '--', 'hotpath', mix,
                    '--dir', data, '--passes', str(passes)] + extra,
                   check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('binary', help='dpmon-bench of a -Dstage_profile=true build')
    ap.add_argument('mix')
    ap.add_argument('--dir', default='build/bench-data')
    ap.add_argument('--no-flow-sketches', action='store_true')
    ap.add_argument('--ignore-sources', type=int, default=0,
                    help='N ignored source prefixes that no packet comes from')
    ap.add_argument('--ignore-peer-pool', action='store_true',
                    help='ignore 203.0.113.0/24, half of the IPv4 peers')
    ap.add_argument('--ptype', action='store_true',
                    help='mbufs carry packet types as a NIC would set them (hotpath --ptype)')
    ap.add_argument('--json', action='store_true')
    a = ap.parse_args()
    extra = ['--no-flow-sketches'] if a.no_flow_sketches else []
    if a.ignore_sources:
        extra += ['--ignore-sources', str(a.ignore_sources)]
    if a.ignore_peer_pool:
        extra += ['--ignore-peer-pool']
    if a.ptype:
        extra += ['--ptype']
    with tempfile.TemporaryDirectory() as tmp:
        runs = []
        for passes in (1, 3):
            out = os.path.join(tmp, 'cg.%d' % passes)
            profile(a.binary, a.mix, a.dir, passes, extra, out)
            runs.append(stages(out))
    # The difference of 3 and 1 timed passes: 2 passes of the steady state
    # (the warm-up pass that inserts the hosts, set-up and exit cancel out).
    packets = 2 * mix_packets(a.binary, a.mix)
    rows = {s: (runs[1].get(s, 0) - runs[0].get(s, 0)) / packets for s in ORDER}
    total = sum(rows.values())
    if a.json:
        print(json.dumps({'mix': a.mix, 'flow_sketches': not a.no_flow_sketches,
                          'ignore_sources': a.ignore_sources,
                          'ignore_peer_pool': a.ignore_peer_pool, 'ptype': a.ptype,
                          'total': total, 'stages': rows}))
        return
    for s in ORDER:
        print(f'{s:24s} {rows[s]:7.1f}')
    print(f'{"total":24s} {total:7.1f}')


if __name__ == '__main__':
    main()
