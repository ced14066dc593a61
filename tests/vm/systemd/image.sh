#!/bin/sh
# image.sh: the systemd guest for the vm-systemd suites: a Debian 12 (bookworm) userland
# with systemd 252 as PID 1 on pure cgroup v2, runc 1.1, Debian's 6.1 kernel, booted by
# qemu under TCG. The rootfs and kernel are built once per build dir (debootstrap, ~2 min)
# and reused; each call then installs the berth binary and the guest suite and remakes the
# initrd and the ext4 image (a few seconds).
#
#   image.sh WORK BERTH [engines]   WORK: cache folder; BERTH: the berth binary to install;
#                                   engines: the second variant (engines_image below)
#   image.sh WORK - prepare         only the cached parts of both variants (rootfs, kernel,
#                                   rootfs-engines, the engines' images): tests/run-all.sh
#                                   makes them while berth builds, so no suite waits on them
#
# Environment: BERTH_VM_MIRROR (default: the mirror the host's apt uses); BERTH_VM_BERTH2: a
# second berth build, installed as /usr/local/bin/berth2 (the probe suite compares the two).
# Host needs (as root): debootstrap e2fsprogs qemu-system-x86 xz-utils; no KVM, no loop
# mounts, no systemd on the host. Exit 77 with the reason when something is missing.
set -eu

W=$1
BERTH=$2
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$W/rootfs
MIRROR=${BERTH_VM_MIRROR:-$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)}
[ -n "$MIRROR" ] || MIRROR=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
# minbase + what the suite needs; no docker/containerd here (they add ~10 s of boot)
PKGS=systemd,systemd-sysv,dbus,kmod,runc,busybox-static,procps,libmnl0
# seal slice: crun for the systemd bench, dbus-user-session for the user bus (systemdUser)
PKGS=$PKGS,crun,dbus-user-session
PRUNE="sound drivers/gpu drivers/media drivers/net drivers/scsi drivers/usb drivers/iio
drivers/staging drivers/comedi drivers/hwmon drivers/infiniband drivers/md net/wireless"

say() { printf 'vm-systemd: %s\n' "$*" >&2; }
skip() { say "SKIP: $*"; exit 77; }
die() { say "error: $*"; exit 1; }
now() { date +%s; }

[ "$(id -u)" = 0 ] || skip "not root (debootstrap and chroot need it)"
for c in debootstrap mkfs.ext4 qemu-system-x86_64 dpkg-deb gzip chroot xz; do
  command -v $c >/dev/null || skip "$c not found (apt-get install debootstrap e2fsprogs qemu-system-x86 xz-utils)"
done
[ "${3:-}" = prepare ] || [ -x "$BERTH" ] || die "no berth binary at $BERTH"
mkdir -p "$W"

rootfs() {
  # the marker holds the package list: a cache made from another list is made again
  [ -f "$ROOT/.debootstrap-done" ] && [ "$(cat "$ROOT/.debootstrap-done")" = "$PKGS" ] && return
  [ -n "$MIRROR" ] || skip "no Debian mirror known (set BERTH_VM_MIRROR)"
  t=$(now); rm -rf "$ROOT"
  say "debootstrap bookworm from $MIRROR (once per build dir)"
  nice debootstrap --variant=minbase --include="$PKGS" bookworm "$ROOT" "$MIRROR" > "$W/debootstrap.log" 2>&1 ||
    { tail -n 20 "$W/debootstrap.log" >&2; die "debootstrap failed (log: $W/debootstrap.log)"; }
  chroot "$ROOT" apt-get clean
  echo "$PKGS" > "$ROOT/.debootstrap-done"
  say "debootstrap: $(( $(now) - t ))s"
}

kernel() {
  [ -f "$W/boot/abi" ] && [ -f "$W/boot/vmlinux" ] && return
  t=$(now)
  abi=$(chroot "$ROOT" apt-cache depends linux-image-amd64 2>/dev/null |
        sed -n 's/^ *Depends: linux-image-\(6\.[0-9.]*-[0-9]*-amd64\)$/\1/p' | head -n 1)
  [ -n "$abi" ] || die "cannot find the kernel ABI in the rootfs's apt lists"
  mkdir -p "$W/boot"
  chroot "$ROOT" sh -c "cd /tmp && apt-get -q download linux-image-$abi" >&2 || die "kernel download failed"
  kx=$W/kx; rm -rf "$kx"; mkdir -p "$kx"
  dpkg-deb -x "$ROOT"/tmp/linux-image-"$abi"_*.deb "$kx"
  rm -f "$ROOT"/tmp/linux-image-*.deb
  src=$kx/lib/modules/$abi; [ -d "$src" ] || src=$kx/usr/lib/modules/$abi
  rm -rf "$ROOT/usr/lib/modules/$abi"; mkdir -p "$ROOT/usr/lib/modules"
  cp -a "$src" "$ROOT/usr/lib/modules/"   # usr-merged: into usr/lib, not through /lib
  # PRUNE drops drivers/net, but CRIU's kernel probe opens tun (criu_bits): kept here, so
  # that criu_bits need not download the kernel package a second time
  tun=$ROOT/usr/lib/modules/$abi/kernel/drivers/net/tun.ko
  [ -f "$tun" ] && mv "$tun" "$W/tun.ko"
  for d in $PRUNE; do rm -rf "$ROOT/usr/lib/modules/$abi/kernel/$d"; done
  [ -f "$W/tun.ko" ] && mkdir -p "$(dirname "$tun")" && mv "$W/tun.ko" "$tun"
  chroot "$ROOT" depmod -a "$abi" || die "depmod failed"
  # qemu boots the ELF vmlinux through its PVH entry: no seconds of xz under TCG
  z=$kx/boot/vmlinuz-$abi
  off=$(LC_ALL=C grep -obUa "$(printf '\3757zXZ')" "$z" | head -n 1 | cut -d: -f1)
  [ -n "$off" ] || die "no xz payload in $z"
  tail -c +$((off + 1)) "$z" | xz -dc > "$W/boot/vmlinux" 2>/dev/null || true
  [ "$(head -c 4 "$W/boot/vmlinux" | od -An -c | tr -d ' ')" = 177ELF ] || die "cannot unpack vmlinux"
  rm -rf "$kx"
  echo "$abi" > "$W/boot/abi"
  say "kernel $abi: $(( $(now) - t ))s"
}

initrd() {
  abi=$(cat "$W/boot/abi")
  ir=$W/initrd; rm -rf "$ir"; mkdir -p "$ir/bin" "$ir/dev" "$ir/proc" "$ir/sys" "$ir/newroot" "$ir/mod"
  cp "$ROOT/bin/busybox" "$ir/bin/busybox"
  mknod -m 600 "$ir/dev/console" c 5 1
  chroot "$ROOT" modprobe -S "$abi" -a --show-depends virtio_pci virtio_blk ext4 crc32c_generic |
    awk '$1 == "insmod" && !seen[$2]++ { print $2 }' | while read -r p; do
      cp "$ROOT$p" "$ir/mod/"; echo "/mod/$(basename "$p")" >> "$ir/mod/order"
    done
  cat > "$ir/init" <<'INIT'
#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc
$B mount -t sysfs sysfs /sys
$B mount -t devtmpfs devtmpfs /dev
while read -r m; do $B insmod "$m" 2>/dev/null; done < /mod/order
i=0; while [ ! -b /dev/vda ] && [ $i -lt 300 ]; do $B sleep 0.1; i=$((i + 1)); done
$B mount -t ext4 -o rw /dev/vda /newroot || { echo "initrd: cannot mount /dev/vda"; $B poweroff -f; }
$B mount --move /dev /newroot/dev
$B umount /proc /sys
exec $B switch_root /newroot /sbin/init
INIT
  chmod 755 "$ir/init"
  (cd "$ir" && find . | "$ROOT/bin/busybox" cpio -o -H newc 2>/dev/null) | gzip -1 > "$W/boot/initrd.gz"
  rm -rf "$ir"
}

configure() {
  R=$ROOT
  echo sysvm > "$R/etc/hostname"
  printf '127.0.0.1 localhost sysvm\n' > "$R/etc/hosts"
  printf '/dev/vda / ext4 rw,relatime 0 0\n' > "$R/etc/fstab"
  # the console carries the results: no getty on it; no timers during the test
  chroot "$R" systemctl mask serial-getty@ttyS0.service getty@tty1.service apt-daily.timer \
    apt-daily-upgrade.timer dpkg-db-backup.timer e2scrub_all.timer fstrim.timer >/dev/null 2>&1
  chroot "$R" systemctl set-default multi-user.target >/dev/null 2>&1
  # A user manager (the rootless steps' user session) needs XDG_RUNTIME_DIR, which
  # pam_systemd would set; minbase has no libpam-systemd, so the unit sets it.
  mkdir -p "$R/etc/systemd/system/user@.service.d"
  printf '[Service]\nEnvironment=XDG_RUNTIME_DIR=/run/user/%%i\n' > "$R/etc/systemd/system/user@.service.d/berth-xdg.conf"
  install -m 755 "$BERTH" "$R/usr/local/bin/berth"
  install -m 755 "$here/guest-suite.sh" "$R/usr/local/sbin/vm-systemd-suite"
  install -m 644 "$here/guest-fail.sh" "$R/usr/local/sbin/vm-systemd-fail"
  mkdir -p "$R/usr/local/lib"; install -m 644 "$here/guest-lib.sh" "$R/usr/local/lib/vm-systemd-lib.sh"
  rm -rf "$R/opt/bb"; mkdir -p "$R/opt/bb/bin" "$R/opt/bb/proc" "$R/opt/bb/sys" "$R/opt/bb/dev" "$R/opt/bb/tmp"
  cp "$R/bin/busybox" "$R/opt/bb/bin/busybox"
  for a in sh sleep true cat; do ln -sf busybox "$R/opt/bb/bin/$a"; done
  cat > "$R/etc/systemd/system/vm-test.service" <<'UNIT'
[Unit]
Description=berth vm-systemd suite (results on ttyS0, then power off)
After=multi-user.target
# in [Unit]: in [Service] SuccessAction= is ignored and the VM would not power off
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
# not oneshot: "systemctl is-system-running --wait" in the suite would wait for itself
Type=simple
ExecStart=/usr/local/sbin/vm-systemd-suite
StandardOutput=tty
StandardError=inherit
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no

[Install]
WantedBy=multi-user.target
UNIT
  chroot "$R" systemctl enable vm-test.service >/dev/null 2>&1
  # seal slice: the seal and bench suites (disk.sh), the install seal, the systemd bench
  mkdir -p "$R/usr/local/share/berth/systemd"
  install -m 644 "$here/../../../contrib/systemd/usr-local-bin-berth.mount" "$R/usr/local/share/berth/systemd/"
  install -m 755 "$here/../../../contrib/systemd/install-seal.sh" "$R/usr/local/share/berth/systemd/"
  install -m 755 "$here/../../../contrib/bench/systemd.sh" "$R/usr/local/sbin/berth-bench-systemd"
  # both cgroup drivers side by side (contrib/bench/drivers.sh) with the timing loop built
  # static here (the guest has no compiler)
  B=$R/usr/local/share/berth/bench; mkdir -p "$B"
  install -m 755 "$here/../../../contrib/bench/drivers.sh" "$B/drivers.sh"
  install -m 644 "$here/../../../contrib/bench/docker-config.json.in" "$B/"
  install -m 644 "$here/../../../tests/fixtures/seccomp/docker-default-seccomp.json" "$B/"
  if command -v cc >/dev/null; then
    cc -O2 -static -o "$B/driver" "$here/../../../contrib/bench/driver.c" || die "cc -static driver.c failed (libc6-dev)"
  fi
  # the probe suite (disk.sh --suite probe): the kernel's floor, rusage of each call and, where the host has
  # strace, the syscalls of each (the guest's package list has no strace: the host's, with
  # the libraries ldd names, as criu_put copies CRIU)
  if command -v cc >/dev/null; then
    cc -O2 -static -o "$B/rusage" "$here/../../../contrib/bench/rusage.c" || die "cc -static rusage.c failed (libc6-dev)"
    cc -O2 -static -o "$B/floor" "$here/../../../contrib/bench/floor.c" || die "cc -static floor.c failed (libc6-dev)"
  fi
  s=$(command -v strace || true); [ -n "$s" ] && criu_put "$s"
  install -m 755 "$here/guest-probe.sh" "$R/usr/local/sbin/vm-systemd-probe"
  rm -f "$R/usr/local/bin/berth2"
  [ -n "${BERTH_VM_BERTH2:-}" ] && install -m 755 "$BERTH_VM_BERTH2" "$R/usr/local/bin/berth2"
  install -m 755 "$here/guest-seal.sh" "$R/usr/local/sbin/vm-systemd-seal"
  install -m 755 "$here/guest-bench.sh" "$R/usr/local/sbin/vm-systemd-bench"
}

# --- criu3 (checkpoint/restore with --systemd-cgroup): the host's CRIU and legacy iptables
# (CRIU locks the network with iptables-restore), with their libraries (the criu package
# would pull in python3), and tun.ko, which CRIU's kernel probe opens (PRUNE drops
# drivers/net). Skipped when the host has no criu.
criu_put() { # host ELF, copied with the libraries ldd names
  mkdir -p "$ROOT$(dirname "$1")"; cp -L "$1" "$ROOT$1"
  ldd "$1" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | while read -r l; do
    [ -e "$ROOT$l" ] || { mkdir -p "$ROOT$(dirname "$l")"; cp -L "$l" "$ROOT$l"; }
  done
}
criu_bits() {
  install -m 644 "$here/guest-criu.sh" "$ROOT/usr/local/sbin/vm-systemd-criu"
  c=$(command -v criu || true); [ -n "$c" ] || return 0
  criu_put "$c"
  x=/usr/sbin/xtables-legacy-multi
  # without it CRIU's network lock (iptables-restore) fails every dump in the guest
  [ -f $x ] || say "criu: no $x on the host (apt-get install iptables): checkpoints in the guest will fail"
  if [ -f $x ]; then
    criu_put $x
    cp -a /usr/lib/x86_64-linux-gnu/xtables "$ROOT/usr/lib/x86_64-linux-gnu/"
    for n in iptables iptables-restore ip6tables ip6tables-restore; do ln -sf xtables-legacy-multi "$ROOT/usr/sbin/$n"; done
  fi
  abi=$(cat "$W/boot/abi")
  m=$ROOT/usr/lib/modules/$abi/kernel/drivers/net/tun.ko
  [ -f "$m" ] && return 0
  chroot "$ROOT" sh -c "cd /tmp && apt-get -q download linux-image-$abi" >&2 || die "criu: kernel download failed"
  kx=$W/kx-criu; rm -rf "$kx"; mkdir -p "$kx"
  dpkg-deb -x "$ROOT"/tmp/linux-image-"$abi"_*.deb "$kx"; rm -f "$ROOT"/tmp/linux-image-*.deb
  src=$kx/lib/modules/$abi; [ -d "$src" ] || src=$kx/usr/lib/modules/$abi
  mkdir -p "$(dirname "$m")"; cp "$src/kernel/drivers/net/tun.ko" "$m"; rm -rf "$kx"
  chroot "$ROOT" depmod -a "$abi" || die "depmod failed"
}
# --- end criu3

# --- engines variant (vm-systemd-engines.*): docker.io, containerd, podman and the CRI
# client's python3-grpcio on a copy of the cached rootfs (rootfs-engines, built once per build
# dir), the busybox images and CRI stubs of tests/ecosystem/cri made here on the host, and
# engines-suite.sh as the guest suite; image-engines.ext4. The base image is not touched.
engines_cached() {  # what engines_image reuses across calls: rootfs-engines, the images
  E=$W/rootfs-engines; eco=$here/../../ecosystem/cri
  for c in umoci skopeo protoc grpc_python_plugin busybox; do
    command -v $c >/dev/null || skip "$c not found (apt-get install umoci skopeo protobuf-compiler protobuf-compiler-grpc busybox-static)"
  done
  # rebuilt when the base rootfs was (its .debootstrap-done is newer)
  if [ ! "$E/.engines-done" -nt "$ROOT/.debootstrap-done" ]; then
    t=$(now); rm -rf "$E"; cp -a "$ROOT" "$E"
    printf '#!/bin/sh\nexit 101\n' > "$E/usr/sbin/policy-rc.d"; chmod 755 "$E/usr/sbin/policy-rc.d"
    nice chroot "$E" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      docker.io containerd podman python3-grpcio python3-protobuf > "$W/engines-apt.log" 2>&1 ||
      { tail -n 20 "$W/engines-apt.log" >&2; die "apt-get install in rootfs-engines failed"; }
    rm -f "$E/usr/sbin/policy-rc.d"; chroot "$E" apt-get clean
    touch "$E/.engines-done"; say "rootfs-engines: $(( $(now) - t ))s"
  fi
  if [ ! -f "$W/engines-images/busybox.tar" ]; then
    "$eco/build-images.sh" "$W/engines-images" > "$W/engines-images.log" 2>&1 || die "build-images.sh (log: $W/engines-images.log)"
  fi
}

engines_image() {
  engines_cached
  ROOT=$E; configure   # the suite and the berth binary, as in the base image
  criu_bits            # criu4: CRIU for podman's checkpoint/restore (a copy older than criu3's lacks it)
  mkdir -p "$E/opt/engines"; rm -rf "$E/opt/engines/cri" "$E/opt/engines/images"
  "$eco/gen-stubs.sh" "$E/opt/engines/cri/gen" > "$W/engines-stubs.log" 2>&1 || die "gen-stubs.sh (log: $W/engines-stubs.log)"
  cp "$eco/cri_lib.py" "$eco/scenario.py" "$eco/containerd.toml.in" "$E/opt/engines/cri/"
  cp -r "$W/engines-images" "$E/opt/engines/images"
  install -m 755 "$here/engines-suite.sh" "$E/usr/local/sbin/vm-systemd-suite"
  # dockerd with its default (systemd) driver made explicit, berth a runtime beside runc; no
  # bridge network (the guest kernel has no veth, and docker0's iptables rules cost ~6 s of boot)
  mkdir -p "$E/etc/docker"
  printf '{"exec-opts": ["native.cgroupdriver=systemd"], "bridge": "none", "iptables": false,\n "runtimes": {"berth": {"path": "/usr/local/bin/berth"}}}\n' \
    > "$E/etc/docker/daemon.json"
  initrd
  rm -f "$W/image-engines.ext4"
  mkfs.ext4 -q -F -L sysvm -d "$E" "$W/image-engines.ext4" 3G || die "mkfs.ext4 -d failed"
}

t=$(now)
rootfs
kernel
criu_bits
if [ "${3:-}" = prepare ]; then engines_cached; say "caches ready: $(( $(now) - t ))s"; exit 0; fi
if [ "${3:-}" = engines ]; then engines_image; say "engines image ready: $(( $(now) - t ))s"; exit 0; fi
configure
initrd
rm -f "$W/image.ext4"
mkfs.ext4 -q -F -L sysvm -d "$ROOT" "$W/image.ext4" 2G || die "mkfs.ext4 -d failed"
say "image ready: $(( $(now) - t ))s"
