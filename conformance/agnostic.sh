#!/bin/bash
# berth's runtime-agnostic conformance cases: what the OCI runtime-tools suite does not
# cover (console socket, exec flags, update, events, ps, pause, kill --all, delete --force,
# hooks, error texts, state and list output), run against any runtime with runc's command
# line. Every case must pass with runc 1.1.5 and with berth; see docs/conformance.md.
#
# Usage: conformance/agnostic.sh [--runtime PATH] [--list] [--keep] [--timeout S]
#                                [--expectations FILE] [CASE|GLOB...]
# Exit: 0 no unexpected failure, 1 a case failed, 2 the suite could not run,
#       77 skipped (not root, or no runtime binary).
set -u
SELF=$(readlink -f "$0")
HERE=$(dirname "$SELF")
AGN=$HERE/agnostic

# --- inside a case process: the runner ran `agnostic.sh --case NAME` ---------------------
if [ "${1:-}" = --case ]; then
  CASE=$2
  # shellcheck source=agnostic/lib.sh
  . "$AGN/lib.sh"
  # shellcheck source=/dev/null
  for f in "$AGN"/cases/*.sh; do . "$f"; done
  case_main "$CASE"
  exit $?
fi

usage() { sed -n '6,10s/^# \{0,1\}//p' "$SELF"; }
die() { echo "agnostic: $*" >&2; exit 2; }
skip_all() { echo "agnostic: SKIP: $*" >&2; exit 77; }

runtime=${RUNTIME:-}
list=0 keep=0 case_timeout=60 expectations=
patterns=()
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) runtime=${2:?--runtime needs a path}; shift ;;
    --runtime=*) runtime=${1#*=} ;;
    --list) list=1 ;;
    --keep) keep=1 ;;
    --timeout) case_timeout=${2:?--timeout needs seconds}; shift ;;
    --expectations) expectations=${2:?--expectations needs a file}; shift ;;
    --in-reaper) in_reaper=1 ;;
    -h|--help) usage; exit 0 ;;
    -*) usage >&2; exit 2 ;;
    *) patterns+=("$1") ;;
  esac
  shift
done

# The case names, in file order then definition order (tc.NAME functions).
all_cases() {
  local f
  for f in "$AGN"/cases/*.sh; do
    sed -n 's/^tc\.\([A-Za-z0-9._-]*\)() {.*/\1/p' "$f"
  done
}

selected_cases() {
  local c p
  for c in $(all_cases); do
    if [ ${#patterns[@]} -eq 0 ]; then echo "$c"; continue; fi
    for p in "${patterns[@]}"; do
      # shellcheck disable=SC2053
      if [[ $c == $p ]]; then echo "$c"; break; fi
    done
  done
}

if [ $list = 1 ]; then
  selected_cases
  exit 0
fi

# --- preflight (outside the reaper) ------------------------------------------------------
if [ -z "${in_reaper:-}" ]; then
  [ "$(id -u)" = 0 ] || skip_all "needs root (it creates containers, cgroups and mounts)"
  if [ -z "$runtime" ]; then
    runtime=$(command -v runc) || skip_all "no runtime: runc is not in PATH (use --runtime PATH or RUNTIME=PATH)"
  fi
  case $runtime in
    */*) ;;
    *) found=$(command -v "$runtime") || skip_all "runtime $runtime not found in PATH"
       runtime=$found ;;
  esac
  [ -x "$runtime" ] || skip_all "runtime $runtime is not an executable file"
  runtime=$(readlink -f "$runtime")
  for tool in jq timeout cc ps mountpoint; do
    command -v $tool >/dev/null || die "needs $tool (Debian: jq coreutils gcc procps util-linux)"
  done
  [ -x /bin/busybox ] || die "needs /bin/busybox (Debian: busybox-static)"
  if LC_ALL=C ldd /bin/busybox >/dev/null 2>&1; then
    die "/bin/busybox is dynamically linked; the container rootfs needs busybox-static"
  fi
  [ -n "$(selected_cases)" ] || die "no case matches: ${patterns[*]}"
  [ -n "$expectations" ] || expectations=$HERE/expectations/agnostic-$(basename "$runtime").txt
  work=$(mktemp -d /tmp/berth-agnostic.XXXXXX) || die "mktemp failed"
  chmod 755 "$work"
  if ! cc -O2 -Wall -Wextra -Werror -o "$work/helper" "$AGN/helper.c" 2>"$work/helper.log"; then
    cat "$work/helper.log" >&2
    rm -rf "$work"
    die "cannot build the host helper ($AGN/helper.c)"
  fi
  # Everything below runs as the child of a subreaper (detached inits are adopted there).
  export AGN_TAG=$$ AGN_RUNTIME=$runtime AGN_WORK=$work AGN_EXPECT=$expectations AGN_KEEP=$keep AGN_TIMEOUT=$case_timeout
  exec "$work/helper" reap "$BASH" "$SELF" --in-reaper "${patterns[@]}"
fi

# --- the run (inside the reaper) ---------------------------------------------------------
# shellcheck source=agnostic/lib.sh
. "$AGN/lib.sh"
run_main "$(selected_cases)"
