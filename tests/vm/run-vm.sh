#!/bin/sh
# run-vm.sh: boot Debian's 6.1 kernel under qemu with a busybox initramfs, run one guest
# script as the payload of PID 1 on pure cgroup v2, print its output, exit with its status.
#
#   run-vm.sh [options] SCRIPT [ARG...]
#
#   --bin PATH         copy a host binary into the guest at the same path, with every shared
#                      library ldd finds for it (repeatable)
#   --file SRC:DST     copy a host file or folder to DST in the guest (repeatable)
#   --bundle DIR[:DST] copy an OCI bundle (see mkbundle.sh) to DST (default /bundle)
#   --env NAME=VALUE   export NAME to the guest script (repeatable)
#   --module NAME      load this kernel module (and its dependencies) in the guest before the
#                      script; repeatable (fetch-kernel.sh adds it to the cache once)
#   --rdma             load the Soft-RoCE stack (rdma_rxe, ib_uverbs, ib_umad, rdma_ucm, veth,
#                      crc32_generic) before the script; carry iproute2 ip and rdma, ibverbs-utils
#                      and the rxe provider
#   --timeout S        kill the VM after S seconds (default 180); exit status 124
#   --mem MIB          guest memory (default 512)
#   --smp N            guest CPUs (default 1)
#   --append ARGS      extra kernel command line
#   --accel tcg|kvm    default tcg, or $BERTH_VM_ACCEL (kvm is opt-in: a /dev/kvm that
#                      opens but cannot run guests, as under nested virtualization, hangs)
#   --log FILE         console log (default: <cache>/logs/<script name>.console.log)
#   --cache DIR        VM cache (default: $BERTH_VM_CACHE or <repo>/build/vm-cache)
#   --kernel ABI       kernel ABI, passed to fetch-kernel.sh
#   --keep             keep the initramfs build folder (its path is printed)
#
# The guest: /init copies the initramfs into a tmpfs and switch_roots into it (pivot_root,
# which runtimes use, does not work on the initramfs itself), then mounts /proc, /sys,
# devtmpfs /dev, /dev/pts, /dev/shm, tmpfs /tmp and /run, cgroup2 on /sys/fs/cgroup (no v1
# hierarchy: cgroup_no_v1=all), enables +cpu +memory +pids +io (+rdma when present) in the
# root's cgroup.subtree_control and runs SCRIPT with /vm/lib.sh at hand. Its exit status
# reaches the host through a marker line on the serial console; the guest then powers off.
#
# Exit status: the guest script's; 124 on timeout; 125 when the harness or the boot failed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
repo=$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../.." && pwd))
cache=${BERTH_VM_CACHE:-$repo/build/vm-cache}

say() { printf 'run-vm: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 125; }

bins=; files=; bundles=; envs=; modules=; rdma=0; timeout_s=180; mem=512; smp=1; append=
log=; kernel=; keep=0; accel=${BERTH_VM_ACCEL:-tcg}
nl='
'
while [ $# -gt 0 ]; do
  case $1 in
    --bin) bins="$bins$2$nl"; shift 2 ;;
    --file) files="$files$2$nl"; shift 2 ;;
    --bundle) bundles="$bundles$2$nl"; shift 2 ;;
    --env) case $2 in *=*) ;; *) die "--env wants NAME=VALUE" ;; esac
           envs="$envs$2$nl"; shift 2 ;;
    --module) case $2 in ''|*[!A-Za-z0-9_-]*) die "--module: bad name $2" ;; esac
              modules="$modules $2"; shift 2 ;;
    --rdma) rdma=1; shift ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --mem) mem=$2; shift 2 ;;
    --smp) smp=$2; shift 2 ;;
    --append) append="$append $2"; shift 2 ;;
    --accel) accel=$2; shift 2 ;;
    --log) log=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --kernel) kernel=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    -h|--help) sed -n '2,/^set -eu/p' "$0" | sed -e '$d' -e 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    -*) die "unknown option: $1" ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || die "usage: run-vm.sh [options] SCRIPT [ARG...] (--help)"
script=$1; shift
[ -f "$script" ] || die "no such guest script: $script"
name=$(basename "$script"); name=${name%.sh}

command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 not found (Debian package qemu-system-x86)"
command -v busybox >/dev/null || die "busybox not found (Debian package busybox-static)"
busybox_path=$(command -v busybox)
if ldd "$busybox_path" >/dev/null 2>&1; then die "$busybox_path is not static (install busybox-static)"; fi

mkdir -p "$cache"
cache=$(cd "$cache" && pwd)
fetch_args="--cache $cache"
[ -n "$kernel" ] && fetch_args="$fetch_args --kernel $kernel"
[ $rdma = 1 ] && fetch_args="$fetch_args --rdma-userspace"
for m in $modules; do fetch_args="$fetch_args --module $m"; done
BERTH_VM_KVER=; BERTH_VM_KDIR=; BERTH_VM_KERNEL=; BERTH_VM_IBROOT=
# shellcheck disable=SC2086
eval "$("$here/fetch-kernel.sh" $fetch_args --env)" || die "fetch-kernel.sh failed"
kver=$BERTH_VM_KVER; kdir=$BERTH_VM_KDIR; ibroot=$BERTH_VM_IBROOT

work=$(mktemp -d "${TMPDIR:-/tmp}/berth-vm.XXXXXX")
cleanup() { if [ $keep = 1 ]; then say "kept $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
trap 'exit 130' INT TERM
root=$work/root

# --- the initramfs tree (usr-merged like Debian: /bin /sbin /lib /lib64 point into /usr)
mkdir -p "$root"/usr/bin "$root"/usr/sbin "$root"/usr/lib "$root"/usr/lib64 \
  "$root"/proc "$root"/sys "$root"/dev "$root"/run "$root"/tmp "$root"/newroot "$root"/vm \
  "$root"/etc "$root"/root "$root"/var "$root"/mnt
for d in bin sbin lib lib64; do ln -s "usr/$d" "$root/$d"; done
ln -s ../run "$root/var/run"
chmod 1777 "$root/tmp"

# put FILE at the same path in the guest (resolving symlinks of the source)
put() { # SRC [DST]
  dst=$root${2:-$1}
  mkdir -p "$(dirname "$dst")"
  cp -L "$1" "$dst"
}
# a host (or extracted) ELF file plus its shared libraries. PREFIX, when set, is a folder
# whose contents map to / in the guest (the extracted rdma userspace).
put_elf() { # SRC GUESTPATH [PREFIX]
  put "$1" "$2"
  libpath=
  [ -n "${3:-}" ] && libpath=$3/usr/lib/x86_64-linux-gnu
  LD_LIBRARY_PATH=$libpath ldd "$1" 2>/dev/null | while read -r a b c _; do
    case $a in
      /*) lib=$a ;;                                  # /lib64/ld-linux-x86-64.so.2 (0x...)
      *) [ "$b" = "=>" ] || continue
         case $c in /*) lib=$c ;; *) say "warning: $1: $a not found by ldd"; continue ;; esac ;;
    esac
    gpath=$lib
    [ -n "${3:-}" ] && case $lib in "$3"/*) gpath=${lib#"$3"} ;; esac
    [ -e "$root$gpath" ] || put "$lib" "$gpath"
  done
}

put "$busybox_path" /usr/bin/busybox

printf '%s' "$bins" | while IFS= read -r b; do
  [ -n "$b" ] || continue
  case $b in /*) ;; *) b=$(command -v "$b" || echo "$b") ;; esac
  [ -f "$b" ] || die "--bin $b: no such file"
  put_elf "$b" "$b"
done

if [ $rdma = 1 ]; then
  [ -n "$ibroot" ] && [ -d "$ibroot" ] || die "rdma userspace missing in the cache"
  for b in ip rdma; do
    p=$(command -v "$b" || true)
    [ -n "$p" ] || die "$b not found on the host (Debian package iproute2)"
    put_elf "$p" "/usr/sbin/$b"
  done
  for b in ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong; do
    put_elf "$ibroot/usr/bin/$b" "/usr/bin/$b" "$ibroot"
  done
  put "$ibroot/etc/libibverbs.d/rxe.driver" /etc/libibverbs.d/rxe.driver
  prov=$(ls "$ibroot"/usr/lib/x86_64-linux-gnu/libibverbs/librxe-*.so | head -n 1)
  [ -n "$prov" ] || die "librxe provider missing in $ibroot"
  put_elf "$prov" "${prov#"$ibroot"}" "$ibroot"
fi

printf '%s' "$files" | while IFS= read -r f; do
  [ -n "$f" ] || continue
  src=${f%%:*}; dst=${f#*:}
  [ "$src" != "$f" ] && [ -n "$dst" ] || die "--file wants SRC:DST, got $f"
  [ -e "$src" ] || die "--file $src: no such file"
  mkdir -p "$(dirname "$root$dst")"
  cp -a "$src" "$root$dst"
done

printf '%s' "$bundles" | while IFS= read -r b; do
  [ -n "$b" ] || continue
  src=${b%%:*}; dst=/bundle
  [ "$src" != "$b" ] && dst=${b#*:}
  [ -f "$src/config.json" ] && [ -d "$src/rootfs" ] || die "--bundle $src: not a bundle (config.json, rootfs/)"
  mkdir -p "$(dirname "$root$dst")"
  cp -a "$src" "$root$dst"
done

# busybox applets for everything that is not already there (copied binaries win)
busybox --list-full | while read -r a; do
  [ -e "$root/$a" ] || [ -L "$root/$a" ] || ln -s /usr/bin/busybox "$root/$a"
done

# kernel modules (all of the cache's selection; loading is the init's business)
mkdir -p "$root/usr/lib/modules"
cp -a "$kdir/root/lib/modules/$kver" "$root/usr/lib/modules/"

printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' > "$root/etc/passwd"
printf 'root:x:0:\ntty:x:5:\nnogroup:x:65534:\n' > "$root/etc/group"
printf '127.0.0.1 localhost berth-vm\n::1 localhost\n' > "$root/etc/hosts"
echo berth-vm > "$root/etc/hostname"

cp "$script" "$root/vm/script"; chmod 755 "$root/vm/script"
cp "$here/guest/lib.sh" "$root/vm/lib.sh"

# arguments and environment, shell-quoted
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
: > "$root/vm/args"
for a in "$@"; do printf '%s ' "$(q "$a")" >> "$root/vm/args"; done
{
  printf 'export VM_RDMA=%s\n' "$rdma"
  printf 'export VM_MODULES=%s\n' "$(q "$modules")"
  printf '%s' "$envs" | while IFS= read -r e; do
    [ -n "$e" ] || continue
    n=${e%%=*}
    case $n in ''|*[!A-Za-z0-9_]*|[0-9]*) die "--env: bad name in $e" ;; esac
    printf 'export %s=%s\n' "$n" "$(q "${e#*=}")"
  done
} > "$root/vm/env"

cat > "$root/init" <<'EOF'
#!/bin/busybox sh
# stage 1: copy the initramfs into a tmpfs and switch_root into it
/bin/busybox mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
/bin/busybox mount -t tmpfs -o mode=0755 tmpfs /newroot
for e in /*; do
  case $e in /newroot|/dev|/proc|/sys|/init) ;; *) /bin/busybox cp -a "$e" /newroot/ ;; esac
done
/bin/busybox mkdir -p /newroot/dev /newroot/proc /newroot/sys
/bin/busybox mount --move /dev /newroot/dev
exec /bin/busybox switch_root /newroot /vm/init
echo "@@BERTH-VM-EXIT rc=125@@ switch_root failed"
/bin/busybox poweroff -f
EOF

cat > "$root/vm/init" <<'EOF'
#!/bin/sh
# stage 2: PID 1 on the tmpfs root
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
mount -t proc proc /proc
mount -t sysfs sysfs /sys
grep -q '^[^ ]* /dev ' /proc/mounts || mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm /dev/mqueue
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t mqueue mqueue /dev/mqueue
# A --bin copied under /tmp or /run (a build tree there) must stay visible: those get their
# own tmpfs only when empty. The root is a tmpfs already, so they are writable either way.
[ -n "$(ls -A /tmp)" ] || mount -t tmpfs -o mode=1777 tmpfs /tmp
[ -n "$(ls -A /run)" ] || mount -t tmpfs -o mode=0755 tmpfs /run
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
echo 1 > /proc/sys/kernel/printk        # keep kernel messages off the test output (see dmesg)
hostname berth-vm
ip link set lo up
. /vm/env
fatal() { echo "vm-init: $*"; echo; echo "@@BERTH-VM-EXIT rc=125@@"; poweroff -f; }

ctl="+cpu +memory +pids +io"
grep -qw rdma /sys/fs/cgroup/cgroup.controllers && ctl="$ctl +rdma"
echo "$ctl" > /sys/fs/cgroup/cgroup.subtree_control || fatal "cannot enable $ctl"

if [ "$VM_RDMA" = 1 ]; then
  for m in crc32_generic configfs ib_core ib_uverbs ib_umad rdma_cm rdma_ucm rdma_rxe veth; do
    modprobe "$m" || fatal "modprobe $m failed"
  done
fi

for m in $VM_MODULES; do modprobe "$m" || fatal "modprobe $m failed"; done

eval "set -- $(cat /vm/args)"
cd /tmp
echo "@@BERTH-VM-BEGIN uptime=$(cut -d' ' -f1 /proc/uptime)@@"
/vm/script "$@"
rc=$?
echo
echo "@@BERTH-VM-EXIT rc=$rc uptime=$(cut -d' ' -f1 /proc/uptime)@@"
if [ $rc != 0 ]; then
  echo "--- guest dmesg (last 30 lines)"
  dmesg | tail -n 30
fi
echo "@@BERTH-VM-END@@"
poweroff -f
EOF
chmod 755 "$root/init" "$root/vm/init"

initrd=$work/initrd.cpio
(cd "$root" && find . | busybox cpio -o -H newc 2>/dev/null) > "$initrd" || die "cpio failed"

# --- boot
case $accel in tcg) cpu= ;; kvm) cpu="-cpu host" ;; *) die "--accel: tcg or kvm, not $accel" ;; esac
if [ -z "$log" ]; then mkdir -p "$cache/logs"; log=$cache/logs/$name.console.log; fi
mkdir -p "$(dirname "$log")"
: > "$log"
t0=$(date +%s.%N)
rc=0
# shellcheck disable=SC2086
timeout --foreground -k 5 "$timeout_s" qemu-system-x86_64 -nodefaults -no-user-config \
  -accel "$accel" $cpu -m "$mem" -smp "$smp" -display none -no-reboot \
  -serial "file:$log" -kernel "$BERTH_VM_KERNEL" -initrd "$initrd" \
  -append "console=ttyS0 panic=-1 quiet cgroup_no_v1=all$append" </dev/null || rc=$?
t1=$(date +%s.%N)
wall=$(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }")

# --- report
out=$(tr -d '\r' < "$log")
if ! printf '%s\n' "$out" | grep -q '^@@BERTH-VM-BEGIN'; then
  printf '%s\n' "$out" | tail -n 40
  if [ $rc = 124 ] || [ $rc = 137 ]; then say "timeout after ${timeout_s}s before the script started"; exit 124; fi
  say "the guest never started the script (qemu rc=$rc; console log $log)"
  exit 125
fi
printf '%s\n' "$out" | sed -n '/^@@BERTH-VM-BEGIN/,/^@@BERTH-VM-EXIT/{/^@@BERTH-VM-/d;p}'
exit_line=$(printf '%s\n' "$out" | grep '^@@BERTH-VM-EXIT' | tail -n 1 || true)
if [ -z "$exit_line" ]; then
  if [ $rc = 124 ] || [ $rc = 137 ]; then say "timeout after ${timeout_s}s (wall ${wall}s; console log $log)"; exit 124; fi
  say "the guest died without an exit marker (qemu rc=$rc; console log $log)"
  exit 125
fi
grc=$(printf '%s\n' "$exit_line" | sed -n 's/^@@BERTH-VM-EXIT rc=\([0-9]*\).*/\1/p')
printf '%s\n' "$out" | sed -n '/^@@BERTH-VM-EXIT/,/^@@BERTH-VM-END/{/^@@BERTH-VM-/d;p}'
t_begin=$(printf '%s\n' "$out" | sed -n 's/^@@BERTH-VM-BEGIN uptime=\([0-9.]*\)@@.*/\1/p')
t_end=$(printf '%s\n' "$exit_line" | sed -n 's/.*uptime=\([0-9.]*\)@@.*/\1/p')
say "$name: exit $grc; guest boot ${t_begin:-?}s, script ${t_end:+$(awk "BEGIN { printf \"%.1f\", $t_end - $t_begin }")}s; host wall ${wall}s ($accel)"
exit "${grc:-125}"
