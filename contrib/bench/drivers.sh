#!/bin/bash
# contrib/bench/drivers.sh: berth, runc and crun side by side under both cgroup drivers
# (cgroupfs and --systemd-cgroup) on a host with systemd as PID 1 and pure cgroup v2, the
# shape Docker, containerd (SystemdCgroup = true) and podman run on. For each driver:
# `run` of /bin/true, create+start+wait+delete of a minimal and of a Docker-shaped bundle,
# and `exec` of /bin/true into a running container; all in spaced mode (each sample a fresh
# driver process after an idle gap of 50-100 ms, runtimes interleaved round by round, as an
# engine's calls arrive). Prints each runtime's medians (ms, wall) and berth's medians of
# per-round ratios against crun and runc, so that load on the machine hits all alike.
# tests/vm/systemd runs it in the systemd guest (ctest vm-systemd.bench, label full); the
# guest is emulated (qemu TCG, no KVM): only its ratios mean anything, never its ms.
#
#   contrib/bench/drivers.sh [--rounds N] [--warmup N] [--runtimes "berth runc crun"]
#                            [--drivers "cgroupfs systemd"] [--rootfs DIR] [--samples FILE]
#
# Environment: BERTH, RUNC, CRUN (default: the name on PATH); DRIVER: a build of
# contrib/bench/driver.c (default: built here with cc; `cc -O2 -static` makes one that runs
# in any guest); SECCOMP_PROFILE (default: tests/fixtures/seccomp/docker-default-seccomp.json
# beside this script's tree, else /usr/local/share/berth/bench/); --rootfs: a busybox
# rootfs (default: one made from busybox on PATH). --samples: keep the raw samples there
# ("SHAPE-DRIVER RUNTIME METRIC VALUE", as contrib/bench/driver.c prints them).
# Containers get cgroupsPath /berth-bench/RT-KIND (cgroupfs) or
# system.slice:berth-bench:RT-KIND (systemd); state roots in a temporary folder under /run.
#
# The figures, with the machine and the method: docs/performance.md, "By host shape".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
rounds=20; warmup=2; runtimes="berth runc crun"; drivers="cgroupfs systemd"; rootfs=; keep=
while [ $# -gt 0 ]; do
  case $1 in
    --rounds) rounds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --runtimes) runtimes=$2; shift 2 ;;
    --drivers) drivers=$2; shift 2 ;;
    --rootfs) rootfs=$2; shift 2 ;;
    --samples) keep=$2; shift 2 ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
die() { echo "drivers.sh: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root"
[ -d /run/systemd/system ] || die "systemd is not PID 1 here"
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] || die "not pure cgroup v2 (/sys/fs/cgroup is no cgroup2 mount)"
bin_of() {
  case $1 in
    berth) echo "${BERTH:-$(command -v berth || true)}" ;;
    runc) echo "${RUNC:-$(command -v runc || true)}" ;;
    crun) echo "${CRUN:-$(command -v crun || true)}" ;;
    *) die "unknown runtime $1" ;;
  esac
}
for r in $runtimes; do [ -x "$(bin_of "$r")" ] || die "$r not found (set ${r^^})"; done
profile=${SECCOMP_PROFILE:-$here/../../tests/fixtures/seccomp/docker-default-seccomp.json}
[ -r "$profile" ] || profile=/usr/local/share/berth/bench/docker-default-seccomp.json
[ -r "$profile" ] || die "no seccomp profile (set SECCOMP_PROFILE)"
W=$(mktemp -d /run/berth-drivers.XXXXXX)
cleanup() {
  set +e
  for r in $runtimes; do
    for d in $drivers; do
      for id in $(ls "$W/state/$r-$d" 2>/dev/null); do $(rt_cmd "$r" "$d") delete -f "$id" >/dev/null 2>&1; done
    done
  done
  [ -d /sys/fs/cgroup/berth-bench ] && find /sys/fs/cgroup/berth-bench -depth -type d -exec rmdir {} + 2>/dev/null
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
rt_cmd() { # RUNTIME DRIVER → the command and its global flags
  echo "$(bin_of "$1") --root $W/state/$1-$2$([ "$2" = systemd ] && echo " --systemd-cgroup")"
}
driver=${DRIVER:-}
if [ -z "$driver" ]; then
  command -v cc >/dev/null || die "no cc to build driver.c (or set DRIVER)"
  cc -O2 -o "$W/driver" "$here/driver.c" || die "cannot build driver.c"; driver=$W/driver
fi
if [ -z "$rootfs" ]; then
  bb=$(command -v busybox) || die "no busybox for the rootfs (or give --rootfs)"
  rootfs=$W/rootfs; mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/tmp" "$rootfs/etc"
  cp "$bb" "$rootfs/bin/busybox"; for a in sh true sleep; do ln -s busybox "$rootfs/bin/$a"; done
fi
# Docker's binds land on files its image layers hold: given here, outside the rootfs.
mkdir -p "$W/docker-files" "$W/tmp"
echo bench > "$W/docker-files/hostname"
printf '127.0.0.1\tlocalhost\n' > "$W/docker-files/hosts"
printf 'nameserver 127.0.0.1\n' > "$W/docker-files/resolv.conf"

# ---- bundles: runc's default spec (crun 1.8 refuses newer ociVersions: 1.0.2), per
# runtime, driver and kind only the cgroupsPath differs ----
tmpl=$(bin_of runc); [ -x "$tmpl" ] || tmpl=$(bin_of "${runtimes%% *}")
(mkdir -p "$W/spec" && cd "$W/spec" && "$tmpl" spec)
cg_of() { # RUNTIME DRIVER KIND
  if [ "$2" = systemd ]; then echo "system.slice:berth-bench:$1-$3"; else echo "/berth-bench/$1-$3"; fi
}
minimal() { # CGROUP ARGS-JSON
  sed -e 's/"terminal": true/"terminal": false/' -e "s|\"path\": \"rootfs\"|\"path\": \"$rootfs\"|" \
    -e 's/"ociVersion": "[^"]*"/"ociVersion": "1.0.2"/' -e "s/^\(\t*\)\"sh\"\$/\1$2/" \
    -e "s|\"linux\": {|\"linux\": {\n\t\t\"cgroupsPath\": \"$1\",|" "$W/spec/config.json"
}
for r in $runtimes; do
  for d in $drivers; do
    b=$W/b/$r-$d; mkdir -p "$b/min-0" "$b/docker-0" "$b/sleep-0" "$W/state/$r-$d"
    minimal "$(cg_of "$r" "$d" min)" '"true"' > "$b/min-0/config.json"
    minimal "$(cg_of "$r" "$d" sleep)" '"sleep", "1000000"' > "$b/sleep-0/config.json"
    sed -e "s|@ROOTFS@|$rootfs|; s|@BUNDLE@|$W/docker-files|; s|@CGROUP@|$(cg_of "$r" "$d" docker)|" \
      -e "/^@SECCOMP@\$/{r $profile" -e 'd}' "$here/docker-config.json.in" > "$b/docker-0/config.json"
  done
done

# ---- the samples: a fresh driver per sample, runtimes interleaved round by round ----
S=$W/samples
spaced() { # MODE KIND LABEL DRIVER
  local i r out
  for i in $(seq 1 $((warmup + rounds))); do
    for r in $runtimes; do
      out=/dev/null; [ "$i" -gt "$warmup" ] && out=$S
      "$driver" "$1" -t "$W/tmp" -n 1 -w 0 -g 50-100 -l "$3" -r "$r=$(rt_cmd "$r" "$4")" \
        -b "$W/b/%r-$4/$2-%s" >> "$out"
    done
  done
}
: > "$S"
for d in $drivers; do
  echo "drivers.sh: $d: run, cycle, Docker-shaped cycle, exec ($rounds rounds after $warmup)" >&2
  spaced run min "run-$d" "$d"
  spaced cycle min "cycle-$d" "$d"
  spaced cycle docker "docker-$d" "$d"
  args=(); for r in $runtimes; do args+=(-r "$r=$(rt_cmd "$r" "$d")"); done
  # one container per runtime held by one driver; each exec after an idle gap
  "$driver" running -t "$W/tmp" -n "$rounds" -w "$warmup" -g 50-100 "${args[@]}" -b "$W/b/%r-$d/sleep-%s" |
    sed -n "s/^exec /exec-$d /p" >> "$S"
done
[ -n "$keep" ] && cp "$S" "$keep"

# ---- the table ----
median_of() { # LABEL RUNTIME METRIC
  awk -v s="$1" -v r="$2" -v m="$3" '$1 == s && $2 == r && $3 == m { print $4 }' "$S" | sort -g |
    awk '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m }'
}
# The k-th samples of two runtimes in a scenario were taken side by side: their ratio saw
# the same load; the median of those ratios.
pair_ratio() { # LABEL RUNTIME OTHER METRIC
  awk -v s="$1" -v r="$2" -v o="$3" -v m="$4" '
    $1 == s && $3 == m && $2 == r { a[++na] = $4 }
    $1 == s && $3 == m && $2 == o { b[++nb] = $4 }
    END {
      n = (na < nb) ? na : nb
      if (n == 0) { print "-"; exit }
      for (i = 1; i <= n; i++) q[i] = (b[i] > 0) ? a[i] / b[i] : 0
      for (i = 2; i <= n; i++) { x = q[i]; for (j = i - 1; j >= 1 && q[j] > x; j--) q[j + 1] = q[j]; q[j + 1] = x }
      printf "%.2f", (n % 2) ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
    }' "$S"
}
echo "spaced, $rounds rounds after $warmup warm-up, runtimes interleaved; medians of wall ms; ratios: medians of per-round ratios"
hdr="%-30s"; for r in $runtimes; do hdr="$hdr %8s"; done
others=; for r in $runtimes; do [ "$r" = berth ] || others="$others $r"; done
case " $runtimes " in *" berth "*) has_berth=1 ;; *) has_berth=0 ;; esac
printf "$hdr" shape $runtimes
[ $has_berth = 1 ] && for o in $others; do printf ' %11s' "berth/$o"; done
echo
for d in $drivers; do
  for s in "run:run /bin/true" "cycle:create+start+wait+delete" "docker:the same, Docker-shaped" "exec:exec /bin/true"; do
    l=${s%%:*}-$d
    printf '%-30s' "$d: ${s#*:}" | cut -c1-30 | tr -d '\n'
    for r in $runtimes; do printf ' %8s' "$(median_of "$l" "$r" wall)"; done
    [ $has_berth = 1 ] && for o in $others; do printf ' %11s' "$(pair_ratio "$l" berth "$o" wall)"; done
    echo
  done
done
for d in $drivers; do
  printf 'cpu of the cycle (runtime + container, ms), %s:' "$d"
  for r in $runtimes; do printf ' %s %s' "$r" "$(median_of "cycle-$d" "$r" cpu)"; done
  echo
done
