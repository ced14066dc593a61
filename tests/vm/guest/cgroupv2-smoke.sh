#!/bin/sh
# cgroupv2-smoke: a container runtime ($RUNTIME, default runc) on a pure cgroup v2 host:
# memory/pids limits land in the container's cgroup and are enforced, the cgroup namespace
# makes the container see itself at "0::/", create/start/state/kill/delete manage the cgroup.
# vm-options: --mem 384
. /vm/lib.sh

# --- the VM itself is pure v2
check "cgroup2 mounted on /sys/fs/cgroup" grep -q '^cgroup2 /sys/fs/cgroup cgroup2 ' /proc/mounts
check_not "no cgroup v1 hierarchy mounted" grep -q ' cgroup ' /proc/mounts
ctl=$(cat /sys/fs/cgroup/cgroup.subtree_control)
for c in cpu memory pids io; do
  check_match "root subtree_control has $c" "(^| )$c( |\$)" "$ctl"
done
command -v "$RUNTIME" >/dev/null || { not_ok "runtime $RUNTIME not in the VM"; done_testing; }
command -v jq >/dev/null || { not_ok "jq not in the VM (run-vm.sh --bin jq)"; done_testing; }

mem=33554432   # 32 MiB
pids=20

# --- 1. `run`: the view from inside
b=$(bundle_copy run) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["sh", "-c", "
  echo cgroup=$(cat /proc/self/cgroup)
  echo memory.max=$(cat /sys/fs/cgroup/memory.max)
  echo pids.max=$(cat /sys/fs/cgroup/pids.max)
  dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null; echo dd_rc=$?
  echo $(grep ^oom_kill /sys/fs/cgroup/memory.events)
  sh -c \"i=0; while [ \\$i -lt 30 ]; do sleep 5 & i=\\$((i + 1)); done\" 2>/dev/null
  while read -r k v; do echo pids.events.$k=$v; done < /sys/fs/cgroup/pids.events
"]
  | .linux.resources.memory = {"limit": '$mem'}
  | .linux.resources.pids = {"limit": '$pids'}
  | .linux.cgroupsPath = "/berth-smoke/run"
  | .linux.namespaces += [{"type": "cgroup"}]'
out=$(cd "$b" && "$RUNTIME" run smoke-run 2>&1)
rc=$?
echo "$out" | sed 's/^/    run| /'
check_eq "$RUNTIME run exits 0" 0 "$rc"
check_match "cgroup namespace: /proc/self/cgroup is 0::/" '^cgroup=0::/$' "$out"
check_match "memory.max inside is $mem" "^memory.max=$mem\$" "$out"
check_match "pids.max inside is $pids" "^pids.max=$pids\$" "$out"
check_match "64 MiB allocation is OOM-killed (status 137)" '^dd_rc=137$' "$out"
check_match "memory.events counts the oom kill" '^oom_kill [1-9]' "$out"
check_match "pids.events counts refused forks" '^pids.events.max=[1-9]' "$out"
check_not "cgroup of the run container is removed" test -d /sys/fs/cgroup/berth-smoke/run

# --- 2. create/start/state/kill/delete: the view from the host
b=$(bundle_copy life) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["sleep", "60"]
  | .linux.resources.memory = {"limit": '$mem'}
  | .linux.resources.pids = {"limit": '$pids'}
  | .linux.cgroupsPath = "/berth-smoke/life"
  | .linux.namespaces += [{"type": "cgroup"}]'
cg=/sys/fs/cgroup/berth-smoke/life
check "$RUNTIME create" "$RUNTIME" create --bundle "$b" smoke-life
check_eq "state after create" created "$("$RUNTIME" state smoke-life | jq -r .status)"
check "$RUNTIME start" "$RUNTIME" start smoke-life
st=$("$RUNTIME" state smoke-life)
check_eq "state after start" running "$(echo "$st" | jq -r .status)"
pid=$(echo "$st" | jq -r .pid)
check_eq "host memory.max of the container cgroup" "$mem" "$(cat $cg/memory.max 2>&1)"
check_eq "host pids.max of the container cgroup" "$pids" "$(cat $cg/pids.max 2>&1)"
check "container pid $pid is in $cg/cgroup.procs" grep -qx "$pid" $cg/cgroup.procs
check_eq "host view of /proc/<pid>/cgroup" "0::/berth-smoke/life" "$(cat /proc/$pid/cgroup 2>&1)"
check_match "memory and pids enabled for the leaf" 'memory' "$(cat /sys/fs/cgroup/berth-smoke/cgroup.subtree_control)"
check "$RUNTIME kill KILL" "$RUNTIME" kill smoke-life KILL
i=0
while [ "$("$RUNTIME" state smoke-life 2>/dev/null | jq -r .status)" != stopped ] && [ $i -lt 50 ]; do
  sleep 0.1; i=$((i + 1))
done
check_eq "state after kill" stopped "$("$RUNTIME" state smoke-life | jq -r .status)"
check "$RUNTIME delete" "$RUNTIME" delete smoke-life
check_not "cgroup removed by delete" test -d $cg
check_not "state fails after delete" sh -c '"$RUNTIME" state smoke-life >/dev/null 2>&1'

done_testing
