#!/bin/bash
# containerd 1.6 + ctr: the runtime under test behind the runc v2 shim
# (`ctr run --runtime io.containerd.runc.v2` with BinaryName = the runtime, Root = a
# directory of this run). Started by run.sh, which exports the ECO_* variables (lib/common.sh).
set -u -o pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=../lib/daemons.sh
. "$here/lib/daemons.sh"

ECO_ENGINE=containerd
NS=eco-$ECO_TOKEN                       # containerd namespace
IMG=$ECO_IMAGE_REF
CGP=/eco-$ECO_TOKEN/ctr                 # cgroup parent of every container
RTROOT=$ECO_WORK/containerd/runtime-root  # BinaryName's --root is $RTROOT/$NS
FIFO=$ECO_WORK/containerd/fifo
TMPD=$ECO_WORK/tmp
RUNOPTS=(--runtime io.containerd.runc.v2 --runc-binary "$ECO_RUNTIME" --runc-root "$RTROOT"
  --fifo-dir "$FIFO")

ct() { eco_t 60 ctr --address "$ECO_CTD_SOCK" --namespace "$NS" "$@"; }
# ctr_line ARGS...: the ctr command line as one shell string (for script -c).
ctr_line() { printf '%q ' ctr --address "$ECO_CTD_SOCK" --namespace "$NS" "$@"; }
# run_detached ID CMD...: a running container with no IO.
run_detached() { local id=$1; shift; ct run "${RUNOPTS[@]}" -d --null-io --cgroup "$CGP/$id" "$IMG" "$id" "$@"; }
task_field() { ct task ls | awk -v id="$1" -v f="$2" '$1 == id { print $f }'; }
task_pid() { task_field "$1" 2; }
task_status() { task_field "$1" 3; }
task_is() { [[ "$(task_status "$1")" == "$2" ]]; }
# wait_running ID: until the task runs; if it does not, what containerd and the runtime say.
wait_running() {
  wait_until 20 task_is "$1" RUNNING && return 0
  [[ "$(task_status "$1")" == STOPPED ]] && echo "task $1 stopped before it ran"
  ct task ls
  echo "--- $(bundle "$1")/log.json:"; cat "$(bundle "$1")/log.json" 2>/dev/null
  grep -F "$1" "$ECO_CTD_DIR/containerd.log" | tail -n 5
  return 1
}
bundle() { echo "$ECO_CTD_DIR/state/io.containerd.runtime.v2.task/$NS/$1"; }
# in_pty CMDLINE: run a shell command line on a pseudo-terminal (ctr -t needs one). The
# processes sleep a little before they exit: ctr stops copying a terminal's output when the
# process exits, and would sometimes lose the last line.
in_pty() { eco_t 60 script -qefc "$1" /dev/null; }
rt() { "$ECO_RUNTIME" --root "$RTROOT/$NS" "$@"; }

eco_reset() {
  local c
  for c in $(ct container ls -q 2>/dev/null); do
    ct task kill -s SIGKILL "$c" >/dev/null 2>&1
    ct task delete -f "$c" >/dev/null 2>&1
    ct container delete "$c" >/dev/null 2>&1
  done
  return 0
}
cleanup() {
  set +e
  [[ -n "$ECO_CTD_PID" ]] && eco_reset
  eco_containerd_stop
  eco_cleanup_generic
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# ---------------------------------------------------------------------------------------
sc_run_output() {
  local out rc
  out=$(ct run "${RUNOPTS[@]}" --rm --cgroup "$CGP/out" "$IMG" out \
    sh -c 'echo to-stdout; echo to-stderr >&2; exit 3' 2>"$TMPD/err") && rc=0 || rc=$?
  printf 'stdout: %s\nstderr: %s\n' "$out" "$(cat "$TMPD/err")"
  check_eq "$rc" 3 "exit code of ctr run"
  check_eq "$out" to-stdout "stdout"
  check_match "$(cat "$TMPD/err")" to-stderr "stderr"
  check_empty "$(ct container ls -q)" "containers left by --rm"
}

sc_run_tty() {
  local out rc
  out=$(in_pty "$(ctr_line run "${RUNOPTS[@]}" --rm -t --cgroup "$CGP/tty" "$IMG" tty sh -c 'tty; sleep 0.3; exit 4')") &&
    rc=0 || rc=$?
  printf '%s\n' "$out"
  check_eq "$rc" 4 "exit code of ctr run -t"
  check_match "$out" $'/dev/pts/[0-9]+\r' "tty inside the container (CRLF: a terminal)"
}

sc_exec() {
  local out rc
  run_detached ex sleep 300
  wait_running ex
  run_rc out ct task exec --fifo-dir "$FIFO" --exec-id e1 ex sh -c 'echo in-exec; echo exec-err >&2; exit 5'
  check_eq "$rc" 5 "exit code of the exec'd process"
  check_match "$out" in-exec "exec stdout"
  check_match "$out" exec-err "exec stderr"
  run_rc out ct task exec --fifo-dir "$FIFO" --exec-id e2 --cwd /tmp ex pwd
  check_eq "$rc" 0 "exec with --cwd"
  check_eq "$out" /tmp "cwd of the exec'd process"
  check_eq "$(task_status ex)" RUNNING "container still running after exec"
}

sc_exec_tty() {
  local out rc
  run_detached et sleep 300
  wait_running et
  out=$(in_pty "$(ctr_line task exec --fifo-dir "$FIFO" -t --exec-id t1 et sh -c 'tty; sleep 0.3; exit 6')") && rc=0 || rc=$?
  printf '%s\n' "$out"
  check_eq "$rc" 6 "exit code of ctr task exec -t"
  check_match "$out" $'/dev/pts/[0-9]+\r' "tty of the exec'd process"
}

sc_pause_resume() {
  local pid n1 n2 f
  run_detached pr sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.05; done'
  wait_running pr
  pid=$(task_pid pr)
  f=$(bundle pr)/rootfs/tmp/n
  wait_until 10 test -s "$f"
  ct task pause pr
  check_eq "$(task_status pr)" PAUSED "task status after pause"
  if [[ -d /sys/fs/cgroup/freezer ]]; then
    check_eq "$(cg_read "$pid" freezer freezer.state)" FROZEN "freezer.state of the container"
  fi
  n1=$(cat "$f"); sleep 0.5; n2=$(cat "$f")
  check_eq "$n2" "$n1" "counter while paused"
  ct task resume pr
  check_eq "$(task_status pr)" RUNNING "task status after resume"
  if [[ -d /sys/fs/cgroup/freezer ]]; then
    check_eq "$(cg_read "$pid" freezer freezer.state)" THAWED "freezer.state after resume"
  fi
  sleep 0.5
  check_ge "$(cat "$f")" $((n1 + 2)) "counter after resume"
}

sc_ps() {
  local out pid
  run_detached ps sh -c 'sleep 300 & sleep 301 & wait'
  wait_running ps
  pid=$(task_pid ps)
  wait_until 10 children_are "$pid" sleep 2
  run_rc out ct task ps ps
  check_eq "$rc" 0 "ctr task ps"
  check_eq "$(awk -v p="$pid" '$1 == p' <<<"$out" | wc -l)" 1 "init pid $pid listed"
  check_eq "$(grep -cE '^[0-9]+[[:space:]]' <<<"$out")" 3 "processes listed (sh and two sleeps)"
}

sc_metrics() {
  local out
  run_detached me sleep 300
  wait_running me
  run_rc out ct task metrics me
  check_eq "$rc" 0 "ctr task metrics"
  check_match "$out" 'pids\.current[[:space:]]+[1-9]' "pids.current in the metrics"
  check_match "$out" 'memory\.usage_in_bytes[[:space:]]+[1-9]|memory\.usage[[:space:]]+[1-9]' "memory usage in the metrics"
}

# The runtime's own view of a container the shim created: state, list, events --stats.
sc_runtime_state() {
  local out pid
  run_detached st sleep 300
  wait_running st
  pid=$(task_pid st)
  run_rc out rt state st
  check_eq "$rc" 0 "runtime state"
  check_eq "$(jq -r .status <<<"$out")" running "state .status"
  check_eq "$(jq -r .pid <<<"$out")" "$pid" "state .pid = the task's pid"
  check_eq "$(jq -r .bundle <<<"$out")" "$(bundle st)" "state .bundle"
  run_rc out rt list --format json
  check_eq "$rc" 0 "runtime list"
  check_eq "$(jq -r '.[] | select(.id == "st") | .status' <<<"$out")" running "list shows st running"
}

sc_events_stats() {
  local out
  run_detached es sleep 300
  wait_running es
  run_rc out eco_t 30 "$ECO_RUNTIME" --root "$RTROOT/$NS" events --stats es
  check_eq "$rc" 0 "runtime events --stats"
  check_eq "$(jq -r .type <<<"$out")" stats "events .type"
  check_eq "$(jq -r .id <<<"$out")" es "events .id"
  check_ge "$(jq -r .data.pids.current <<<"$out")" 1 "events .data.pids.current"
  check_ge "$(jq -r .data.memory.usage.usage <<<"$out")" 1 "events .data.memory.usage.usage"
}

sc_kill_signal() {
  local bg rc
  ct run "${RUNOPTS[@]}" --rm --cgroup "$CGP/ks" "$IMG" ks \
    sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.05; done' >"$TMPD/ks" 2>&1 &
  bg=$!
  wait_until 20 grep -q ready "$TMPD/ks" || { cat "$TMPD/ks"; return 1; }
  ct task kill -s SIGUSR1 ks
  wait "$bg" && rc=0 || rc=$?
  cat "$TMPD/ks"
  check_eq "$rc" 7 "exit code after SIGUSR1"
  check_match "$(cat "$TMPD/ks")" got-usr1 "the container's USR1 handler ran"
}

# "stop": SIGTERM, then SIGKILL when the process did not go (what docker stop does).
sc_stop() {
  local bg rc t0
  # sleep as pid 1 has no SIGTERM handler: the kernel ignores the signal.
  ct run "${RUNOPTS[@]}" --rm --cgroup "$CGP/s1" "$IMG" s1 sleep 300 >/dev/null 2>&1 &
  bg=$!
  wait_running s1
  ct task kill -s SIGTERM s1
  sleep 1
  check_eq "$(task_status s1)" RUNNING "pid 1 without a handler survives SIGTERM"
  ct task kill -s SIGKILL s1
  wait "$bg" && rc=0 || rc=$?
  check_eq "$rc" 137 "exit code after SIGKILL"
  # a process that handles SIGTERM exits with its own status.
  ct run "${RUNOPTS[@]}" --rm --cgroup "$CGP/s2" "$IMG" s2 \
    sh -c 'trap "exit 42" TERM; echo ready; while :; do sleep 0.05; done' >"$TMPD/s2" 2>&1 &
  bg=$!
  wait_until 20 grep -q ready "$TMPD/s2" || { cat "$TMPD/s2"; return 1; }
  t0=$SECONDS
  ct task kill s2
  wait "$bg" && rc=0 || rc=$?
  check_eq "$rc" 42 "exit code after SIGTERM (handled)"
  check_le $((SECONDS - t0)) 5 "seconds to stop"
}

sc_delete() {
  local pid cg out
  run_detached de sleep 300
  wait_running de
  pid=$(task_pid de)
  cg=$(cg_path "$pid" pids)
  check_eq "$cg" "$CGP/de" "cgroup of the container"
  check_eq "$(test -d "$RTROOT/$NS/de" && echo yes)" yes "runtime state dir exists"
  run_rc out ct task delete de
  check_match "$rc" '^[1-9]' "ctr task delete of a running task fails"
  ct task kill -s SIGKILL de
  wait_until 20 task_is de STOPPED
  ct task delete de
  check_empty "$(ct task ls -q)" "tasks after delete"
  check_eq "$(test -e "$RTROOT/$NS/de" && echo left)" "" "runtime state dir removed"
  check_eq "$(test -e "/sys/fs/cgroup/pids$cg" && echo left)" "" "pids cgroup removed"
  check_empty "$(mounts_under "$(bundle de)")" "mounts of the bundle"
  ct container delete de
  check_empty "$(ct container ls -q)" "containers after delete"
  # a running task goes with --force
  run_detached df sleep 300
  wait_running df
  ct task delete -f df
  check_empty "$(ct task ls -q)" "tasks after delete --force"
  check_eq "$(test -e "$RTROOT/$NS/df" && echo left)" "" "runtime state dir removed (force)"
}

# A container whose task exited gets a new task: the same container runs again.
sc_restart() {
  local out rc
  out=$(ct run "${RUNOPTS[@]}" --cgroup "$CGP/rs" "$IMG" rs sh -c 'echo run-once; exit 2') && rc=0 || rc=$?
  check_eq "$rc" 2 "first run exit code"
  check_eq "$out" run-once "first run output"
  check_empty "$(ct task ls -q)" "no task after the first run"
  out=$(ct task start --fifo-dir "$FIFO" rs) && rc=0 || rc=$?
  check_eq "$rc" 2 "second run exit code"
  check_eq "$out" run-once "second run output"
}

# The shim reports the runtime's own error text (the last error line of log.json).
sc_create_fails() {
  local out
  run_rc out ct run "${RUNOPTS[@]}" --rm --cgroup "$CGP/cf1" "$IMG" cf1 /nonexistent
  check_match "$rc" '^[1-9]' "ctr run of a missing command fails"
  check_match "$out" 'OCI runtime create failed' "error from create"
  check_no_match "$out" 'unable to retrieve OCI runtime error' "the runtime's log.json was read"
  check_match "$out" '/nonexistent' "the error names the command"
  check_match "$out" '[Nn]o such file or directory' "the error says why (ENOENT)"
  check_empty "$(ct task ls -q)" "no task after the failed create"
  check_eq "$(test -e "$RTROOT/$NS/cf1" && echo left)" "" "no runtime state left"
  check_eq "$(test -e "/sys/fs/cgroup/pids$CGP/cf1" && echo left)" "" "no cgroup left"
  run_rc out ct run "${RUNOPTS[@]}" --rm --cgroup "$CGP/cf2" "$IMG" cf2 /bin/notexec
  check_match "$rc" '^[1-9]' "ctr run of a non-executable file fails"
  check_no_match "$out" 'unable to retrieve OCI runtime error' "the runtime's log.json was read"
  check_match "$out" '/bin/notexec' "the error names the command"
  check_match "$out" '[Pp]ermission denied' "the error says why (EACCES)"
}

leftovers_snapshot() {
  {
    echo "## mounts"; mounts_under "$ECO_WORK"
    echo "## cgroups"; cg_dirs_under "${CGP#/}" | sort
    echo "## runtime state"; rt_dirs "$RTROOT/$NS" 2>/dev/null || true
    echo "## bundles"; ls -A "$ECO_CTD_DIR/state/io.containerd.runtime.v2.task/$NS" 2>/dev/null || true
    echo "## shims"; pids_mentioning "-address $ECO_CTD_SOCK" | wc -l
    echo "## shim sockets"; ls -A /run/containerd/s 2>/dev/null || true
  }
}
sc_loop20() {
  local i before after
  before=$(leftovers_snapshot)
  for i in $(seq 20); do run_detached "l$i" sleep 300; done
  for i in $(seq 20); do wait_running "l$i"; done
  check_eq "$(ct task ls -q | wc -l)" 20 "running tasks"
  # what the final comparison looks for is there while they run
  check_eq "$(rt_dirs "$RTROOT/$NS" | wc -l)" 20 "runtime state dirs while running"
  check_ge "$(cg_dirs_under "${CGP#/}" | grep -c '/l[0-9]*$')" 20 "container cgroups while running"
  check_ge "$(mounts_under "$ECO_CTD_DIR/state" | grep -c '/rootfs$')" 20 "rootfs mounts while running"
  for i in $(seq 20); do
    ct task kill -s SIGKILL "l$i"
    wait_until 20 task_is "l$i" STOPPED
    ct task delete "l$i" >/dev/null
    ct container delete "l$i"
  done
  check_empty "$(ct container ls -q)" "containers after the loop"
  sleep 0.5
  after=$(leftovers_snapshot)
  check_empty "$(diff <(echo "$before") <(echo "$after"))" "difference in mounts, cgroups, state dirs, shims"
}

# ---------------------------------------------------------------------------------------
mkdir -p "$TMPD" "$RTROOT" "$FIFO"
eco_containerd_start || exit 2
ct images import "$ECO_IMAGES/oci.tar" >/dev/null || { eco_log "ctr images import failed"; exit 2; }

eco_scenario run-output sc_run_output
eco_scenario run-tty sc_run_tty
eco_scenario exec sc_exec
eco_scenario exec-tty sc_exec_tty
eco_scenario pause-resume sc_pause_resume
eco_scenario ps sc_ps
eco_scenario metrics sc_metrics
eco_scenario runtime-state sc_runtime_state
eco_scenario events-stats sc_events_stats
eco_scenario kill-signal sc_kill_signal
eco_scenario stop sc_stop
eco_scenario delete sc_delete
eco_scenario restart sc_restart
eco_scenario create-fails sc_create_fails
eco_scenario loop20 sc_loop20
eco_engine_summary
