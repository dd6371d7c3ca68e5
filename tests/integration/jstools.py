# SPDX-License-Identifier: BSD-3-Clause
"""Running the Node tools of tests/js/ from the Python integration tests.

The tools (OpenAPI validation, the dashboard in Chromium) use npm packages
that scripts/deps.sh installs with `npm ci` into tests/js/node_modules
from the committed package-lock.json. A missing node or node_modules is a
failure that says how to fix it, never a skip.
"""
import os
import shutil
import subprocess

from harness import TestFailure


def js_dir(h):
    return os.path.join(h.source, 'tests', 'js')


def run_node(h, c, script, args, timeout=300, env=None):
    """Run tests/js/SCRIPT with ARGS (and the variables ENV added to the
    environment); log its lines; check its exit status 0."""
    node = shutil.which('node')
    if node is None:
        raise TestFailure('node not found: run bash scripts/deps.sh (installs nodejs)')
    if not os.path.isdir(os.path.join(js_dir(h), 'node_modules')):
        raise TestFailure('%s/node_modules missing: run bash scripts/deps.sh (npm ci)' % js_dir(h))
    argv = [node, os.path.join(js_dir(h), script)] + list(args)
    try:
        p = subprocess.run(argv, cwd=js_dir(h), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout,
                           env=dict(os.environ, **env) if env else None)
    except subprocess.TimeoutExpired:
        c.fail('%s did not finish within %d s' % (script, timeout))
        return ''
    out = p.stdout.decode('utf-8', 'replace')
    for line in out.splitlines():
        h.log('  [%s] %s' % (script, line))
    c.eq('%s exit status' % script, 0, p.returncode)
    return out
