#!/bin/bash
# Docker 20.10 (dockerd on a private containerd): the runtime under test registered from
# contrib/docker/daemon.json as "test-<name>" and made the default runtime. Started by
# run.sh, which exports the ECO_* variables (lib/common.sh).
set -u -o pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=../lib/daemons.sh
. "$here/lib/daemons.sh"

ECO_ENGINE=docker
IMG=$ECO_IMAGE_REF
TMPD=$ECO_WORK/tmp
SECOPT=()
[[ "${ECO_UNCONFINED:-0}" == 1 ]] && SECOPT=(--security-opt seccomp=unconfined)

dk() { eco_t 120 "$ECO_DOCKER_CLI" -H "unix://$ECO_DK_SOCK" "$@"; }
drun() { dk run "${SECOPT[@]}" "$@"; }
# the runtime's --root as the shim passes it: <exec-root>/runtime-runc/moby, whatever the
# runtime's name (ARGV-SUMMARY.txt)
rtroot() { echo "$ECO_DK_DIR/exec/runtime-runc/moby"; }
rt() { eco_t 30 "$ECO_RUNTIME" --root "$(rtroot)" "$@"; }
inspect() { dk inspect -f "$2" "$1"; }
cid() { inspect "$1" '{{.Id}}'; }
cpid() { inspect "$1" '{{.State.Pid}}'; }
status_is() { [[ "$(inspect "$1" '{{.State.Status}}')" == "$2" ]]; }
# wait_running NAME: until the container runs; if it does not, what the engine says.
wait_running() {
  wait_until 20 status_is "$1" running && return 0
  local st; st=$(inspect "$1" '{{.State.Status}} {{.State.ExitCode}} {{.State.Error}}')
  echo "state of $1: $st"
  [[ "$st" == exited* ]] && echo "container $1 stopped before it ran"
  dk logs "$1"
  return 1
}
logs_have() { dk logs "$1" 2>&1 | grep -q -- "$2"; }
cg_parent() { echo "eco-$ECO_TOKEN/docker"; }

eco_reset() {
  local ids; ids=$(dk ps -aq 2>/dev/null)
  # shellcheck disable=SC2086
  [[ -z "$ids" ]] || dk rm -f $ids >/dev/null 2>&1
  return 0
}
cleanup() {
  set +e
  [[ -n "$ECO_DK_PID" ]] && eco_reset
  eco_dockerd_stop
  eco_containerd_stop
  eco_cleanup_generic
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

# ---------------------------------------------------------------------------------------
sc_run_output() {
  local out rc
  out=$(drun --rm "$IMG" sh -c 'echo to-stdout; echo to-stderr >&2; exit 3' 2>"$TMPD/err") && rc=0 || rc=$?
  printf 'stdout: %s\nstderr: %s\n' "$out" "$(cat "$TMPD/err")"
  check_eq "$rc" 3 "exit code of docker run"
  check_eq "$out" to-stdout "stdout"
  check_match "$(cat "$TMPD/err")" to-stderr "stderr"
  drun --name keep "$IMG" sh -c 'exit 9' || true
  [[ "$(inspect keep '{{.State.ExitCode}}')" != 137 ]] ||
    echo "container keep was SIGKILLed (137), not by the test: stopped before it ran?"
  check_eq "$(inspect keep '{{.State.ExitCode}}')" 9 "ExitCode of a kept container"
}

sc_run_tty() {
  local out rc
  out=$(drun --rm -t "$IMG" sh -c 'tty; exit 4') && rc=0 || rc=$?
  printf '%s\n' "$out"
  check_eq "$rc" 4 "exit code of docker run -t"
  check_match "$out" $'^/dev/pts/[0-9]+\r' "tty inside the container (CRLF: a terminal)"
}

sc_exec() {
  local out rc
  drun -d --name ex "$IMG" sleep 300
  wait_running ex
  run_rc out dk exec ex sh -c 'echo in-exec; echo exec-err >&2; exit 5'
  check_eq "$rc" 5 "exit code of docker exec"
  check_match "$out" in-exec "exec stdout"
  check_match "$out" exec-err "exec stderr"
  run_rc out dk exec -u nobody -w /tmp -e FOO=bar ex sh -c 'echo $(id -u):$(id -g) $PWD $FOO'
  check_eq "$rc" 0 "exec with user, cwd, env"
  check_eq "$out" "65534:65534 /tmp bar" "uid:gid, cwd and env of the exec'd process"
  check_eq "$(inspect ex '{{.State.Status}}')" running "container still running"
}

sc_exec_tty() {
  local out rc
  drun -d --name et "$IMG" sleep 300
  wait_running et
  out=$(dk exec -t et sh -c 'tty; exit 6') && rc=0 || rc=$?
  printf '%s\n' "$out"
  check_eq "$rc" 6 "exit code of docker exec -t"
  check_match "$out" $'^/dev/pts/[0-9]+\r' "tty of the exec'd process"
}

sc_pause_unpause() {
  local pid f n1 n2
  drun -d --name pu "$IMG" sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.05; done'
  wait_running pu
  pid=$(cpid pu)
  f=$(inspect pu '{{.GraphDriver.Data.MergedDir}}')/tmp/n
  wait_until 10 test -s "$f"
  dk pause pu
  check_eq "$(inspect pu '{{.State.Status}}')" paused "status after docker pause"
  if [[ -d /sys/fs/cgroup/freezer ]]; then
    check_eq "$(cg_read "$pid" freezer freezer.state)" FROZEN "freezer.state of the container"
  fi
  n1=$(cat "$f"); sleep 0.5; n2=$(cat "$f")
  check_eq "$n2" "$n1" "counter while paused"
  dk unpause pu
  check_eq "$(inspect pu '{{.State.Status}}')" running "status after docker unpause"
  if [[ -d /sys/fs/cgroup/freezer ]]; then
    check_eq "$(cg_read "$pid" freezer freezer.state)" THAWED "freezer.state after unpause"
  fi
  sleep 0.5
  check_ge "$(cat "$f")" $((n1 + 2)) "counter after unpause"
}

# docker update -> runtime update --resources - (JSON on stdin); the values land in the
# container's cgroup (read on the host, through the container's /proc/PID/cgroup).
sc_update() {
  local pid
  drun -d --name up "$IMG" sleep 300
  wait_running up
  pid=$(cpid up)
  dk update --memory 64m --memory-swap 128m --cpu-shares 512 --cpus 0.5 --pids-limit 77 up
  check_eq "$(cg_read "$pid" memory memory.limit_in_bytes)" 67108864 "memory.limit_in_bytes"
  if [[ -f "$(cg_file "$pid" memory memory.memsw.limit_in_bytes)" ]]; then
    check_eq "$(cg_read "$pid" memory memory.memsw.limit_in_bytes)" 134217728 "memory.memsw.limit_in_bytes"
  fi
  check_eq "$(cg_read "$pid" cpu cpu.shares)" 512 "cpu.shares"
  check_eq "$(cg_read "$pid" cpu cpu.cfs_quota_us)" 50000 "cpu.cfs_quota_us"
  check_eq "$(cg_read "$pid" cpu cpu.cfs_period_us)" 100000 "cpu.cfs_period_us"
  check_eq "$(cg_read "$pid" pids pids.max)" 77 "pids.max"
  check_eq "$(inspect up '{{.HostConfig.Memory}} {{.HostConfig.PidsLimit}}')" "67108864 77" "docker inspect"
  # a second update changes one value and leaves the others
  dk update --pids-limit 99 up
  check_eq "$(cg_read "$pid" pids pids.max)" 99 "pids.max after a second update"
  check_eq "$(cg_read "$pid" memory memory.limit_in_bytes)" 67108864 "memory.limit_in_bytes unchanged"
}

# Limits given at run time, seen from inside the container (its cgroup mount view).
sc_run_limits() {
  local out rc
  out=$(drun --rm --memory 32m --cpu-shares 256 --pids-limit 33 "$IMG" sh -c \
    'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/pids/pids.max') &&
    rc=0 || rc=$?
  check_eq "$rc" 0 "docker run with limits"
  check_eq "$(echo $out)" "33554432 256 33" "memory limit, cpu shares, pids max inside the container"
}

sc_top() {
  local out pid
  drun -d --name tp "$IMG" sh -c 'sleep 300 & sleep 301 & wait'
  wait_running tp
  pid=$(cpid tp)
  wait_until 10 children_are "$pid" sleep 2
  run_rc out dk top tp
  check_eq "$rc" 0 "docker top"
  check_match "$(head -n 1 <<<"$out")" 'PID' "header"
  check_match "$out" 'sleep 300' "first sleep listed"
  check_match "$out" 'sleep 301' "second sleep listed"
  check_eq "$(awk -v p="$pid" '$2 == p' <<<"$out" | wc -l)" 1 "init pid $pid listed"
}

sc_stats() {
  local out
  drun -d --name st "$IMG" sh -c 'sleep 300 & sleep 301 & wait'
  wait_running st
  wait_until 10 children_are "$(cpid st)" sleep 2
  run_rc out dk stats --no-stream --format '{{.PIDs}}|{{.MemUsage}}' st
  check_eq "$rc" 0 "docker stats"
  check_eq "${out%%|*}" 3 "PIDs"
  check_match "${out#*|}" '^[0-9.]+[KMG]i?B / ' "memory usage"
  check_no_match "${out#*|}" '^0B' "memory usage is not zero"
}

sc_events_stats() {
  local out id
  drun -d --name es "$IMG" sleep 300
  wait_running es
  id=$(cid es)
  run_rc out rt events --stats "$id"
  check_eq "$rc" 0 "runtime events --stats"
  check_eq "$(jq -r .type <<<"$out")" stats "events .type"
  check_eq "$(jq -r .id <<<"$out")" "$id" "events .id"
  check_ge "$(jq -r .data.pids.current <<<"$out")" 1 "events .data.pids.current"
  check_ge "$(jq -r .data.memory.usage.usage <<<"$out")" 1 "events .data.memory.usage.usage"
}

sc_runtime_state() {
  local out id
  drun -d --name rs "$IMG" sleep 300
  wait_running rs
  id=$(cid rs)
  run_rc out rt state "$id"
  check_eq "$rc" 0 "runtime state"
  check_eq "$(jq -r .status <<<"$out")" running "state .status"
  check_eq "$(jq -r .pid <<<"$out")" "$(cpid rs)" "state .pid = docker's State.Pid"
  run_rc out rt list --format json
  check_eq "$(jq -r --arg id "$id" '.[] | select(.id == $id) | .status' <<<"$out")" running "list shows it"
}

sc_stop() {
  local t0 dt
  # sleep as pid 1 ignores SIGTERM: docker stop waits the grace period, then SIGKILL.
  drun -d --name s1 "$IMG" sleep 300
  wait_running s1
  t0=$(now_ms); dk stop -t 2 s1; dt=$(( $(now_ms) - t0 ))
  check_eq "$(inspect s1 '{{.State.Status}} {{.State.ExitCode}}')" "exited 137" "status after stop (SIGKILL)"
  check_ge "$dt" 2000 "ms docker stop waited (grace 2 s)"
  check_le "$dt" 10000 "ms docker stop took"
  # a process that handles SIGTERM exits at once with its own status.
  drun -d --name s2 "$IMG" sh -c 'trap "exit 42" TERM; echo ready; while :; do sleep 0.05; done'
  wait_until 20 logs_have s2 ready || { dk logs s2; inspect s2 "{{.State.Status}} {{.State.Error}}"; return 1; }
  t0=$(now_ms); dk stop -t 10 s2; dt=$(( $(now_ms) - t0 ))
  check_eq "$(inspect s2 '{{.State.Status}} {{.State.ExitCode}}')" "exited 42" "status after stop (SIGTERM handled)"
  check_le "$dt" 5000 "ms docker stop took"
}

sc_kill_signal() {
  local out rc
  drun -d --name ks "$IMG" sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.05; done'
  wait_until 20 logs_have ks ready || { dk logs ks; inspect ks "{{.State.Status}} {{.State.Error}}"; return 1; }
  dk kill -s USR1 ks
  out=$(dk wait ks)
  check_eq "$out" 7 "exit status after SIGUSR1"
  check_match "$(dk logs ks 2>&1)" got-usr1 "the container's USR1 handler ran"
  drun -d --name kk "$IMG" sleep 300
  wait_running kk
  dk kill kk
  check_eq "$(dk wait kk)" 137 "exit status after docker kill (SIGKILL)"
}

sc_rm() {
  local id pid cg
  drun -d --name r1 "$IMG" sleep 300
  wait_running r1
  id=$(cid r1); pid=$(cpid r1); cg=$(cg_path "$pid" pids)
  check_eq "$cg" "/$(cg_parent)/$id" "cgroup of the container"
  check_eq "$(test -d "$(rtroot)/$id" && echo yes)" yes "runtime state dir exists"
  run_rc _ dk rm r1
  check_match "$rc" '^[1-9]' "docker rm of a running container fails"
  dk rm -f r1
  check_empty "$(dk ps -aq)" "containers after rm -f"
  check_eq "$(test -e "$(rtroot)/$id" && echo left)" "" "runtime state dir removed"
  check_eq "$(test -e "/sys/fs/cgroup/pids$cg" && echo left)" "" "pids cgroup removed"
  check_empty "$(mounts_under "$ECO_WORK" | grep -F "$id" || true)" "mounts of the container"
  drun --name r2 "$IMG" true
  id=$(cid r2)
  dk rm r2
  check_empty "$(dk ps -aq)" "containers after rm of a stopped one"
  check_eq "$(test -e "$(rtroot)/$id" && echo left)" "" "runtime state dir removed (stopped)"
}

sc_restart() {
  local out rc p1 p2
  out=$(drun --name rs1 "$IMG" sh -c 'echo run-once; exit 2') && rc=0 || rc=$?
  check_eq "$rc" 2 "first run exit code"
  out=$(dk start -a rs1) && rc=0 || rc=$?
  check_eq "$rc" 2 "docker start -a of the stopped container: exit code"
  check_eq "$out" run-once "its output"
  check_eq "$(dk logs rs1 2>&1 | grep -c run-once)" 2 "both runs in the logs"
  drun -d --name rs2 "$IMG" sleep 300
  wait_running rs2
  p1=$(cpid rs2)
  dk restart -t 1 rs2
  wait_running rs2
  p2=$(cpid rs2)
  check_match "$p2" '^[1-9][0-9]*$' "pid after restart"
  [[ "$p1" != "$p2" ]] || { echo "check failed: same pid $p1 after restart"; return 1; }
  check_eq "$(inspect rs2 '{{.RestartCount}} {{.State.Status}}')" "0 running" "state after docker restart"
}

# Exit codes Docker derives from the runtime's error text: 127 not found, 126 not executable.
sc_create_fails() {
  local out
  run_rc out drun --rm "$IMG" /nonexistent
  check_eq "$rc" 127 "docker run of a missing command"
  check_no_match "$out" 'unable to retrieve OCI runtime error' "the runtime's log.json was read"
  check_match "$out" '/nonexistent' "the error names the command"
  run_rc out drun --rm "$IMG" /bin/notexec
  check_eq "$rc" 126 "docker run of a non-executable file"
  check_no_match "$out" 'unable to retrieve OCI runtime error' "the runtime's log.json was read"
  run_rc out drun --name cf "$IMG" /nonexistent
  check_eq "$(inspect cf '{{.State.Status}}')" created "state of the container whose create failed"
  check_empty "$(rt_dirs "$(rtroot)" 2>/dev/null)" "runtime state dirs after the failed creates"
  check_empty "$(cg_dirs_under "$(cg_parent)" | grep -v "/$(cg_parent)\$" || true)" "cgroups after the failed creates"
}

leftovers_snapshot() {
  {
    echo "## mounts"; mounts_under "$ECO_WORK"
    echo "## cgroups"; cg_dirs_under "$(cg_parent)" | sort
    echo "## runtime state"; rt_dirs "$(rtroot)" 2>/dev/null || true
    echo "## bundles"; ls -A "$ECO_CTD_DIR/state/io.containerd.runtime.v2.task/moby" 2>/dev/null || true
    echo "## shims"; pids_mentioning "-address $ECO_CTD_SOCK" | wc -l
    echo "## shim sockets"; ls -A /run/containerd/s 2>/dev/null || true
  }
}
sc_loop20() {
  local i before after
  before=$(leftovers_snapshot)
  for i in $(seq 20); do drun -d --name "l$i" "$IMG" sleep 300 >/dev/null; done
  for i in $(seq 20); do wait_running "l$i"; done
  check_eq "$(dk ps -q | wc -l)" 20 "running containers"
  check_eq "$(rt_dirs "$(rtroot)" | wc -l)" 20 "runtime state dirs while running"
  check_ge "$(cg_dirs_under "$(cg_parent)" | grep -cE '/[0-9a-f]{64}$')" 20 "container cgroups while running"
  check_ge "$(mounts_under "$ECO_WORK" | grep -c '/merged$')" 20 "overlay mounts while running"
  for i in $(seq 20); do dk rm -f "l$i" >/dev/null; done
  check_empty "$(dk ps -aq)" "containers after the loop"
  sleep 0.5
  after=$(leftovers_snapshot)
  check_empty "$(diff <(echo "$before") <(echo "$after"))" "difference in mounts, cgroups, state dirs, shims"
}

# ---------------------------------------------------------------------------------------
mkdir -p "$TMPD"
eco_containerd_start || exit 2
eco_dockerd_start || exit 2
dk load -q -i "$ECO_IMAGES/docker.tar" >/dev/null || { eco_log "docker load failed"; exit 2; }

eco_scenario run-output sc_run_output
eco_scenario run-tty sc_run_tty
eco_scenario exec sc_exec
eco_scenario exec-tty sc_exec_tty
eco_scenario pause-unpause sc_pause_unpause
eco_scenario update sc_update
eco_scenario run-limits sc_run_limits
eco_scenario top sc_top
eco_scenario stats sc_stats
eco_scenario events-stats sc_events_stats
eco_scenario runtime-state sc_runtime_state
eco_scenario stop sc_stop
eco_scenario kill-signal sc_kill_signal
eco_scenario rm sc_rm
eco_scenario restart sc_restart
eco_scenario create-fails sc_create_fails
eco_scenario loop20 sc_loop20
eco_engine_summary
