#!/bin/bash
# contrib/bench/v2view.sh: two berth builds side by side on a pure cgroup v2 view of this
# host (a private mount namespace with cgroup2 mounted at /sys/fs/cgroup, which berth takes
# for a pure v2 host, as runc does): `run` of /bin/true and `exec` of /bin/true, in a tight
# loop and spaced (an idle gap of 50-100 ms before each call), with driver.c. On a hybrid
# host that hierarchy has no controllers, so the bundles set no limits. For A/B checks of
# the v2 paths (run's direct init and exec's tenant born in their cgroup); run.sh is the
# bench against runc and crun.
#
# Usage: contrib/bench/v2view.sh BERTH_A BERTH_B [ITERATIONS (default 60)]
# Prints per scenario and build: samples, median and p90 wall ms, median CPU ms, and the
# median of the per-pair ratios B/A (samples taken side by side, interleaved).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
a_src=$(readlink -f "$1")
b_src=$(readlink -f "$2")
n=${3:-60}
work=${TMPDIR:-/tmp}/berth-v2view-bench
cg_parent=berth-v2view-bench

if [ -z "${BERTH_V2VIEW_INNER:-}" ]; then
  export BERTH_V2VIEW_INNER=1
  exec unshare --mount --propagation private -- "$0" "$@"
fi
mount -t cgroup2 cgroup2 /sys/fs/cgroup
rm -rf "$work"
mkdir -p "$work/bin/a" "$work/bin/b" "$work/tmp" "$work/state/a" "$work/state/b"
cc -O2 -Wall -o "$work/bin/driver" "$here/driver.c"
# Installed as contrib/setup.sh does it: stripped, on a read-only bind (no re-exec).
for x in a b; do
  src=$a_src; [ $x = b ] && src=$b_src
  strip -o "$work/bin/$x/berth" "$src"
  mount --bind "$work/bin/$x/berth" "$work/bin/$x/berth"
  mount -o remount,bind,ro "$work/bin/$x/berth"
done
cleanup() {
  set +e
  for x in a b; do
    for id in $(ls "$work/state/$x" 2>/dev/null); do "$work/bin/$x/berth" --root "$work/state/$x" delete -f "$id"; done
  done
  find "/sys/fs/cgroup/$cg_parent" -depth -type d -exec rmdir {} + 2>/dev/null
  for x in a b; do umount "$work/bin/$x/berth"; done
}
trap cleanup EXIT

BERTH=$work/bin/a/berth sh "$repo/contrib/mkbundle.sh" "$work/template" /bin/true >/dev/null
for x in a b; do
  for kind in min sleep; do
    mkdir -p "$work/bundles/$x/$kind-0"
    args='"/bin/true"'; [ $kind = sleep ] && args='"sleep", "1000000"'
    sed -e "s|\"path\": \"rootfs\"|\"path\": \"$work/template/rootfs\"|" \
        -e "s|^\t\t\t\"/bin/true\"\$|\t\t\t$args|" \
        -e "s|\"linux\": {|\"linux\": {\n\t\t\"cgroupsPath\": \"/$cg_parent/$x-$kind\",|" \
        "$work/template/config.json" > "$work/bundles/$x/$kind-0/config.json"
  done
done

samples=$work/samples.txt
: > "$samples"
rts=(-r "a=$work/bin/a/berth --root $work/state/a" -r "b=$work/bin/b/berth --root $work/state/b")
d() { "$work/bin/driver" "$@" -t "$work/tmp" "${rts[@]}" >> "$samples"; }
d run -n "$n" -w 3 -b "$work/bundles/%r/min-%s"
d run -n "$n" -w 3 -g 50-100 -l run-spaced -b "$work/bundles/%r/min-%s"
"$work/bin/driver" running -t "$work/tmp" "${rts[@]}" -n "$n" -w 3 -b "$work/bundles/%r/sleep-%s" |
  grep '^exec ' >> "$samples"
"$work/bin/driver" running -t "$work/tmp" "${rts[@]}" -n "$n" -w 3 -g 50-100 -b "$work/bundles/%r/sleep-%s" |
  sed -n 's/^exec /exec-spaced /p' >> "$samples"

echo "A = $a_src"
echo "B = $b_src"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %-3s %4s %9s %9s %9s %9s\n' scenario rt n wall-med wall-p90 cpu-med B/A-wall
for s in run run-spaced exec exec-spaced; do
  for x in a b; do
    awk -v s=$s -v r=$x '
      $1 == s && $2 == r && $3 == "wall" { w[++nw] = $4 }
      $1 == s && $2 == r && $3 == "cpu" { c[++nc] = $4 }
      $1 == s && $3 == "wall" && $2 == "a" { pa[++na] = $4 }
      $1 == s && $3 == "wall" && $2 == "b" { pb[++nb] = $4 }
      function med(v, k,   i, j, t) {
        for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        return (k % 2) ? v[(k + 1) / 2] : (v[k / 2] + v[k / 2 + 1]) / 2
      }
      END {
        k = (na < nb) ? na : nb
        for (i = 1; i <= k; i++) q[i] = pb[i] / pa[i]
        p90i = int(0.9 * nw + 0.999); m = med(w, nw); p = w[p90i]
        printf "%-12s %-3s %4d %9.3f %9.3f %9.3f %9s\n", s, r, nw, m, p, med(c, nc), (r == "b") ? sprintf("%.3f", med(q, k)) : ""
      }' "$samples"
  done
done
