#!/bin/sh
# rdma-berth-exclusive: the RDMA subsystem in exclusive netns mode (switched before any
# other network namespace exists). A container with its own network namespace that asks
# for rxe0 must have it moved in; rxe cannot move (EOPNOTSUPP) and berth says so, leaving
# nothing behind. A container's sysfs is mounted from its own namespace, so it sees no
# RDMA device of the host; a container in the host's namespace uses rxe0 without a move.
# vm-options: --rdma --mem 512
. /vm/lib.sh
IP=/usr/sbin/ip

[ "$VM_RDMA" = 1 ] || { not_ok "VM booted without --rdma"; done_testing; }
command -v "$RUNTIME" >/dev/null || { not_ok "runtime $RUNTIME not in the VM"; done_testing; }
# org.berth.rdma.devices is berth's own: another runtime ignores it (reported as SKIP).
"$RUNTIME" --version 2>/dev/null | grep -q '^berth version' ||
  skip_all "$RUNTIME is not berth (the RDMA annotation is berth's)"
check "rdma system set netns exclusive" rdma system set netns exclusive
check_match "rdma netns mode is exclusive" '^netns exclusive' "$(rdma system show 2>&1)"
check "veth pair" $IP link add veth0 type veth peer name veth1
$IP link set veth0 up && $IP link set veth1 up
check "rdma link add rxe0 type rxe netdev veth0" rdma link add rxe0 type rxe netdev veth0

# --- 1. own network namespace + rxe0: the move is refused by the driver, clearly
b=$(bundle_copy excl-move) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["true"] | .annotations["org.berth.rdma.devices"] = "rxe0"
  | .linux.cgroupsPath = "/berth-rdma/excl-move"'
out=$(cd "$b" && "$RUNTIME" run excl-move 2>&1)
rc=$?
echo "$out" | sed 's/^/    move| /'
check_eq "run fails" 1 "$rc"
check_match "the error names the device and the mode" \
  'rdma device rxe0: move into the container network namespace \(exclusive rdma netns mode\)' "$out"
check_match "the error says the driver cannot move" \
  'its driver cannot change network namespace.*operation not supported' "$out"
check_eq "nothing left behind" "" "$("$RUNTIME" list -q 2>&1)"
check_match "rxe0 still in the host namespace" '^[0-9]+: rxe0:' "$(rdma dev show 2>&1)"
check "the container's cgroup is gone" test ! -e /sys/fs/cgroup/berth-rdma/excl-move

# --- 2. own network namespace, no RDMA request: its sysfs shows no RDMA device
b=$(bundle_copy excl-none) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["sh", "-c", "echo sysfs=$(ls /sys/class/infiniband 2>&1)"]
  | .linux.cgroupsPath = "/berth-rdma/excl-none"'
out=$(cd "$b" && "$RUNTIME" run excl-none 2>&1)
rc=$?
echo "$out" | sed 's/^/    none| /'
check_eq "run exits 0" 0 "$rc"
check_match "no RDMA device in the container's sysfs" '^sysfs=$' "$out"
check "the host still sees rxe0 in sysfs" test -e /sys/class/infiniband/rxe0

# --- 3. the host's network namespace: rxe0 is already there, nothing moves
b=$(bundle_copy excl-host) || { not_ok "bundle copy"; done_testing; }
r=$b/rootfs
mkdir -p "$r/usr/bin" "$r/usr/lib" "$r/usr/lib64" "$r/etc"
cp -a /usr/lib/x86_64-linux-gnu "$r/usr/lib/" && cp -a /usr/lib64/. "$r/usr/lib64/" && cp -a /etc/libibverbs.d "$r/etc/"
[ -e "$r/lib64" ] || ln -s usr/lib64 "$r/lib64"
cp /usr/bin/ibv_devinfo "$r/usr/bin/"
cfg "$b" '.process.args = ["sh", "-c", "ls /dev/infiniband; ibv_devinfo -d rxe0 | grep state:"]
  | .annotations["org.berth.rdma.devices"] = "rxe0"
  | .linux.namespaces |= map(select(.type != "network"))
  | .linux.cgroupsPath = "/berth-rdma/excl-host"'
out=$(cd "$b" && "$RUNTIME" run excl-host 2>&1)
rc=$?
echo "$out" | sed 's/^/    host| /'
check_eq "run in the host network namespace exits 0" 0 "$rc"
check_match "uverbs0 given" '^uverbs0$' "$out"
check_match "rxe0 opens from the namespace that holds it" 'state:[[:space:]]+PORT_ACTIVE' "$out"

done_testing
