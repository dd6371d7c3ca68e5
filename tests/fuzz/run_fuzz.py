#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Run a libFuzzer target for a while, as a test.

    run_fuzz.py --fuzzer B/tests/fuzz_parse --corpus-tool B/tests/fuzz_corpus
                --source-dir S --work-dir B/fuzz --seconds 60
    run_fuzz.py --fuzzer B/tests/fuzz_http_head --seed-dir S/tests/fuzz/http_head
                --regressions S/tests/fuzz/http_head_regressions
                --source-dir S --work-dir B/fuzz_http_head --seconds 30 --max-len 20000

1. Seeds: with --corpus-tool (the parser), every capture under
   <source>/../shared/testdata/pcaps is turned into seed inputs by that
   tool (in <work>/seeds, rebuilt each run; the shared data is never
   copied into the repository); with --seed-dir, that directory of the
   repository is the seeds.
2. The inputs of the regressions directory (crashes found earlier;
   default tests/fuzz/regressions/) are run once each: any failure there
   fails the test at once.
3. libFuzzer runs for --seconds on <work>/corpus (kept between runs, so
   coverage accumulates) plus the seeds; a crash, a leak, a sanitizer
   report or a timeout makes it exit non-zero, and the reproducer is left
   in <work>/artifacts/.

Exit status: the fuzzer's (0 = nothing found).
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--fuzzer', required=True)
    seeding = ap.add_mutually_exclusive_group(required=True)
    seeding.add_argument('--corpus-tool')
    seeding.add_argument('--seed-dir')
    ap.add_argument('--regressions')
    ap.add_argument('--source-dir', required=True)
    ap.add_argument('--work-dir', required=True)
    ap.add_argument('--seconds', type=int, default=60)
    ap.add_argument('--max-len', type=int, default=70000)
    a = ap.parse_args()
    name = os.path.basename(a.fuzzer)

    corpus = os.path.join(a.work_dir, 'corpus')
    artifacts = os.path.join(a.work_dir, 'artifacts')
    for d in (corpus, artifacts):
        os.makedirs(d, exist_ok=True)
    if a.seed_dir:
        seeds = a.seed_dir
    else:
        testdata = os.path.join(a.source_dir, '..', 'shared', 'testdata', 'pcaps')
        if not os.path.isdir(testdata):
            print('shared test data not found at %s' % testdata)
            return 1
        seeds = os.path.join(a.work_dir, 'seeds')
        shutil.rmtree(seeds, ignore_errors=True)
        os.makedirs(seeds)
        pcaps = sorted(p for p in glob.glob(os.path.join(testdata, '**', '*'), recursive=True)
                       if os.path.isfile(p))
        rc = subprocess.call([a.corpus_tool, seeds] + pcaps)
        if rc != 0:
            return rc

    env = dict(os.environ)
    env.setdefault('ASAN_OPTIONS', 'detect_leaks=1:abort_on_error=1')
    env.setdefault('UBSAN_OPTIONS', 'print_stacktrace=1:halt_on_error=1')
    regress_dir = a.regressions or os.path.join(a.source_dir, 'tests', 'fuzz', 'regressions')
    regress = sorted(glob.glob(os.path.join(regress_dir, '*')))
    if regress:
        rc = subprocess.call([a.fuzzer] + regress, env=env)
        print('regression inputs: %d, exit %d' % (len(regress), rc), flush=True)
        if rc != 0:
            return rc

    cmd = [a.fuzzer, '-max_total_time=%d' % a.seconds, '-timeout=10', '-rss_limit_mb=1024',
           '-max_len=%d' % a.max_len, '-print_final_stats=1',
           '-artifact_prefix=' + artifacts + os.sep, corpus, seeds]
    print(' '.join(cmd), flush=True)
    rc = subprocess.call(cmd, env=env)
    print('%s exit status %d' % (name, rc), flush=True)
    return rc


if __name__ == '__main__':
    sys.exit(main())
