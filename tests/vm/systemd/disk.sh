#!/bin/sh
# disk.sh: a vm-systemd suite that needs the guest's disk to persist (no -snapshot): boots a
# copy of the systemd guest's image (image.sh) with vmsd.suite=SUITE on the kernel command
# line, as many times as the suite needs, and exits with its verdict.
#   seal:  two boots of the same disk: the first installs the install seal (the mount unit
#          of contrib/systemd) and powers off, the second checks it was made at boot
#          (guest-seal.sh);
#   bench: one boot: create+start+delete with --systemd-cgroup for berth, runc and crun
#          (contrib/bench/systemd.sh, via guest-bench.sh), both cgroup drivers side by side
#          (contrib/bench/drivers.sh) and berth's systemd-driver cycle call by call;
#          BERTH_VM_BENCH="vmsd.cycles=N vmsd.rounds=N" sizes it (15 and 20 by default);
#   probe: one boot: berth and crun call by call under the cgroupfs driver (rusage, strace,
#          --debug; guest-probe.sh), a few minutes; BERTH_VM_BENCH="vmsd.probe=N" sizes it (9),
#          "vmsd.strace=0" leaves strace out; --berth2 PATH: a second build beside the first.
#
#   disk.sh --suite seal|bench|probe --berth PATH [--berth2 PATH] [--work DIR] [--timeout S]   (S: per boot;
#          900 for seal, 1500 for bench, 900 for probe)
#
# Exit: 0 pass, 1 fail, 77 skipped (reason printed), 124 timeout, 125 no result.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
suite=; berth=; berth2=; work=; timeout_s=
while [ $# -gt 0 ]; do
  case $1 in
    --suite) suite=$2; shift 2 ;;
    --berth) berth=$2; shift 2 ;;
    --berth2) berth2=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --timeout) timeout_s=$2; shift 2 ;;
    *) echo "usage: $0 --suite seal|bench|probe --berth PATH [--berth2 PATH] [--work DIR] [--timeout S]" >&2; exit 2 ;;
  esac
done
# bench: three runtimes under two drivers, 10-12 minutes under TCG on a loaded host
case $suite in
  seal) boots=2; : "${timeout_s:=900}" ;;
  bench) boots=1; : "${timeout_s:=1500}" ;;
  probe) boots=1; : "${timeout_s:=900}" ;;
  *) echo "disk.sh: --suite seal|bench|probe" >&2; exit 2 ;;
esac
[ -n "$berth" ] || { echo "disk.sh: --berth is required" >&2; exit 2; }
[ -n "$work" ] || work=$(cd "$(dirname "$berth")" && pwd)/vm-systemd
mkdir -p "$work"
rc=0
img_berth=$berth
if [ $suite != seal ] && command -v strip >/dev/null; then
  # benched as contrib/setup.sh installs it: stripped (the guest seals it, guest-bench.sh)
  strip -o "$work/berth.stripped" "$berth" && img_berth=$work/berth.stripped
fi
BERTH_VM_BERTH2=
if [ -n "$berth2" ]; then
  [ $suite = probe ] || { echo "disk.sh: --berth2 is for the probe suite" >&2; exit 2; }
  BERTH_VM_BERTH2=$berth2
  command -v strip >/dev/null && strip -o "$work/berth2.stripped" "$berth2" && BERTH_VM_BERTH2=$work/berth2.stripped
fi
export BERTH_VM_BERTH2
flock "$work/.lock" sh -c '"$1/image.sh" "$2" "$3" && cp --sparse=always "$2/image.ext4" "$2/image.$4.ext4"' \
  sh "$here" "$work" "$img_berth" "$suite" || rc=$?
[ $rc = 0 ] || exit $rc
disk=$work/image.$suite.ext4
trap 'rm -f "$disk"' EXIT

# One boot of the disk, its console in LOG; stops qemu 60 s after a line matching DONE.
boot() { # LOG DONE
  : > "$1"
  t=$(date +%s)
  # no_timer_check: see run.sh (a loaded host's TCG guest can miss the IO-APIC timer check)
  nice qemu-system-x86_64 -nodefaults -no-user-config -accel tcg -m 1536 -smp 2 -display none -no-reboot \
    -serial "file:$1" -kernel "$work/boot/vmlinux" -initrd "$work/boot/initrd.gz" \
    -append "console=ttyS0 root=/dev/vda rw panic=-1 quiet no_timer_check systemd.unified_cgroup_hierarchy=1 vmsd.suite=$suite ${BERTH_VM_BENCH:-}" \
    -drive "file=$disk,format=raw,if=virtio,cache=writeback" </dev/null &
  qpid=$!
  trap 'kill $qpid 2>/dev/null; rm -f "$disk"; exit 130' INT TERM
  result_at=; brc=0
  while kill -0 $qpid 2>/dev/null; do
    if [ -z "$result_at" ] && grep -q "$2" "$1"; then result_at=$(date +%s); fi
    if [ -n "$result_at" ] && [ $(( $(date +%s) - result_at )) -ge 60 ]; then kill $qpid; break; fi
    if [ $(( $(date +%s) - t )) -ge "$timeout_s" ]; then echo "vm-systemd: timeout after ${timeout_s}s" >&2; kill $qpid; brc=124; break; fi
    sleep 1
  done
  wait $qpid 2>/dev/null || true
  tr -d '\r' < "$1" | sed -n 's/^VMTEST: //p'
  echo "vm-systemd: $suite: boot $n: qemu wall $(( $(date +%s) - t ))s" >&2
  return $brc
}

n=1
while [ $n -le $boots ]; do
  log=$work/console.$suite.$n.log
  done_re='^VMTEST: RESULT'; [ $n -lt $boots ] && done_re="^VMTEST: RESULT$n:"
  rc=0; boot "$log" "$done_re" || rc=$?
  if tr -d '\r' < "$log" | grep -q "^VMTEST: RESULT[0-9]*: FAIL"; then exit 1; fi
  if ! tr -d '\r' < "$log" | grep -q "^VMTEST: RESULT[0-9]*: PASS"; then
    tr -d '\r' < "$log" | tail -n 40
    [ $rc = 124 ] && exit 124
    echo "vm-systemd: no result on the console (boot $n)" >&2
    exit 125
  fi
  n=$((n + 1))
done
exit 0
