#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Build dpmon twice and run the whole test suite:
#   build-test: -Werror, every test (unit + integration on real captures);
#   build-asan: -Werror with AddressSanitizer + UndefinedBehaviorSanitizer
#               and RTE_ENABLE_ASSERT (DPDK's and dpmon's RTE_ASSERTs run),
#               the unit tests and suite 'asan': the parser's integration
#               tests (every capture of MANIFEST.tsv, the edge cases) with
#               dpmon itself built with the sanitizers;
#   static:     cppcheck over the C sources (scripts/static-check.sh),
#               counted as one test.
# After each build's run, scripts/slow-tests.py lists the tests that used
# more than half their timeout (a warning: the next slower machine would
# kill them). Prints the counts of all three as one line "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

bash scripts/deps.sh || exit 1

configure() { # dir, extra meson args...
	local dir=$1; shift
	if [ ! -f "$dir/build.ninja" ]; then
		meson setup "$dir" -Dwerror=true "$@" >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; exit 1; }
	fi
	ninja -C "$dir" || exit 1
}

configure build-test
configure build-asan -Db_sanitize=address,undefined -Db_lundef=false -Dc_args=-DRTE_ENABLE_ASSERT

count() { # testlog.json → "passed failed"
	python3 - "$1" <<'PY'
import json, sys
ok = bad = 0
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["result"] in ("OK", "EXPECTEDFAIL"): ok += 1
    elif r["result"] != "SKIP": bad += 1
print(ok, bad)
PY
}

meson test -C build-test --print-errorlogs --num-processes 2
read -r p1 f1 < <(count build-test/meson-logs/testlog.json)
python3 scripts/slow-tests.py build-test
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	meson test -C build-asan --suite unit --suite asan --print-errorlogs --num-processes 2
read -r p2 f2 < <(count build-asan/meson-logs/testlog.json)
python3 scripts/slow-tests.py build-asan

p3=0 f3=0
if bash scripts/static-check.sh; then p3=1; else f3=1; fi

echo "release build: $p1 passed, $f1 failed; sanitizer build: $p2 passed, $f2 failed;" \
	"static analysis: $p3 passed, $f3 failed"
echo "$((p1 + p2 + p3)) passed, $((f1 + f2 + f3)) failed"
[ $((f1 + f2 + f3)) -eq 0 ]
