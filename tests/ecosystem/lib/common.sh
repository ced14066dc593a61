# shellcheck shell=bash
# Shared by run.sh and the engine scripts: paths, timeouts, assertions, the scenario runner
# with its expectations file, and the cleanup of everything an engine left on the host.
#
# Engine scripts run with these variables exported by run.sh:
#   ECO_REPO      repository root
#   ECO_RUNTIME   absolute path of the runtime under test (runc, berth, ...)
#   ECO_RTNAME    its basename: selects expectations/<name>.txt
#   ECO_WORK      this engine's private directory (daemon roots, sockets, logs); removed at the end
#   ECO_IMAGES    directory holding the image archives (oci.tar, docker.tar) made by lib/image.sh
#   ECO_TOKEN     short unique word: cgroup parents and namespaces are named after it
#   ECO_LOGDIR    where each scenario's log goes (kept after the run)
#   ECO_UNCONFINED 1: run containers with seccomp=unconfined (docker, podman)
#   ECO_ONLY      empty, or a comma-separated list of the scenarios to run

ECO_IMAGE_REF=eco/busybox:test

eco_log() { printf '%s\n' "$*" >&2; }
eco_die() { printf 'ecosystem: error: %s\n' "$*" >&2; exit 2; }

# eco_t SECONDS CMD...: CMD with a deadline (SIGTERM, SIGKILL 10 s later). Every call to an
# engine client goes through it, so that a hung daemon fails a scenario instead of the run.
eco_t() { local s=$1; shift; timeout -k 10 "$s" "$@"; }

# ---- assertions: print what differs and return 1 (scenarios run under set -e) ----
check_eq() { # ACTUAL EXPECTED WHAT
  if [[ "$1" != "$2" ]]; then printf 'check failed: %s: got [%s], expected [%s]\n' "$3" "$1" "$2"; return 1; fi
  printf 'ok: %s = [%s]\n' "$3" "$1"
}
check_match() { # ACTUAL ERE WHAT
  if ! [[ "$1" =~ $2 ]]; then printf 'check failed: %s: [%s] does not match /%s/\n' "$3" "$1" "$2"; return 1; fi
  printf 'ok: %s matches /%s/\n' "$3" "$2"
}
check_no_match() { # ACTUAL ERE WHAT
  if [[ "$1" =~ $2 ]]; then printf 'check failed: %s: [%s] matches /%s/\n' "$3" "$1" "$2"; return 1; fi
  printf 'ok: %s does not match /%s/\n' "$3" "$2"
}
check_ge() { # ACTUAL MIN WHAT (integers)
  if ! [[ "$1" =~ ^[0-9]+$ ]] || (( $1 < $2 )); then
    printf 'check failed: %s: got [%s], expected >= %s\n' "$3" "$1" "$2"; return 1
  fi
  printf 'ok: %s = %s (>= %s)\n' "$3" "$1" "$2"
}
check_le() { # ACTUAL MAX WHAT (integers)
  if ! [[ "$1" =~ ^[0-9]+$ ]] || (( $1 > $2 )); then
    printf 'check failed: %s: got [%s], expected <= %s\n' "$3" "$1" "$2"; return 1
  fi
  printf 'ok: %s = %s (<= %s)\n' "$3" "$1" "$2"
}
check_empty() { # TEXT WHAT
  if [[ -n "$1" ]]; then printf 'check failed: %s: expected nothing, got:\n%s\n' "$2" "$1"; return 1; fi
  printf 'ok: %s: none\n' "$2"
}
# run_rc VAR CMD...: run CMD, its stdout+stderr into $VAR, its status into $rc (no set -e exit).
run_rc() {
  local __v=$1; shift
  local __out
  __out=$("$@" 2>&1) && rc=0 || rc=$?
  printf -v "$__v" '%s' "$__out"
  printf '$ %s\n%s\n[exit %s]\n' "$*" "$__out" "$rc"
}
# wait_until SECONDS CMD...: poll CMD every 0.1 s until it succeeds.
wait_until() {
  local deadline=$((SECONDS + $1)); shift
  until "$@" >/dev/null 2>&1; do
    (( SECONDS < deadline )) || { printf 'timed out waiting for: %s\n' "$*"; return 1; }
    sleep 0.1
  done
}
# rt_dirs ROOT: the container directories in a runtime's --root (not its dot-files: berth
# keeps its seccomp filter cache there).
rt_dirs() { ls "$1"; }
# children_are PID NAME N: PID has exactly N children named NAME (a condition for wait_until).
children_are() { [[ "$(pgrep -P "$1" -x "$2" | wc -l)" == "$3" ]]; }
now_ms() { local t; t=$(date +%s%N); echo $((t / 1000000)); }

# ---- cgroups of a process, as seen on the host ----
# cg_path PID CONTROLLER: the process's cgroup path in that v1 hierarchy ("" for v2).
cg_path() {
  local pid=$1 ctrl=$2 line
  while IFS= read -r line; do
    local rest=${line#*:}; local ctrls=${rest%%:*}; local path=${rest#*:}
    if [[ -z "$ctrl" && -z "$ctrls" && ${line%%:*} == 0 ]]; then echo "$path"; return 0; fi
    [[ -n "$ctrl" ]] && [[ ",$ctrls," == *",$ctrl,"* ]] && { echo "$path"; return 0; }
  done <"/proc/$pid/cgroup"
  return 1
}
# cg_file PID CONTROLLER FILE: host path of FILE in the process's cgroup of that hierarchy.
cg_file() {
  local p; p=$(cg_path "$1" "$2") || return 1
  echo "/sys/fs/cgroup/$2$p/$3"
}
cg_read() { local f; f=$(cg_file "$@") || return 1; cat "$f"; }

# All cgroup directories (every hierarchy) at or below /PARENT, deepest first.
cg_dirs_under() {
  local parent=$1 d
  for d in /sys/fs/cgroup/*/"$parent"; do
    [[ -d "$d" ]] && find "$d" -mindepth 0 -type d
  done | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-
}

# Mount points at or below DIR (from our mount namespace), deepest first.
mounts_under() {
  local dir=$1
  awk -v d="$dir" '{ p=$5; gsub(/\\040/, " ", p); if (p == d || index(p, d "/") == 1) print p }' \
    /proc/self/mountinfo | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2- | uniq
}

# Processes whose command line mentions TEXT (not this shell nor its parents).
pids_mentioning() {
  local text=$1 p self=$$ me=$BASHPID
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ $p == "$self" || $p == "$me" ]] && continue
    tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "$text" && echo "$p"
  done
  return 0
}

# ---- host paths an engine creates outside its directory ----
# eco_note_host_path PATH: remember PATH if it does not exist yet, so that cleanup removes it
# (files: rm; directories: rmdir, deepest first, only if empty; PATH ending in "/": the whole
# tree, for a runtime's cache). Paths that existed stay.
eco_note_host_path() {
  [[ -e "$1" || -L "$1" ]] || echo "$1" >>"$ECO_WORK/.host-paths"
}
eco_remove_host_paths() {
  local f=$ECO_WORK/.host-paths p
  [[ -f "$f" ]] || return 0
  awk '{ print length($0) " " $0 }' "$f" | sort -rn | cut -d' ' -f2- | uniq | while IFS= read -r p; do
    if [[ "$p" == */ ]]; then
      [[ -d "$p" ]] && rm -rf --one-file-system "$p"
    elif [[ -d "$p" && ! -L "$p" ]]; then
      rmdir "$p" 2>/dev/null || eco_log "cleanup: left $p (not empty: $(ls -A "$p" | head -5 | tr '\n' ' '))"
    elif [[ -e "$p" || -L "$p" ]]; then
      rm -f "$p"
    fi
  done
}

# ---- cleanup: idempotent, safe to call from a trap, from run.sh after a kill, or twice ----
# eco_cleanup_generic: kill what lives in our cgroups and what mentions our directory,
# unmount below it, remove our cgroups and the host paths we created, then the directory.
eco_cleanup_generic() {
  [[ -n "${ECO_WORK:-}" && -d "$ECO_WORK" ]] || return 0
  local parent d p round
  # 1. Container processes: thaw frozen cgroups first (SIGKILL does not reach a frozen task).
  for parent in $(eco_cgroup_parents); do
    for d in $(cg_dirs_under "$parent"); do
      [[ -f "$d/freezer.state" ]] && echo THAWED >"$d/freezer.state" 2>/dev/null
      [[ -f "$d/cgroup.freeze" ]] && echo 0 >"$d/cgroup.freeze" 2>/dev/null
    done
    for round in 1 2 3; do
      for d in $(cg_dirs_under "$parent"); do
        while read -r p; do [[ -n "$p" ]] && kill -KILL "$p" 2>/dev/null; done <"$d/cgroup.procs" 2>/dev/null
      done
      sleep 0.2
    done
  done
  # 2. Daemons, shims, conmon, clients: everything whose argv names our directory.
  local pids; pids=$(pids_mentioning "$ECO_WORK")
  if [[ -n "$pids" ]]; then
    # shellcheck disable=SC2086
    kill -TERM $pids 2>/dev/null
    for round in $(seq 50); do
      pids=$(pids_mentioning "$ECO_WORK"); [[ -z "$pids" ]] && break; sleep 0.2
    done
    # shellcheck disable=SC2086
    [[ -n "$pids" ]] && { eco_log "cleanup: SIGKILL to $pids"; kill -KILL $pids 2>/dev/null; sleep 0.5; }
  fi
  # 3. Mounts below our directory (overlays, shm, netns, the daemons' private binds).
  for round in 1 2 3; do
    local m; m=$(mounts_under "$ECO_WORK")
    [[ -z "$m" ]] && break
    while IFS= read -r p; do umount "$p" 2>/dev/null || umount -l "$p" 2>/dev/null; done <<<"$m"
  done
  # 4. Our cgroups, deepest first (a cgroup with tasks cannot go; step 1 emptied them).
  for parent in $(eco_cgroup_parents); do
    for d in $(cg_dirs_under "$parent"); do rmdir "$d" 2>/dev/null || eco_log "cleanup: could not remove cgroup $d"; done
  done
  # 5. Runtime state outside our directory (podman uses the runtime's default --root).
  eco_remove_runtime_state
  # 6. Host paths the daemons created, then our directory (never crossing into a mount).
  eco_remove_host_paths
  if [[ -n "$(mounts_under "$ECO_WORK")" ]]; then
    eco_log "cleanup: mounts remain under $ECO_WORK; not removing it"
    return 1
  fi
  rm -rf --one-file-system "$ECO_WORK"
}

# The cgroup parents (relative to each hierarchy's root) an engine puts containers under.
eco_cgroup_parents() { echo "eco-$ECO_TOKEN"; }

# Containers whose state lives in the runtime's default root (/run/<name>: podman passes no
# --root): those whose bundle is below our directory are ours.
eco_remove_runtime_state() {
  local root=/run/$ECO_RTNAME d id bundle
  [[ -d "$root" ]] || return 0
  for d in "$root"/*; do
    [[ -d "$d" ]] || continue
    id=${d##*/}
    bundle=$("$ECO_RUNTIME" state "$id" 2>/dev/null | jq -r '.bundle // empty' 2>/dev/null)
    [[ -n "$bundle" && "$bundle" == "$ECO_WORK"/* ]] || continue
    eco_log "cleanup: runtime state of $id left in $root"
    "$ECO_RUNTIME" delete --force "$id" >/dev/null 2>&1
    [[ -e "$d" ]] && rm -rf --one-file-system "$d"
  done
  return 0
}
# Ids of the runtime's containers (default root) whose bundle is below our directory.
eco_runtime_ids() {
  local root=/run/$ECO_RTNAME d id bundle
  for d in "$root"/*; do
    [[ -d "$d" ]] || continue
    id=${d##*/}
    bundle=$("$ECO_RUNTIME" state "$id" 2>/dev/null | jq -r '.bundle // empty' 2>/dev/null)
    [[ -n "$bundle" && "$bundle" == "$ECO_WORK"/* ]] && echo "$id"
  done
  return 0
}

# ---- expectations: tests/ecosystem/expectations/<runtime name>.txt ----
#   ENGINE SCENARIO [when ERE]  # reason
# ENGINE and SCENARIO may be '*'. With "when", the scenario is an expected failure only when
# its log matches the ERE (the runtime's error text, typically); a failure with another cause
# is a FAIL. Without it, any failure of that scenario is expected.
# eco_expectation ENGINE SCENARIO LOG: the reason of the first entry that covers a failure
# with that LOG. With LOG empty (the scenario passed): the first entry naming this very
# scenario, whatever its "when", so that the run can say the entry is stale.
eco_expectation() {
  local engine=$1 scenario=$2 log=$3 line rule reason e s rest re
  local file=$ECO_REPO/tests/ecosystem/expectations/$ECO_RTNAME.txt
  [[ -f "$file" ]] || return 1
  while IFS= read -r line; do
    line=${line%%$'\r'}
    [[ "$line" =~ ^[[:space:]]*(#|$) ]] && continue
    rule=${line%%[[:space:]]#[[:space:]]*}; reason=${line#"$rule"}; reason=${reason#*# }
    read -r e s rest <<<"$rule"
    [[ "$e" == '*' || "$e" == "$engine" ]] || continue
    if [[ -z "$log" ]]; then
      [[ "$s" == "$scenario" ]] || continue
      echo "$reason"; return 0
    fi
    [[ "$s" == '*' || "$s" == "$scenario" ]] || continue
    if [[ -n "$rest" ]]; then
      [[ "$rest" == when\ * ]] || { eco_log "expectations: bad line: $line"; continue; }
      re=${rest#when }
      grep -Eq -- "$re" "$log" || continue
    fi
    echo "$reason"; return 0
  done <"$file"
  return 1
}

# ---- the scenario runner ----
# ERR trap of a scenario: the command that failed and the call chain down to it.
eco_err_trace() {
  local rc=$1 i where=
  for (( i = 1; i < ${#FUNCNAME[@]}; i++ )); do
    where+=" ${FUNCNAME[i]}:${BASH_LINENO[i-1]}"
  done
  printf 'FAILED: %s (exit %s) at%s\n' "$BASH_COMMAND" "$rc" "$where"
}
# eco_scenario NAME FUNCTION: run FUNCTION in a subshell under set -e, its output to the log,
# then print one line: PASS, FAIL (with the end of the log) or XFAIL (with the reason).
# After it, the engine's eco_reset hook removes whatever containers the scenario left.
ECO_PASSED=0; ECO_FAILED=0; ECO_XFAILED=0; ECO_XPASSED=0
eco_scenario() {
  local name=$1 fn=$2 log rc t0 t1 dt reason
  # run.sh --only: the other scenarios are not run, and not counted
  [[ -z "${ECO_ONLY:-}" || ",$ECO_ONLY," == *",$name,"* ]] || return 0
  log=$ECO_LOGDIR/$ECO_ENGINE.$name.log
  t0=$(now_ms)
  (
    set -eE -o pipefail
    trap 'eco_err_trace $?' ERR
    "$fn"
  ) >"$log" 2>&1 </dev/null
  rc=$?
  t1=$(now_ms); dt=$(( (t1 - t0) / 100 )); dt="$((dt / 10)).$((dt % 10))s"
  if (( rc == 0 )); then
    if reason=$(eco_expectation "$ECO_ENGINE" "$name" "" ); then
      echo "PASS $ECO_ENGINE $name ($dt; listed as an expected failure, remove the entry: $reason)"
      ECO_XPASSED=$((ECO_XPASSED + 1))
    else
      echo "PASS $ECO_ENGINE $name ($dt)"
    fi
    ECO_PASSED=$((ECO_PASSED + 1))
  elif reason=$(eco_expectation "$ECO_ENGINE" "$name" "$log"); then
    echo "XFAIL $ECO_ENGINE $name ($dt): $reason"
    ECO_XFAILED=$((ECO_XFAILED + 1))
  else
    echo "FAIL $ECO_ENGINE $name ($dt, exit $rc; log: $log)"
    tail -n 25 "$log" | sed 's/^/    | /'
    ECO_FAILED=$((ECO_FAILED + 1))
  fi
  if declare -F eco_reset >/dev/null; then eco_reset >>"$log" 2>&1; fi
  return 0
}

# The engine script's last line: the counts, read by run.sh.
eco_engine_summary() {
  echo "COUNTS $ECO_ENGINE passed=$ECO_PASSED failed=$ECO_FAILED xfailed=$ECO_XFAILED xpassed=$ECO_XPASSED"
}
