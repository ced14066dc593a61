# update, events --stats, ps, pause/resume: the cgroup side, read on the host (cgroup v1
# files: on a hybrid host the runtimes put the controllers there).

# update with flags: each value lands in its v1 file; a value below the memory in use is
# refused (exit 1) and leaves the limit as it was.
tc.update.flags() {
  need_v1 pids memory cpu cpuset
  up c
  call update --pids-limit 20 "$ID"
  expect_ok "update --pids-limit 20"
  expect_eq "$(cat "$(cg_v1 pids c pids.max)")" 20 pids.max
  call update --memory 64M --memory-reservation 32M "$ID"
  expect_ok "update --memory 64M --memory-reservation 32M"
  expect_eq "$(cat "$(cg_v1 memory c memory.limit_in_bytes)")" 67108864 memory.limit_in_bytes
  expect_eq "$(cat "$(cg_v1 memory c memory.soft_limit_in_bytes)")" 33554432 memory.soft_limit_in_bytes
  if [ -e "$(cg_v1 memory c memory.memsw.limit_in_bytes)" ]; then
    call update --memory 64M --memory-swap 128M "$ID"
    expect_ok "update --memory 64M --memory-swap 128M"
    expect_eq "$(cat "$(cg_v1 memory c memory.memsw.limit_in_bytes)")" 134217728 memory.memsw.limit_in_bytes
  else
    note "no swap accounting (memory.memsw.*) on this host: --memory-swap not checked"
  fi
  call update --cpu-share 512 --cpu-period 100000 --cpu-quota 50000 "$ID"
  expect_ok "update --cpu-share 512 --cpu-period 100000 --cpu-quota 50000"
  expect_eq "$(cat "$(cg_v1 cpu c cpu.shares)")" 512 cpu.shares
  expect_eq "$(cat "$(cg_v1 cpu c cpu.cfs_period_us)")" 100000 cpu.cfs_period_us
  expect_eq "$(cat "$(cg_v1 cpu c cpu.cfs_quota_us)")" 50000 cpu.cfs_quota_us
  call update --cpuset-cpus 0 "$ID"
  expect_ok "update --cpuset-cpus 0"
  expect_eq "$(cat "$(cg_v1 cpuset c cpuset.cpus)")" 0 cpuset.cpus
  expect_eq "$(awk '/^Cpus_allowed_list/ { print $2 }' "/proc/$INIT/status")" 0 "the container process's allowed cpus"
  call update --pids-limit -1 "$ID"
  expect_ok "update --pids-limit -1"
  expect_eq "$(cat "$(cg_v1 pids c pids.max)")" max "pids.max after --pids-limit -1"
  call update --memory 4096 "$ID"
  expect_rc 1 "update --memory 4096 (below the usage)"
  expect_eq "$(cat "$(cg_v1 memory c memory.limit_in_bytes)")" 67108864 "memory.limit_in_bytes after the refused update"
  call state "$ID"
  expect_json "$OUT" '.status == "running"' "status after the updates"
}

# update --resources FILE and --resources - (stdin), runc's LinuxResources JSON: the values
# land in the v1 files; values the JSON (or a later flag) leaves out keep theirs.
tc.update.resources() {
  need_v1 pids memory cpu
  up c
  jq -n '{memory: {limit: 100663296, reservation: 50331648}, cpu: {shares: 256, quota: 20000, period: 100000},
          pids: {limit: 33}}' >"$T/resources.json"
  call update --resources "$T/resources.json" "$ID"
  expect_ok "update --resources FILE"
  expect_eq "$(cat "$(cg_v1 memory c memory.limit_in_bytes)")" 100663296 memory.limit_in_bytes
  expect_eq "$(cat "$(cg_v1 memory c memory.soft_limit_in_bytes)")" 50331648 memory.soft_limit_in_bytes
  expect_eq "$(cat "$(cg_v1 cpu c cpu.shares)")" 256 cpu.shares
  expect_eq "$(cat "$(cg_v1 cpu c cpu.cfs_quota_us)")" 20000 cpu.cfs_quota_us
  expect_eq "$(cat "$(cg_v1 cpu c cpu.cfs_period_us)")" 100000 cpu.cfs_period_us
  expect_eq "$(cat "$(cg_v1 pids c pids.max)")" 33 pids.max
  echo '{"pids": {"limit": 44}}' >"$T/pids.json"
  CALL_STDIN=$T/pids.json call update --resources - "$ID"
  expect_ok "update --resources - (stdin)"
  expect_eq "$(cat "$(cg_v1 pids c pids.max)")" 44 "pids.max from stdin"
  expect_eq "$(cat "$(cg_v1 memory c memory.limit_in_bytes)")" 100663296 "memory.limit_in_bytes kept"
  expect_eq "$(cat "$(cg_v1 cpu c cpu.shares)")" 256 "cpu.shares kept"
  call update --pids-limit 55 "$ID"
  expect_ok "update --pids-limit 55"
  expect_eq "$(cat "$(cg_v1 pids c pids.max)")" 55 "pids.max from the flag"
  expect_eq "$(cat "$(cg_v1 memory c memory.limit_in_bytes)")" 100663296 "memory.limit_in_bytes kept after a flag"
  expect_eq "$(cat "$(cg_v1 cpu c cpu.cfs_quota_us)")" 20000 "cpu.cfs_quota_us kept after a flag"
  echo '{"pids": {"limit": "many"}}' >"$T/bad.json"
  call update --resources "$T/bad.json" "$ID"
  expect_rc 1 "update --resources with a string for pids.limit"
  expect_eq "$(cat "$(cg_v1 pids c pids.max)")" 55 "pids.max after the refused update"
}

# events --stats: one JSON object {type: "stats", id, data} with runc's keys: cpu usage
# (total, percpu, kernel, user, throttling), memory (usage, swap, raw v1 counters), pids
# (current: the 3 processes of the container), blkio, hugetlb; numbers where numbers are due.
tc.events.stats() {
  up c sh -c 'sleep 1000 & sleep 1001 & i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; wait'
  wait_until 10 "the init's two children" eval "[ \$(cat /proc/$INIT/task/*/children | wc -w) -eq 2 ]"
  call events --stats "$ID"
  expect_ok "events --stats"
  expect_eq "$(printf '%s' "$OUT" | jq -s length)" 1 "JSON values printed"
  ID=$ID expect_json "$OUT" '.type == "stats" and .id == $ENV.ID and (.data | type == "object")' "type, id, data"
  expect_json "$OUT" '.data | has("cpu") and has("memory") and has("pids") and has("blkio") and has("hugetlb")' \
    "data: cpu, memory, pids, blkio, hugetlb"
  expect_json "$OUT" '.data.cpu.usage | (.total | type == "number" and . > 0) and (.percpu | type == "array" and length > 0)
                      and (.kernel | type == "number") and (.user | type == "number")' "data.cpu.usage"
  expect_json "$OUT" '.data.cpu.throttling | type == "object"' "data.cpu.throttling"
  expect_json "$OUT" '.data.memory.usage | (.usage | type == "number" and . > 0) and (.limit | type == "number" and . > 0)
                      and (.max | type == "number") and (.failcnt | type == "number")' "data.memory.usage"
  expect_json "$OUT" '.data.memory | (.swap | type == "object") and (.raw | type == "object")' "data.memory.swap, raw"
  if [ "$(stat -f -c %T /sys/fs/cgroup/memory 2>/dev/null)" = cgroupfs ]; then
    expect_json "$OUT" '.data.memory.raw | (.cache | type == "number") and (.rss | type == "number")' \
      "data.memory.raw: v1 counters cache and rss"
  fi
  expect_json "$OUT" '.data.pids.current == 3' "data.pids.current (sh and two sleeps)"
  expect_json "$OUT" '.data.blkio | type == "object"' "data.blkio"
  call kill "$ID" KILL
  wait_status "$ID" stopped
  call events --stats "$ID"
  expect_error "not running" 1 "events --stats of a stopped container"
}

# ps: the table (ps -ef columns, one row per process of the container, the init's pid as
# in state), --format json (the host pids of the container's cgroup), and ps options.
tc.ps.formats() {
  local procs
  need_v1 pids
  up c sh -c 'sleep 1000 & sleep 1001 & wait'
  call exec --detach --pid-file "$T/exec.pid" "$ID" sleep 1002
  expect_ok "exec --detach"
  wait_until 5 "the exec'd process to be 'sleep 1002'" cmdline_is "$(cat "$T/exec.pid")" sleep 1002
  nprocs_is() { [ "$(wc -l <"$(cg_v1 pids c cgroup.procs)")" = "$1" ]; }
  wait_until 5 "4 processes in the container" nprocs_is 4
  procs=$(sort -n "$(cg_v1 pids c cgroup.procs)" | paste -sd ' ' -)
  call ps "$ID"
  expect_ok ps
  expect_match "$(printf '%s\n' "$OUT" | head -1)" '^UID +PID +PPID +C +STIME +TTY +TIME +CMD$' "ps: header"
  expect_eq "$(printf '%s\n' "$OUT" | tail -n +2 | wc -l)" 4 "ps: rows"
  expect_match "$OUT" "^root +$INIT +[0-9]+ .* sh -c sleep 1000 & sleep 1001 & wait\$" "ps: the init's row"
  expect_match "$OUT" ' sleep 1001$' "ps: a child of the init"
  expect_match "$OUT" ' sleep 1002$' "ps: the exec'd process"
  expect_eq "$(printf '%s\n' "$OUT" | tail -n +2 | awk '{ print $2 }' | sort -n | paste -sd ' ' -)" "$procs" \
    "ps: the PID column (the container's cgroup.procs)"
  call ps --format json "$ID"
  expect_ok "ps --format json"
  expect_json "$OUT" 'type == "array" and all(.[]; type == "number")' "ps --format json: an array of pids"
  expect_eq "$(printf '%s' "$OUT" | jq '.[]' | sort -n | paste -sd ' ' -)" "$procs" "ps --format json (cgroup.procs)"
  call ps "$ID" -o pid,comm
  expect_ok "ps ID -o pid,comm"
  expect_match "$(printf '%s\n' "$OUT" | head -1)" '^ *PID COMMAND$' "ps -o pid,comm: header"
  expect_eq "$(printf '%s\n' "$OUT" | tail -n +2 | awk '{ print $2 }' | sort | paste -sd ' ' -)" "sh sleep sleep sleep" \
    "ps -o pid,comm: commands"
}

# pause: status paused, the freezer cgroup FROZEN and the process makes no progress (a
# counter it writes stops); resume: running, THAWED, the counter moves again.
tc.pause.resume() {
  local a b
  need_v1 freezer
  up c sh -c 'i=0; while :; do i=$((i+1)); echo $i > /tmp/count; sleep 0.02; done'
  on_fail() {
    local p
    echo "count: $(cat "$T/c/rootfs/tmp/count"), freezer.state: $(cat "$(cg_v1 freezer c freezer.state)")"
    for p in $(cat "$(cg_v1 freezer c cgroup.procs)"); do
      echo "$p: $(tr '\0' ' ' <"/proc/$p/cmdline") state=$(awk '{ print $3 }' "/proc/$p/stat") wchan=$(cat "/proc/$p/wchan")"
    done
  }
  # (a function: wait_until runs it anew each time; the count is a number once written)
  count_above() { [ "$(cat "$T/c/rootfs/tmp/count" 2>/dev/null)" -gt "$1" ] 2>/dev/null; }
  wait_until 5 "the counter" test -s "$T/c/rootfs/tmp/count"
  call pause "$ID"
  expect_ok pause
  call state "$ID"
  expect_json "$OUT" '.status == "paused"' "status after pause"
  expect_eq "$(cat "$(cg_v1 freezer c freezer.state)")" FROZEN "freezer.state after pause"
  call list --format json
  ID=$ID expect_json "$OUT" '.[] | select(.id == $ENV.ID) | .status == "paused"' "list after pause"
  a=$(cat "$T/c/rootfs/tmp/count")
  sleep 0.5
  b=$(cat "$T/c/rootfs/tmp/count")
  expect_eq "$b" "$a" "the counter while paused"
  call pause "$ID"
  expect_error "container not running" 1 "pause of a paused container"
  call resume "$ID"
  expect_ok resume
  call state "$ID"
  expect_json "$OUT" '.status == "running"' "status after resume"
  expect_eq "$(cat "$(cg_v1 freezer c freezer.state)")" THAWED "freezer.state after resume"
  wait_until 5 "the counter to move after resume" count_above "${b:-0}"  # empty: frozen mid-write
}
