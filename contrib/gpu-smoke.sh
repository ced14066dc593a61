#!/bin/sh
# GPU smoke test for a real NVIDIA machine: runs nvidia-smi and a CUDA device query on the
# host and inside berth containers (native GPU setup, no nvidia-container-toolkit), and
# compares them. Needs root, a loaded NVIDIA driver, busybox (static), a C compiler.
#   contrib/gpu-smoke.sh [path/to/berth]
# Uses the host's /etc/berth/config.json if any (BERTH_CONFIG to override). Prints one
# PASS/FAIL line per check and exits non-zero when a check fails.
set -u

berth=${1:-$(command -v berth || echo ./build/berth)}
work=$(mktemp -d /tmp/berth-gpu-smoke.XXXXXX)
root=$work/state
failed=0
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
  for id in $("$berth" --root "$root" list -q 2>/dev/null); do "$berth" --root "$root" delete --force "$id"; done
  rm -rf "$work"
}
trap cleanup EXIT

pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; failed=1; }
# check DESCRIPTION DETAIL-ON-FAILURE COMMAND...
check() {
  desc=$1 detail=$2
  shift 2
  if "$@"; then pass "$desc"; else fail "$desc: $detail"; fi
}
# shellcheck disable=SC2317  # called through check
has() { echo "$1" | grep -q "$2"; }

[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 2; }
[ -e /proc/driver/nvidia/version ] || { echo "no NVIDIA driver loaded" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "no nvidia-smi on the host" >&2; exit 2; }
busybox=$(command -v busybox) || { echo "needs busybox" >&2; exit 2; }

# A CUDA device query through the driver API only (no CUDA toolkit needed): it loads
# libcuda.so.1 the way CUDA programs do.
cat > "$work/query.c" <<'EOF'
#include <dlfcn.h>
#include <stdio.h>
typedef int (*fn_i)(unsigned);
typedef int (*fn_ip)(int *);
typedef int (*fn_get)(int *, int);
typedef int (*fn_name)(char *, int, int);
typedef int (*fn_mem)(size_t *, int);
int main(void) {
  void *h = dlopen("libcuda.so.1", RTLD_NOW);
  if (!h) { printf("dlopen: %s\n", dlerror()); return 1; }
  fn_i init = (fn_i)dlsym(h, "cuInit");
  fn_ip version = (fn_ip)dlsym(h, "cuDriverGetVersion"), count = (fn_ip)dlsym(h, "cuDeviceGetCount");
  fn_get get = (fn_get)dlsym(h, "cuDeviceGet");
  fn_name name = (fn_name)dlsym(h, "cuDeviceGetName"), bus = (fn_name)dlsym(h, "cuDeviceGetPCIBusId");
  fn_mem mem = (fn_mem)dlsym(h, "cuDeviceTotalMem_v2");
  int v = 0, n = 0, rc;
  if ((rc = init(0)) != 0) { printf("cuInit: %d\n", rc); return 1; }
  version(&v);
  count(&n);
  printf("cuda %d devices %d\n", v, n);
  for (int i = 0; i < n; ++i) {
    int d; char nm[256], b[64]; size_t m = 0;
    get(&d, i); name(nm, sizeof nm, d); bus(b, sizeof b, d); mem(&m, d);
    printf("device %d %s %s %zu\n", i, nm, b, m);
  }
  return 0;
}
EOF
cc -O1 -o "$work/query" "$work/query.c" -ldl || { echo "cannot compile the query" >&2; exit 2; }

# A busybox rootfs with the host's glibc (nvidia-smi and libcuda are glibc programs).
rootfs=$work/bundle/rootfs
mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/etc" "$rootfs/tmp"
cp "$busybox" "$rootfs/bin/busybox"
for a in sh cat ls grep stat; do ln -s busybox "$rootfs/bin/$a"; done
cp "$work/query" "$rootfs/query"
for lib in $(ldd "$work/query" "$(command -v nvidia-smi)" | awk '/\// {print $(NF-1)}' | sort -u); do
  mkdir -p "$rootfs$(dirname "$lib")"
  cp -L "$lib" "$rootfs$lib"
done
[ -e /etc/debian_version ] && cp /etc/debian_version "$rootfs/etc/"

bundle() { # bundle ENV-JSON-ITEMS SCRIPT
  cat > "$work/bundle/config.json" <<EOF
{"ociVersion":"1.2.0","process":{"terminal":false,"user":{"uid":0,"gid":0},
 "args":["sh","-c","$2"],"env":["PATH=/usr/bin:/bin"$1],"cwd":"/"},
 "root":{"path":"rootfs"},"hostname":"gpu-smoke",
 "mounts":[{"destination":"/proc","type":"proc","source":"proc"},
  {"destination":"/dev","type":"tmpfs","source":"tmpfs","options":["nosuid","mode=755"]},
  {"destination":"/sys","type":"sysfs","source":"sysfs","options":["nosuid","noexec","nodev","ro"]}],
 "linux":{"namespaces":[{"type":"pid"},{"type":"ipc"},{"type":"uts"},{"type":"mount"}],
  "cgroupsPath":"/berth-gpu-smoke/$$",
  "resources":{"devices":[{"allow":false,"access":"rwm"}]}}}
EOF
}

run_in() { # run_in ENV-JSON-ITEMS SCRIPT → stdout of the container
  bundle "$1" "$2"
  "$berth" --root "$root" run --bundle "$work/bundle" "smoke-$$-$3"
}

host_smi=$(nvidia-smi -L)
host_query=$("$work/query")
ngpus=$(echo "$host_smi" | grep -c '^GPU ')
echo "host: $ngpus GPU(s), $(echo "$host_query" | head -1)"

out=$(run_in ',"NVIDIA_VISIBLE_DEVICES=all"' 'nvidia-smi -L' smi-all)
check "nvidia-smi -L inside matches the host" "host [$host_smi] container [$out]" [ "$out" = "$host_smi" ]

out=$(run_in ',"NVIDIA_VISIBLE_DEVICES=all"' '/query' query-all)
check "CUDA device query inside matches the host" "host [$host_query] container [$out]" [ "$out" = "$host_query" ]

first_uuid=$(echo "$host_smi" | sed -n '1s/.*(UUID: \(GPU-[^)]*\)).*/\1/p')
out=$(run_in ",\"NVIDIA_VISIBLE_DEVICES=$first_uuid\"" '/query | head -1; ls /dev' query-one)
check "NVIDIA_VISIBLE_DEVICES=<uuid> shows one GPU" "[$out]" has "$out" "devices 1$"
check "one /dev/nvidiaN node" "[$out]" [ "$(echo "$out" | grep -c '^nvidia[0-9]')" = 1 ]

out=$(run_in ',"NVIDIA_VISIBLE_DEVICES=all"' 'grep ModifyDeviceFiles /proc/driver/nvidia/params' params)
check "procfs params masked" "[$out]" [ "$out" = "ModifyDeviceFiles: 0" ]

out=$(run_in ',"NVIDIA_VISIBLE_DEVICES=none"' 'ls /dev; nvidia-smi -L 2>&1' none)
check "NVIDIA_VISIBLE_DEVICES=none gives no GPU node" "[$out]" [ "$(echo "$out" | grep -c '^nvidia[0-9]')" = 0 ]

out=$(run_in ',"NVIDIA_VISIBLE_DEVICES=all","CUDA_VERSION=99.0.0"' 'true' require 2>&1)
check "an unmet CUDA requirement fails create" "[$out]" has "$out" "unsatisfied requirement"

exit $failed
