#!/bin/sh
# run.sh: the vm-systemd suite for one runtime: (re)make the systemd guest (image.sh; the
# rootfs and kernel are cached in WORK), boot it under qemu TCG with the runtime named on the
# kernel command line, print the guest's lines and exit with its verdict.
#
#   run.sh --runtime berth|runc --berth PATH [--work DIR] [--timeout S] [--variant engines]
#          [--append WORDS]
#
# --variant engines: the second image (image.sh's engines variant: docker, containerd, podman,
# the CRI client) and its suite, engines-suite.sh; booted with apparmor=0 (the image has no
# apparmor_parser, without which dockerd refuses every container) and 2 GiB.
# --append: more words for the guest's kernel command line, read by the suites (e.g. the
# engines suite's vmsd.oomloop=N[,B[,HOG[,DRIVER]]]: only the CRI's OOM check, N times).
#
# Exit: 0 pass, 1 fail, 77 skipped (reason printed: not root, no qemu/debootstrap, no
# mirror), 124 timeout, 125 no result from the guest.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rt=; berth=; work=; timeout_s=900; variant=; append=
while [ $# -gt 0 ]; do
  case $1 in
    --runtime) rt=$2; shift 2 ;;
    --berth) berth=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    --variant) variant=$2; shift 2 ;;
    --append) append=$2; shift 2 ;;
    *) echo "usage: $0 --runtime berth|runc --berth PATH [--work DIR] [--timeout S] [--variant engines] [--append WORDS]" >&2; exit 2 ;;
  esac
done
[ -n "$rt" ] && [ -n "$berth" ] || { echo "run.sh: --runtime and --berth are required" >&2; exit 2; }
[ -n "$work" ] || work=$(cd "$(dirname "$berth")" && pwd)/vm-systemd
mkdir -p "$work"
log=$work/console.$rt.log; image=$work/image.ext4; mem=1536; extra=
case $variant in
  '') ;;
  engines) log=$work/console-engines.$rt.log; image=$work/image-engines.ext4; mem=2048; extra=apparmor=0 ;;
  *) echo "run.sh: --variant engines (or none)" >&2; exit 2 ;;
esac

# One image per build dir; the two runtimes' runs may start together.
rc=0
flock "$work/.lock" "$here/image.sh" "$work" "$berth" $variant || rc=$?
[ $rc = 0 ] || exit $rc

: > "$log"
t=$(date +%s)
# no_timer_check: on a loaded host the TCG guest's timer can miss the kernel's IO-APIC check,
# which then panics ("IO-APIC + timer doesn't work"); seen here at load 12.
nice qemu-system-x86_64 -nodefaults -no-user-config -accel tcg -m $mem -smp 2 -display none -no-reboot \
  -serial "file:$log" -kernel "$work/boot/vmlinux" -initrd "$work/boot/initrd.gz" \
  -append "console=ttyS0 root=/dev/vda rw panic=-1 quiet no_timer_check systemd.unified_cgroup_hierarchy=1 vmsd.runtime=$rt $extra $append" \
  -drive "file=$image,format=raw,if=virtio,cache=unsafe" -snapshot </dev/null &
qpid=$!
trap 'kill $qpid 2>/dev/null; exit 130' INT TERM
result_at=
while kill -0 $qpid 2>/dev/null; do
  if [ -z "$result_at" ] && grep -q '^VMTEST: RESULT:' "$log"; then result_at=$(date +%s); fi
  # the guest powers off after its result; give it 60 s, then stop qemu
  if [ -n "$result_at" ] && [ $(( $(date +%s) - result_at )) -ge 60 ]; then kill $qpid; break; fi
  if [ $(( $(date +%s) - t )) -ge "$timeout_s" ]; then echo "vm-systemd: timeout after ${timeout_s}s" >&2; kill $qpid; rc=124; break; fi
  sleep 1
done
wait $qpid 2>/dev/null || true
tr -d '\r' < "$log" | sed -n 's/^VMTEST: //p'
echo "vm-systemd: $rt: qemu wall $(( $(date +%s) - t ))s" >&2
if tr -d '\r' < "$log" | grep -q '^VMTEST: RESULT: PASS'; then exit 0; fi
if tr -d '\r' < "$log" | grep -q '^VMTEST: RESULT: FAIL'; then exit 1; fi
tr -d '\r' < "$log" | tail -n 40
[ $rc = 124 ] && exit 124
echo "vm-systemd: no result on the console" >&2
exit 125
