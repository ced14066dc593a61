#!/bin/bash
# podman-rootless.sh: podman 4.3 run by an ordinary user (rootless) with one runtime binary.
# The script, started as root, creates a dedicated user with its own /etc/subuid and
# /etc/subgid ranges and XDG_RUNTIME_DIR, runs the scenario as that user and removes
# everything at the end (docs/rootless.md).
#
#   podman-rootless.sh [--runtime PATH] [--log-dir DIR]
#
#   --runtime PATH   the runtime under test (default: runc from PATH); podman gets a copy in a
#                    directory the user can read, under its own name (berth, runc)
#   --log-dir DIR    one log per scenario (default: build/ecosystem-logs/podman-rootless-<name>)
#
# podman runs with what works on a host without a systemd user session: the cgroupfs manager
# (on a cgroup v1 or hybrid host podman then runs rootless containers without cgroups), the
# file events backend, vfs storage and --network none (no slirp4netns needed). The image is
# built offline from busybox-static (lib/image.sh). Output: one PASS/FAIL line per scenario
# and the counts; exit 0 when all passed, 1 otherwise, 2 on a harness error, 77 (skipped,
# with the reason) when not root or when podman, uidmap or the image tools are missing.
set -u -o pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin
# shellcheck source=lib/common.sh
. "$here/lib/common.sh"
# shellcheck source=lib/image.sh
. "$here/lib/image.sh"

runtime=; logdir=
while [[ $# -gt 0 ]]; do
  case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --runtime=*) runtime=${1#*=}; shift ;;
    --log-dir) logdir=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -u/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    *) eco_die "unknown argument: $1 (--help)" ;;
  esac
done

skip() { echo "SKIP podman-rootless: $*"; exit 77; }
[[ $(id -u) == 0 ]] || skip "needs root (it creates the test user)"
for tool in podman:podman conmon:conmon newuidmap:uidmap newgidmap:uidmap setpriv:util-linux useradd:passwd \
            umoci:umoci skopeo:skopeo busybox:busybox-static jq:jq; do
  command -v "${tool%%:*}" >/dev/null || skip "${tool%%:*} is not installed (Debian package ${tool#*:})"
done
[[ -n "$runtime" ]] || runtime=$(command -v runc) || skip "no runc in PATH; give --runtime"
case $runtime in
  */*) runtime=$(cd "$(dirname "$runtime")" && pwd)/$(basename "$runtime") ;;
  *) runtime=$(command -v "$runtime") || skip "runtime $runtime is not installed" ;;
esac
[[ -x "$runtime" ]] || eco_die "runtime $runtime is not executable"
rtname=$(basename "$runtime")
[[ -n "$logdir" ]] || logdir=$repo/build/ecosystem-logs/podman-rootless-$rtname
mkdir -p "$logdir" && logdir=$(cd "$logdir" && pwd)

# Fixed name and ranges (tests/rootless uses 2100000000 and up; the ranges must not overlap).
TUSER=berth-podman-t
SUB_START=2100100000 SUB_COUNT=65536
work=; xdg=; made_run_user=0

remove_user() {
  local p
  if id -u "$TUSER" >/dev/null 2>&1; then
    # Only the test user's processes, each by its pid (podman's pause process above all).
    for p in $(pgrep -u "$TUSER"); do kill -KILL "$p" 2>/dev/null; done
    sleep 0.2
    userdel -r -f "$TUSER" >/dev/null 2>&1
  fi
  # userdel leaves the subordinate ranges of some shadow versions behind: ours go by name.
  sed -i "/^$TUSER:/d" /etc/subuid /etc/subgid
  [[ -n "$xdg" ]] && rm -rf --one-file-system "$xdg"
  (( made_run_user )) && rmdir /run/user 2>/dev/null
  return 0
}
cleanup() {
  remove_user
  [[ -n "$work" ]] && rm -rf --one-file-system "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

make_user() {
  remove_user  # a crashed earlier run
  useradd -m -U -s /bin/sh "$TUSER" || eco_die "useradd $TUSER failed"
  # Debian's useradd adds a range of its own (SUB_UID_COUNT): replace it with ours.
  sed -i "/^$TUSER:/d" /etc/subuid /etc/subgid
  echo "$TUSER:$SUB_START:$SUB_COUNT" >>/etc/subuid
  echo "$TUSER:$SUB_START:$SUB_COUNT" >>/etc/subgid
  TUID=$(id -u "$TUSER") TGID=$(id -g "$TUSER") THOME=$(getent passwd "$TUSER" | cut -d: -f6)
  [[ -d /run/user ]] || { mkdir -p /run/user && chmod 755 /run/user && made_run_user=1; }
  xdg=/run/user/$TUID
  if ! mkdir -m 700 "$xdg" || ! chown "$TUID:$TGID" "$xdg"; then eco_die "cannot make $xdg"; fi
}

# as_user CMD...: CMD as the test user, with what a login would give it and our podman files.
as_user() {
  setpriv --reuid "$TUID" --regid "$TGID" --clear-groups -- env -C "$work" -i \
    PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin HOME="$THOME" USER="$TUSER" LOGNAME="$TUSER" \
    XDG_RUNTIME_DIR="$xdg" TMPDIR="$work/tmp" CONTAINERS_CONF="$work/containers.conf" \
    CONTAINERS_REGISTRIES_CONF="$work/registries.conf" "$@"
}
# The deadline (lib/common.sh's eco_t) runs as the user too: timeout cannot start a function.
pm() {
  as_user timeout -k 10 60 podman --cgroup-manager cgroupfs --events-backend file --storage-driver vfs \
    --runtime "$RT" "$@"
}
prun() { pm run --network none "$@"; }
inspect() { pm inspect -f "$2" "$1"; }
logs_have() { pm logs "$1" 2>&1 | grep -q -- "$2"; }
# The runtime's state directories (podman passes no --root: $XDG_RUNTIME_DIR/<name>), not its
# dot-files (berth keeps its seccomp filter cache there).
state_dirs() { [[ -d "$xdg/$rtname" ]] && ls "$xdg/$rtname"; return 0; }
# Live (not zombie: PID 1 of some hosts reaps late) processes of the test user, as "pid comm".
user_procs() { ps -u "$TUID" -o pid=,stat=,comm= 2>/dev/null | awk '$2 !~ /^Z/ { print $1, $3 }'; }
conmons() { user_procs | awk '$2 == "conmon"'; }
squeeze() { awk '{ $1 = $1; print }'; }

setup() {
  make_user
  work=$(mktemp -d "${TMPDIR:-/tmp}/berth-podman-rootless.XXXXXX") || eco_die "mktemp failed"
  chmod 755 "$work"
  mkdir -p "$work/bin" "$work/images" "$work/tmp"
  chown "$TUID:$TGID" "$work/tmp"
  # A copy the user can reach whatever the build directory's modes, under its own name:
  # podman finds its entry in containers.conf (runtime_supports_json) by that name.
  install -m 755 "$runtime" "$work/bin/$rtname"
  RT=$work/bin/$rtname
  sed -e "s#\"/usr/local/bin/berth\", \"/usr/bin/berth\"#\"$RT\"#" \
      -e "s#^berth = #$rtname = #" -e "s#^runtime = \"berth\"#runtime = \"$rtname\"#" \
      "$repo/contrib/podman/containers.conf" >"$work/containers.conf"
  printf 'unqualified-search-registries = []\n' >"$work/registries.conf"
  chmod 644 "$work/containers.conf" "$work/registries.conf"
  ECO_REPO=$repo eco_build_images "$work/images"
  chmod 755 "$work/images" && chmod 644 "$work/images/oci.tar"
  pm load -q -i "$work/images/oci.tar" >"$logdir/load.log" 2>&1 ||
    { cat "$logdir/load.log" >&2; eco_die "podman load (as $TUSER) failed"; }
}

# ---------------------------------------------------------------------------------------
sc_run_output() {
  local out rc
  out=$(prun --rm "$IMG" sh -c 'echo to-stdout; echo to-stderr >&2; exit 3' 2>"$work/err") && rc=0 || rc=$?
  printf 'stdout: %s\nstderr: %s\n' "$out" "$(cat "$work/err")"
  check_eq "$rc" 3 "exit code of podman run"
  check_eq "$out" to-stdout "stdout"
  check_match "$(cat "$work/err")" to-stderr "stderr"
}

# The container's root is the user, the other ids its subordinate range (podman's own user
# namespace, through newuidmap/newgidmap).
sc_userns() {
  local out want
  out=$(prun --rm "$IMG" sh -c 'id -u; cat /proc/self/uid_map /proc/self/gid_map' | squeeze)
  printf '%s\n' "$out"
  want=$(printf '0\n0 %s 1\n1 %s %s\n0 %s 1\n1 %s %s' "$TUID" "$SUB_START" "$SUB_COUNT" "$TGID" "$SUB_START" "$SUB_COUNT")
  check_eq "$out" "$want" "uid, uid_map and gid_map inside the container"
}

sc_bind_mount() {
  local d=$work/bind out rc
  mkdir -p "$d" && echo host-data >"$d/in" && chown -R "$TUID:$TGID" "$d"
  out=$(prun --rm -v "$d:/data" "$IMG" sh -c 'cat /data/in && echo c >/data/by-root && mkdir /data/d1000 && chown 1000:1000 /data/d1000')
  check_eq "$out" host-data "the host file read through the bind"
  check_eq "$(stat -c %u:%g "$d/by-root")" "$TUID:$TGID" "owner on the host of a file the container's root wrote"
  check_eq "$(stat -c %u:%g "$d/d1000")" "$((SUB_START + 999)):$((SUB_START + 999))" \
    "owner on the host of a directory chowned to 1000:1000 in the container"
  run_rc out prun --rm -v "$d:/data:ro" "$IMG" touch /data/new
  check_eq "$rc" 1 "touch in a read-only bind"
  check_match "$out" 'Read-only file system' "its error"
  check_eq "$(test -e "$d/new" && echo made)" "" "nothing written through the read-only bind"
}

sc_lifecycle() {
  local id out rc t0 dt
  prun -d --name life "$IMG" sh -c 'trap "exit 42" TERM; echo ready; while :; do sleep 0.1; done'
  wait_until 20 logs_have life ready || { pm logs life; inspect life '{{.State.Status}} {{.State.Error}}'; return 1; }
  id=$(inspect life '{{.Id}}')
  check_eq "$(state_dirs)" "$id" "runtime state in \$XDG_RUNTIME_DIR/$rtname"
  out=$(as_user timeout -k 10 30 "$RT" state "$id")
  check_eq "$(jq -r .status <<<"$out")" running "runtime state .status, as the user"
  check_eq "$(jq -r .pid <<<"$out")" "$(inspect life '{{.State.Pid}}')" "runtime state .pid = podman's State.Pid"
  run_rc out pm exec life sh -c 'echo in-exec; exit 5'
  check_eq "$rc" 5 "exit code of podman exec"
  check_match "$out" in-exec "exec output"
  run_rc out pm exec -u nobody -w /tmp -e FOO=bar life sh -c 'echo $(id -u):$(id -g) $PWD $FOO'
  check_eq "$out" "65534:65534 /tmp bar" "uid:gid, cwd and env of an exec'd process"
  run_rc out pm ps --format '{{.Names}} {{.Status}}'
  check_match "$out" '^life Up ' "podman ps"
  t0=$(now_ms); pm stop -t 10 life; dt=$(( $(now_ms) - t0 ))
  check_eq "$(inspect life '{{.State.Status}} {{.State.ExitCode}}')" "exited 42" "status after stop (SIGTERM handled)"
  check_le "$dt" 5000 "ms podman stop took"
  pm rm life
  check_empty "$(pm ps -aq)" "containers after rm"
  check_empty "$(state_dirs)" "runtime state directories after rm"
  check_empty "$(conmons)" "conmon processes after rm"
}

# --privileged, rootless: podman binds every host node itself and the runtime binds its
# defaults over them (it runs in podman's user namespace, where nothing is mknod'ed).
sc_privileged() {
  local out
  out=$(prun --rm --privileged "$IMG" sh -c 'echo x >/dev/null && test -c /dev/null && test -c /dev/fuse && echo ok')
  check_eq "$out" ok "device nodes of a privileged container"
}

# Without cgroups of its own (v1 or hybrid host), the container still sees the cgroups it
# runs in, read-only, as runc shows them: programs find their memory limit.
sc_cgroup_view() {
  local out
  out=$(prun --rm "$IMG" sh -c 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; touch /sys/fs/cgroup/memory/x 2>&1 || true')
  printf '%s\n' "$out"
  check_match "$out" '^[0-9]+' "memory.limit_in_bytes readable in the container"
  check_match "$out" 'Read-only file system' "the cgroup mount is read-only"
}

# After everything: nothing of the runtime, conmon or the containers; then podman's own pause
# process (which holds its user namespace) is stopped and nothing of the user may remain.
sc_leftovers() {
  local p
  check_empty "$(pm ps -aq)" "containers"
  check_empty "$(state_dirs)" "runtime state directories in \$XDG_RUNTIME_DIR/$rtname"
  check_empty "$(conmons)" "conmon processes"
  check_empty "$(user_procs | awk '$2 != "podman" && $2 != "catatonit"')" "processes other than podman's pause process"
  for p in $(user_procs | awk '{ print $1 }'); do kill -TERM "$p"; done
  wait_until 10 test -z "$(user_procs)" || true
  check_empty "$(user_procs)" "processes of $TUSER after its pause process stopped"
  check_empty "$(grep -F -e "$THOME" -e "$xdg" -e "$work/" /proc/self/mountinfo || true)" "mounts on the host"
}

eco_reset() { pm rm -a -f -t 0 >/dev/null 2>&1; return 0; }

# ---------------------------------------------------------------------------------------
t0=$(now_ms)
setup
echo "podman-rootless: runtime $runtime ($("$runtime" --version 2>/dev/null | head -n 1)) as $TUSER (uid $TUID); logs in $logdir"
echo "podman-rootless: setup (user, image, podman load) in $(( ($(now_ms) - t0) / 1000 ))s"
export ECO_ENGINE=podman-rootless ECO_LOGDIR=$logdir ECO_REPO=$repo ECO_RTNAME=$rtname
IMG=$ECO_IMAGE_REF
eco_scenario run-output sc_run_output
eco_scenario userns sc_userns
eco_scenario bind-mount sc_bind_mount
eco_scenario lifecycle sc_lifecycle
eco_scenario privileged sc_privileged
if [[ -d /sys/fs/cgroup/memory ]]; then
  eco_scenario cgroup-view sc_cgroup_view
else
  echo "SKIP podman-rootless cgroup-view (no cgroup v1 memory hierarchy on this host)"
fi
unset -f eco_reset
eco_scenario leftovers sc_leftovers
echo "TIME podman-rootless $(( ($(now_ms) - t0) / 1000 ))s"
echo "podman-rootless ($rtname): $ECO_PASSED passed, $ECO_FAILED failed"
(( ECO_FAILED == 0 ))
