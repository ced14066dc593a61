#!/bin/bash
# podman 4.3 (rootful, conmon 2.1): the runtime under test through --runtime PATH and the
# repository's contrib/podman/containers.conf. Every podman command gets its own --root,
# --runroot and --tmpdir under $ECO_WORK, --cgroup-manager cgroupfs and --events-backend
# file; the configuration files are ours too (CONTAINERS_CONF, ...). podman passes no --root
# to the runtime, so container state lives in the runtime's default root, /run/<name>.
# Started by run.sh, which exports the ECO_* variables (lib/common.sh).
set -u -o pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../lib/common.sh
. "$here/lib/common.sh"

ECO_ENGINE=podman
IMG=$ECO_IMAGE_REF
TMPD=$ECO_WORK/tmp
PD=$ECO_WORK/podman
CGPARENT=/eco-$ECO_TOKEN/podman
RTSTATE=/run/$ECO_RTNAME            # the runtime's default --root
SECOPT=()
[[ "${ECO_UNCONFINED:-0}" == 1 ]] && SECOPT=(--security-opt seccomp=unconfined)

pm() {
  eco_t 120 podman --root "$PD/root" --runroot "$PD/runroot" --tmpdir "$PD/tmp" \
    --cgroup-manager cgroupfs --events-backend file --storage-driver overlay \
    --network-config-dir "$PD/net" --runtime "$ECO_RUNTIME" "$@"
}
# Explicit rlimits: rootful podman otherwise asks for RLIMIT_NOFILE 1048576 and an NPROC
# above conmon's own limit, which a host whose bounding set lacks CAP_SYS_RESOURCE (the
# development VMs, CI) cannot grant: every runtime then fails with "error setting rlimit type
# 7: operation not permitted". (`--ulimit host` does not help in podman 4.3.)
ULIMITS=(--ulimit nofile=4096:4096 --ulimit nproc=4096:4096)
prun() { pm run --network none "${ULIMITS[@]}" --cgroup-parent "$CGPARENT" "${SECOPT[@]}" "$@"; }
rt() { eco_t 30 "$ECO_RUNTIME" "$@"; }
inspect() { pm inspect -f "$2" "$1"; }
cid() { inspect "$1" '{{.Id}}'; }
cpid() { inspect "$1" '{{.State.Pid}}'; }
status_is() { [[ "$(inspect "$1" '{{.State.Status}}')" == "$2" ]]; }
# wait_running NAME: until the container runs; if it does not, what the engine says.
wait_running() {
  wait_until 20 status_is "$1" running && return 0
  local st; st=$(inspect "$1" '{{.State.Status}} {{.State.ExitCode}} {{.State.Error}}')
  echo "state of $1: $st"
  [[ "$st" == exited* ]] && echo "container $1 stopped before it ran"
  pm logs "$1"
  return 1
}
logs_have() { pm logs "$1" 2>&1 | grep -q -- "$2"; }

eco_reset() {
  local ids; ids=$(pm ps -aq 2>/dev/null)
  # shellcheck disable=SC2086
  [[ -z "$ids" ]] || pm rm -f -t 0 $ids >/dev/null 2>&1
  return 0
}
cleanup() {
  set +e
  [[ -d "$PD/root" ]] && eco_reset
  eco_cleanup_generic
}
trap cleanup EXIT
trap 'exit 143' TERM
trap 'exit 130' INT

podman_setup() {
  mkdir -p "$PD"/{root,runroot,tmp,net} "$TMPD"
  # contrib/podman/containers.conf, with the runtime under test as the runtime it names.
  sed -e "s#\"/usr/local/bin/berth\", \"/usr/bin/berth\"#\"$ECO_RUNTIME\"#" \
      -e "s#^berth = #$ECO_RTNAME = #" \
      -e "s#^runtime = \"berth\"#runtime = \"$ECO_RTNAME\"#" \
      "$ECO_REPO/contrib/podman/containers.conf" >"$PD/containers.conf"
  printf '[storage]\ndriver = "overlay"\nrunroot = "%s"\ngraphroot = "%s"\n' \
    "$PD/runroot" "$PD/root" >"$PD/storage.conf"
  printf 'unqualified-search-registries = []\n' >"$PD/registries.conf"
  export CONTAINERS_CONF=$PD/containers.conf CONTAINERS_STORAGE_CONF=$PD/storage.conf
  export CONTAINERS_REGISTRIES_CONF=$PD/registries.conf
  # podman 4.3 writes these whatever its roots say (removed at the end if we made them).
  eco_note_host_path /etc/cni/net.d/cni.lock
  eco_note_host_path /var/lib/containers
  eco_note_host_path /var/lib/containers/cache
  eco_note_host_path /var/lib/containers/cache/blob-info-cache-v1.boltdb
  eco_note_host_path /run/containers
  eco_note_host_path /run/libpod
  eco_note_host_path "$RTSTATE"
  # berth caches compiled seccomp filters in its root: ours to remove if the root was not there
  [[ -e "$RTSTATE" ]] || eco_note_host_path "$RTSTATE/.seccomp-cache/"
}

# ---------------------------------------------------------------------------------------
sc_run_output() {
  local out rc
  out=$(prun --rm "$IMG" sh -c 'echo to-stdout; echo to-stderr >&2; exit 3' 2>"$TMPD/err") && rc=0 || rc=$?
  printf 'stdout: %s\nstderr: %s\n' "$out" "$(cat "$TMPD/err")"
  check_eq "$rc" 3 "exit code of podman run"
  check_eq "$out" to-stdout "stdout"
  check_match "$(cat "$TMPD/err")" to-stderr "stderr"
  prun --name keep "$IMG" sh -c 'exit 9' || true
  [[ "$(inspect keep '{{.State.ExitCode}}')" != 137 ]] ||
    echo "container keep was SIGKILLed (137), not by the test: stopped before it ran?"
  check_eq "$(inspect keep '{{.State.ExitCode}}')" 9 "ExitCode of a kept container"
}

sc_run_tty() {
  local out rc
  out=$(prun --rm -t "$IMG" sh -c 'tty; exit 4') && rc=0 || rc=$?
  printf '%s\n' "$out"
  check_eq "$rc" 4 "exit code of podman run -t"
  check_match "$out" $'^/dev/pts/[0-9]+\r' "tty inside the container (CRLF: a terminal)"
}

sc_exec() {
  local out rc
  prun -d --name ex "$IMG" sleep 300
  wait_running ex
  run_rc out pm exec ex sh -c 'echo in-exec; echo exec-err >&2; exit 5'
  check_eq "$rc" 5 "exit code of podman exec"
  check_match "$out" in-exec "exec stdout"
  check_match "$out" exec-err "exec stderr"
  run_rc out pm exec -u nobody -w /tmp -e FOO=bar ex sh -c 'echo $(id -u):$(id -g) $PWD $FOO'
  check_eq "$rc" 0 "exec with user, cwd, env"
  check_eq "$out" "65534:65534 /tmp bar" "uid:gid, cwd and env of the exec'd process"
  check_eq "$(inspect ex '{{.State.Status}}')" running "container still running"
}

sc_exec_tty() {
  local out rc
  prun -d --name et "$IMG" sleep 300
  wait_running et
  out=$(pm exec -t et sh -c 'tty; exit 6') && rc=0 || rc=$?
  printf '%s\n' "$out"
  check_eq "$rc" 6 "exit code of podman exec -t"
  check_match "$out" $'^/dev/pts/[0-9]+\r' "tty of the exec'd process"
}

sc_pause_unpause() {
  local pid f n1 n2
  prun -d --name pu "$IMG" sh -c 'i=0; while :; do i=$((i+1)); echo $i >/tmp/n.new; mv /tmp/n.new /tmp/n; sleep 0.05; done'
  wait_running pu
  pid=$(cpid pu)
  f=$(inspect pu '{{.GraphDriver.Data.MergedDir}}')/tmp/n
  wait_until 10 test -s "$f"
  pm pause pu
  check_eq "$(inspect pu '{{.State.Status}}')" paused "status after podman pause"
  if [[ -d /sys/fs/cgroup/freezer ]]; then
    check_eq "$(cg_read "$pid" freezer freezer.state)" FROZEN "freezer.state of the container"
  fi
  n1=$(cat "$f"); sleep 0.5; n2=$(cat "$f")
  check_eq "$n2" "$n1" "counter while paused"
  pm unpause pu
  check_eq "$(inspect pu '{{.State.Status}}')" running "status after podman unpause"
  if [[ -d /sys/fs/cgroup/freezer ]]; then
    check_eq "$(cg_read "$pid" freezer freezer.state)" THAWED "freezer.state after unpause"
  fi
  sleep 0.5
  check_ge "$(cat "$f")" $((n1 + 2)) "counter after unpause"
}

# podman update -> runtime update --resources=FILE (podman 4.3 has no --pids-limit here).
sc_update() {
  local pid
  prun -d --name up "$IMG" sleep 300
  wait_running up
  pid=$(cpid up)
  pm update --memory 64m --memory-swap 128m --cpu-shares 512 --cpus 0.5 up
  check_eq "$(cg_read "$pid" memory memory.limit_in_bytes)" 67108864 "memory.limit_in_bytes"
  if [[ -f "$(cg_file "$pid" memory memory.memsw.limit_in_bytes)" ]]; then
    check_eq "$(cg_read "$pid" memory memory.memsw.limit_in_bytes)" 134217728 "memory.memsw.limit_in_bytes"
  fi
  check_eq "$(cg_read "$pid" cpu cpu.shares)" 512 "cpu.shares"
  check_eq "$(cg_read "$pid" cpu cpu.cfs_quota_us)" 50000 "cpu.cfs_quota_us"
  check_eq "$(cg_read "$pid" cpu cpu.cfs_period_us)" 100000 "cpu.cfs_period_us"
}

sc_run_limits() {
  local out rc
  out=$(prun --rm --memory 32m --cpu-shares 256 --pids-limit 33 "$IMG" sh -c \
    'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/cpu/cpu.shares /sys/fs/cgroup/pids/pids.max') &&
    rc=0 || rc=$?
  check_eq "$rc" 0 "podman run with limits"
  check_eq "$(echo $out)" "33554432 256 33" "memory limit, cpu shares, pids max inside the container"
}

sc_top() {
  local out pid
  prun -d --name tp "$IMG" sh -c 'sleep 300 & sleep 301 & wait'
  wait_running tp
  pid=$(cpid tp)
  wait_until 10 children_are "$pid" sleep 2
  run_rc out pm top tp
  check_eq "$rc" 0 "podman top"
  check_match "$(head -n 1 <<<"$out")" 'PID' "header"
  check_match "$out" 'sleep 300' "first sleep listed"
  check_match "$out" 'sleep 301' "second sleep listed"
}

sc_stats() {
  local out
  prun -d --name st "$IMG" sh -c 'sleep 300 & sleep 301 & wait'
  wait_running st
  wait_until 10 children_are "$(cpid st)" sleep 2
  run_rc out pm stats --no-stream --format '{{.PIDs}}|{{.MemUsage}}' st
  check_eq "$rc" 0 "podman stats"
  check_eq "${out%%|*}" 3 "PIDs"
  check_match "${out#*|}" '^[0-9.]+[kKMG]i?B / ' "memory usage"
  check_no_match "${out#*|}" '^0B' "memory usage is not zero"
}

sc_events_stats() {
  local out id
  prun -d --name es "$IMG" sleep 300
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
  prun -d --name rs "$IMG" sleep 300
  wait_running rs
  id=$(cid rs)
  run_rc out rt state "$id"
  check_eq "$rc" 0 "runtime state"
  check_eq "$(jq -r .status <<<"$out")" running "state .status"
  check_eq "$(jq -r .pid <<<"$out")" "$(cpid rs)" "state .pid = podman's State.Pid"
  check_match "$(jq -r .bundle <<<"$out")" "^$PD/" "state .bundle below podman's directories"
}

sc_stop() {
  local t0 dt
  prun -d --name s1 "$IMG" sleep 300
  wait_running s1
  t0=$(now_ms); pm stop -t 2 s1; dt=$(( $(now_ms) - t0 ))
  check_eq "$(inspect s1 '{{.State.Status}} {{.State.ExitCode}}')" "exited 137" "status after stop (SIGKILL)"
  check_ge "$dt" 2000 "ms podman stop waited (grace 2 s)"
  check_le "$dt" 10000 "ms podman stop took"
  prun -d --name s2 "$IMG" sh -c 'trap "exit 42" TERM; echo ready; while :; do sleep 0.05; done'
  wait_until 20 logs_have s2 ready || { pm logs s2; inspect s2 "{{.State.Status}} {{.State.Error}}"; return 1; }
  t0=$(now_ms); pm stop -t 10 s2; dt=$(( $(now_ms) - t0 ))
  check_eq "$(inspect s2 '{{.State.Status}} {{.State.ExitCode}}')" "exited 42" "status after stop (SIGTERM handled)"
  check_le "$dt" 5000 "ms podman stop took"
}

sc_kill_signal() {
  local out
  prun -d --name ks "$IMG" sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready; while :; do sleep 0.05; done'
  wait_until 20 logs_have ks ready || { pm logs ks; inspect ks "{{.State.Status}} {{.State.Error}}"; return 1; }
  pm kill -s USR1 ks
  out=$(pm wait ks)
  check_eq "$out" 7 "exit status after SIGUSR1"
  check_match "$(pm logs ks 2>&1)" got-usr1 "the container's USR1 handler ran"
  prun -d --name kk "$IMG" sleep 300
  wait_running kk
  pm kill kk
  check_eq "$(pm wait kk)" 137 "exit status after podman kill (SIGKILL)"
}

sc_rm() {
  local id pid cg
  prun -d --name r1 "$IMG" sleep 300
  wait_running r1
  id=$(cid r1); pid=$(cpid r1); cg=$(cg_path "$pid" pids)
  check_eq "$cg" "$CGPARENT/libpod-$id" "cgroup of the container"
  check_eq "$(test -d "$RTSTATE/$id" && echo yes)" yes "runtime state dir exists"
  run_rc _ pm rm r1
  check_match "$rc" '^[1-9]' "podman rm of a running container fails"
  pm rm -f -t 1 r1
  check_empty "$(pm ps -aq)" "containers after rm -f"
  check_eq "$(test -e "$RTSTATE/$id" && echo left)" "" "runtime state dir removed"
  check_eq "$(test -e "/sys/fs/cgroup/pids$cg" && echo left)" "" "pids cgroup removed"
  check_empty "$(mounts_under "$ECO_WORK" | grep -F "$id" || true)" "mounts of the container"
  prun --name r2 "$IMG" true
  id=$(cid r2)
  pm rm r2
  check_empty "$(pm ps -aq)" "containers after rm of a stopped one"
  check_eq "$(test -e "$RTSTATE/$id" && echo left)" "" "runtime state dir removed (stopped)"
}

sc_restart() {
  local out rc p1 p2
  out=$(prun --name rs1 "$IMG" sh -c 'echo run-once; exit 2') && rc=0 || rc=$?
  check_eq "$rc" 2 "first run exit code"
  out=$(pm start -a rs1) && rc=0 || rc=$?
  check_eq "$rc" 2 "podman start -a of the stopped container: exit code"
  check_eq "$out" run-once "its output"
  check_eq "$(pm logs rs1 2>&1 | grep -c run-once)" 2 "both runs in the logs"
  prun -d --name rs2 "$IMG" sleep 300
  wait_running rs2
  p1=$(cpid rs2)
  pm restart -t 1 rs2
  wait_running rs2
  p2=$(cpid rs2)
  check_match "$p2" '^[1-9][0-9]*$' "pid after restart"
  [[ "$p1" != "$p2" ]] || { echo "check failed: same pid $p1 after restart"; return 1; }
}

# podman's exit codes from the runtime's error: 127 not found, 126 not executable.
sc_create_fails() {
  local out
  run_rc out prun --rm "$IMG" /nonexistent
  check_eq "$rc" 127 "podman run of a missing command"
  check_match "$out" '/nonexistent' "the error names the command"
  run_rc out prun --rm "$IMG" /bin/notexec
  check_eq "$rc" 126 "podman run of a non-executable file"
  check_match "$out" '/bin/notexec' "the error names the command"
  check_empty "$(eco_runtime_ids)" "runtime state dirs after the failed creates"
  check_empty "$(cg_dirs_under "${CGPARENT#/}" | grep 'libpod-' || true)" "container cgroups after the failed creates"
}

conmons() {
  local p n=0
  for p in $(pids_mentioning "$PD/"); do
    [[ "$(cat "/proc/$p/comm" 2>/dev/null)" == conmon ]] && n=$((n + 1))
  done
  echo "$n"
}
# podman's overlay driver bind-mounts its own home ($PD/root/overlay) while a podman process
# uses it and unmounts it when the last one ends; whether it is there after the loop depends
# on when conmon's `podman container cleanup` processes finish, not on the runtime.
leftovers_snapshot() {
  {
    echo "## mounts"; mounts_under "$ECO_WORK" | grep -vxF "$PD/root/overlay" || true
    echo "## cgroups"; cg_dirs_under "${CGPARENT#/}" | sort
    echo "## runtime state"; eco_runtime_ids
    echo "## conmon"; conmons
  }
}
sc_loop20() {
  local i before after
  before=$(leftovers_snapshot)
  for i in $(seq 20); do prun -d --name "l$i" "$IMG" sleep 300 >/dev/null; done
  for i in $(seq 20); do wait_running "l$i"; done
  check_eq "$(pm ps -q | wc -l)" 20 "running containers"
  check_eq "$(eco_runtime_ids | wc -l)" 20 "runtime state dirs while running"
  check_ge "$(cg_dirs_under "${CGPARENT#/}" | grep -c '/libpod-[0-9a-f]*$')" 20 "container cgroups while running"
  check_ge "$(mounts_under "$ECO_WORK" | grep -c '/merged$')" 20 "overlay mounts while running"
  check_eq "$(conmons)" 20 "conmon processes while running"
  for i in $(seq 20); do pm rm -f -t 0 "l$i" >/dev/null; done
  check_empty "$(pm ps -aq)" "containers after the loop"
  sleep 0.5
  after=$(leftovers_snapshot)
  check_empty "$(diff <(echo "$before") <(echo "$after"))" "difference in mounts, cgroups, state dirs, conmon"
}

# ---------------------------------------------------------------------------------------
podman_setup
pm load -q -i "$ECO_IMAGES/oci.tar" >"$TMPD/load" 2>&1 || { cat "$TMPD/load" >&2; eco_log "podman load failed"; exit 2; }
# podman load names an OCI archive's image after its ref name; give it ours for sure.
pm image exists "$IMG" || pm tag "$(pm images -q | head -n 1)" "$IMG" ||
  { eco_log "podman: image $IMG missing after load"; exit 2; }

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
