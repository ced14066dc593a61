#!/bin/sh
# vm-systemd bench, in the systemd guest (image.sh), chosen by vmsd.suite=bench on the
# kernel command line (disk.sh), for berth (stripped and sealed, as contrib/setup.sh
# installs it), runc and crun (Debian's 1.8), interleaved, the tables on the console:
#  1. contrib/bench/systemd.sh: create, start, delete -f with --systemd-cgroup (a shell's
#     timing, vmsd.cycles of them);
#  2. contrib/bench/drivers.sh: run, cycle, Docker-shaped cycle and exec under the cgroupfs
#     and the systemd driver, spaced, vmsd.rounds rounds (0: skipped);
#  3. where berth's systemd-driver cycle spends its time: medians over vmsd.cycles cycles of
#     its --debug timings (each phase of create, each exchange with systemd).
# The guest is emulated (TCG): only ratios mean anything. Lines start with "VMTEST:"; the
# last one is "VMTEST: RESULT: PASS|FAIL" (FAIL: a runtime's cycle failed).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
. /usr/local/lib/vm-systemd-lib.sh   # marks_medians (guest-lib.sh)
cycles=$(sed -n 's/.*vmsd\.cycles=\([0-9]*\).*/\1/p' /proc/cmdline)
rounds=$(sed -n 's/.*vmsd\.rounds=\([0-9]*\).*/\1/p' /proc/cmdline)
echo "VMTEST: begin: bench, uptime $(cut -d' ' -f1 /proc/uptime)s, $(nproc) vCPUs, kernel $(uname -r)"
systemctl is-system-running --wait >/dev/null 2>&1
# berth as contrib/setup.sh installs it: sealed (else every create re-executes from a clone,
# and crun's and runc's own protections are in their numbers anyway)
/usr/local/share/berth/systemd/install-seal.sh /usr/local/bin/berth 2>&1 | sed 's/^/VMTEST: /'
/usr/local/sbin/berth-bench-systemd --cycles "${cycles:-15}" --warmup 2 --rootfs /opt/bb > /tmp/bench.out 2>&1
rc=$?
sed 's/^/VMTEST: /' /tmp/bench.out
B=/usr/local/share/berth/bench
if [ $rc = 0 ] && [ "${rounds:-20}" -gt 0 ]; then
  echo "VMTEST: load before drivers.sh: $(cat /proc/loadavg)"
  DRIVER=$B/driver "$B/drivers.sh" --rounds "${rounds:-20}" > /tmp/drivers.out 2>&1 || rc=$?
  sed 's/^/VMTEST: /' /tmp/drivers.out
fi
# 3: berth --debug through create, start, delete of a minimal bundle with --systemd-cgroup
breakdown() {
  d=/run/berth-breakdown; rm -rf $d; mkdir -p $d/b
  (cd $d/b && runc spec) || return 1
  sed -i -e 's/"terminal": true/"terminal": false/' -e 's|"path": "rootfs"|"path": "/opt/bb"|' \
    -e 's/"ociVersion": "[^"]*"/"ociVersion": "1.0.2"/' -e 's/^\(\t*\)"sh"$/\1"true"/' \
    -e 's/"linux": {/"linux": {\n\t\t"cgroupsPath": "system.slice:berth-bench:breakdown",/' $d/b/config.json
  i=0
  while [ $i -lt "${cycles:-15}" ]; do
    for op in create start delete; do
      case $op in create) a="create --bundle $d/b c" ;; start) a="start c" ;; delete) a="delete c" ;; esac
      [ $op = delete ] && while berth --root $d/st state c 2>/dev/null | grep -q '"running"'; do sleep 0.05; done
      t0=$(date +%s%N)
      # shellcheck disable=SC2086
      berth --debug --log $d/log.$op --systemd-cgroup --root $d/st $a </dev/null >/dev/null 2>$d/err || { cat $d/err; return 1; }
      echo "msg=\"$op: wall of the call $(( ($(date +%s%N) - t0) / 1000 ))e-3 ms\"" >> $d/log.$op
    done
    i=$((i + 1))
  done
  echo "berth --debug, systemd driver, minimal bundle: medians over ${cycles:-15} cycles (ms; TCG)"
  for op in create start delete; do marks_medians $op $d/log.$op; done
  rm -rf $d
}
if [ $rc = 0 ]; then breakdown > /tmp/breakdown.out 2>&1 || rc=$?; sed 's/^/VMTEST: /' /tmp/breakdown.out; fi
if [ $rc = 0 ]; then echo "VMTEST: RESULT: PASS"; else echo "VMTEST: RESULT: FAIL (bench exit $rc)"; fi
exit $rc
