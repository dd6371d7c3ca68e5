#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Every npm package of tests/js/ runs on Debian 12's own nodejs (18.x).

The README's test command must pass on stock Debian 12, but a machine with
a newer Node.js from elsewhere (such as this one may have) runs a package
that requires node >= 20 without complaint, until it meets Debian's. So
tests/js/engines_check.mjs compares every installed package's engines.node
(under tests/js/node_modules, and tests/js/package.json's own) with the
nodejs version of Debian 12's bookworm archives as apt-cache lists them,
never with the running node's (see that file). A package whose range leaves
Debian's version out is a failure naming the package, its range and the
Debian version.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402
import jstools  # noqa: E402


def test_js_engines(h):
    c = h.checker('js engines')
    out = jstools.run_node(h, c, 'engines_check.mjs', [], timeout=60)
    for line in out.splitlines():
        if line.startswith('FAIL '):
            c.fail(line[5:])
    c.true('engines_check.mjs ran its checks', ' checks, 0 failed' in out)
    c.done()


if __name__ == '__main__':
    harness.main(globals())
