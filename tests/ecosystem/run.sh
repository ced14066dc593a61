#!/bin/bash
# run.sh: end-to-end scenarios through real engines (containerd 1.6 + ctr, Docker 20.10,
# podman 4.3) with one runtime binary, each engine in its own private daemon(s).
#
#   run.sh [--runtime PATH] [--log-dir DIR] [--timeout S] [--unconfined] [--no-install]
#          [--only LIST] [engine...]
#
#   engine           containerd, docker, podman (default: all three, in that order)
#   --runtime PATH   the runtime under test (default: runc from PATH); its basename selects
#                    the expected failures in expectations/<name>.txt
#   --log-dir DIR    one log per scenario (default: build/ecosystem-logs/<name>)
#   --timeout S      limit per engine (default 900); the engine is killed and cleaned after
#   --unconfined     Docker and podman containers get seccomp=unconfined (to see what else
#                    fails while a runtime has no seccomp support)
#   --no-install     do not apt-get install missing packages; fail instead
#   --only LIST      run only these scenarios (comma-separated names, e.g. exec,loop20)
#
# Output: one line per scenario, "PASS|FAIL|XFAIL <engine> <scenario> (...)", a FAIL followed
# by the end of its log; "TIME <engine> <seconds>s" per engine; then the counts. Exit status:
# 0 when every scenario passed or failed as expected, 1 otherwise, 2 on a harness error,
# 77 (skipped) when not run as root.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/image.sh
. "$here/lib/image.sh"

runtime=; logdir=; engine_timeout=900; unconfined=0; install=1; only=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --runtime=*) runtime=${1#*=}; shift ;;
    --log-dir) logdir=$2; shift 2 ;;
    --timeout) engine_timeout=$2; shift 2 ;;
    --unconfined) unconfined=1; shift ;;
    --no-install) install=0; shift ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) eco_die "unknown option: $1 (--help)" ;;
    *) break ;;
  esac
done
engines=("$@")
[[ ${#engines[@]} -gt 0 ]] || engines=(containerd docker podman)
for e in "${engines[@]}"; do
  [[ -f "$here/engines/$e.sh" ]] || eco_die "unknown engine: $e (containerd, docker, podman)"
done

if [[ $(id -u) != 0 ]]; then
  for e in "${engines[@]}"; do echo "SKIP $e (needs root)"; done
  echo "ecosystem: 0 passed, 0 failed, ${#engines[@]} skipped"
  exit 77
fi

[[ -n "$runtime" ]] || runtime=$(command -v runc) || eco_die "no runc in PATH; give --runtime"
case $runtime in
  */*) runtime=$(cd "$(dirname "$runtime")" && pwd)/$(basename "$runtime") ;;
  *) runtime=$(command -v "$runtime") || eco_die "runtime not found" ;;
esac
[[ -x "$runtime" ]] || eco_die "runtime $runtime is not executable"
rtname=$(basename "$runtime")
[[ -n "$logdir" ]] || logdir=$repo/build/ecosystem-logs/$rtname$( (( unconfined )) && echo -unconfined)
mkdir -p "$logdir" && logdir=$(cd "$logdir" && pwd)

# ---- packages (Debian 12): installed when missing, services never started by apt ----
ECO_PACKAGES=(containerd docker.io podman conmon umoci skopeo busybox-static jq runc)
ensure_packages() {
  local p missing=() rc made_policy=0
  for p in "${ECO_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  (( install )) || eco_die "missing packages: ${missing[*]} (run without --no-install)"
  eco_log "installing: ${missing[*]}"
  # Without systemd, the packages' init scripts would start dockerd and containerd on the
  # host's default paths: forbid starting services while apt runs.
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
  fi
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      "${missing[@]}"; } >"$logdir/apt.log" 2>&1
  rc=$?
  (( made_policy )) && rm -f /usr/sbin/policy-rc.d
  (( rc == 0 )) || { tail -n 20 "$logdir/apt.log" >&2; eco_die "apt-get install failed (log: $logdir/apt.log)"; }
}
ensure_packages

docker_cli=$(dpkg-query -L docker.io 2>/dev/null | grep -m1 '/bin/docker$')
[[ -x "$docker_cli" ]] || docker_cli=$(command -v docker)

base=$(mktemp -d "${TMPDIR:-/tmp}/berth-eco.XXXXXX") || eco_die "mktemp failed"
chmod 755 "$base"

# The engine script runs in the background (timeout puts it in its own process group, out of
# reach of a terminal's ^C): on SIGINT/SIGTERM we stop it ourselves, and it cleans up in its
# exit trap; the EXIT trap then repeats the cleanup from outside and removes $base.
engine_pid=; tail_pid=; cur_work=; cur_token=
outside_cleanup() {
  [[ -n "$cur_work" ]] || return 0
  ( ECO_REPO=$repo ECO_RUNTIME=$runtime ECO_RTNAME=$rtname ECO_WORK=$cur_work ECO_TOKEN=$cur_token
    eco_cleanup_generic ) 2>>"$logdir/${cur_work##*/}.engine.log"
  cur_work=
}
stop_engine() {
  if [[ -n "$engine_pid" ]]; then
    kill -TERM "$engine_pid" 2>/dev/null
    wait "$engine_pid" 2>/dev/null
    engine_pid=
  fi
  [[ -n "$tail_pid" ]] && kill "$tail_pid" 2>/dev/null
}
trap 'stop_engine; outside_cleanup; rm -rf --one-file-system "$base"' EXIT
trap 'echo "ecosystem: interrupted" >&2; exit 130' INT
trap 'echo "ecosystem: terminated" >&2; exit 143' TERM

echo "ecosystem: runtime $runtime ($("$runtime" --version 2>/dev/null | head -n 1)); logs in $logdir"
mkdir -p "$base/images"
t0=$(now_ms)
ECO_REPO=$repo eco_build_images "$base/images"
echo "ecosystem: test image built in $(( ($(now_ms) - t0) / 1000 ))s"

passed=0; failed=0; xfailed=0; xpassed=0
for e in "${engines[@]}"; do
  cur_token=$(od -An -N4 -tx1 /dev/urandom | tr -d ' \n')
  cur_work=$base/$e
  out=$logdir/$e.out
  mkdir -p "$cur_work"
  : >"$out"
  t0=$(now_ms)
  ECO_REPO=$repo ECO_RUNTIME=$runtime ECO_RTNAME=$rtname ECO_WORK=$cur_work \
    ECO_IMAGES=$base/images ECO_TOKEN=$cur_token ECO_LOGDIR=$logdir ECO_UNCONFINED=$unconfined \
    ECO_ONLY=$only ECO_DOCKER_CLI=$docker_cli \
    timeout -k 60 "$engine_timeout" bash "$here/engines/$e.sh" >"$out" 2>"$logdir/$e.engine.log" </dev/null &
  engine_pid=$!
  # the result lines as they come (all but the final counts)
  tail -n +1 --pid="$engine_pid" -s 0.2 -f "$out" | grep --line-buffered -v '^COUNTS ' &
  tail_pid=$!
  wait "$engine_pid"; rc=$?
  engine_pid=
  wait "$tail_pid" 2>/dev/null; tail_pid=
  # Whatever happened to the engine script (killed by the timeout included), nothing of it
  # may stay: the same cleanup again, from outside (a no-op when the script did it).
  outside_cleanup
  secs=$(( ($(now_ms) - t0) / 1000 ))
  counts=$(sed -n "s/^COUNTS $e //p" "$out")
  if [[ -z "$counts" ]]; then
    # count what did run, and fail the engine
    passed=$((passed + $(grep -c '^PASS ' "$out"))); failed=$((failed + $(grep -c '^FAIL ' "$out")))
    xfailed=$((xfailed + $(grep -c '^XFAIL ' "$out")))
    echo "FAIL $e engine (the engine script did not finish: exit $rc$( ((rc == 124)) && echo ", timed out after ${engine_timeout}s"); log: $logdir/$e.engine.log)"
    tail -n 25 "$logdir/$e.engine.log" | sed 's/^/    | /'
    failed=$((failed + 1))
  else
    for kv in $counts; do
      case $kv in
        passed=*) passed=$((passed + ${kv#*=})) ;;
        failed=*) failed=$((failed + ${kv#*=})) ;;
        xfailed=*) xfailed=$((xfailed + ${kv#*=})) ;;
        xpassed=*) xpassed=$((xpassed + ${kv#*=})) ;;
      esac
    done
  fi
  echo "TIME $e ${secs}s"
done

echo "ecosystem ($rtname): $xfailed expected failures, $xpassed passed although listed as expected failures"
echo "ecosystem: $passed passed, $failed failed"
(( failed == 0 ))
