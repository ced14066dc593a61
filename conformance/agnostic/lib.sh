# The runner and the assertion library of conformance/agnostic.sh (sourced, bash).
#
# The runner (run_main) runs each case `tc.NAME` in its own process under a time limit,
# then removes whatever the case left: containers (delete --force in the case's state
# root), processes and cgroups below the case's cgroup, mounts below the work dir.
#
# A case (case_main) sees:
#   RUNTIME RT_NAME  the runtime binary and its basename
#   T                the case's own directory (bundles, logs, sockets)
#   ROOT             the case's private state root (--root)
#   HELPER           the host helper (helper.c): console socket receiver
# and uses: bundle, config, cid, call, rt, expect_*, fail, skip, wait_*, cg_*.
# Assertions end the case process: never call them in a subshell or a pipeline.

RUNTIME=$AGN_RUNTIME
RT_NAME=$(basename "$RUNTIME")
WORK=$AGN_WORK
HELPER=$WORK/helper
# Every cgroup of a run lies below CG_PARENT; each case below CG_PARENT/CASE.
CG_TOP=/berth-agnostic
CG_PARENT=$CG_TOP/$RT_NAME.$AGN_TAG

# --- shared ------------------------------------------------------------------------------

# Mount points of the cgroup hierarchies (every v1 hierarchy and any cgroup2).
cg_mounts() {
  awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) == "cgroup" || $(i+1) == "cgroup2") print $5; break } }' \
    /proc/self/mountinfo | sort -u
}

# Removes the cgroup REL (and everything below it) from every hierarchy: thaws, kills
# what is still inside (processes of this run's containers), removes the directories
# deepest first. Prints one line per thing it had to do beyond rmdir.
cg_remove_tree() {
  local rel=$1 mp d pids=() p i
  local -a dirs=()
  for mp in $(cg_mounts); do
    [ -d "$mp$rel" ] && dirs+=("$mp$rel")
  done
  [ ${#dirs[@]} -gt 0 ] || return 0
  for d in "${dirs[@]}"; do
    while read -r sub; do
      [ -w "$sub/freezer.state" ] && [ "$(cat "$sub/freezer.state" 2>/dev/null)" != THAWED ] &&
        echo THAWED >"$sub/freezer.state" 2>/dev/null
      [ -w "$sub/cgroup.freeze" ] && echo 0 >"$sub/cgroup.freeze" 2>/dev/null
      for p in $(cat "$sub/cgroup.procs" 2>/dev/null); do pids+=("$p"); done
    done < <(find "$d" -type d 2>/dev/null)
  done
  if [ ${#pids[@]} -gt 0 ]; then
    mapfile -t pids < <(printf '%s\n' "${pids[@]}" | sort -un)
    echo "cleanup: killing ${#pids[@]} process(es) left in $rel: ${pids[*]}"
    kill -KILL "${pids[@]}" 2>/dev/null
  fi
  for d in "${dirs[@]}"; do
    for i in $(seq 50); do
      find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
      [ -d "$d" ] || break
      sleep 0.1
    done
    [ -d "$d" ] && echo "cleanup: cannot remove cgroup $d"
  done
  return 0
}

# Mount points below DIR, deepest first.
mounts_below() {
  awk -v p="$1/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# --- the runner --------------------------------------------------------------------------

make_rootfs() {
  local r=$1 a
  mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,run,var/tmp,home/agn} || return 1
  cp /bin/busybox "$r/bin/busybox" || return 1
  for a in $(/bin/busybox --list); do
    [ "$a" = busybox ] || ln -sf busybox "$r/bin/$a"
  done
  printf '%s\n' root:x:0:0:root:/root:/bin/sh agn:x:1000:1000:agn:/home/agn:/bin/sh \
    nobody:x:65534:65534:nobody:/nonexistent:/bin/false >"$r/etc/passwd"
  printf '%s\n' root:x:0: tty:x:5: agn:x:1000: nogroup:x:65534: >"$r/etc/group"
  chmod 1777 "$r/tmp" "$r/var/tmp"
  chown 1000:1000 "$r/home/agn"
}

# Expected failures: lines "CASE  # reason" or "CASE: TEXT  # reason" (TEXT: a part of
# the case's FAIL line, so that a different failure is not taken for the expected one).
# Prints "TEXT<tab>reason" for CASE, if listed.
expected_entry() {
  [ -f "$AGN_EXPECT" ] || return 1
  awk -v c="$1" '
    /^[ \t]*(#|$)/ { next }
    { i = index($0, " # "); head = substr($0, 1, i ? i - 1 : length($0)); gsub(/[ \t]+$/, "", head)
      name = head; text = ""
      j = index(head, ": "); if (j) { name = substr(head, 1, j - 1); text = substr(head, j + 2) }
      if (name == c) { print text "\t" (i ? substr($0, i + 3) : "(no reason given)"); found = 1; exit } }
    END { exit !found }' "$AGN_EXPECT"
}

# Ends every container of the case, its cgroups and mounts; removes its directories.
cleanup_case() {
  local c=$1 root=$WORK/state/$1 id m
  if [ -d "$root" ]; then
    for id in $(timeout -k 5 20 "$RUNTIME" --root "$root" list -q 2>/dev/null); do
      timeout -k 5 20 "$RUNTIME" --root "$root" delete --force "$id" >/dev/null 2>&1 ||
        echo "cleanup: delete --force $id failed"
    done
  fi
  cg_remove_tree "$CG_PARENT/$c"
  for m in $(mounts_below "$WORK/cases/$c"); do
    echo "cleanup: unmounting $m"
    umount -l "$m"
  done
  [ "$AGN_KEEP" = 1 ] || rm -rf --one-file-system "$WORK/cases/$c" "$root"
}

run_main() {
  local cases=$1 c start rc secs status detail reason entry want
  local n_pass=0 n_fail=0 n_xfail=0 n_xpass=0 n_skip=0 failed=() t0=$SECONDS
  local logs=$WORK/logs
  mkdir -p "$WORK/cases" "$WORK/state" "$logs"
  # The case runs in the background so that a signal to the run is handled at once: the
  # case is stopped (timeout passes the signal to its process group), then cleaned up.
  local case_pid=
  trap 'echo "agnostic: interrupted" >&2
        [ -n "$case_pid" ] && kill -TERM "$case_pid" 2>/dev/null && wait "$case_pid"
        [ -n "${c:-}" ] && cleanup_case "$c" >&2
        final_cleanup; exit 2' INT TERM HUP
  if ! make_rootfs "$WORK/rootfs"; then
    echo "agnostic: cannot build the busybox rootfs" >&2
    final_cleanup
    return 2
  fi
  echo "agnostic: runtime $RUNTIME ($("$RUNTIME" --version 2>/dev/null | head -1))"
  echo "agnostic: work dir $WORK, cgroups below $CG_PARENT"
  for c in $cases; do
    mkdir -p "$WORK/cases/$c" "$WORK/state/$c"
    start=$(date +%s.%N)
    timeout -k 5 "$AGN_TIMEOUT" "$BASH" "$SELF" --case "$c" >"$logs/$c.log" 2>&1 </dev/null &
    case_pid=$!
    wait "$case_pid"
    rc=$?
    case_pid=
    secs=$(echo "$start $(date +%s.%N)" | awk '{ printf "%.1f", $2 - $1 }')
    cleanup_case "$c" >>"$logs/$c.log" 2>&1
    detail=
    case $rc in
      0) status=PASS ;;
      77) status=SKIP; detail=$(sed -n 's/^SKIP: //p' "$logs/$c.log" | tail -1) ;;
      124|137) status=FAIL; detail="timed out after $AGN_TIMEOUT s" ;;
      *) status=FAIL; detail=$(grep -m1 '^FAIL' "$logs/$c.log" | cut -c1-200)
         [ -n "$detail" ] || detail="exit status $rc" ;;
    esac
    if entry=$(expected_entry "$c"); then
      want=${entry%%$'\t'*}
      reason=${entry#*$'\t'}
      case $status in
        FAIL) if [ -z "$want" ] || [[ $detail == *"$want"* ]]; then
                status=XFAIL; detail="expected: $reason"
              else
                detail="$detail (not the expected failure: $want)"
              fi ;;
        PASS) status=XPASS; detail="listed as expected failure ($reason); remove it from $(basename "$AGN_EXPECT")" ;;
      esac
    fi
    case $status in
      PASS) n_pass=$((n_pass + 1)) ;;
      SKIP) n_skip=$((n_skip + 1)) ;;
      XFAIL) n_xfail=$((n_xfail + 1)) ;;
      XPASS) n_xpass=$((n_xpass + 1)) ;;
      FAIL) n_fail=$((n_fail + 1)); failed+=("$c") ;;
    esac
    if grep -q '^cleanup: ' "$logs/$c.log"; then
      detail="${detail:+$detail; }$(grep '^cleanup: ' "$logs/$c.log" | head -3 | paste -sd ';' -)"
    fi
    printf '%-6s %-28s %5ss%s\n' "$status" "$c" "$secs" "${detail:+  $detail}"
  done
  c=
  for c in "${failed[@]}"; do
    echo
    echo "--- log of $c ---"
    sed 's/^/  /' "$logs/$c.log" | tail -60
  done
  echo
  printf 'agnostic: %s: %d cases: %d passed, %d failed, %d expected failures, %d unexpected passes, %d skipped; %d s\n' \
    "$RT_NAME" $((n_pass + n_fail + n_xfail + n_xpass + n_skip)) $n_pass $n_fail $n_xfail $n_xpass $n_skip $((SECONDS - t0))
  final_cleanup
  [ $n_fail -eq 0 ]
}

final_cleanup() {
  local m d mp
  cg_remove_tree "$CG_PARENT"
  for mp in $(cg_mounts); do
    rmdir "$mp$CG_TOP" 2>/dev/null  # only if no other run uses it
  done
  for m in $(mounts_below "$WORK"); do
    echo "cleanup: unmounting $m" >&2
    umount -l "$m"
  done
  if [ "$AGN_KEEP" = 1 ]; then
    echo "agnostic: kept $WORK" >&2
  else
    rm -rf --one-file-system "$WORK"
  fi
}

# --- inside a case -----------------------------------------------------------------------

case_main() {
  CASE=$1
  T=$WORK/cases/$CASE
  ROOT=$WORK/state/$CASE
  CG_CASE=$CG_PARENT/$CASE
  NCALL=0
  cd "$T" || exit 2
  if ! declare -F "tc.$CASE" >/dev/null; then
    echo "FAIL: no case named $CASE"
    return 1
  fi
  "tc.$CASE"
  return 0
}

fail() {
  # Name the case's line, not a line of this library or of an expect_* helper.
  local i=1
  while [[ ${BASH_SOURCE[i]:-} == */lib.sh || ${FUNCNAME[i]:-} == expect_* ]] && [ $((i + 1)) -lt ${#FUNCNAME[@]} ]; do
    i=$((i + 1))
  done
  echo "FAIL: ${BASH_SOURCE[i]##*/}:${BASH_LINENO[i - 1]}: $*"
  # A case may define on_fail to log what helps to understand a failure.
  if declare -F on_fail >/dev/null; then
    echo "on_fail:"
    on_fail 2>&1 | sed 's/^/  /'
  fi
  exit 1
}

skip() {
  echo "SKIP: $*"
  exit 77
}

note() { echo "# $*"; }

# The runtime with the case's state root, output untouched.
rt() { "$RUNTIME" --root "$ROOT" "$@"; }

# call ARG...: runs the runtime (time limit CALL_TIMEOUT, default 30 s, stdin from
# CALL_STDIN or /dev/null) with stdout and stderr in fresh files: a container made by
# `create` or `run -d` keeps writing to them. Sets RC, OUT, ERR; logs all three.
call() {
  NCALL=$((NCALL + 1))
  local o=$T/call$NCALL.out e=$T/call$NCALL.err
  echo "\$ $RT_NAME $*"
  timeout -k 5 "${CALL_TIMEOUT:-30}" "$RUNTIME" --root "$ROOT" "$@" <"${CALL_STDIN:-/dev/null}" >"$o" 2>"$e"
  RC=$?
  OUT=$(cat "$o")
  ERR=$(cat "$e")
  echo "  rc=$RC"
  [ -z "$OUT" ] || printf '%s\n' "$OUT" | head -40 | sed 's/^/  out| /'
  [ -z "$ERR" ] || printf '%s\n' "$ERR" | head -20 | sed 's/^/  err| /'
  return 0
}

expect_rc() {
  [ "$RC" = "$1" ] || fail "${2:-the command}: exit status $RC, want $1${ERR:+ (stderr: $(printf '%s' "$ERR" | head -c 300))}"
}
expect_ok() { expect_rc 0 "$@"; }
expect_eq() {
  [ "$1" = "$2" ] || fail "$3: got '$1', want '$2'"
}
expect_match() {
  printf '%s\n' "$1" | grep -Eq -- "$2" || fail "$3: '$(printf '%s' "$1" | head -c 400)' does not match /$2/"
}
expect_has() {
  case $1 in *"$2"*) ;; *) fail "$3: '$2' not in '$(printf '%s' "$1" | head -c 400)'" ;; esac
}
expect_lacks() {
  case $1 in *"$2"*) fail "$3: '$2' unexpectedly in '$(printf '%s' "$1" | head -c 400)'" ;; esac
}
# expect_json JSON FILTER WHAT: FILTER (jq) must yield true for JSON.
expect_json() {
  local r
  r=$(printf '%s' "$1" | jq -e "$2" 2>&1) || fail "$3: jq '$2' gave ${r:-nothing} for: $(printf '%s' "$1" | head -c 400)"
}
# The one-line error a runc-style runtime prints: `level=error msg="TEXT"`, exit status 1.
expect_error() {
  expect_rc "${2:-1}" "$3"
  expect_match "$ERR" "level=error msg=\".*$1" "${3:-the error}"
}

# wait_until SECONDS WHAT CMD...: polls CMD every 50 ms.
wait_until() {
  local limit=$1 what=$2 end
  shift 2
  end=$(($(date +%s%N) + limit * 1000000000))
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s%N)" -lt $end ] || fail "timed out after $limit s waiting for $what"
    sleep 0.05
  done
}
status_is() { [ "$(rt state "$1" 2>/dev/null | jq -r .status)" = "$2" ]; }
wait_status() { wait_until "${3:-10}" "$1 to be $2" status_is "$1" "$2"; }
# A live process (not a zombie).
pid_alive() { [ -r "/proc/$1/stat" ] && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
pid_gone() { ! pid_alive "$1"; }
file_has() { grep -q -- "$2" "$1" 2>/dev/null; }

# A container id unique to the run: cid NAME.
cid() { echo "agn-${CASE//./-}-$1-$AGN_TAG"; }

# bundle NAME [ARG...]: a busybox bundle in $T/NAME running ARG... (default: sh), no
# terminal, writable root, cgroupsPath $CG_CASE/NAME. Edit it with `config`.
bundle() {
  local name=$1 dir=$T/$1
  shift
  [ $# -gt 0 ] || set -- sh
  mkdir -p "$dir" && cp -a "$WORK/rootfs" "$dir/rootfs" || fail "cannot make bundle $name"
  # jq 1.6 would parse an argument like -c after --args as its own option: pass each one
  # as a named argument arg000, arg001...
  local -a jargs=()
  local i=0 a
  for a in "$@"; do
    jargs+=(--arg "$(printf 'arg%03d' $i)" "$a")
    i=$((i + 1))
  done
  jq -n --arg cg "$CG_CASE/$name" "${jargs[@]}" "$(config_template)" >"$dir/config.json" ||
    fail "cannot write $dir/config.json"
}

# config NAME FILTER [JQ-ARGS...]: applies a jq filter to $T/NAME/config.json.
config() {
  local f=$T/$1/config.json filter=$2
  shift 2
  jq "$@" "$filter" "$f" >"$f.new" && mv "$f.new" "$f" || fail "cannot edit $f with $filter"
}

config_template() {
  cat <<'EOF'
def caps: ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"];
def args: [$ARGS.named | to_entries[] | select(.key | startswith("arg"))] | sort_by(.key) | map(.value);
{
  ociVersion: "1.0.2",
  process: {
    terminal: false,
    user: {uid: 0, gid: 0},
    args: args,
    env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"],
    cwd: "/",
    capabilities: {bounding: caps, effective: caps, permitted: caps, ambient: caps},
    rlimits: [{type: "RLIMIT_NOFILE", hard: 1024, soft: 1024}],
    noNewPrivileges: true
  },
  root: {path: "rootfs", readonly: false},
  hostname: "agnostic",
  mounts: [
    {destination: "/proc", type: "proc", source: "proc"},
    {destination: "/dev", type: "tmpfs", source: "tmpfs", options: ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {destination: "/dev/pts", type: "devpts", source: "devpts",
     options: ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620", "gid=5"]},
    {destination: "/dev/shm", type: "tmpfs", source: "shm", options: ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {destination: "/dev/mqueue", type: "mqueue", source: "mqueue", options: ["nosuid", "noexec", "nodev"]},
    {destination: "/sys", type: "sysfs", source: "sysfs", options: ["nosuid", "noexec", "nodev", "ro"]}
  ],
  linux: {
    cgroupsPath: $cg,
    resources: {devices: [{allow: false, access: "rwm"}]},
    namespaces: [{type: "pid"}, {type: "network"}, {type: "ipc"}, {type: "uts"}, {type: "mount"}],
    maskedPaths: ["/proc/acpi", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list",
                  "/proc/sched_debug", "/proc/scsi", "/sys/firmware"],
    readonlyPaths: ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
  }
}
EOF
}

# cg_v1 CONTROLLER NAME FILE: a file of bundle NAME's cgroup in a v1 hierarchy.
cg_v1() { echo "/sys/fs/cgroup/$1$CG_CASE/$2/$3"; }
# need_v1 CONTROLLER...: skips the case unless each controller is a v1 hierarchy.
need_v1() {
  local c
  for c in "$@"; do
    [ "$(stat -f -c %T "/sys/fs/cgroup/$c" 2>/dev/null)" = cgroupfs ] ||
      skip "reads cgroup v1 files and /sys/fs/cgroup/$c is not a cgroup v1 hierarchy on this host"
  done
}
# Every directory of bundle NAME's cgroup, in any hierarchy.
cg_dirs() {
  local mp
  for mp in $(cg_mounts); do
    [ -d "$mp$CG_CASE/$1" ] && echo "$mp$CG_CASE/$1"
  done
  return 0
}

# console SOCKET STEP...: starts the helper's console receiver in the background
# (transcript in SOCKET.out, notes in SOCKET.err, pid in CONSOLE_PID) and waits until it
# listens.
console() {
  local sock=$1
  shift
  "$HELPER" console "$sock" -t 15 "$@" >"$sock.out" 2>"$sock.err" &
  CONSOLE_PID=$!
  wait_until 5 "the console socket $sock" test -S "$sock"
}
# console_wait SOCKET: the receiver's exit status must be 0 (every step done).
console_wait() {
  local rc=0
  wait "$CONSOLE_PID" || rc=$?
  echo "console transcript:"
  sed 's/^/  pty| /' "$1.out"
  sed 's/^/  helper| /' "$1.err"
  [ $rc = 0 ] || fail "console receiver: exit status $rc: $(tail -1 "$1.err")"
}

# up NAME [ARG...]: bundle NAME (default process: sleep 1000) started with `run -d`;
# sets ID (its id) and INIT (its pid).
up() {
  local name=$1
  shift
  [ $# -gt 0 ] || set -- sleep 1000
  bundle "$name" "$@"
  ID=$(cid "$name")
  call run -d --bundle "$T/$name" "$ID"
  expect_ok "run -d $name"
  INIT=$(rt state "$ID" | jq .pid)
  pid_alive "$INIT" || fail "the container's process ($INIT) is not alive after run -d"
}
# catches PID SIGNUM: the process has a handler for the signal (SigCgt of /proc/PID/status).
catches() {
  local mask
  mask=$(awk '/^SigCgt:/ { print $2 }' "/proc/$1/status" 2>/dev/null) || return 1
  [ -n "$mask" ] && [ $((0x$mask >> ($2 - 1) & 1)) = 1 ]
}
# cmdline_is PID WORD...: /proc/PID/cmdline is exactly these words (an exec'd process may
# still be the runtime's helper for a moment after `exec --detach` returned).
cmdline_is() {
  local pid=$1
  shift
  [ "$(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)" = "$* " ]
}
