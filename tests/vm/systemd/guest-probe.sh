#!/bin/bash
# vm-systemd probe, in the systemd guest (image.sh), chosen by vmsd.suite=probe on the kernel
# command line (disk.sh --suite probe): a short look at where berth's and crun's calls spend
# their time under the cgroupfs driver on pure cgroup v2, faster than the whole bench.
#  0. the kernel's floor (contrib/bench/floor.c: exec, namespaces + pivot_root, netns);
#  1. rusage (contrib/bench/rusage.c) of `--version`, `run` /bin/true of the minimal bundle
#     and `exec` /bin/true, vmsd.probe=N interleaved samples (9) 80 ms apart: wall, user,
#     sys, page faults, context switches; medians, and berth's median of per-pair ratios
#     (with a second build, disk.sh --berth2: berth2 too, and berth2/berth);
#  2. the syscalls of one `run` and one `exec` of each (strace -f -c), and one `run` of each
#     traced with times (strace -f -tt -T), when the image has strace (vmsd.strace=0: not);
#  3. berth's --debug marks of one `run` and one `exec`.
# The guest is emulated (TCG): ratios and counts, never its milliseconds. Lines start with
# "VMTEST:" (traces with "VMTRACE: NAME:"); the last is "VMTEST: RESULT: PASS|FAIL".
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
n=$(sed -n 's/.*vmsd\.probe=\([0-9]*\).*/\1/p' /proc/cmdline); n=${n:-9}
B=/usr/local/share/berth/bench
say() { echo "VMTEST: $*"; }
say "begin: probe, uptime $(cut -d' ' -f1 /proc/uptime)s, $(nproc) vCPUs, kernel $(uname -r)"
systemctl is-system-running --wait >/dev/null 2>&1
/usr/local/share/berth/systemd/install-seal.sh /usr/local/bin/berth 2>&1 | sed 's/^/VMTEST: /'
W=/run/probe; rm -rf $W; mkdir -p $W/spec
(cd $W/spec && runc spec) || { say "RESULT: FAIL (runc spec)"; exit 1; }
bin() { case $1 in berth) echo /usr/local/bin/berth ;; berth2) echo /usr/local/bin/berth2 ;; crun) echo /usr/bin/crun ;; esac; }
# a second build to compare (disk.sh --berth2): sealed as the first, by a read-only bind
rts="berth crun"
if [ -x /usr/local/bin/berth2 ]; then
  mount --bind /usr/local/bin/berth2 /usr/local/bin/berth2 && mount -o remount,bind,ro /usr/local/bin/berth2
  rts="berth berth2 crun"
fi
rt() { echo "$(bin "$1") --root $W/st-$1"; }
bundle() { # RUNTIME KIND ARGS-JSON
  mkdir -p "$W/b/$1-$2"
  sed -e 's/"terminal": true/"terminal": false/' -e 's|"path": "rootfs"|"path": "/opt/bb"|' \
    -e 's/"ociVersion": "[^"]*"/"ociVersion": "1.0.2"/' -e "s/^\(\t*\)\"sh\"\$/\1$3/" \
    -e "s|\"linux\": {|\"linux\": {\n\t\t\"cgroupsPath\": \"/berth-bench/$1-$2\",|" \
    $W/spec/config.json > "$W/b/$1-$2/config.json"
}
rc=0
for r in $rts; do
  bundle $r min '"true"'; bundle $r sleep '"sleep", "1000000"'
  $(rt $r) run -d --bundle $W/b/$r-sleep s </dev/null >/dev/null 2>&1 || { say "FAIL: $r run -d"; rc=1; }
done
say "cgroup.subtree_control: / [$(cat /sys/fs/cgroup/cgroup.subtree_control)] /berth-bench [$(cat /sys/fs/cgroup/berth-bench/cgroup.subtree_control 2>/dev/null)]"
for r in $rts; do say "$r sleep cgroup: $(ls /sys/fs/cgroup/berth-bench/$r-sleep 2>/dev/null | wc -l) files, controllers [$(cat /sys/fs/cgroup/berth-bench/$r-sleep/cgroup.controllers 2>/dev/null)]"; done
# The kernel's own floor under both runtimes (contrib/bench/floor.c, no runtime at all):
# fork + exec of busybox true; with mount, uts, ipc and pid namespaces, pivot_root and
# procfs; with a network namespace too. Whatever a runtime adds to a `run` comes on top.
$B/floor -r /opt/bb -n "$n" -w 2 exec ns net > $W/floor.txt 2>&1 || say "floor failed: $(tail -n 1 $W/floor.txt)"
say "floor, medians of $n (ms; TCG): $(awk '$1 == "floor" { v[$2, ++c[$2]] = $4; if (!($2 in s)) { s[$2] = 1; o[++k] = $2 } }
  END { for (i = 1; i <= k; i++) { l = o[i]; n = c[l]; for (a = 1; a <= n; a++) x[a] = v[l, a]
    for (a = 2; a <= n; a++) { y = x[a]; for (b = a - 1; b >= 1 && x[b] > y; b--) x[b + 1] = x[b]; x[b + 1] = y }
    printf "%s %.1f  ", l, (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 } }' $W/floor.txt)"
# ROUNDS TITLE: the interleaved samples and their medians
rusage_rounds() {
R=$W/rusage.txt; : > $R
i=0
while [ $i -lt $(($1 + 2)) ]; do
  out=$R; [ $i -lt 2 ] && out=/dev/null   # two warm-up rounds
  for r in $rts; do
    sleep 0.08; $B/rusage "$r version" $(rt $r) --version >> $out || rc=1
    sleep 0.08; $B/rusage "$r run" $(rt $r) run --bundle $W/b/$r-min m$i >> $out || rc=1
    sleep 0.08; $B/rusage "$r exec" $(rt $r) exec s /bin/true >> $out || rc=1
  done
  sleep 0.08; $B/rusage "busybox true" /opt/bb/bin/true >> $out
  i=$((i + 1))
done
pairs="berth/crun"; [ "$rts" = "berth crun" ] || pairs="berth/crun berth2/crun berth2/berth"
say "rusage, $2: medians of $1 interleaved samples (ms and counts; TCG) and berth/crun (median of per-pair ratios)"
awk '
  { k = $1 " " $2; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    for (f = 3; f < NF; f += 2) { m = $f; if (!(m in mseen)) { mseen[m] = 1; ms[++nm] = m }; v[k, m, ++c[k, m]] = $(f + 1) } }
  function med(a, cnt,   i, j, x) {
    for (i = 2; i <= cnt; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return (cnt % 2) ? a[(cnt + 1) / 2] : (a[cnt / 2] + a[cnt / 2 + 1]) / 2 }
  END {
    for (i = 1; i <= nk; i++) { line = sprintf("  %-14s", order[i])
      for (j = 1; j <= nm; j++) { cnt = c[order[i], ms[j]]; for (q = 1; q <= cnt; q++) a[q] = v[order[i], ms[j], q]
        line = line sprintf(" %s %.1f", ms[j], med(a, cnt)) }
      print line }
    split("version run exec", ops, " "); np = split(pairs, pr, " ")
    for (p = 1; p <= np; p++) { split(pr[p], ab, "/")
      for (o = 1; o <= 3; o++) { line = sprintf("  %s %-7s", pr[p], ops[o])
        for (j = 1; j <= nm; j++) { cnt = c[ab[1] " " ops[o], ms[j]]
          for (q = 1; q <= cnt; q++) { y = v[ab[2] " " ops[o], ms[j], q]; a[q] = (y > 0) ? v[ab[1] " " ops[o], ms[j], q] / y : 0 }
          line = line sprintf(" %s %.2f", ms[j], med(a, cnt)) }
        print line } }
  }' pairs="$pairs" $R | sed 's/^/VMTEST: /'
}
rusage_rounds $n "ASLR on (as shipped)"
# TCG keys its translated code by virtual address (qemu 7.2 on x86): with ASLR every
# process translates all the code it runs afresh; without it, the translations of the
# previous call's text are found again. The difference is the translation's share.
aslr=$(cat /proc/sys/kernel/randomize_va_space)
echo 0 > /proc/sys/kernel/randomize_va_space
rusage_rounds $n "ASLR off (diagnostic)"
echo "$aslr" > /proc/sys/kernel/randomize_va_space
if [ "$(sed -n 's/.*vmsd\.strace=\([0-9]\).*/\1/p' /proc/cmdline)" = 0 ]; then
  say "strace: skipped (vmsd.strace=0)"
elif command -v strace >/dev/null; then
  for r in berth crun; do
    strace -f -c -o $W/c.$r.run $(rt $r) run --bundle $W/b/$r-min c1 </dev/null >/dev/null 2>&1 || rc=1
    strace -f -c -o $W/c.$r.exec $(rt $r) exec s /bin/true </dev/null >/dev/null 2>&1 || rc=1
    strace -f -tt -T -o $W/t.$r.run $(rt $r) run --bundle $W/b/$r-min t1 </dev/null >/dev/null 2>&1 || rc=1
    strace -f -tt -T -o $W/t.$r.exec $(rt $r) exec s /bin/true </dev/null >/dev/null 2>&1 || rc=1
    for f in c.$r.run c.$r.exec t.$r.run t.$r.exec; do sed "s/^/VMTRACE: $f: /" $W/$f; done
  done
else
  say "no strace in the image"
fi
for op in run exec; do
  case $op in run) a="run --bundle $W/b/berth-min d1" ;; exec) a="exec s /bin/true" ;; esac
  # shellcheck disable=SC2086
  berth --debug --log $W/debug.$op --root $W/st-berth $a </dev/null >/dev/null 2>&1 || rc=1
  sed "s/^/VMTRACE: debug.$op: /" $W/debug.$op
done
for r in $rts; do $(rt $r) delete -f s >/dev/null 2>&1; done
if [ $rc = 0 ]; then say "RESULT: PASS"; else say "RESULT: FAIL"; fi
exit $rc
