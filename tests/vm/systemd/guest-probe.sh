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
#  3. berth's --debug marks of one `run` and one `exec`;
#  4. the systemd driver: vmsd.probe_sd=N cycles (n of part 1; 0: none) of create, start, the
#     init's exit and delete of the minimal bundle with --systemd-cgroup, runtimes
#     interleaved: each call's wall time and the cycle's, medians and per-pair ratios; then
#     N cycles of each berth build with --debug, the medians of its timings.
# The guest is emulated (TCG): ratios and counts, never its milliseconds. Lines start with
# "VMTEST:" (traces with "VMTRACE: NAME:"); the last is "VMTEST: RESULT: PASS|FAIL".
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
. /usr/local/lib/vm-systemd-lib.sh   # say, awk_med, marks_medians (guest-lib.sh)
n=$(sed -n 's/.*vmsd\.probe=\([0-9]*\).*/\1/p' /proc/cmdline); n=${n:-9}
sd_n=$(sed -n 's/.*vmsd\.probe_sd=\([0-9]*\).*/\1/p' /proc/cmdline); sd_n=${sd_n:-$n}
B=/usr/local/share/berth/bench
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
say "floor, medians of $n (ms; TCG): $(awk "$awk_med"'$1 == "floor" { v[$2, ++c[$2]] = $4; if (!($2 in s)) { s[$2] = 1; o[++k] = $2 } }
  END { for (i = 1; i <= k; i++) { l = o[i]; for (q = 1; q <= c[l]; q++) x[q] = v[l, q]; printf "%s %.1f  ", l, med(x, c[l]) } }' $W/floor.txt)"
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
awk "$awk_med"'
  { k = $1 " " $2; if (!(k in seen)) { seen[k] = 1; order[++nk] = k }
    for (f = 3; f < NF; f += 2) { m = $f; if (!(m in mseen)) { mseen[m] = 1; ms[++nm] = m }; v[k, m, ++c[k, m]] = $(f + 1) } }
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
# 4. the systemd driver. RUNTIME [berth's --debug --log FILE prefix]: one cycle, each call's
# wall ms appended to $S as "RUNTIME OP MS"
sd_cycle() {
  dbg=; [ -n "${2:-}" ] && dbg="--debug --log $2"
  for op in create start delete; do
    case $op in create) a="create --bundle $W/b/$1-sd c" ;; start) a="start c" ;; delete) a="delete c" ;; esac
    [ $op = delete ] && while $(rt $1) state c 2>/dev/null | grep -q '"running"'; do sleep 0.02; done
    [ -n "$dbg" ] && dbg="--debug --log $2.$op"
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    $(bin $1) $dbg --systemd-cgroup --root $W/st-$1 $a </dev/null >/dev/null 2>$W/sd.err || { say "FAIL: $1 --systemd-cgroup $op: $(cat $W/sd.err)"; rc=1; return 1; }
    echo "$1 $op $(( ($(date +%s%N) - t0) / 1000 ))" >> $S
  done
}
if [ "$sd_n" -gt 0 ]; then
  for r in $rts; do
    bundle $r sd '"true"'
    sed -i "s|\"cgroupsPath\": \"[^\"]*\"|\"cgroupsPath\": \"system.slice:probe:$r\"|" $W/b/$r-sd/config.json
  done
  S=$W/sd.txt; : > $S
  i=0
  while [ $i -lt $((sd_n + 2)) ]; do
    [ $i = 2 ] && : > $S   # two warm-up rounds
    for r in $rts; do sleep 0.08; sd_cycle $r || break 2; done
    i=$((i + 1))
  done
  say "systemd driver: medians of $sd_n interleaved cycles (wall ms of each call and of the cycle; TCG) and per-pair ratios"
  awk "$awk_med"'
    { k = $1; if (!(k in seen)) { seen[k] = 1; rs[++nr] = k }
      v[k, $2, ++c[k, $2]] = $3 / 1000; if ($2 == "delete") { cy[k, c[k, $2]] = v[k, "create", c[k, $2]] + v[k, "start", c[k, $2]] + $3 / 1000; cc[k] = c[k, $2] } }
    END {
      split("create start delete", ops, " ")
      for (i = 1; i <= nr; i++) { r = rs[i]; line = sprintf("  %-7s", r)
        for (o = 1; o <= 3; o++) { for (q = 1; q <= c[r, ops[o]]; q++) a[q] = v[r, ops[o], q]; line = line sprintf(" %s %.1f", ops[o], med(a, c[r, ops[o]])) }
        for (q = 1; q <= cc[r]; q++) a[q] = cy[r, q]; print line sprintf(" cycle %.1f", med(a, cc[r])) }
      for (i = 1; i <= nr; i++) for (j = 1; j <= nr; j++) { x = rs[i]; y = rs[j]
        if (x == y || x == "crun" || (x == "berth" && y == "berth2")) continue
        line = sprintf("  %s/%s", x, y)
        for (o = 1; o <= 3; o++) { for (q = 1; q <= c[x, ops[o]]; q++) a[q] = v[x, ops[o], q] / v[y, ops[o], q]; line = line sprintf(" %s %.2f", ops[o], med(a, c[x, ops[o]])) }
        for (q = 1; q <= cc[x]; q++) a[q] = cy[x, q] / cy[y, q]; print line sprintf(" cycle %.2f", med(a, cc[x])) }
    }' $S | sed 's/^/VMTEST: /'
  for r in $rts; do
    case $r in berth*) ;; *) continue ;; esac
    i=0; while [ $i -lt "$sd_n" ]; do sleep 0.08; sd_cycle $r $W/sdlog.$r || break; i=$((i + 1)); done
    say "systemd driver: $r --debug, medians over $sd_n cycles (ms; TCG)"
    for op in create start delete; do marks_medians $op $W/sdlog.$r.$op | sed 's/^/VMTEST: /'; done
  done
fi
if [ $rc = 0 ]; then say "RESULT: PASS"; else say "RESULT: FAIL"; fi
exit $rc
