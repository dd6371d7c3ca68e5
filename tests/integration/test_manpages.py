#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The manual pages (man/*.scd, built to roff by meson) cannot drift from
the programs: the options a page's OPTIONS section defines are exactly
the options the program's --help names, for dpmon(8), dpmon-gen(1) and
dpmonctl(8); each built page has its .TH line and renders through man(1)
without a groff warning (the check lintian makes).
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

PAGES = [('dpmon', '8'), ('dpmon-gen', '1'), ('dpmonctl', '8')]
# An option in --help: after a blank, a comma, '[', '|' or '(' at a word's start.
HELP_OPTION = re.compile(r'(?:^|(?<=[\s,\[|(]))(--?[A-Za-z][A-Za-z0-9-]*)')
# An option an OPTIONS item defines: *--name* or *-x* in scdoc's bold.
PAGE_OPTION = re.compile(r'\*(--?[A-Za-z][A-Za-z0-9-]*)\*')


def help_options(exe):
    p = subprocess.run([exe, '--help'], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=30)
    return p.returncode, set(HELP_OPTION.findall(p.stdout.decode()))


def page_options(path):
    """Options defined by the items of the page's OPTIONS section (the
    lines of that section that start with an option in bold)."""
    found, inside = set(), False
    with open(path, encoding='utf-8') as f:
        for line in f:
            if line.startswith('# '):
                inside = line.strip() == '# OPTIONS'
            elif inside and line.startswith('*-'):
                found |= set(PAGE_OPTION.findall(line))
    return found


def test_options_match_help(h):
    c = h.checker('man pages')
    for prog, section in PAGES:
        rc, want = help_options(os.path.join(h.build, 'app', prog))
        c.eq('%s --help: exit status' % prog, 0, rc)
        c.true('%s --help: names options' % prog, len(want) >= 5, sorted(want))
        got = page_options(os.path.join(h.source, 'man', '%s.%s.scd' % (prog, section)))
        c.eq('%s(%s): OPTIONS defines exactly the options of --help' % (prog, section),
             sorted(want), sorted(got))
    c.done()


def test_built_pages(h):
    c = h.checker('man pages built')
    env = dict(os.environ, LC_ALL='C.UTF-8', MANWIDTH='80', MANROFFSEQ='')
    for prog, section in PAGES:
        page = os.path.join(h.build, 'man', '%s.%s' % (prog, section))
        if not c.true('%s.%s built (scdoc; meson option man)' % (prog, section),
                      os.path.isfile(page)):
            continue
        with open(page, encoding='utf-8') as f:
            text = f.read()
        c.true('%s.%s: .TH names it' % (prog, section),
               re.search(r'^\.TH "%s" "%s"' % (re.escape(prog), section), text, re.M)
               is not None, text[:300])
        p = subprocess.run(['man', '--warnings', '-E', 'UTF-8', '-l', '-Tutf8', '-Z', page],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                           timeout=60)
        c.eq('%s.%s: man renders it without a warning' % (prog, section),
             (0, ''), (p.returncode, p.stderr.decode()))
    c.done()


if __name__ == '__main__':
    harness.main(globals())
