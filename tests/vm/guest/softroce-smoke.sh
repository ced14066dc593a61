#!/bin/sh
# softroce-smoke: real software RDMA (Soft-RoCE, rdma_rxe on a veth) in the VM: device nodes
# agree with sysfs, ibverbs sees the device, the rdma cgroup limits it, and a container of
# $RUNTIME (default runc) gets /dev/infiniband/uverbs0 with a device rule and an rdma limit.
# vm-options: --rdma --mem 384
. /vm/lib.sh
IP=/usr/sbin/ip   # iproute2; busybox's ip cannot make veth pairs

[ "$VM_RDMA" = 1 ] || { not_ok "VM booted without --rdma"; done_testing; }
check_match "rdma_rxe loaded" '^rdma_rxe ' "$(cat /proc/modules)"

# --- an rxe device on one end of a veth pair (no address: nothing leaves the pair)
check "veth pair" $IP link add veth0 type veth peer name veth1
$IP link set veth0 up && $IP link set veth1 up
check "rdma link add rxe0 type rxe netdev veth0" rdma link add rxe0 type rxe netdev veth0
check_match "rxe0 port 1 is ACTIVE on veth0" '^link rxe0/1 state ACTIVE .*netdev veth0' "$(rdma link show)"
check "/sys/class/infiniband/rxe0" test -e /sys/class/infiniband/rxe0

# --- character devices, numbers from sysfs
check "uverbs0 registered" test -f /sys/class/infiniband_verbs/uverbs0/dev
check_eq "uverbs0 belongs to rxe0" rxe0 "$(cat /sys/class/infiniband_verbs/uverbs0/ibdev 2>&1)"
for d in /sys/class/infiniband_verbs/uverbs*; do
  [ -f "$d/dev" ] || continue
  n=${d##*/}
  check "/dev/infiniband/$n is $(cat "$d/dev") as in sysfs" sysfs_dev_matches "/dev/infiniband/$n" "$d/dev"
done
check "/dev/infiniband/rdma_cm is $(cat /sys/class/misc/rdma_cm/dev 2>&1) as in sysfs" \
  sysfs_dev_matches /dev/infiniband/rdma_cm /sys/class/misc/rdma_cm/dev
for d in /sys/class/infiniband_mad/umad* /sys/class/infiniband_mad/issm*; do
  [ -f "$d/dev" ] || continue
  n=${d##*/}
  check "/dev/infiniband/$n is $(cat "$d/dev") as in sysfs" sysfs_dev_matches "/dev/infiniband/$n" "$d/dev"
done

# --- verbs
out=$(ibv_devices 2>&1)
check_match "ibv_devices lists rxe0" '^[[:space:]]+rxe0[[:space:]]+[0-9a-f]{16}$' "$out"
out=$(ibv_devinfo -d rxe0 2>&1)
check_match "ibv_devinfo: port 1 PORT_ACTIVE" 'state:[[:space:]]+PORT_ACTIVE' "$out"

# data over an RC queue pair: both ends on rxe0 (rxe loops its own GID back), GID 0 is the
# IPv6 link-local address of veth0; the QP numbers travel over TCP on 127.0.0.1
wait_for_gid0 rxe0 veth0
rc_pingpong rxe0 20
check_match "ibv_rc_pingpong client moved 20 iterations" '^20 iters in ' "$pp_out"
check_eq "ibv_rc_pingpong server exits 0" 0 "$pp_server_rc"

# --- rdma cgroup
C=/sys/fs/cgroup
check_match "rdma controller available" '(^| )rdma( |$)' "$(cat $C/cgroup.controllers)"
check_match "rdma enabled in the root's subtree_control" '(^| )rdma( |$)' "$(cat $C/cgroup.subtree_control)"
mkdir -p $C/rdma-two $C/rdma-zero
# the kernel ends each rdma.max line with a space
check_eq "rdma.max defaults to max" "rxe0 hca_handle=max hca_object=max" "$(sed 's/ *$//' $C/rdma-two/rdma.max)"
check "write rdma.max" sh -c "echo 'rxe0 hca_handle=2 hca_object=100' > $C/rdma-two/rdma.max"
check_eq "rdma.max reads back" "rxe0 hca_handle=2 hca_object=100" "$(sed 's/ *$//' $C/rdma-two/rdma.max)"
echo 'rxe0 hca_handle=0 hca_object=0' > $C/rdma-zero/rdma.max
check "ibv_devinfo works under hca_handle=2" \
  sh -c "echo \$\$ > $C/rdma-two/cgroup.procs && exec ibv_devinfo -d rxe0 >/dev/null 2>&1"
check_not "ibv_devinfo is refused under hca_handle=0" \
  sh -c "echo \$\$ > $C/rdma-zero/cgroup.procs && exec ibv_devinfo -d rxe0 >/dev/null 2>&1"

# --- a container that gets uverbs0
command -v "$RUNTIME" >/dev/null || { not_ok "runtime $RUNTIME not in the VM"; done_testing; }
mm=$(cat /sys/class/infiniband_verbs/uverbs0/dev)
maj=${mm%:*}; min=${mm#*:}
probe='ls -l /dev/infiniband
  echo node=$(stat -c %t:%T /dev/infiniband/uverbs0)
  if sh -c ": <> /dev/infiniband/uverbs0"; then echo open=ok; else echo open=refused; fi
  echo rdma.max=$(cat /sys/fs/cgroup/rdma.max)'
dev='{"path": "/dev/infiniband/uverbs0", "type": "c", "major": '$maj', "minor": '$min',
      "fileMode": 438, "uid": 0, "gid": 0}'
b=$(bundle_copy rdma) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["sh", "-c", $p]
  | .linux.devices = [ '"$dev"' ]
  | .linux.resources.devices += [{"allow": true, "type": "c", "major": '$maj', "minor": '$min', "access": "rwm"}]
  | .linux.resources.rdma = {"rxe0": {"hcaHandles": 2, "hcaObjects": 100}}
  | .linux.cgroupsPath = "/berth-rdma/allowed"
  | .linux.namespaces += [{"type": "cgroup"}]' --arg p "$probe"
out=$(cd "$b" && "$RUNTIME" run rdma-allowed 2>&1)
rc=$?
echo "$out" | sed 's/^/    allowed| /'
check_eq "$RUNTIME run (uverbs0 allowed) exits 0" 0 "$rc"
check_match "container has the uverbs0 node" '^crw.* uverbs0$' "$out"
check_match "container node is $mm" "^node=$(printf '%x:%x' "$maj" "$min")\$" "$out"
check_match "container opens uverbs0" '^open=ok$' "$out"
check_match "container cgroup has rdma.max from linux.resources.rdma" \
  '^rdma.max=rxe0 hca_handle=2 hca_object=100$' "$out"

# the same node without an allow rule: the device cgroup must refuse the open
b=$(bundle_copy rdma-denied) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["sh", "-c", $p]
  | .linux.devices = [ '"$dev"' ]
  | .linux.cgroupsPath = "/berth-rdma/denied"' --arg p "$probe"
out=$(cd "$b" && "$RUNTIME" run rdma-denied 2>&1)
rc=$?
echo "$out" | sed 's/^/    denied| /'
check_eq "$RUNTIME run (no allow rule) exits 0" 0 "$rc"
check_match "node present without an allow rule" '^crw.* uverbs0$' "$out"
check_match "open refused without an allow rule" '^open=refused$' "$out"

done_testing
