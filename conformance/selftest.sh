#!/usr/bin/env bash
# shellcheck disable=SC2317 # it takes the sourced file's final exit for reached
# Copyright The berth authors.
# SPDX-License-Identifier: Apache-2.0
#
# Checks oci-suite.sh's TAP reading, expectation matching and verdicts on
# made-up TAP files.  Needs no root, no runtime and no suite build.

set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=conformance/oci-suite.sh
source "$here/oci-suite.sh"
set +e

fails=0
check() { # name expected actual
  if [[ $2 == "$3" ]]; then
    printf 'ok   %s\n' "$1"
  else
    printf 'FAIL %s\n  expected: %q\n  actual:   %q\n' "$1" "$2" "$3"
    fails=$((fails + 1))
  fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
results="$tmp/results"
mkdir -p "$results"

put() { # test rc tap-text
  printf '%s 0.1\n' "$2" >"$results/$1.rc"
  printf '%b' "$3" >"$results/$1.tap"
}

# --- parse_tap
put t1 0 'TAP version 13\nok 1 - a\nnot ok 2 - b \\# c # TODO later\nnot ok 3 - d [x]\nok 4 # skip e\n  ---\n  not ok 9 - inside YAML\n  ...\n1..4\n'
check "parse_tap counts" "C	1	1	1	1" "$(parse_tap "$results/t1.tap" | tail -n1)"
check "parse_tap failing line" "N	d [x]" "$(parse_tap "$results/t1.tap" | head -n1)"
check "failures_of clean file" "d [x]" "$(failures_of t1)"

# Two streams in one file (linux_cgroups_cpus prints two), both consistent.
put t2 0 'TAP version 13\nok 1 - a\n1..1\nTAP version 13\n1..0\n'
check "two streams, plans right" "" "$(failures_of t2)"

# A leading plan that the points do not reach.
put t3 0 'TAP version 13\n1..3\nok 1 - a\n'
check "short of a leading plan" "(plan 1..3, 1 test points)" "$(failures_of t3)"

put t4 0 'TAP version 13\nok 1 - a\n'
check "no plan" "(no plan)" "$(failures_of t4)"

put t5 1 'TAP version 13\nok 1 - a\n'
check "exit status wins over plan" "(exit status 1)" "$(failures_of t5)"

put t6 124 ''
check "timeout, nothing printed" $'(timeout)\n(no test points)' "$(failures_of t6)"

# The hook tests: a YAML diagnostic and an empty plan, no test point.
put t7 0 'TAP version 13\n  ---\n  {"error": "x"}\n  ...\n1..0\n'
check "no test points" "(no test points)" "$(failures_of t7)"

put t8 0 'TAP version 13\nok 1 # SKIP all\n1..1\n'
check "all skipped is no failure" "" "$(failures_of t8)"

# --- expectations
cat >"$tmp/exp.txt" <<'EOF'
# comment
t1: d [x]  # literal brackets
t5  # whole file
t9: has * limit  # wildcard
t2: gone  # fixed since
t2: racy  # flaky, suite: a race
EOF
load_expectations "$tmp/exp.txt"
check "expectations loaded" 5 "${#exp_tests[@]}"
match_expectation t1 "d [x]"; check "literal [] match" 0 "$match_index"
match_expectation t1 "d x"; check "[] not a glob" -1 "$match_index"
match_expectation t5 "(exit status 1)"; check "whole file" 1 "$match_index"
match_expectation t9 "has hard limit"; check "* wildcard" 2 "$match_index"
match_expectation t9 "has hard limits"; check "* anchored" -1 "$match_index"
check "reason kept" "literal brackets" "${exp_reasons[0]}"

(printf 't1: no reason\n' >"$tmp/bad.txt"; load_expectations "$tmp/bad.txt") 2>/dev/null
check "line without reason refused" 2 "$?"

# --- report: verdicts and exit status
tests=(t1 t2 t5 t8)
run_started=$(date +%s) runtime_path=/bin/true runtime_version=test
expectations_file="$tmp/exp.txt" repo_root=$tmp
out=$(report); rc=$?
check "all failures expected" 0 "$rc"
check "t1 XFAIL, todo noted" 1 "$(grep -c '^t1 .* XFAIL (1 todo)$' <<<"$out")"
check "t2 PASS" 1 "$(grep -c '^t2 .* PASS$' <<<"$out")"
check "t5 XFAIL (exit 1)" 1 "$(grep -c '^t5 .* XFAIL (exit 1)$' <<<"$out")"
check "t8 SKIP" 1 "$(grep -c '^t8 .* SKIP$' <<<"$out")"
check "fixed expectation reported" 1 "$(grep -c 'line 5: t2: gone' <<<"$out")"
check "flaky expectation not reported" 0 "$(grep -c 'racy' <<<"$out")"

tests=(t1 t3 t7)
out=$(report); rc=$?
check "unexpected failure exits 1" 1 "$rc"
check "t3 FAIL" 1 "$(grep -c '^t3 .* FAIL$' <<<"$out")"
check "t7 FAIL, no test points" 1 "$(grep -c '^  t7: (no test points)$' <<<"$out")"

# --- the shipped expectation files parse
for f in "$here"/expectations/*.txt; do
  exp_tests=()
  (load_expectations "$f") >/dev/null 2>&1
  check "$(basename "$f") parses" 0 "$?"
done

((fails == 0)) && echo "selftest: all passed" || echo "selftest: $fails failed"
((fails == 0))
