#!/bin/sh
# contrib/bench/systemd.sh: create + start + delete with the systemd cgroup driver
# (--systemd-cgroup, a transient scope per container: the D-Bus round trips are the driver's
# cost), for berth, runc and crun side by side in one run, interleaved cycle by cycle so
# that other load hits all alike; prints each runtime's medians (per phase and the whole
# cycle, ms) and berth's ratios. Needs root on a host with systemd as PID 1 and cgroup v2
# (docs/performance.md has the numbers and the machine they came from).
#
#   contrib/bench/systemd.sh [--runtimes "berth runc crun"] [--cycles N] [--warmup N]
#                            [--rootfs DIR]
#
# Environment: BERTH, RUNC, CRUN (default: the name on PATH). --rootfs: a busybox rootfs
# (default: one made in the work folder from busybox on PATH). Each container is
# cgroupsPath "system.slice:bench-<runtime>:c", runs /bin/true, and is deleted with
# delete -f; its state root and bundle live in a temporary folder, removed at the end.
set -eu
runtimes="berth runc crun"; cycles=30; warmup=3; rootfs=
while [ $# -gt 0 ]; do
  case $1 in
    --runtimes) runtimes=$2; shift 2 ;;
    --cycles) cycles=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --rootfs) rootfs=$2; shift 2 ;;
    *) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
  esac
done
[ "$(id -u)" = 0 ] || { echo "systemd.sh: needs root" >&2; exit 1; }
[ -d /run/systemd/system ] || { echo "systemd.sh: systemd is not PID 1 here" >&2; exit 1; }
bin_of() { # RUNTIME
  case $1 in
    berth) echo "${BERTH:-$(command -v berth)}" ;;
    runc) echo "${RUNC:-$(command -v runc)}" ;;
    crun) echo "${CRUN:-$(command -v crun)}" ;;
    *) echo "systemd.sh: unknown runtime $1" >&2; exit 2 ;;
  esac
}
for r in $runtimes; do
  b=$(bin_of "$r"); [ -x "$b" ] || { echo "systemd.sh: $r not found (set ${r%%[!a-z]*} path)" >&2; exit 1; }
done
W=$(mktemp -d /run/berth-sdbench.XXXXXX)
cleanup() {
  for r in $runtimes; do "$(bin_of "$r")" --root "$W/state-$r" delete -f c >/dev/null 2>&1 || true; done
  rm -rf "$W"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
if [ -z "$rootfs" ]; then
  bb=$(command -v busybox) || { echo "systemd.sh: no busybox for the rootfs (or give --rootfs)" >&2; exit 1; }
  rootfs=$W/rootfs; mkdir -p "$rootfs/bin" "$rootfs/proc" "$rootfs/sys" "$rootfs/dev" "$rootfs/tmp"
  cp "$bb" "$rootfs/bin/busybox"; ln -s busybox "$rootfs/bin/true"; ln -s busybox "$rootfs/bin/sh"
fi
# One bundle per runtime from runc's default spec (else the first runtime's); only the
# cgroupsPath differs. ociVersion 1.0.2 for all: crun 1.8 refuses the newer ones.
tmpl=$(command -v runc || bin_of "${runtimes%% *}")
for r in $runtimes; do
  mkdir -p "$W/b-$r" "$W/state-$r"
  (cd "$W/b-$r" && "${RUNC:-$tmpl}" spec)
  sed -i -e 's/"terminal": true/"terminal": false/' -e "s|\"path\": \"rootfs\"|\"path\": \"$rootfs\"|" \
    -e 's/"ociVersion": "[^"]*"/"ociVersion": "1.0.2"/' \
    -e 's/^\(\t*\)"sh"$/\1"true"/' \
    -e "s/\"linux\": {/\"linux\": {\n\t\t\"cgroupsPath\": \"system.slice:bench-$r:c\",/" "$W/b-$r/config.json"
done
ms() { echo $(( $(date +%s%N) / 1000 )); }  # microseconds
one() { # RUNTIME: create, start, delete; appends "create start delete total" (us) to W/t-RUNTIME
  b=$(bin_of "$1"); root=$W/state-$1
  t0=$(ms)
  "$b" --systemd-cgroup --root "$root" create --bundle "$W/b-$1" c </dev/null >/dev/null 2>"$W/err" || { cat "$W/err" >&2; return 1; }
  t1=$(ms)
  "$b" --systemd-cgroup --root "$root" start c </dev/null >/dev/null 2>"$W/err" || { cat "$W/err" >&2; return 1; }
  t2=$(ms)
  "$b" --systemd-cgroup --root "$root" delete -f c </dev/null >/dev/null 2>"$W/err" || { cat "$W/err" >&2; return 1; }
  t3=$(ms)
  echo "$((t1 - t0)) $((t2 - t1)) $((t3 - t2)) $((t3 - t0))" >> "$W/t-$1"
}
i=0
while [ $i -lt $((warmup + cycles)) ]; do
  for r in $runtimes; do
    one "$r" || { echo "systemd.sh: $r: cycle $i failed" >&2; exit 1; }
    [ $i -ge "$warmup" ] || : > "$W/t-$r"  # warm-up cycles are not counted
  done
  i=$((i + 1))
done
median() { # FILE COLUMN -> ms
  awk -v c="$2" '{ print $c }' "$1" | sort -n | awk '{ v[NR] = $1 } END {
    m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m / 1000 }'
}
echo "create + start + delete -f with --systemd-cgroup, $cycles cycles after $warmup warm-up, interleaved; medians (ms)"
printf '%-6s %9s %9s %9s %9s  %s\n' runtime create start delete total version
for r in $runtimes; do
  printf '%-6s %9s %9s %9s %9s  %s\n' "$r" "$(median "$W/t-$r" 1)" "$(median "$W/t-$r" 2)" \
    "$(median "$W/t-$r" 3)" "$(median "$W/t-$r" 4)" "$("$(bin_of "$r")" --version 2>/dev/null | head -n 1)"
done
case " $runtimes " in *" berth "*)
  for r in $runtimes; do
    [ "$r" = berth ] && continue
    awk -v a="$(median "$W/t-berth" 4)" -v b="$(median "$W/t-$r" 4)" -v r="$r" \
      'BEGIN { printf "ratio berth/%s (total): %.2f\n", r, a / b }'
  done ;;
esac
