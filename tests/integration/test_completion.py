#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Shell completion (completion/dpmon.bash, completion/_dpmonctl): bash,
with the script sourced and the completion functions called as bash calls
them, offers exactly the options of each program's --help after '-',
dpmonctl's commands first, blackhole's list|add|del, and for --sort
exactly the metrics of GET /api/v1/hosts in docs/openapi.yaml; zsh (when
installed) loads _dpmonctl without an error.
"""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

HELP_OPTION = re.compile(r'(?:^|(?<=[\s,\[|(]))(--?[A-Za-z][A-Za-z0-9-]*)')
FUNCS = {'dpmon': '_dpmon', 'dpmon-gen': '_dpmon_gen', 'dpmonctl': '_dpmonctl'}


def complete(h, words):
    """bash's candidates for the last of `words` (the command line so far)."""
    script = os.path.join(h.source, 'completion', 'dpmon.bash')
    arr = ' '.join("'%s'" % w for w in words)
    cmd = ('source %s; COMP_WORDS=(%s); COMP_CWORD=%d; %s; printf "%%s\\n" "${COMPREPLY[@]}"'
           % (script, arr, len(words) - 1, FUNCS[words[0]]))
    p = subprocess.run(['bash', '--norc', '--noprofile', '-c', cmd], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=30)
    return p.returncode, sorted(w for w in p.stdout.decode().split('\n') if w), p.stderr.decode()


def test_bash(h):
    c = h.checker('bash completion')
    for prog in FUNCS:
        p = subprocess.run([os.path.join(h.build, 'app', prog), '--help'],
                           stdout=subprocess.PIPE, timeout=30)
        want = sorted(set(HELP_OPTION.findall(p.stdout.decode())))
        c.eq('%s -<TAB>: the options of --help' % prog, (0, want, ''),
             complete(h, [prog, '-']))
    c.eq('dpmonctl <TAB>: the commands', (0, sorted(
        'summary top host subnets alerts blackhole flowspec health reload'.split()), ''),
        complete(h, ['dpmonctl', '']))
    c.eq('dpmonctl --url U -o json <TAB>: the commands after options', 9,
         len(complete(h, ['dpmonctl', '--url', 'http://x', '-o', 'json', ''])[1]))
    c.eq('dpmonctl blackhole <TAB>', (0, ['add', 'del', 'list'], ''),
         complete(h, ['dpmonctl', 'blackhole', '']))
    c.eq('dpmonctl flowspec <TAB>', (0, ['add', 'del', 'list'], ''),
         complete(h, ['dpmonctl', 'flowspec', '']))
    c.eq('dpmonctl flowspec add 10.0.0.5 --protocol <TAB>', (0, ['icmp', 'icmpv6', 'tcp', 'udp'],
                                                              ''),
         complete(h, ['dpmonctl', 'flowspec', 'add', '10.0.0.5', '--protocol', '']))
    c.eq('dpmonctl blackhole add <TAB>: nothing', (0, [], ''),
         complete(h, ['dpmonctl', 'blackhole', 'add', '']))
    with open(os.path.join(h.source, 'docs', 'openapi.yaml'), encoding='utf-8') as f:
        spec = f.read()
    m = re.search(r'- name: sort\n.*?enum: \[([^\]]*)\]', spec, re.S)
    metrics = sorted(x.strip() for x in m.group(1).split(',')) if m else None
    c.eq('dpmonctl top --sort <TAB>: the metrics of GET /api/v1/hosts', (0, metrics, ''),
         complete(h, ['dpmonctl', 'top', '--sort', '']))
    c.eq('dpmonctl top --direction e<TAB>', (0, ['egress'], ''),
         complete(h, ['dpmonctl', 'top', '--direction', 'e']))
    c.eq('dpmon-gen --summary <TAB>', (0, ['json', 'text'], ''),
         complete(h, ['dpmon-gen', '--summary', '']))
    c.eq('dpmon --print-schema <TAB>', (0, ['clickhouse'], ''),
         complete(h, ['dpmon', '--print-schema', '']))
    c.done()


def test_zsh(h):
    c = h.checker('zsh completion')
    zsh = shutil.which('zsh')
    if zsh is None:
        c.note('zsh not installed: only the file is checked')
        with open(os.path.join(h.source, 'completion', '_dpmonctl')) as f:
            c.eq('_dpmonctl: #compdef line', '#compdef dpmonctl', f.readline().strip())
        c.done()
        return
    p = subprocess.run([zsh, '-n', os.path.join(h.source, 'completion', '_dpmonctl')],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=30)
    c.eq('zsh -n _dpmonctl', (0, ''), (p.returncode, p.stdout.decode()))
    c.done()


if __name__ == '__main__':
    harness.main(globals())
