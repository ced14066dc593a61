#!/bin/sh
# exec-cgroupv2: `exec` of a container runtime ($RUNTIME) on a pure cgroup v2 host: the
# process lands in the container's cgroup (berth: clone3 CLONE_INTO_CGROUP), joins its
# cgroup namespace (sees 0::/), --cgroup places it in a sub-cgroup and refuses one outside.
# (maskedPaths and readonlyPaths are left out: berth's masking needs newer kernels than the
# VM's 6.1 for now, and they are not what this script is about.)
# vm-options: --mem 384
. /vm/lib.sh

command -v "$RUNTIME" >/dev/null || { not_ok "runtime $RUNTIME not in the VM"; done_testing; }
b=$(bundle_copy ex) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["sleep", "600"]
  | .linux.cgroupsPath = "/berth-smoke/ex"
  | .linux.namespaces += [{"type": "cgroup"}]
  | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
cg=/sys/fs/cgroup/berth-smoke/ex
# Output to a file: the container keeps the runtime's stdio open.
(cd "$b" && "$RUNTIME" run -d smoke-ex </dev/null >/tmp/run.out 2>&1)
check_eq "$RUNTIME run -d exits 0" 0 "$?"
sed 's/^/    run| /' /tmp/run.out

check_eq "exec: cgroup namespace view" "0::/" "$("$RUNTIME" exec smoke-ex cat /proc/self/cgroup 2>&1)"
check "exec -d --pid-file" sh -c "'$RUNTIME' exec -d --pid-file /tmp/ex.pid smoke-ex sleep 60 >/dev/null 2>&1"
pid=$(cat /tmp/ex.pid 2>/dev/null)
check "exec'd pid $pid is in $cg/cgroup.procs" grep -qx "$pid" $cg/cgroup.procs
check_eq "host view of the exec'd process" "0::/berth-smoke/ex" "$(cat /proc/$pid/cgroup 2>&1)"

case $RUNTIME in
  *berth) check_match "berth: born in the cgroup by clone3" 'born in its cgroup \(CLONE_INTO_CGROUP\)' \
            "$("$RUNTIME" --debug exec smoke-ex true 2>&1)" ;;
esac

mkdir $cg/sub
check_eq "exec --cgroup sub" "0::/sub" "$("$RUNTIME" exec --cgroup sub smoke-ex cat /proc/self/cgroup 2>&1)"
check_eq "exec --cgroup /" "0::/" "$("$RUNTIME" exec --cgroup / smoke-ex cat /proc/self/cgroup 2>&1)"
out=$("$RUNTIME" exec --cgroup ../other smoke-ex true 2>&1)
check_eq "exec --cgroup ../other fails with 255" 255 "$?"
check_match "... naming a bad sub cgroup path" 'sub cgroup path' "$out"

check "$RUNTIME delete -f" "$RUNTIME" delete -f smoke-ex
check_not "cgroup removed by delete" test -d $cg
done_testing
