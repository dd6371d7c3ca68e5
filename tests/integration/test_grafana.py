#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""config/grafana/dpmon.json uses only what a running dpmon serves.

Every PromQL expression of the dashboard (panel targets and template
variable queries) is taken from the JSON, Grafana's variables are
substituted, and:
  - `promtool check rules` accepts every expression (as recording rules);
  - every metric name in it is a family that dpmon's /metrics serves, with
    at least one sample (dpmon on pcapplusplus/example.pcap, so hosts exist);
  - rate(), irate() and increase() are applied to counters only;
  - the dashboard covers totals, subnets, top hosts, alerts, drops,
    worker load and FlowSpec rules (dpmon_flowspec_rules, and
    dpmon_flowspec_rules_total by result), and is importable (a Prometheus
    datasource input).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
from test_metrics import promtool  # noqa: E402

PACKETS = 4631
KEYWORDS = {'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or',
            'unless', 'offset', 'inf', 'nan'}
IDENT = re.compile(r'[a-zA-Z_:][a-zA-Z0-9_:]*')


def exprs_of(dash):
    """(where, expr) for every panel target and template query."""
    out = []

    def walk(panels):
        for p in panels:
            for t in p.get('targets', []):
                out.append(('panel "%s" %s' % (p.get('title'), t.get('refId')), t['expr']))
            walk(p.get('panels', []))
    walk(dash['panels'])
    for v in dash.get('templating', {}).get('list', []):
        q = v.get('query')
        q = q.get('query') if isinstance(q, dict) else q
        m = re.match(r'^label_values\((.*),\s*([a-zA-Z_]\w*)\)$', q or '')
        if m:  # Grafana's function: its first argument is a series selector
            out.append(('variable %s' % v['name'], m.group(1)))
    return out


def substitute(expr):
    expr = re.sub(r'\$__(rate_)?interval', '1m', expr)
    return re.sub(r'\$\{?\w+\}?', '.*', expr)


def metric_names(expr):
    """Identifiers that PromQL reads as metric names."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)                 # strings
    e = re.sub(r'\{[^}]*\}', ' ', e)                              # label matchers
    e = re.sub(r'\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)', ' ', e)
    e = re.sub(r'\[[^\]]*\]', ' ', e)                             # ranges
    e = re.sub(r'\boffset\s+\d+(ms|[smhdwy])\b', ' ', e)           # offsets
    names = set()
    for m in IDENT.finditer(e):
        rest = e[m.end():].lstrip()
        if rest.startswith('(') or m.group(0) in KEYWORDS:
            continue  # a function or aggregation, or a keyword
        names.add(m.group(0))
    return names


def served(text):
    """{family: type} of the families with at least one sample."""
    types, samples = {}, set()
    for line in text.splitlines():
        if line.startswith('# TYPE '):
            _, _, name, typ = line.split(' ')
            types[name] = typ
        elif line and not line.startswith('#'):
            samples.add(IDENT.match(line).group(0))
    return {n: t for n, t in types.items() if n in samples}


def test_grafana(h):
    c = h.checker('grafana')
    path = os.path.join(h.source, 'config', 'grafana', 'dpmon.json')
    with open(path, encoding='utf-8') as f:
        dash = json.load(f)
    c.true('a Prometheus datasource input (importable)',
           any(i.get('pluginId') == 'prometheus' for i in dash.get('__inputs', [])))
    titles = ' '.join(p.get('title', '') for p in dash['panels']).lower()
    for topic in ('throughput', 'subnet', 'top hosts', 'alerts', 'drops', 'worker load',
                  'flowspec rules'):
        c.true('a panel about %r' % topic, topic in titles)
    exprs = exprs_of(dash)
    fs = [(w, e) for w, e in exprs if w.lower().startswith('panel "flowspec rules')]
    c.true('a FlowSpec panel reads dpmon_flowspec_rules',
           any('dpmon_flowspec_rules' in metric_names(substitute(e)) for _, e in fs))
    c.true('a FlowSpec panel reads dpmon_flowspec_rules_total by result',
           any('dpmon_flowspec_rules_total' in metric_names(substitute(e)) and
               re.search(r'\bby \(result\)', e) for _, e in fs))
    c.true('expressions found: %d' % len(exprs), len(exprs) >= 20)

    rules = {'groups': [{'name': 'grafana', 'rules': [
        {'record': 'dpmon:grafana_check_%d' % i, 'expr': substitute(e)}
        for i, (_, e) in enumerate(exprs)]}]}
    with tempfile.NamedTemporaryFile('w', suffix='.yml', delete=False) as f:
        json.dump(rules, f)  # JSON is YAML
        rules_file = f.name
    try:
        p = subprocess.run([promtool(), 'check', 'rules', rules_file], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=60)
    finally:
        os.unlink(rules_file)
    c.eq('promtool check rules on every expression: exit status (%s)'
         % p.stdout.decode().strip().replace('\n', ' | '), 0, p.returncode)

    rows = harness.read_tsv(h.td('expected', 'benchmark', 'example.pcap.dst_subnets.tsv'))
    subnets = [(r['dst_prefix'], 's%d' % i) for i, r in enumerate(rows)]
    with h.dpmon_run([h.td('pcaps', 'pcapplusplus', 'example.pcap')], subnets, 'grafana') as d:
        d.wait_counts(PACKETS)
        status, _, text = d.request('/metrics')
        c.eq('GET /metrics', 200, status)
        families = served(text)
        used = set()
        for where, e in exprs:
            names = metric_names(substitute(e))
            c.true('%s uses a dpmon metric' % where, any(n.startswith('dpmon_') for n in names))
            for n in sorted(names):
                used.add(n)
                c.true('%s: %s is served by /metrics' % (where, n), n in families)
            for fn, n in re.findall(r'\b(rate|irate|increase)\(\s*([a-zA-Z_:][\w:]*)', e):
                c.eq('%s: %s() of a counter (%s)' % (where, fn, n), 'counter', families.get(n))
        c.note('metrics used by the dashboard: %s' % ', '.join(sorted(used)))
        c.eq('dpmon exit status after SIGTERM', 0, d.stop())
    c.done()


if __name__ == '__main__':
    harness.main(globals())
