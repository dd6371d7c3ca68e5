#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""List the tests of a meson run that used more than half their timeout.

A test that needs most of its timeout on one machine is killed on the next,
slower one (a loaded CI runner, a 2-vCPU virtual machine, a sanitizer
build). This lists those tests after each run, so that the next one shows
before it fails: one line per test, "slow-tests: BUILD: NAME used D s of
its T s timeout (P %)". It is a warning, not a failure: how long a test
takes depends on the machine and its load, and a test over its timeout
already fails in meson itself.

Usage: slow-tests.py BUILD_DIR   (after `meson test -C BUILD_DIR ...`)
The durations come from BUILD_DIR/meson-logs/testlog.json, the timeouts
from `meson introspect --tests` (meson's log does not hold them).
Exit status: 0, or 2 when the log or the test list cannot be read.
"""
import json
import os
import subprocess
import sys

SHARE = 0.5  # more than this share of its timeout: listed


def timeouts(build_dir):
    """{test name: timeout in seconds} of every test meson knows."""
    out = subprocess.run(["meson", "introspect", "--tests", build_dir],
                         check=True, capture_output=True, text=True).stdout
    return {t["name"]: t["timeout"] for t in json.loads(out)}


def runs(build_dir):
    """(name, duration s, result) of each test in the last run's log."""
    path = os.path.join(build_dir, "meson-logs", "testlog.json")
    with open(path, encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            # meson names a test "project:suite / name" in its log.
            yield r["name"].rsplit(" / ", 1)[-1], r["duration"], r["result"]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: slow-tests.py BUILD_DIR")
    build_dir = sys.argv[1]
    try:
        limit = timeouts(build_dir)
        ran = list(runs(build_dir))
    except (OSError, ValueError, KeyError, subprocess.CalledProcessError) as e:
        print(f"slow-tests: {build_dir}: cannot read the run: {e}", file=sys.stderr)
        return 2
    slow = 0
    for name, duration, result in ran:
        timeout = limit.get(name)
        if not timeout or timeout <= 0 or result == "SKIP":
            continue
        if duration > SHARE * timeout:
            slow += 1
            print(f"slow-tests: {build_dir}: {name} used {duration:.1f} s of its "
                  f"{timeout} s timeout ({100 * duration / timeout:.0f} %)")
    if slow == 0:
        print(f"slow-tests: {build_dir}: every test used at most half its timeout")
    return 0


if __name__ == "__main__":
    sys.exit(main())
