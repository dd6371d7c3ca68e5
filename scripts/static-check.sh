#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Static analysis of dpmon's C sources with Debian's cppcheck: the library,
# the programs, the benchmark and the unit tests; then the SPDX line of
# every source file, and clang-format's layout of the C sources. Exits
# non-zero on any finding; prints cppcheck's as
# FILE:LINE: severity: message [id].
#
# Checks: warning, portability, performance (style is clang-format's job).
# Suppressed, each for a reason:
#   missingIncludeSystem  system and DPDK headers are not analysed (cppcheck
#                         would need a configuration for each of them);
#   ctunullpointer,       the cross-translation-unit pass does not follow a
#   ctuuninitvar          guard in the caller: every report it made on this
#                         tree was a call that cannot happen, such as
#                         detect_group_of(d, NULL) behind "old != NULL ? ... :"
#                         (detect_eval.c) or an address whose bytes a memcpy set
#                         (sampler.c); the per-file checks stay on.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v cppcheck >/dev/null || { echo "static-check: cppcheck is not installed" >&2; exit 1; }
includes=()
for d in lib/*/; do includes+=(-I "$d"); done
cppcheck --quiet --std=c11 --enable=warning,portability,performance --inline-suppr \
	-D__linux__ -D_GNU_SOURCE -DRTE_ENABLE_ASSERT "${includes[@]}" \
	--suppress=missingIncludeSystem --suppress=ctunullpointer --suppress=ctuuninitvar \
	--template='{file}:{line}: {severity}: {message} [{id}]' --error-exitcode=1 \
	-j 2 lib app bench tests/*.c tests/fuzz/*.c
echo "static-check: cppcheck found nothing"

# Every source file the project wrote carries its licence in an SPDX line
# within its first three lines. Files are found with find, not git: the
# tests may run from an unpacked tree.
sources() { # find's -name tests...: the project's files, without build output
	find . \( -path './build*' -o -path ./.git -o -path ./run -o -path ./tests/js/node_modules \) -prune \
		-o -type f \( "$@" \) -print0 | sort -z
}
missing=0
while IFS= read -r -d '' f; do
	head -n 3 "$f" | grep -q 'SPDX-License-Identifier: BSD-3-Clause' && continue
	echo "static-check: $f: no SPDX-License-Identifier line" >&2
	missing=1
done < <(sources -name '*.c' -o -name '*.h' -o -name '*.py' -o -name '*.sh' -o -name '*.mjs' \
	-o -name '*.html' -o -name meson.build -o -name meson_options.txt -o -path ./.ci/run \
	-o -path ./bench/run -o -path ./debian/rules -o -path ./scripts/dpmon-prepare)
[ "$missing" -eq 0 ] || exit 1
echo "static-check: every source file has an SPDX line"

# The C sources stay as clang-format (.clang-format) writes them.
command -v clang-format >/dev/null || { echo "static-check: clang-format is not installed" >&2; exit 1; }
sources -name '*.c' -o -name '*.h' | xargs -0 clang-format --dry-run --Werror
echo "static-check: the C sources are formatted"
