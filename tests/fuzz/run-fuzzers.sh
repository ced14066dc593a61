#!/bin/sh
# Runs berth's libFuzzer targets: one per tests/fuzz/fuzz_<name>.cc, built as
# BUILD_DIR/tests/fuzz/fuzz_<name> (cmake --build BUILD_DIR --target fuzz_all, in a build
# configured with CC=clang CXX=clang++ -DBERTH_FUZZ=ON), each on its checked-in seed corpus
# tests/fuzz/corpus/<name>/ (read only) plus a work corpus for what it finds.
#
#   run-fuzzers.sh BUILD_DIR [SECONDS [NAME...]]
#       Each target (or the NAMEs given) for SECONDS (default 10; CI runs all of them, so
#       keep SECONDS x targets bounded). A crash, leak, timeout (-timeout, 10 s per input)
#       or out-of-memory (-rss_limit_mb=2048) fails the run and leaves the reproducer
#       (crash-*, leak-*, timeout-*, oom-*) and the log in the work dir, whose path is
#       printed. Reproduce with BUILD_DIR/tests/fuzz/fuzz_<name> FILE (with
#       UBSAN_OPTIONS=halt_on_error=1, which this script sets, for undefined behaviour).
#
#   run-fuzzers.sh --merge BUILD_DIR [NAME...]
#       Adds to corpus/<name>/ the inputs of the work corpus that reach new coverage
#       (libFuzzer -merge=1), named by their SHA-1. Review them and commit the ones that
#       look like real input; drop huge or unreadable ones.
#
# Environment:
#   BERTH_FUZZ_WORK=DIR   work corpora in DIR/<name>/, kept (default: a temporary directory,
#                         removed when every target passed). --merge reads this.
#   BERTH_FUZZ_FORK=N     N worker processes per target (libFuzzer -fork=N); add
#                         -ignore_crashes=1 to BERTH_FUZZ_ARGS to go on after a crash.
#   BERTH_FUZZ_ARGS=...   extra libFuzzer flags, e.g. "-max_len=4096" or "-only_ascii=1".
# dict/<name>.dict, when present, is passed as -dict (keywords the mutator inserts).
#
# Long runs (before a release, or after changing a parser): hours per target, keeping the
# corpus, then merging it into the checked-in one:
#   cmake --build build-fuzz --target fuzz_all
#   BERTH_FUZZ_WORK=tests/fuzz/corpus-work BERTH_FUZZ_FORK=2 \
#     tests/fuzz/run-fuzzers.sh build-fuzz 14400 cdi_yaml netlink     # 4 h each
#   BERTH_FUZZ_WORK=tests/fuzz/corpus-work tests/fuzz/run-fuzzers.sh --merge build-fuzz
# tests/fuzz/corpus-work/ is ignored by git; a later long run resumes from it. Every crash
# found becomes a fix in src/, a unit test with the input, and the input in corpus/<name>/.
set -eu
# Undefined behaviour is a failure too, not a line in the log.
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

here=$(cd "$(dirname "$0")" && pwd)
merge=0
if [ "${1:-}" = "--merge" ]; then
  merge=1
  shift
fi
build=${1:?usage: run-fuzzers.sh [--merge] BUILD_DIR [SECONDS [NAME...]]}
shift
secs=10
if [ $merge -eq 0 ] && [ $# -gt 0 ]; then
  secs=$1
  shift
fi
if [ $# -gt 0 ]; then
  names="$*"
else
  names=$(cd "$here" && ls fuzz_*.cc | sed 's/^fuzz_//; s/\.cc$//')
fi
if [ -n "${BERTH_FUZZ_WORK:-}" ]; then
  mkdir -p "$BERTH_FUZZ_WORK"
  work=$(cd "$BERTH_FUZZ_WORK" && pwd)
  keep=1
else
  work=$(mktemp -d /tmp/berth-fuzz.XXXXXX)
  keep=0
fi

status=0
for t in $names; do
  bin=$build/tests/fuzz/fuzz_$t
  seeds=$here/corpus/$t
  if [ ! -x "$bin" ] || [ ! -d "$seeds" ]; then
    echo "fuzz_$t: missing $bin or $seeds"
    status=1
    continue
  fi
  dict=
  [ -f "$here/dict/$t.dict" ] && dict=-dict=$here/dict/$t.dict
  mkdir -p "$work/$t" "$work/$t.artifacts"
  if [ $merge -eq 1 ]; then
    echo "fuzz_$t: merging $work/$t into $seeds"
    # shellcheck disable=SC2086
    if ! "$bin" -merge=1 -max_len=65536 -rss_limit_mb=2048 $dict "$seeds" "$work/$t" >"$work/$t.merge.log" 2>&1; then
      echo "fuzz_$t: merge FAILED (see $work/$t.merge.log)"
      status=1
    fi
    grep -E 'MERGE-OUTER: [0-9]+ new files' "$work/$t.merge.log" || true
    continue
  fi
  echo "fuzz_$t: ${secs}s"
  fork=
  [ -n "${BERTH_FUZZ_FORK:-}" ] && fork=-fork=$BERTH_FUZZ_FORK
  # shellcheck disable=SC2086
  if ! "$bin" -max_total_time="$secs" -max_len=65536 -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
      $fork $dict ${BERTH_FUZZ_ARGS:-} -artifact_prefix="$work/$t.artifacts/" "$work/$t" "$seeds" >"$work/$t.log" 2>&1; then
    echo "fuzz_$t: FAILED (see $work/$t.log and $work/$t.artifacts/)"
    tail -30 "$work/$t.log"
    status=1
  else
    grep -E '^#[0-9]+.*(DONE|pulse)' "$work/$t.log" | tail -1 || true
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|new_units_added):' "$work/$t.log" | tr '\n' ' ' || true
    echo
  fi
done
if [ $status -eq 0 ] && [ $keep -eq 0 ]; then
  rm -rf "$work"
elif [ $status -ne 0 ]; then
  echo "work dir: $work"
fi
exit $status
