#!/bin/bash
# contrib/bench/hot-text.sh: regenerates src/cli/hot_text.ld, the order in which the berth
# link places the functions the bench's calls run (docs/performance.md, "The binary's
# layout"). The kernel maps a file's pages in 64 KiB windows around each fault, so the
# functions a call runs, scattered over all of the text, keep almost all of it resident.
# This script runs the calls of contrib/bench/run.sh (--version, list, state, exec,
# delete -f, create, start, delete, run; minimal and Docker-shaped bundles) with
# contrib/bench/entries.c noting every function entered, in the parent and in the
# container's init, and writes the input sections of those functions, in the order first
# used, as a linker script that puts them ahead of the rest of .text. The file only ever
# changes where code lies, never what it does.
#
# The order is a profile of the code it was made from and goes stale as the code changes
# (renamed or new functions stay in .text, far from the rest): --check, run by ctest as
# build.hot_text_current, fails when the file names a section that the last link no longer
# has. Then regenerate it (about 2 s) and commit the result on its own.
#
# Usage: contrib/bench/hot-text.sh [BUILD_DIR]   (default build; needs root, cc, gawk, busybox-static,
#        and BUILD_DIR/berth with its link map BUILD_DIR/berth.map, both made by the build)
#        contrib/bench/hot-text.sh --check [BUILD_DIR]   (no root: reads BUILD_DIR/berth.map)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
build=$(cd "${1:-$repo/build}" && pwd)
out=$repo/src/cli/hot_text.ld
die() { echo "hot-text: $*" >&2; exit 1; }

# --check: in the link map, each pattern of the hot-text section is followed by the input
# sections it placed; a pattern followed by none names code that is gone (or renamed).
if [ "$check" = 1 ]; then
  [ -r "$build/berth.map" ] || die "no $build/berth.map: build the berth target first"
  awk -v out="$out" '
    /^\.text\.berth_hot/ { inhot = 1; found = 1; next }
    inhot && /^\.[a-z]/ { inhot = 0 }
    !inhot { next }
    /^ \*fill\*/ { next }
    /^ \*/ { if (pat != "" && !hits) { print "hot-text: stale: " pat; stale++ } pat = $1; hits = 0; total++; next }
    /^ \./ { hits++ }
    END {
      if (inhot && pat != "" && !hits) { print "hot-text: stale: " pat; stale++ }
      if (!found) { print "hot-text: the map has no .text.berth_hot: berth was linked without " out " (-DBERTH_HOT_TEXT=OFF?)"; exit 1 }
      if (stale) { printf "hot-text: %d of %d sections named in %s are no longer in the link: regenerate it (contrib/bench/hot-text.sh, as root)\n", stale, total, out; exit 1 }
      printf "hot-text: all %d sections named in %s are in the link\n", total, out
    }' "$build/berth.map"
  exit
fi
[ "$(id -u)" = 0 ] || die "must run as root (it creates containers)"
[ -x "$build/berth" ] && [ -r "$build/berth.map" ] || die "no $build/berth and $build/berth.map: build the berth target first"

if [ -z "${BERTH_HOT_TEXT_INNER:-}" ]; then
  export BERTH_HOT_TEXT_INNER=1
  exec unshare --mount --propagation private -- "$0" "$build"
fi
# The bench's view: pure cgroup v1 where the host is hybrid (see run.sh).
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then umount /sys/fs/cgroup/unified; fi
work=$(mktemp -d /tmp/berth-hot-text.XXXXXX)
state=$work/state
cleanup() {
  set +e
  for id in $(ls "$state" 2>/dev/null); do "$bin" --root "$state" delete --force "$id" >/dev/null 2>&1; done
  umount "$work/bin/berth" 2>/dev/null
  for h in /sys/fs/cgroup/*/berth-hot-text; do [ -d "$h" ] && find "$h" -depth -type d -exec rmdir {} + 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/bin" "$work/prof" "$state"
cc -O2 -o "$work/entries" "$here/entries.c"
# Installed as contrib/setup.sh does (read-only: no re-execution from a sealed copy).
cp "$build/berth" "$work/bin/berth"
mount --bind "$work/bin/berth" "$work/bin/berth"
mount -o remount,bind,ro "$work/bin/berth"
bin=$work/bin/berth
nm --defined-only "$build/berth" | awk '$2 ~ /^[tTwW]$/ { print $1 }' > "$work/addrs"

BERTH=$bin sh "$repo/contrib/mkbundle.sh" "$work/template" /bin/true >/dev/null
rootfs=$work/template/rootfs
touch "$rootfs/etc/hostname" "$rootfs/etc/hosts" "$rootfs/etc/resolv.conf"
mkdir -p "$work/files" "$work/b/min" "$work/b/sleep" "$work/b/docker"
echo hot > "$work/files/hostname"; : > "$work/files/hosts"; : > "$work/files/resolv.conf"
for kind in min sleep; do
  args='"/bin/true"'; [ $kind = sleep ] && args='"sleep", "1000000"'
  sed -e "s|\"path\": \"rootfs\"|\"path\": \"$rootfs\"|" -e "s|^\t\t\t\"/bin/true\"\$|\t\t\t$args|" \
      -e "s|\"linux\": {|\"linux\": {\n\t\t\"cgroupsPath\": \"/berth-hot-text/$kind\",|" \
      "$work/template/config.json" > "$work/b/$kind/config.json"
done
sed -e "s|@ROOTFS@|$rootfs|; s|@BUNDLE@|$work/files|; s|@CGROUP@|/berth-hot-text/docker|" \
    -e "/^@SECCOMP@\$/{r $repo/tests/fixtures/seccomp/docker-default-seccomp.json" -e 'd}' \
    "$here/docker-config.json.in" > "$work/b/docker/config.json"

n=0
traced() {  # NAME ARGS...: one berth call under entries; its functions in prof/NN-NAME
  local name=$1; shift
  n=$((n + 1))
  "$work/entries" "$work/prof/$(printf %02d $n)-$name" "$bin" "$work/addrs" "$bin" --root "$state" "$@" \
    </dev/null >/dev/null 2>&1 || die "berth $* failed under entries"
}
# The bench's Docker-shaped creates find the compiled profile in the seccomp cache after
# its warm-up; fill the cache first so that the compiler's code stays out of the hot list.
"$bin" --root "$state" run --bundle "$work/b/docker" warm </dev/null >/dev/null 2>&1 || die "berth run failed"
traced version --version
traced list list
for kind in min docker; do
  "$bin" --root "$state" run -d --bundle "$work/b/sleep" running </dev/null >/dev/null 2>&1
  traced state state running
  traced exec exec running /bin/true
  traced delete-force delete --force running
  # create returns while its init waits for start: entries keeps following the init.
  n=$((n + 1)); f=$work/prof/$(printf %02d $n)-create
  "$work/entries" "$f" "$bin" "$work/addrs" "$bin" --root "$state" create --bundle "$work/b/$kind" c \
    </dev/null >/dev/null 2>&1 &
  for _ in $(seq 300); do [ -e "$f" ] && break; sleep 0.1; done
  [ -e "$f" ] || die "create under entries did not finish"
  traced start start c
  wait
  traced delete delete c
  traced run run --bundle "$work/b/$kind" r
done

# Functions → the input sections that hold them (from the link map), first use first.
for f in "$work"/prof/*; do sort -u "$f"; done | awk '!seen[$1]++' > "$work/order"
{
  echo "/* src/cli/hot_text.ld: the berth link puts these input sections (the functions that the"
  echo " * bench's calls run) ahead of the rest of .text, so that a call's 64 KiB fault-around"
  echo " * windows hold its own code (docs/performance.md, \"The binary's layout\"). Generated by"
  echo " * contrib/bench/hot-text.sh from $(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo "this tree"); the link ignores a section"
  echo " * named here that no longer exists, and ctest build.hot_text_current reports it. */"
  echo "SECTIONS"
  echo "{"
  echo "  .text.berth_hot :"
  echo "  {"
  awk -v order="$work/order" '
    BEGIN { while ((getline a < order) > 0) want[++nw] = strtonum("0x" a) }
    /^\.text(\.berth_hot)?([ \t]|$)/ { intext = 1; next }
    /^\.[a-z]/ { intext = 0 }
    !intext { next }
    /^ \.text/ { sec = $1; pending = 0; if (NF >= 4 && $2 ~ /^0x/) add($2, $3, $4); else pending = 1; next }
    pending && $1 ~ /^0x/ && NF >= 3 { add($1, $2, $3) }
    { pending = 0 }
    function add(a, z, f) { n++; S[n] = sec; LO[n] = strtonum(a); HI[n] = LO[n] + strtonum(z); F[n] = f }
    END {
      for (i = 1; i <= nw; i++) {
        a = want[i]; l = 1; h = n
        while (l < h) { m = int((l + h + 1) / 2); if (LO[m] <= a) l = m; else h = m - 1 }
        if (!(LO[l] <= a && a < HI[l])) continue
        if (S[l] == ".text") {  # an object built without -ffunction-sections: all of its .text
          f = F[l]; sub(/.*\//, "", f); sub(/\(/, ":", f); sub(/\)$/, "", f); pat = "*" f "(.text)"
        } else pat = "*(" S[l] ")"
        if (!done[pat]++) print "    " pat
      }
    }' "$build/berth.map"
  echo "  }"
  echo "}"
  echo "INSERT BEFORE .text;"
} > "$out.tmp"
mv "$out.tmp" "$out"
echo "hot-text: $(grep -c '^    \*' "$out") input sections from $(wc -l < "$work/order") functions → $out" >&2
