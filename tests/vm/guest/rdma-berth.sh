#!/bin/sh
# rdma-berth: RDMA devices asked for with the annotation org.berth.rdma.devices (shared
# netns mode, the default): the container gets /dev/infiniband/uverbs0 and rdma_cm with the
# numbers sysfs gives, device rules that let it open them, rdma.max from
# linux.resources.rdma (then changed by `update`), RLIMIT_MEMLOCK from process.rlimits,
# and verbs work inside (ibv_devices, ibv_devinfo, an RC ping-pong over rxe0).
# vm-options: --rdma --mem 512
. /vm/lib.sh
IP=/usr/sbin/ip

[ "$VM_RDMA" = 1 ] || { not_ok "VM booted without --rdma"; done_testing; }
command -v "$RUNTIME" >/dev/null || { not_ok "runtime $RUNTIME not in the VM"; done_testing; }
# org.berth.rdma.devices is berth's own: another runtime ignores it (reported as SKIP).
"$RUNTIME" --version 2>/dev/null | grep -q '^berth version' ||
  skip_all "$RUNTIME is not berth (the RDMA annotation is berth's)"
check_match "rdma netns mode is shared" '^netns shared' "$(rdma system show 2>&1)"
check "veth pair" $IP link add veth0 type veth peer name veth1
$IP link set veth0 up && $IP link set veth1 up
check "rdma link add rxe0 type rxe netdev veth0" rdma link add rxe0 type rxe netdev veth0
wait_for_gid0 rxe0 veth0
uv=$(cat /sys/class/infiniband_verbs/uverbs0/dev)
cm=$(cat /sys/class/misc/rdma_cm/dev)
hex() { printf '%x:%x' "${1%:*}" "${1#*:}"; }

# A bundle whose rootfs also holds the guest's ibverbs userspace (binaries, libraries, the
# rxe provider and its driver file), so that verbs can run inside the container.
verbs_bundle() { # NAME
  b=$(bundle_copy "$1") || return 1
  r=$b/rootfs
  mkdir -p "$r/usr/bin" "$r/usr/lib" "$r/etc" "$r/usr/lib64"
  cp -a /usr/lib/x86_64-linux-gnu "$r/usr/lib/" && cp -a /usr/lib64/. "$r/usr/lib64/" &&
    cp -a /etc/libibverbs.d "$r/etc/" || return 1
  [ -e "$r/lib64" ] || ln -s usr/lib64 "$r/lib64"
  for t in ibv_devices ibv_devinfo ibv_rc_pingpong; do cp /usr/bin/$t "$r/usr/bin/" || return 1; done
  cp /vm/lib.sh "$r/vm-lib.sh" || return 1   # rc_pingpong, inside
  echo "$b"
}

probe='ls /dev/infiniband
  echo uverbs0=$(stat -c %t:%T /dev/infiniband/uverbs0) rdma_cm=$(stat -c %t:%T /dev/infiniband/rdma_cm)
  echo rdma.max=$(cat /sys/fs/cgroup/rdma.max)
  echo memlock=$(ulimit -l)
  echo sysfs=$(ls /sys/class/infiniband)
  ibv_devices
  ibv_devinfo -d rxe0 | grep -E "state:"
  ip link set lo up
  . /vm-lib.sh; PP_LOG_DIR=/dev/shm; rc_pingpong rxe0 20
  echo server_rc=$pp_server_rc; echo "$pp_out"'

# --- 1. everything the annotation gives, with limits
b=$(verbs_bundle rdma-all) || { not_ok "bundle with ibverbs"; done_testing; }
cfg "$b" '.process.args = ["sh", "-c", $p]
  | .annotations["org.berth.rdma.devices"] = "rxe0"
  | .linux.resources.rdma = {"rxe0": {"hcaHandles": 3, "hcaObjects": 200}}
  | .process.rlimits += [{"type": "RLIMIT_MEMLOCK", "hard": 68719476736, "soft": 68719476736}]
  | .process.capabilities.bounding += ["CAP_NET_ADMIN"] | .process.capabilities.effective += ["CAP_NET_ADMIN"]
  | .process.capabilities.permitted += ["CAP_NET_ADMIN"]
  | .linux.cgroupsPath = "/berth-rdma/all"
  | .linux.namespaces += [{"type": "cgroup"}]' --arg p "$probe"
out=$(cd "$b" && "$RUNTIME" run rdma-all 2>&1)
rc=$?
echo "$out" | sed 's/^/    all| /'
check_eq "$RUNTIME run (org.berth.rdma.devices=rxe0) exits 0" 0 "$rc"
check_match "uverbs0 in /dev/infiniband" '^uverbs0$' "$out"
check_match "rdma_cm in /dev/infiniband" '^rdma_cm$' "$out"
check_match "uverbs0 is $uv, rdma_cm is $cm (from sysfs)" "^uverbs0=$(hex "$uv") rdma_cm=$(hex "$cm")\$" "$out"
check_match "rdma.max from linux.resources.rdma" '^rdma.max=rxe0 hca_handle=3 hca_object=200 ?$' "$out"
check_match "RLIMIT_MEMLOCK from process.rlimits (KiB)" '^memlock=67108864$' "$out"
check_match "sysfs (mounted in the container netns) shows rxe0 in shared mode" '^sysfs=rxe0$' "$out"
check_match "ibv_devices lists rxe0 inside" '^[[:space:]]+rxe0[[:space:]]+[0-9a-f]{16}$' "$out"
check_match "ibv_devinfo opens rxe0 inside: PORT_ACTIVE" 'state:[[:space:]]+PORT_ACTIVE' "$out"
check_match "RC ping-pong inside: 20 iterations" '^20 iters in ' "$out"
check_match "RC ping-pong server exits 0" '^server_rc=0$' "$out"

# --- 2. without RLIMIT_MEMLOCK memory registration fails: why RDMA needs it
b=$(verbs_bundle rdma-nolock) || { not_ok "bundle with ibverbs"; done_testing; }
cfg "$b" '.process.args = ["sh", "-c", "ulimit -l; ibv_rc_pingpong -d rxe0 -g 0 -n 1 127.0.0.1"]
  | .annotations["org.berth.rdma.devices"] = "all"
  | .process.rlimits += [{"type": "RLIMIT_MEMLOCK", "hard": 0, "soft": 0}]
  | .linux.cgroupsPath = "/berth-rdma/nolock"'
out=$(cd "$b" && "$RUNTIME" run rdma-nolock 2>&1)
rc=$?
echo "$out" | sed 's/^/    nolock| /'
check_match "memlock 0 inside" '^0$' "$out"
check_match "ibv_reg_mr refused without locked memory" "Couldn't register MR" "$out"
check_eq "the verbs program fails" 1 "$rc"

# --- 3. rdma.max enforced, and changed by update
b=$(verbs_bundle rdma-upd) || { not_ok "bundle with ibverbs"; done_testing; }
cfg "$b" '.process.args = ["sleep", "300"]
  | .annotations["org.berth.rdma.devices"] = "rxe0"
  | .linux.resources.rdma = {"rxe0": {"hcaHandles": 0, "hcaObjects": 0}}
  | .linux.cgroupsPath = "/berth-rdma/upd"'
(cd "$b" && "$RUNTIME" run -d rdma-upd > /dev/null 2>&1)
check_eq "rdma.max with hcaHandles 0" "rxe0 hca_handle=0 hca_object=0" "$(sed 's/ *$//' /sys/fs/cgroup/berth-rdma/upd/rdma.max)"
out=$("$RUNTIME" exec rdma-upd ibv_devinfo -d rxe0 2>&1)
check_match "hcaHandles 0: the device cannot be opened" 'Failed to open device' "$out"
echo '{"rdma": {"rxe0": {"hcaHandles": 2, "hcaObjects": 50}}}' > /tmp/rdma-update.json
check "$RUNTIME update -r (rdma)" "$RUNTIME" update -r /tmp/rdma-update.json rdma-upd
check_eq "rdma.max after update" "rxe0 hca_handle=2 hca_object=50" "$(sed 's/ *$//' /sys/fs/cgroup/berth-rdma/upd/rdma.max)"
out=$("$RUNTIME" exec rdma-upd ibv_devinfo -d rxe0 2>&1)
check_match "after update the device opens" 'state:[[:space:]]+PORT_ACTIVE' "$out"
"$RUNTIME" delete -f rdma-upd > /dev/null 2>&1

# --- 4. no annotation: no RDMA node
b=$(bundle_copy rdma-none) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.process.args = ["sh", "-c", "ls /dev/infiniband 2>&1; true"] | .linux.cgroupsPath = "/berth-rdma/none"'
out=$(cd "$b" && "$RUNTIME" run rdma-none 2>&1)
check_match "no /dev/infiniband without the annotation" 'No such file or directory' "$out"

# --- 5. an unknown device is an error that names the host's devices
b=$(bundle_copy rdma-unknown) || { not_ok "bundle copy"; done_testing; }
cfg "$b" '.annotations["org.berth.rdma.devices"] = "rxe0,mlx5_1" | .linux.cgroupsPath = "/berth-rdma/unknown"'
out=$(cd "$b" && "$RUNTIME" run rdma-unknown 2>&1)
rc=$?
echo "$out" | sed 's/^/    unknown| /'
check_eq "unknown device: run fails" 1 "$rc"
check_match "the error names the device and the host's" 'rdma device mlx5_1 not found \(this host has: rxe0\)' "$out"
check_eq "nothing left behind" "" "$("$RUNTIME" list -q 2>&1)"

done_testing
