#!/bin/bash
# run.sh: Kubernetes' runtime path without kubelet. A private containerd 1.6 with its CRI
# plugin and two RuntimeClass handlers (runc, berth) on the runc v2 shim; the kubelet-like
# client scenario.py drives one handler through the CRI (see README, docs/kubernetes.md).
#
#   run.sh --handler runc|berth --berth PATH [--runc PATH] [--log-dir DIR] [--probes N]
#          [--churn N] [--only LIST] [--no-install]
#
#   --handler H     the RuntimeClass handler the pods use
#   --berth PATH    the berth binary (BinaryName of handler "berth")
#   --runc PATH     BinaryName of handler "runc" (default: runc in PATH)
#   --log-dir DIR   containerd's log, the client's output and JSON summary (default build/cri-logs)
#   --probes N      ExecSync probes timed in a row (default 200)
#   --churn N       pods x 2 containers started and removed in the churn step (default 50)
#   --only LIST     comma-separated scenario names (scenario.py's functions)
#   --no-install    do not apt-get install missing packages (skip instead)
#
# Exit: 0 all checks passed, 1 a check failed, 2 harness error, 77 skipped (not root, or the
# packages are missing and cannot be installed).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

handler=; berth=; runc=; logdir=$repo/build/cri-logs; probes=200; churn=50; only=; install=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --handler) handler=$2; shift 2 ;;
    --berth) berth=$2; shift 2 ;;
    --runc) runc=$2; shift 2 ;;
    --log-dir) logdir=$2; shift 2 ;;
    --probes) probes=$2; shift 2 ;;
    --churn) churn=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --no-install) install=0; shift ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "cri: unknown argument: $1 (--help)" >&2; exit 2 ;;
  esac
done
die() { echo "cri: error: $*" >&2; exit 2; }
skip() { echo "SKIP cri: $*"; exit 77; }
[[ $handler == runc || $handler == berth ]] || die "--handler runc|berth"
[[ $(id -u) == 0 ]] || skip "needs root"
[[ -n $runc ]] || runc=$(command -v runc) || skip "no runc in PATH"
[[ -n $berth && -x $berth ]] || die "--berth PATH: the berth binary"
berth=$(cd "$(dirname "$berth")" && pwd)/$(basename "$berth")
mkdir -p "$logdir" && logdir=$(cd "$logdir" && pwd)

# ---- packages (Debian 12); services never started by apt ----
pkgs=(containerd runc umoci skopeo busybox-static containernetworking-plugins iproute2
      python3-grpcio python3-protobuf protobuf-compiler protobuf-compiler-grpc)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  (( install )) || skip "missing packages: ${missing[*]}"
  made_policy=0
  if [[ ! -e /usr/sbin/policy-rc.d ]]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
  fi
  { apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
      --no-install-recommends "${missing[@]}"; } >"$logdir/apt.log" 2>&1
  rc=$?
  (( made_policy )) && rm -f /usr/sbin/policy-rc.d
  (( rc == 0 )) || skip "apt-get install ${missing[*]} failed (log: $logdir/apt.log)"
fi
cni_bin=/usr/lib/cni
[[ -x $cni_bin/bridge && -x $cni_bin/host-local ]] || skip "no CNI bridge/host-local in $cni_bin"

work=$(mktemp -d /tmp/berth-cri.XXXXXX) || die "mktemp"
chmod 755 "$work"
sock=$work/containerd.sock
token=${work##*.}
bridge=bcri${token:0:6}
bridge=${bridge,,}

# What exists before we start, so that cleanup removes only what this run created.
cni_netns() { local f; for f in /var/run/netns/cni-*; do [[ -e $f ]] && echo "${f##*/}"; done; }
netns_before=$(cni_netns)
kubepods_before=$(ls -d /sys/fs/cgroup/*/kubepods 2>/dev/null || true)
# the shims' sockets go to /run/containerd/s/<hash> whatever containerd's state is
run_containerd_before=0; [[ -e /run/containerd ]] && run_containerd_before=1
# libcni's cache of results, /var/lib/cni/results/<network>-<container>-<ifname>
var_lib_cni_before=0; [[ -e /var/lib/cni ]] && var_lib_cni_before=1

# shellcheck disable=SC2317  # called from the EXIT trap
cleanup() {
  local pid p m d
  pid=$(cat "$work/containerd.pid" 2>/dev/null)
  if [[ -n $pid ]] && grep -qF "$work/containerd.toml" "/proc/$pid/cmdline" 2>/dev/null; then
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
  # shims of pods that were not removed (each names our socket in its argv), and their
  # containers (in our pod cgroups)
  for p in $(pgrep -f "containerd-shim-runc-v2 .*-address $sock" || true); do kill -9 "$p" 2>/dev/null; done
  for d in /sys/fs/cgroup/*/kubepods; do
    grep -qxF "$d" <<<"$kubepods_before" && continue
    [[ -d $d ]] || continue
    find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u | while read -r p; do
      kill -9 "$p" 2>/dev/null; done
  done
  sleep 0.2
  for d in /sys/fs/cgroup/*/kubepods; do
    grep -qxF "$d" <<<"$kubepods_before" && continue
    [[ -d $d ]] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  awk -v w="$work/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r |
    while read -r m; do umount "$m" 2>/dev/null || umount -l "$m"; done
  for m in $(cni_netns); do
    grep -qxF "$m" <<<"$netns_before" && continue
    umount "/var/run/netns/$m" 2>/dev/null; rm -f "/var/run/netns/$m"
  done
  ip link del "$bridge" 2>/dev/null
  (( run_containerd_before )) || { rmdir /run/containerd/s /run/containerd 2>/dev/null; }
  rm -f /var/lib/cni/results/berth-cri-*
  (( var_lib_cni_before )) || { rmdir /var/lib/cni/results /var/lib/cni 2>/dev/null; }
  [[ -z $(awk -v w="$work/" 'index($5, w) == 1' /proc/self/mountinfo) ]] && rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

echo "cri: handler $handler; berth $berth; runc $runc; work $work; logs $logdir"
t0=$(date +%s)
"$here/gen-stubs.sh" "$work/gen" >"$logdir/stubs.log" 2>&1 || { cat "$logdir/stubs.log"; die "stubs"; }
"$here/build-images.sh" "$work/images" >"$logdir/images.log" 2>&1 || { cat "$logdir/images.log"; die "images"; }

# restrict_oom_score_adj where root lacks CAP_SYS_RESOURCE (bit 24 of CapEff)
capeff=$(awk '/^CapEff/ {print $2}' /proc/self/status)
if (( (16#$capeff >> 24) & 1 )); then restrict=false; else restrict=true; fi
sed -e "s|@WORK@|$work|g" -e "s|@RESTRICT_OOM@|$restrict|" -e "s|@RUNC@|$runc|" \
    -e "s|@BERTH@|$berth|" -e "s|@CNI_BIN@|$cni_bin|" "$here/containerd.toml.in" >"$work/containerd.toml"
mkdir -p "$work/cni/net.d" "$work/pod-logs"
# 10.<random>.<random>.0/24 that no host route covers
for _ in $(seq 20); do
  subnet=10.$((200 + RANDOM % 50)).$((RANDOM % 250)).0/24
  ip route show to match "${subnet%/24}" | grep -qv '^default' || break
done
sed -e "s|@WORK@|$work|g" -e "s|@SUBNET@|$subnet|" -e "s|@BRIDGE@|$bridge|" \
    "$here/cni.conflist.in" >"$work/cni/net.d/10-berth-cri.conflist"

# The fake GPU host of tests/fixtures/gpu (gpu_cdi scenario): berth finds it through
# BERTH_CONFIG, which containerd passes on to the shim and the shim to the runtime. A vendor
# CDI spec joins the fixture's spec directory.
gpu=$work/gpu
berth_config=
if command -v cc >/dev/null && "$repo/tests/fixtures/gpu/make-fixture.sh" "$gpu/host" --gpus 2 --mknod \
     >"$logdir/gpu-fixture.log" 2>&1 && mknod -m 0660 "$gpu/fpga0" c 240 7; then
  echo "vendor data" >"$gpu/data"
  cat >"$gpu/host/cdi/run/vendor.json" <<EOF2
{"cdiVersion": "0.7.0", "kind": "vendor.com/fpga", "devices": [{"name": "f0", "containerEdits": {
  "deviceNodes": [{"path": "/dev/fpga0", "hostPath": "$gpu/fpga0"}],
  "mounts": [{"hostPath": "$gpu/data", "containerPath": "/opt/vendor/data", "options": ["ro", "nosuid", "nodev", "bind"]}],
  "env": ["FPGA_VISIBLE=f0"]}}]}
EOF2
  berth_config=$gpu/host/config.json
else
  echo "cri: no fake GPU host (log: $logdir/gpu-fixture.log): gpu_cdi is skipped"
fi

envs=(); [[ -n $berth_config ]] && envs=("BERTH_CONFIG=$berth_config")
env "${envs[@]}" setsid containerd --config "$work/containerd.toml" >"$logdir/containerd-$handler.log" 2>&1 </dev/null &
echo $! >"$work/containerd.pid"
for _ in $(seq 100); do ctr -a "$sock" version >/dev/null 2>&1 && break; sleep 0.2; done
ctr -a "$sock" version >/dev/null 2>&1 || die "containerd did not start (log: $logdir/containerd-$handler.log)"
for i in pause busybox; do
  ctr -a "$sock" -n k8s.io images import "$work/images/$i.tar" >/dev/null || die "import $i"
done
# containerd's events (TaskExit with the exit status of every task, the pause ones included)
ctr -a "$sock" events >"$logdir/events-$handler.log" 2>&1 &
echo "cri: containerd ready, images imported in $(( $(date +%s) - t0 ))s; subnet $subnet"

root=$work/runc-root; [[ $handler == berth ]] && root=$work/berth-root
args=(--socket "$sock" --stubs "$work/gen" --handler "$handler" --log-root "$work/pod-logs"
      --work "$work" --runtime-root "$root" --probes "$probes" --churn "$churn"
      --out "$logdir/result-$handler.json")
[[ -n $only ]] && args+=(--only "$only")
[[ -n $berth_config ]] && args+=(--gpu-fixture "$gpu/host")
PYTHONPATH=$here /usr/bin/python3 -u "$here/scenario.py" "${args[@]}" 2>&1 | tee "$logdir/scenario-$handler.log"
rc=${PIPESTATUS[0]}
echo "cri: $handler done in $(( $(date +%s) - t0 ))s, exit $rc"
exit "$rc"
