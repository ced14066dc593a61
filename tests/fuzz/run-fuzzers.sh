#!/bin/sh
# Runs every libFuzzer target for SECONDS each (default 15) on its seed corpus; a crash
# fails the run and leaves the reproducer in the work dir. Usage:
#   run-fuzzers.sh BUILD_DIR [SECONDS]
set -eu
build=${1:?build dir with -DBERTH_FUZZ=ON}
secs=${2:-15}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/berth-fuzz.XXXXXX)
status=0
for t in spec process resources cli; do
  mkdir -p "$work/$t"
  echo "fuzz_$t: ${secs}s"
  if ! "$build/tests/fuzz/fuzz_$t" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 \
      -artifact_prefix="$work/$t/" "$work/$t" "$here/corpus/$t" >"$work/$t.log" 2>&1; then
    echo "fuzz_$t: FAILED (see $work/$t.log and $work/$t/)"
    tail -20 "$work/$t.log"
    status=1
  else
    grep -E '^#[0-9]+.*(DONE|pulse)' "$work/$t.log" | tail -1 || true
  fi
done
[ $status -eq 0 ] && rm -rf "$work"
exit $status
