#!/bin/sh
# contrib/bench/link-check.sh: two checks of the berth link, read from its link map
# (docs/performance.md, "The binary's layout"; both keep peak RSS down, which the RSS
# goals, peak RSS at or below crun's, cannot spare).
#
# streams (ctest build.no_iostreams): fails when the link holds libstdc++'s stream and
#   locale machinery. One std::ifstream, std::stringstream or <iostream> anywhere links
#   about 0.4 MB of it (the locale facets of char and wchar_t, both string ABIs), and its
#   static initializers run on every call: peak RSS of create, run and exec 0.3-0.4 MB
#   higher. Read files with util/file.h and split them with util/strings.h instead.
# cold-text (ctest build.cold_text_current): fails when a line of src/cli/cold_text.ld
#   places nothing although its archive is in the link (a member renamed or gone), or when
#   berth was linked without that script.
#
# Usage: contrib/bench/link-check.sh streams|cold-text [BUILD_DIR]   (default build; reads
#        BUILD_DIR/berth.map, the link map the berth target writes)
set -eu
check=${1:-}
build=${2:-build}
map=$build/berth.map
die() { echo "link-check: $*" >&2; exit 1; }
[ -r "$map" ] || die "no $map: build the berth target first"

streams() {
  # The archive members the link pulled in, as the map's first part lists them.
  found=$(grep -oE 'libstdc\+\+\.a\([^)]*(locale|stream|ios)[^)]*\)' "$map" | sort -u || true)
  if [ -n "$found" ]; then
    echo "link-check: berth links libstdc++'s streams and locales:" >&2
    echo "$found" | sed 's/^/  /' >&2
    die "who pulled them in: the lines after each in the first part of $map"
  fi
  echo "link-check: no libstdc++ stream or locale code in the berth link"
}

# In the map, each pattern of the output section is followed by the input sections it
# placed (a long name wraps: its address and object go on the next line).
cold_text() {
  awk '
    function close_pattern() {
      if (pat == "" || hits) return
      ar = pat; sub(/^\*/, "", ar); sub(/:.*/, "", ar)
      if (ar in linked) { print "link-check: stale: " pat " places nothing, yet " ar " is in the link"; stale++ }
      else skipped++
    }
    # First pass: every archive the link took members from, as "libfoo.a".
    NR == FNR { line = $0
      while (match(line, /lib[^ ()\/]*\.a\(/)) { linked[substr(line, RSTART, RLENGTH - 1)] = 1; line = substr(line, RSTART + RLENGTH) }
      next }
    /^\.text\.berth_cold/ { incold = 1; found = 1; next }
    incold && /^\.[a-z]/ { close_pattern(); pat = ""; incold = 0 }
    !incold { next }
    /^ \*fill\*/ { next }
    /^ \*/ { close_pattern(); pat = substr($0, 2); hits = 0; total++; next }
    /^ \./ { hits++ }
    END {
      if (incold) close_pattern()
      if (!found) { print "link-check: the map has no .text.berth_cold: berth was linked without src/cli/cold_text.ld"; exit 1 }
      if (stale) { printf "link-check: %d of %d lines of src/cli/cold_text.ld place nothing: fix or drop them\n", stale, total; exit 1 }
      printf "link-check: each of the %d lines of src/cli/cold_text.ld places code", total - skipped
      if (skipped) printf " (%d more name libraries this build does not link statically)", skipped
      printf "\n"
    }' "$map" "$map"
}

case $check in
  streams) streams ;;
  cold-text) cold_text ;;
  *) die "usage: link-check.sh streams|cold-text [BUILD_DIR]" ;;
esac
