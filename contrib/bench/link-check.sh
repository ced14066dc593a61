#!/bin/sh
# contrib/bench/link-check.sh: fails when the berth link holds libstdc++'s stream and
# locale machinery. One std::ifstream, std::stringstream or <iostream> anywhere links about
# 0.4 MB of it (the locale facets of char and wchar_t, both string ABIs), and its static
# initializers run on every call, touching fault-around windows far from the rest of the
# code: peak RSS of create, run and exec 0.3-0.4 MB higher, which the RSS goals (peak RSS
# at or below crun's) cannot spare (docs/performance.md, "Why the code is shaped so").
# Read files with util/file.h and split them with util/strings.h instead.
#
# Usage: contrib/bench/link-check.sh [BUILD_DIR]   (default build; reads BUILD_DIR/berth.map,
#        the link map the berth target writes). Run by ctest as build.no_iostreams.
set -eu
build=${1:-build}
map=$build/berth.map
[ -r "$map" ] || { echo "link-check: no $map: build the berth target first" >&2; exit 1; }
# The archive members the link pulled in, as the map's first part lists them.
found=$(grep -oE 'libstdc\+\+\.a\([^)]*(locale|stream|ios)[^)]*\)' "$map" | sort -u || true)
if [ -n "$found" ]; then
  echo "link-check: berth links libstdc++'s streams and locales:" >&2
  echo "$found" | sed 's/^/  /' >&2
  echo "link-check: who pulled them in: the lines after each in the first part of $map" >&2
  exit 1
fi
echo "link-check: no libstdc++ stream or locale code in the berth link"
