#!/bin/sh
# mkbundle.sh: make a busybox-static OCI bundle (rootfs/ + config.json) for tests.
#
#   mkbundle.sh [--runtime PATH] [--rootless] [--busybox PATH] [--force] DIR
#
#   --runtime PATH   write config.json with `PATH spec` (runc, berth, crun ...); without it a
#                    built-in template equivalent to runc's default spec is used
#   --rootless       rootless config (`spec --rootless`, or the template's rootless variant)
#   --busybox PATH   static busybox to install (default: busybox on PATH)
#   --force          replace DIR when it exists and is not empty
#
# The config runs `sh` with terminal false (tests pipe stdio), root readonly, the usual
# namespaces, /proc /dev /dev/pts /dev/shm /dev/mqueue /sys /sys/fs/cgroup mounts. Edit it
# with jq for each test (see tests/vm/guest/lib.sh: cfg).
set -eu

die() { printf 'mkbundle: error: %s\n' "$*" >&2; exit 1; }

runtime=; rootless=0; busybox=; force=0
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) runtime=$2; shift 2 ;;
    --rootless) rootless=1; shift ;;
    --busybox) busybox=$2; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option: $1" ;;
    *) break ;;
  esac
done
[ $# = 1 ] || die "usage: mkbundle.sh [--runtime PATH] [--rootless] [--busybox PATH] [--force] DIR"
dir=$1
[ -n "$busybox" ] || busybox=$(command -v busybox || true)
[ -n "$busybox" ] && [ -x "$busybox" ] || die "no busybox (Debian package busybox-static)"
if ldd "$busybox" >/dev/null 2>&1; then die "$busybox is dynamically linked; a static one is needed"; fi

if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ]; then
  [ $force = 1 ] || die "$dir exists and is not empty (--force replaces it)"
  rm -rf "$dir"
fi
mkdir -p "$dir/rootfs"
dir=$(cd "$dir" && pwd)
r=$dir/rootfs

# --- rootfs: busybox and its applet links, the few files programs look for
mkdir -p "$r/bin" "$r/sbin" "$r/usr/bin" "$r/usr/sbin" "$r/etc" "$r/proc" "$r/sys" "$r/dev" \
  "$r/tmp" "$r/root" "$r/run" "$r/var/tmp" "$r/home"
chmod 1777 "$r/tmp" "$r/var/tmp"
chmod 700 "$r/root"
cp "$busybox" "$r/bin/busybox"
"$busybox" --list-full | while read -r a; do
  [ "$a" = bin/busybox ] || ln -sf /bin/busybox "$r/$a"
done
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$r/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' > "$r/etc/group"
printf '127.0.0.1 localhost\n::1 localhost\n' > "$r/etc/hosts"
echo 'hosts: files dns' > "$r/etc/nsswitch.conf"
: > "$r/etc/resolv.conf"

# --- config.json
if [ -n "$runtime" ]; then
  if [ $rootless = 1 ]; then (cd "$dir" && "$runtime" spec --rootless)
  else (cd "$dir" && "$runtime" spec); fi || die "$runtime spec failed"
  [ -s "$dir/config.json" ] || die "$runtime spec wrote no config.json"
  if command -v jq >/dev/null; then
    jq '.process.terminal = false' "$dir/config.json" > "$dir/config.json.new"
    mv "$dir/config.json.new" "$dir/config.json"
  else
    sed -i 's/"terminal":[[:space:]]*true/"terminal": false/' "$dir/config.json"
  fi
  exit 0
fi

caps='"CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"'
if [ $rootless = 1 ]; then
  uid=$(id -u); gid=$(id -g)
  userns=',
      { "type": "user" }'
  idmaps=',
    "uidMappings": [ { "containerID": 0, "hostID": '$uid', "size": 1 } ],
    "gidMappings": [ { "containerID": 0, "hostID": '$gid', "size": 1 } ]'
  sysfs='{ "destination": "/sys", "type": "none", "source": "/sys",
      "options": [ "rbind", "nosuid", "noexec", "nodev", "ro" ] }'
  cgroupfs=
  resources=
  ptsgid=
else
  userns=; idmaps=
  sysfs='{ "destination": "/sys", "type": "sysfs", "source": "sysfs",
      "options": [ "nosuid", "noexec", "nodev", "ro" ] },'
  cgroupfs='
    { "destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
      "options": [ "nosuid", "noexec", "nodev", "relatime", "ro" ] }'
  resources='
    "resources": { "devices": [ { "allow": false, "access": "rwm" } ] },'
  ptsgid=', "gid=5"'
fi

cat > "$dir/config.json" <<EOF
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": { "uid": 0, "gid": 0 },
    "args": [ "sh" ],
    "env": [ "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm" ],
    "cwd": "/",
    "capabilities": {
      "bounding": [ $caps ],
      "effective": [ $caps ],
      "permitted": [ $caps ],
      "ambient": [ $caps ]
    },
    "rlimits": [ { "type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024 } ],
    "noNewPrivileges": true
  },
  "root": { "path": "rootfs", "readonly": true },
  "hostname": "berth",
  "mounts": [
    { "destination": "/proc", "type": "proc", "source": "proc" },
    { "destination": "/dev", "type": "tmpfs", "source": "tmpfs",
      "options": [ "nosuid", "strictatime", "mode=755", "size=65536k" ] },
    { "destination": "/dev/pts", "type": "devpts", "source": "devpts",
      "options": [ "nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"$ptsgid ] },
    { "destination": "/dev/shm", "type": "tmpfs", "source": "shm",
      "options": [ "nosuid", "noexec", "nodev", "mode=1777", "size=65536k" ] },
    { "destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
      "options": [ "nosuid", "noexec", "nodev" ] },
    $sysfs$cgroupfs
  ],
  "linux": {$resources
    "namespaces": [
      { "type": "pid" },
      { "type": "network" },
      { "type": "ipc" },
      { "type": "uts" },
      { "type": "mount" }$userns
    ]$idmaps,
    "maskedPaths": [
      "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
      "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"
    ],
    "readonlyPaths": [
      "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"
    ]
  }
}
EOF
if command -v jq >/dev/null; then
  jq -e . "$dir/config.json" >/dev/null || die "template produced invalid JSON"
fi
