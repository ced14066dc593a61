#!/bin/sh
# vm-systemd bench, in the systemd guest (image.sh), chosen by vmsd.suite=bench on the
# kernel command line (disk.sh): contrib/bench/systemd.sh for berth (stripped and sealed, as
# contrib/setup.sh installs it), runc and crun (Debian's 1.8), interleaved, its table on the
# console. Lines start with "VMTEST:"; the last one is
# "VMTEST: RESULT: PASS|FAIL" (FAIL: a runtime's cycle failed).
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
cycles=$(sed -n 's/.*vmsd\.cycles=\([0-9]*\).*/\1/p' /proc/cmdline)
echo "VMTEST: begin: bench, uptime $(cut -d' ' -f1 /proc/uptime)s, $(nproc) vCPUs, kernel $(uname -r)"
systemctl is-system-running --wait >/dev/null 2>&1
# berth as contrib/setup.sh installs it: sealed (else every create re-executes from a clone,
# and crun's and runc's own protections are in their numbers anyway)
/usr/local/share/berth/systemd/install-seal.sh /usr/local/bin/berth 2>&1 | sed 's/^/VMTEST: /'
/usr/local/sbin/berth-bench-systemd --cycles "${cycles:-15}" --warmup 2 --rootfs /opt/bb > /tmp/bench.out 2>&1
rc=$?
sed 's/^/VMTEST: /' /tmp/bench.out
if [ $rc = 0 ]; then echo "VMTEST: RESULT: PASS"; else echo "VMTEST: RESULT: FAIL (bench exit $rc)"; fi
exit $rc
