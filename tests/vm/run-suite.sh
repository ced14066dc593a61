#!/bin/sh
# run-suite.sh: run guest scripts in VMs with a container runtime and report one line each.
#
#   run-suite.sh [--runtime PATH] [--rdma] [--timeout S] [--cache DIR] [--log-dir DIR]
#                [--quiet] SCRIPT...
#
#   --runtime PATH   runtime under test (default: runc from PATH); copied into each VM at the
#                    same path and exported to the guest script as $RUNTIME
#   --rdma           boot every VM with Soft-RoCE (scripts can also ask for it themselves)
#   --timeout S      per VM (default 240)
#   --log-dir DIR    where each script's output goes (default <cache>/logs)
#   --quiet          do not print the output of failed scripts
#   --bin PATH       one more host binary for every VM (repeatable; run-vm.sh --bin)
#   --env NAME=VALUE one more variable for every guest script (repeatable)
#
# Every VM also gets jq (for editing config.json) and a busybox bundle made by mkbundle.sh
# (built-in template, so every runtime gets the same config) at /bundle. A script asks for
# more run-vm.sh options with comment lines:   # vm-options: --rdma --mem 768
#
# Output: "PASS name (12.3s)", "FAIL name (exit N, 12.3s)" or "SKIP name" (guest exit 77)
# per script, then "N passed, N failed, N skipped". Exit status: 1 when any failed, 77 when
# all were skipped, else 0.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../.." && pwd))
cache=${BERTH_VM_CACHE:-$repo/build/vm-cache}
runtime=; rdma=; timeout_s=240; logdir=; quiet=0; extra=""

die() { printf 'run-suite: error: %s\n' "$*" >&2; exit 2; }
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --rdma) rdma=--rdma; shift ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --log-dir) logdir=$2; shift 2 ;;
    --quiet) quiet=1; shift ;;
    --bin|--env) case $2 in *[[:space:]]*) die "$1: no blanks: $2" ;; esac
                 extra="$extra $1 $2"; shift 2 ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option: $1" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || die "usage: run-suite.sh [--runtime PATH] [--rdma] SCRIPT... (--help)"
[ -n "$runtime" ] || runtime=runc
case $runtime in
  */*) runtime=$(cd "$(dirname "$runtime")" && pwd)/$(basename "$runtime") ;;
  *) runtime=$(command -v "$runtime") || die "runtime $runtime not found" ;;
esac
[ -x "$runtime" ] || die "runtime $runtime is not executable"
jq=$(command -v jq) || die "jq not found (Debian package jq)"
mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
[ -n "$logdir" ] || logdir=$cache/logs
mkdir -p "$logdir"

# Without qemu no script can run: report each as skipped (never as passed).
missing=
command -v qemu-system-x86_64 >/dev/null || missing="qemu-system-x86_64 (package qemu-system-x86)"
command -v busybox >/dev/null || missing="$missing busybox (package busybox-static)"
if [ -n "$missing" ]; then
  for script in "$@"; do n=$(basename "$script"); echo "SKIP ${n%.sh} (missing: $missing)"; done
  echo "0 passed, 0 failed, $# skipped"
  exit 77
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/berth-suite.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$here/mkbundle.sh" "$work/bundle" || die "mkbundle.sh failed"

passed=0; failed=0; skipped=0
for script in "$@"; do
  name=$(basename "$script"); name=${name%.sh}
  if [ ! -f "$script" ]; then
    echo "FAIL $name (no such script: $script)"; failed=$((failed + 1)); continue
  fi
  opts=$(sed -n 's/^# vm-options:[[:space:]]*//p' "$script" | tr '\n' ' ')
  out=$logdir/$name.out
  t0=$(date +%s.%N)
  rc=0
  # shellcheck disable=SC2086
  "$here/run-vm.sh" --cache "$cache" --timeout "$timeout_s" --log "$logdir/$name.console.log" \
    --bin "$runtime" --bin "$jq" --bundle "$work/bundle" --env "RUNTIME=$runtime" \
    $rdma $extra $opts "$script" > "$out" 2>&1 || rc=$?
  t=$(awk "BEGIN { printf \"%.1f\", $(date +%s.%N) - $t0 }")
  case $rc in
    0) echo "PASS $name (${t}s)"; passed=$((passed + 1)) ;;
    77) why=$(grep -m1 '^SKIP:' "$out" | sed 's/^SKIP: *//' || true)
        echo "SKIP $name${why:+ ($why)}"; skipped=$((skipped + 1)) ;;
    *) echo "FAIL $name (exit $rc, ${t}s; output in $out)"; failed=$((failed + 1))
       if [ $quiet = 0 ]; then sed 's/^/    /' "$out"; fi ;;
  esac
done
echo "$passed passed, $failed failed, $skipped skipped"
[ $failed = 0 ] || exit 1
[ $passed -gt 0 ] || exit 77
exit 0
