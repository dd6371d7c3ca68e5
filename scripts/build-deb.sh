#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# build-deb.sh - build the dpmon Debian package from this repository.
#
# Usage: scripts/build-deb.sh OUTDIR
# Prints the path of OUTDIR/dpmon_VERSION_amd64.deb on its last line.
#
# Design: dpkg-buildpackage writes next to the source tree and into it
# (debian/dpmon, obj-*), so the repository's files (tracked ones and new
# ones not ignored by git; build directories excluded) are copied to
# OUTDIR/src/dpmon first and built there. The package is rebuilt only when
# a source file changed: OUTDIR/src.sha256 remembers the last build. Needs
# the build dependencies of debian/control and debhelper
# (scripts/deps.sh installs them).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
out=$(mkdir -p "$1" && cd "$1" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)

# list_sources: the repository's files, NUL-separated, relative to $top.
list_sources() {
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
		git -C "$top" ls-files -z --cached --others --exclude-standard
	else
		(cd "$top" && find . -path './build*' -prune -o -type f -print0)
	fi
}

# sources_hash: one hash over the names and contents of every source file.
sources_hash() {
	(cd "$top" && list_sources | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

version=$(dpkg-parsechangelog -l "$top/debian/changelog" -S Version)
deb="$out/dpmon_${version}_amd64.deb"
hash=$(sources_hash)
if [ -f "$deb" ] && [ "$(cat "$out/src.sha256" 2>/dev/null)" = "$hash" ]; then
	echo "build-deb: $deb is up to date" >&2
	echo "$deb"
	exit 0
fi

rm -rf "$out/src" "$deb"
mkdir -p "$out/src/dpmon"
(cd "$top" && list_sources | xargs -0 cp --parents -t "$out/src/dpmon")
(cd "$out/src/dpmon" && dpkg-buildpackage -us -uc -b -j"$(nproc)" >"$out/build.log" 2>&1) || {
	tail -40 "$out/build.log" >&2
	echo "build-deb: dpkg-buildpackage failed; full log: $out/build.log" >&2
	exit 1
}
mv "$out/src/dpmon_${version}_amd64.deb" "$deb"
echo "$hash" >"$out/src.sha256"
rm -rf "$out/src"
echo "$deb"
