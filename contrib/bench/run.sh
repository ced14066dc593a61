#!/bin/bash
# contrib/bench/run.sh: berth, runc and crun side by side, on the same bundles, in one run
# (docs/performance.md). Medians and p90 of: --version, `run` of /bin/true, create + start +
# wait + delete (minimal and Docker-shaped bundle), exec, state, list, peak RSS of create,
# binary size, 50 containers 2 at a time; the kernel's own floor (floor.c); with --phases,
# berth's create phase by phase from its --debug timings.
#
# Usage: contrib/bench/run.sh [--runtimes berth,runc,crun] [--iterations N] [--warmup N]
#          [--parallel-count 50] [--parallel-jobs 2] [--parallel-rounds 3]
#          [--spaced N] [--spaced-only]
#          [--sched nice|none] [--state-tmpfs] [--phases] [--workdir DIR] [--install]
# --spaced N (default 30; 0: off): the spaced mode, reported beside the tight loop: N
#   samples per runtime of run, the minimal and the Docker-shaped cycle, each a fresh
#   driver process after an idle gap of 50-100 ms (random), runtimes interleaved, as an
#   engine's calls arrive; exec too, each call after such a gap (one driver per runtime
#   holds the container). A tight loop finds kernel state that a spaced call does not (a
#   cgroup rwsem still in its writer mode from the previous call). --spaced-only skips the
#   tight loop, the parallel runs and the floor.
# --sched nice (default): the bench runs in a session of its own (so in its own scheduler
#   autogroup) at nice -10, the autogroup too: other load on a shared machine then delays
#   the samples much less. none leaves priorities alone. (Real-time scheduling is no
#   option: a SCHED_FIFO task cannot join a v1 cpu cgroup without RT bandwidth.)
# --state-tmpfs: the runtimes' state roots on a tmpfs, as /run is on most systems (where
#   /run is on an ext4 disk, replacing a state file by rename starts its writeback).
# With the defaults the whole bench takes about 2 minutes on a 2-core VM.
# Environment: BERTH (default: build/berth of this tree, else `berth` on PATH), RUNC, CRUN,
# BERTH2 (a second berth build, to compare two builds side by side).
# Runtime names: berth (a stripped copy on a read-only bind mount, as contrib/setup.sh
# installs it), berth-unsealed (a plain copy: berth re-executes from a sealed clone of
# itself on create, run and exec), berth2 (BERTH2, installed like berth), runc, crun.
#
# Everything runs in a private mount namespace with the cgroup2 mount of a hybrid layout
# unmounted, because crun 1.8 refuses hybrid cgroups; all runtimes go through the same
# namespace so that they see the same host. Containers get cgroupsPath /berth-bench/...
# and state roots under /run/berth-bench; both are removed at the end.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

runtimes=berth,runc,crun
iterations=100
warmup=3
par_count=50
par_jobs=2
par_rounds=3
sched=nice
state_tmpfs=0
spaced=30
spaced_only=0
phases=0
install=0
work=${TMPDIR:-/tmp}/berth-bench
state_base=/run/berth-bench
cg_parent=berth-bench

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }
die() { echo "bench: $*" >&2; exit 1; }
say() { echo "bench: $*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    --runtimes) runtimes=$2; shift 2 ;;
    --iterations|-n) iterations=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --parallel-count) par_count=$2; shift 2 ;;
    --parallel-jobs) par_jobs=$2; shift 2 ;;
    --parallel-rounds) par_rounds=$2; shift 2 ;;
    --sched) sched=$2; shift 2 ;;
    --state-tmpfs) state_tmpfs=1; shift ;;
    --spaced) spaced=$2; shift 2 ;;
    --spaced-only) spaced_only=1; shift ;;
    --phases) phases=1; shift ;;
    --workdir) work=$2; shift 2 ;;
    --install) install=1; shift ;;
    --inner) shift ;;  # set when re-executed inside the private mount namespace
    -h|--help) usage; exit 0 ;;
    *) die "unknown argument $1 (see --help)" ;;
  esac
done
case $sched in nice|none) ;; *) die "--sched: nice or none" ;; esac
IFS=, read -r -a rts <<< "$runtimes"
[ "$phases" = 1 ] && rts=(berth)
for rt in "${rts[@]}"; do
  case $rt in berth|berth-unsealed|berth2|runc|crun) ;; *) die "unknown runtime $rt (berth, berth-unsealed, berth2, runc, crun)" ;; esac
done

berth_src=${BERTH:-}
if [ -z "$berth_src" ]; then
  if [ -x "$repo/build/berth" ]; then berth_src=$repo/build/berth; else berth_src=$(command -v berth || true); fi
fi
runc_bin=$(command -v "${RUNC:-runc}" || true)
crun_bin=$(command -v "${CRUN:-crun}" || true)
berth2_src=${BERTH2:-}
profile=${SECCOMP_PROFILE:-$repo/tests/fixtures/seccomp/docker-default-seccomp.json}

# ---- prerequisites: say what is missing, install only with --install ----
check_prerequisites() {
  local missing=() pkgs=() hints=()
  [ "$(id -u)" = 0 ] || die "must run as root (containers with cgroups and all namespaces)"
  for c in cc unshare setsid mount umount mountpoint renice sed awk sort stat ldd; do
    if ! command -v "$c" >/dev/null; then
      missing+=("$c")
      case $c in cc) pkgs+=(gcc libc6-dev) ;; unshare|setsid|mountpoint) pkgs+=(util-linux) ;; mount|umount) pkgs+=(mount) ;; renice) pkgs+=(bsdutils) ;; esac
    fi
  done
  if [ ! -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
    missing+=("a static /bin/busybox"); pkgs+=(busybox-static)
  fi
  for rt in "${rts[@]}"; do
    case $rt in
      berth|berth-unsealed)
        [ -n "$berth_src" ] && [ -x "$berth_src" ] || {
          missing+=("berth binary"); hints+=("build it: cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DBERTH_TESTS=OFF && cmake --build build --target berth, or set BERTH"); } ;;
      berth2) [ -n "$berth2_src" ] && [ -x "$berth2_src" ] || { missing+=("BERTH2 binary"); hints+=("set BERTH2 to the berth build to compare"); } ;;
      runc) [ -n "$runc_bin" ] || { missing+=("runc${RUNC:+ ($RUNC)}"); pkgs+=(runc); } ;;
      crun) [ -n "$crun_bin" ] || { missing+=("crun${CRUN:+ ($CRUN)}"); pkgs+=(crun); } ;;
    esac
  done
  [ -r "$profile" ] || { missing+=("seccomp profile $profile"); hints+=("set SECCOMP_PROFILE to Docker's default profile (JSON)"); }
  [ ${#missing[@]} = 0 ] && return 0
  if [ "$install" = 1 ] && [ ${#pkgs[@]} -gt 0 ]; then
    say "installing: ${pkgs[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${pkgs[@]}"
    install=0
    runc_bin=$(command -v "${RUNC:-runc}" || true)
    crun_bin=$(command -v "${CRUN:-crun}" || true)
    check_prerequisites
    return
  fi
  say "missing: ${missing[*]}"
  [ ${#pkgs[@]} -gt 0 ] && say "Debian packages: ${pkgs[*]} (apt-get install them, or rerun with --install)"
  for h in "${hints[@]}"; do say "$h"; done
  exit 1
}

# ---- outside the namespace: check, then re-execute inside a private one ----
if [ -z "${BERTH_BENCH_INNER:-}" ]; then
  check_prerequisites
  export BERTH_BENCH_INNER=1 BERTH="$berth_src" BERTH2="$berth2_src" RUNC="$runc_bin" CRUN="$crun_bin" SECCOMP_PROFILE="$profile"
  args=(--inner --runtimes "$(IFS=,; echo "${rts[*]}")" --iterations "$iterations" --warmup "$warmup"
        --parallel-count "$par_count" --parallel-jobs "$par_jobs" --parallel-rounds "$par_rounds" --workdir "$work")
  args+=(--sched "$sched" --spaced "$spaced")
  [ "$spaced_only" = 1 ] && args+=(--spaced-only)
  [ "$state_tmpfs" = 1 ] && args+=(--state-tmpfs)
  [ "$phases" = 1 ] && args+=(--phases)
  if [ "$sched" = nice ]; then
    exec setsid --wait unshare --mount --propagation private -- "$0" "${args[@]}"
  fi
  exec unshare --mount --propagation private -- "$0" "${args[@]}"
fi

# ---- inside the private mount namespace ----
if [ "$sched" = nice ]; then
  # Autogroups weigh sessions against each other: nice alone counts only inside ours.
  if [ -w /proc/self/autogroup ]; then echo -10 > /proc/self/autogroup || die "cannot renice the autogroup"; fi
  renice -n -10 -p $$ >/dev/null || die "renice -10 failed"
fi
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then umount /sys/fs/cgroup/unified; fi

if [ -e "$work" ] && [ ! -e "$work/.berth-bench" ]; then die "$work exists and is not a bench work directory"; fi
rm -rf "$work"
mkdir -p "$work/bin" "$work/tmp" "$work/results"
touch "$work/.berth-bench"
results=$work/results
samples=$results/samples.txt
: > "$samples"

cc -O2 -Wall -o "$work/bin/driver" "$here/driver.c"
cc -O2 -Wall -o "$work/bin/floor" "$here/floor.c"

# berth as installed (stripped, on a read-only mount: no protective re-exec), and a plain copy.
install_berth() {  # SOURCE DIR
  mkdir -p "$2"
  if command -v strip >/dev/null; then strip -o "$2/berth" "$1"; else cp "$1" "$2/berth"; fi
}
command -v strip >/dev/null || say "strip (binutils) not found: berth is measured unstripped"
install_berth "$berth_src" "$work/bin/sealed"
install_berth "$berth_src" "$work/bin/unsealed"
mount --bind "$work/bin/sealed/berth" "$work/bin/sealed/berth"
mount -o remount,bind,ro "$work/bin/sealed/berth"
sealed=("$work/bin/sealed/berth")
if [ -n "$berth2_src" ]; then
  install_berth "$berth2_src" "$work/bin/berth2"
  mount --bind "$work/bin/berth2/berth" "$work/bin/berth2/berth"
  mount -o remount,bind,ro "$work/bin/berth2/berth"
  sealed+=("$work/bin/berth2/berth")
fi

rt_bin() {
  case $1 in
    berth) echo "$work/bin/sealed/berth" ;;
    berth-unsealed) echo "$work/bin/unsealed/berth" ;;
    berth2) echo "$work/bin/berth2/berth" ;;
    runc) echo "$runc_bin" ;;
    crun) echo "$crun_bin" ;;
  esac
}
rt_cmd() { echo "$(rt_bin "$1") --root $state_base/$1"; }

cleanup() {
  set +e
  for rt in "${rts[@]}"; do
    local cmd; cmd=$(rt_cmd "$rt")
    if [ -d "$state_base/$rt" ]; then
      for id in $(ls "$state_base/$rt" 2>/dev/null); do
        case $id in bench-*) $cmd delete --force "$id" >/dev/null 2>&1 ;; esac
      done
    fi
  done
  [ "$state_tmpfs" = 1 ] && umount "$state_base"
  rm -rf "$state_base"
  for h in /sys/fs/cgroup/*/; do
    [ -d "$h$cg_parent" ] && find "$h$cg_parent" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  for b in "${sealed[@]}"; do umount "$b" 2>/dev/null; done
}
trap cleanup EXIT
rm -rf "$state_base"
mkdir -p "$state_base"
# Private to this mount namespace: gone with it.
[ "$state_tmpfs" = 1 ] && mount -t tmpfs -o mode=0700 berth-bench "$state_base"
for rt in "${rts[@]}"; do mkdir -p "$state_base/$rt"; done

# ---- bundles: one rootfs, a config per runtime, kind and slot (each its own cgroupsPath) ----
BERTH=$work/bin/unsealed/berth sh "$repo/contrib/mkbundle.sh" "$work/template" /bin/true >/dev/null
[ -x "$work/bin/unsealed/berth" ] || die "no berth binary for \`spec\`"
mv "$work/template/rootfs" "$work/rootfs"
rootfs=$work/rootfs
# Docker's binds land on files its image layers already hold.
touch "$rootfs/etc/hostname" "$rootfs/etc/hosts" "$rootfs/etc/resolv.conf"
mkdir -p "$work/docker-files"
echo bench > "$work/docker-files/hostname"
printf '127.0.0.1\tlocalhost\n' > "$work/docker-files/hosts"
printf 'nameserver 127.0.0.1\n' > "$work/docker-files/resolv.conf"

# `berth spec` writes the newest ociVersion, which crun 1.8 refuses ("unknown version").
minimal_config() {  # RT KIND SLOT ARGS-JSON
  sed -e 's|"ociVersion": "[^"]*"|"ociVersion": "1.0.2-dev"|' \
      -e "s|\"path\": \"rootfs\"|\"path\": \"$rootfs\"|" \
      -e "s|^\t\t\t\"/bin/true\"\$|\t\t\t$4|" \
      -e "s|\"linux\": {|\"linux\": {\n\t\t\"cgroupsPath\": \"/$cg_parent/$1-$2-$3\",|" \
      "$work/template/config.json"
}
docker_config() {  # RT SLOT
  sed -e "s|@ROOTFS@|$rootfs|; s|@BUNDLE@|$work/docker-files|; s|@CGROUP@|/$cg_parent/$1-docker-$2|" \
      -e "/^@SECCOMP@\$/{r $profile" -e 'd}' "$here/docker-config.json.in"
}
for rt in "${rts[@]}"; do
  for slot in $(seq 0 $((par_jobs - 1))); do
    mkdir -p "$work/b/$rt/min-$slot" "$work/b/$rt/docker-$slot" "$work/b/$rt/sleep-$slot"
    minimal_config "$rt" min "$slot" '"/bin/true"' > "$work/b/$rt/min-$slot/config.json"
    minimal_config "$rt" sleep "$slot" '"sleep", "1000000"' > "$work/b/$rt/sleep-$slot/config.json"
    docker_config "$rt" "$slot" > "$work/b/$rt/docker-$slot/config.json"
  done
done

driver_args=(-t "$work/tmp" -n "$iterations" -w "$warmup")
for rt in "${rts[@]}"; do driver_args+=(-r "$rt=$(rt_cmd "$rt")"); done
drive() {  # MODE KIND [more driver args]
  local mode=$1 kind=$2; shift 2
  "$work/bin/driver" "$mode" "${driver_args[@]}" -b "$work/b/%r/$kind-%s" "$@" >> "$samples"
}

# The spaced mode: a fresh driver per sample (-n 1, nothing discarded inside it) after an
# idle gap (-g), runtimes interleaved round by round; the first $warmup rounds discarded.
drive_spaced() {  # MODE KIND LABEL
  local mode=$1 kind=$2 label=$3 i rt out
  for i in $(seq 1 $((warmup + spaced))); do
    for rt in "${rts[@]}"; do
      out=/dev/null
      [ "$i" -gt "$warmup" ] && out=$samples
      "$work/bin/driver" "$mode" -t "$work/tmp" -n 1 -w 0 -g 50-100 -l "$label" -r "$rt=$(rt_cmd "$rt")" \
        -b "$work/b/%r/$kind-%s" >> "$out"
    done
  done
}

# ---- statistics: "SCENARIO RUNTIME METRIC VALUE" → "SCENARIO RUNTIME METRIC N MEDIAN P90 MIN MAX" ----
summarize() {
  sort -k1,1 -k2,2 -k3,3 -k4,4g "$1" | awk '
    function flush() {
      if (n == 0) return
      med = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
      r = int(0.9 * n); if (r < 0.9 * n) r++; if (r < 1) r = 1
      printf "%s %d %.3f %.3f %.3f %.3f\n", key, n, med, v[r], v[1], v[n]
      n = 0
    }
    { k = $1 " " $2 " " $3; if (k != key) { flush(); key = k } v[++n] = $4 }
    END { flush() }'
}
stat_of() {  # STATS SCENARIO RUNTIME METRIC FIELD(median|p90|min|max|n)
  awk -v s="$2" -v r="$3" -v m="$4" -v f="$5" '
    $1 == s && $2 == r && $3 == m { i = (f == "n") ? 4 : (f == "median") ? 5 : (f == "p90") ? 6 : (f == "min") ? 7 : 8; print $i; exit }' "$1"
}
# The median of per-pair ratios RT/crun: the k-th sample of each in a scenario were taken
# side by side (interleaved), so each ratio saw the same load on the machine.
pair_ratio() {  # SAMPLES SCENARIO RUNTIME METRIC
  awk -v s="$2" -v r="$3" -v m="$4" '
    $1 == s && $3 == m && $2 == r { a[++na] = $4 }
    $1 == s && $3 == m && $2 == "crun" { b[++nb] = $4 }
    END {
      n = (na < nb) ? na : nb
      for (i = 1; i <= n; i++) q[i] = (b[i] > 0) ? a[i] / b[i] : 0
      if (n == 0) { print "-"; exit }
      for (i = 2; i <= n; i++) { x = q[i]; for (j = i - 1; j >= 1 && q[j] > x; j--) q[j + 1] = q[j]; q[j + 1] = x }
      printf "%.2f", (n % 2) ? q[(n + 1) / 2] : (q[n / 2] + q[n / 2 + 1]) / 2
    }' "$1"
}
fmt_ms() { awk -v x="$1" 'BEGIN { if (x == "") print "-"; else if (x >= 100) printf "%.0f", x; else if (x >= 10) printf "%.1f", x; else printf "%.2f", x }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f", a / b }'; }

machine_line() {
  local cpu kernel
  cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
  kernel=$(uname -r)
  echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); cpu: $cpu x $(nproc); kernel $kernel; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "scheduling: $sched; state roots: $state_base on $([ "$state_tmpfs" = 1 ] && echo tmpfs || findmnt -no FSTYPE -T "$state_base")"
  for rt in "${rts[@]}"; do
    echo "$rt: $("$(rt_bin "$rt")" --version 2>/dev/null | head -n1) ($(rt_bin "$rt"))"
  done
}

# ---- --phases: berth's create, phase by phase ----
# `berth --debug` logs "create: PHASE +MS ms" (parent) and "init: PHASE +MS ms" (the
# container init), each the time since the previous mark of the same process. The parent's
# marks follow one another, except "clone", "init joined the cgroups" and "pid recorded
# beside the init", which are inside "init ready" (cgroups → the init's ready message), as
# are the init's own marks ("waited for the parent's go" overlaps the join; the pid record
# follows the go and overlaps the init's namespaces and rootfs).
phase_records() {  # LOG KIND: one line per create and derived phase, after the warm-up
  sed -n 's/.*msg="\(create\|init\): \(.*\) +\([0-9.]*\) ms".*/\1:\2|\3/p' "$1" | tr ' ' _ |
    awk -F'|' -v k="$2" -v w="$warmup" -v walls="$3" '
      BEGIN { while ((getline line < walls) > 0) wall[++nw] = line }
      BEGIN { split("create:clone create:pid_recorded_beside_the_init create:init_joined_the_cgroups", a, " "); for (i in a) inside[a[i]] = 1
              split("init:rootfs_prepare init:mounts init:devices init:pivot init:after_pivot", b, " "); for (i in b) rootfs[b[i]] = 1 }
      { v[$1] += $2; if ($1 in rootfs) init += $2 }
      $1 == "create:finish" {
        if (++c > w) {
          sum = 0
          for (p in v) if (p ~ /^create:/ && !(p in inside)) sum += v[p]
          for (p in v) print k, "berth", p, v[p]
          print k, "berth", "create:sum", sum
          print k, "berth", "init_ready:rest", v["create:init_ready"] - v["create:clone"] - v["create:init_joined_the_cgroups"] - init
          print k, "berth", "init:sum", init
          if (c - w <= nw) print k, "berth", "outside", wall[c - w] - sum
        }
        delete v; init = 0
      }'
}
if [ "$phases" = 1 ]; then
  say "phases: $iterations create+start+delete cycles of berth --debug per bundle"
  machine_line | tee "$results/machine.txt"
  for kind in min docker; do
    log=$work/phases-$kind.log
    : > "$log"
    "$work/bin/driver" cycle -t "$work/tmp" -n "$iterations" -w "$warmup" -l "phases-$kind" \
      -r "berth=$(rt_cmd berth) --debug --log $log" -b "$work/b/%r/$kind-%s" > "$work/phases-$kind.samples"
    cat "$work/phases-$kind.samples" >> "$samples"
    awk '$3 == "create" { print $4 }' "$work/phases-$kind.samples" > "$work/phases-$kind.walls"
    phase_records "$log" "phases-$kind" "$work/phases-$kind.walls" >> "$samples"
  done
  summarize "$samples" > "$results/stats.txt"
  S=$results/stats.txt
  for kind in min docker; do
    echo
    echo "berth create, $([ $kind = min ] && echo "minimal" || echo "Docker-shaped") bundle: median (p90) ms over $iterations"
    printf '  %-54s %8s %8s\n' phase median p90
    for ph in create:config create:state create:plan create:cgroups create:init_ready create:clone \
              create:init_joined_the_cgroups "init:waited_for_the_parent's_go" create:pid_recorded_beside_the_init \
              init:namespaces init:rootfs_prepare init:mounts init:devices init:pivot init:after_pivot \
              init:sum init:process_attributes init_ready:rest create:finish create:sum outside create; do
      med=$(stat_of "$S" "phases-$kind" berth "$ph" median)
      [ -z "$med" ] && continue
      p90=$(stat_of "$S" "phases-$kind" berth "$ph" p90)
      case $ph in
        create:init_ready) label="init ready (cgroups → the init's ready message):" ;;
        create:clone) label="    clone3 with the namespaces" ;;
        create:init_joined_the_cgroups) label="    the parent joins the init to the cgroups" ;;
        "init:waited_for_the_parent's_go") label="    init: waited for the go (overlaps the join)" ;;
        create:pid_recorded_beside_the_init) label="    the init's pid to state.json (beside the init)" ;;
        init:namespaces|init:process_attributes) label=${ph#init:}; label="    init: ${label//_/ }" ;;
        init:sum) label="    init: rootfs, all phases" ;;
        init:*) label=${ph#init:}; label="      init: ${label//_/ }" ;;
        init_ready:rest) label="    rest: ns, attributes, payload, seccomp, sync" ;;
        create:sum) label="sum of the create phases" ;;
        outside) label="outside them: exec, loader, flags, exit" ;;
        create) label="create, wall time of the call" ;;
        *) label=${ph#create:}; label=${label//_/ } ;;
      esac
      printf '  %-54s %8s %8s\n' "$label" "$(fmt_ms "$med")" "$(fmt_ms "$p90")"
    done
    for ph in start delete; do
      printf '  %-54s %8s %8s\n' "$ph, wall time of the call" "$(fmt_ms "$(stat_of "$S" "phases-$kind" berth $ph median)")" \
        "$(fmt_ms "$(stat_of "$S" "phases-$kind" berth $ph p90)")"
    done
  done | tee "$results/phases.txt"
  say "raw samples and logs: $results, $work/phases-*.log"
  exit 0
fi

# ---- the bench ----
start=$(date +%s)
machine_line | tee "$results/machine.txt"
if [ "$spaced_only" = 0 ]; then
  say "1/8 --version";                     drive version min
  say "2/8 run /bin/true";                 drive run min
  say "3/8 create+start+wait+delete";      drive cycle min
  say "4/8 the same, Docker-shaped";       drive cycle docker -l cycle-docker
  say "5/8 exec, state, list";             drive running sleep
  say "6/8 $par_count containers, $par_jobs in parallel"
  "$work/bin/driver" parallel "${driver_args[@]}" -n "$par_rounds" -w 1 -c "$par_count" -j "$par_jobs" \
    -b "$work/b/%r/min-%s" >> "$samples"
  say "7/8 floor"
  "$work/bin/floor" -r "$rootfs" -n "$iterations" -w "$warmup" -g "$cg_parent/floor" exec ns net cgroup >> "$samples"
fi
if [ "$spaced" -gt 0 ]; then
  say "8/8 spaced: $spaced samples per runtime, each after an idle gap of 50-100 ms"
  drive_spaced run min run-spaced
  drive_spaced cycle min cycle-spaced
  drive_spaced cycle docker cycle-docker-spaced
  "$work/bin/driver" running "${driver_args[@]}" -n "$spaced" -g 50-100 -b "$work/b/%r/sleep-%s" |
    sed -n 's/^exec /exec-spaced /p' >> "$samples"
fi
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$results/machine.txt"
summarize "$samples" > "$results/stats.txt"

# ---- report ----
has_crun=0; for rt in "${rts[@]}"; do [ "$rt" = crun ] && has_crun=1; done
S=$results/stats.txt
row() {  # LABEL SCENARIO METRIC UNIT
  local label=$1 scen=$2 metric=$3 unit=$4 line cr=""
  line=$(printf '%-34s' "$label ($unit)")
  [ "$has_crun" = 1 ] && cr=$(stat_of "$S" "$scen" crun "$metric" median)
  for rt in "${rts[@]}"; do
    local med p90 cell
    med=$(stat_of "$S" "$scen" "$rt" "$metric" median)
    p90=$(stat_of "$S" "$scen" "$rt" "$metric" p90)
    if [ "$unit" = KiB ]; then cell=$(printf '%s' "${med%.*}"); else cell="$(fmt_ms "$med") ($(fmt_ms "$p90"))"; fi
    line+=$(printf ' %16s' "$cell")
  done
  if [ "$has_crun" = 1 ]; then
    for rt in "${rts[@]}"; do
      [ "$rt" = crun ] && continue
      line+=$(printf ' %9s' "$(ratio "$(stat_of "$S" "$scen" "$rt" "$metric" median)" "$cr")")
    done
  fi
  echo "$line"
}
{
  echo
  echo "median (p90) over $([ "$spaced_only" = 1 ] && echo "$spaced" || echo "$iterations") samples after $warmup warm-up, interleaved; ms unless noted"
  hdr=$(printf '%-34s' "")
  for rt in "${rts[@]}"; do hdr+=$(printf ' %16s' "$rt"); done
  if [ "$has_crun" = 1 ]; then
    for rt in "${rts[@]}"; do [ "$rt" = crun ] || hdr+=$(printf ' %9s' "$rt/crun"); done
  fi
  echo "$hdr"
  if [ "$spaced_only" = 0 ]; then
  row "--version" version wall ms
  row "run /bin/true" run wall ms
  row "  cpu (runtime + container)" run cpu ms
  row "create+start+wait+delete" cycle wall ms
  row "  create" cycle create ms
  row "  start" cycle start ms
  row "  wait for exit" cycle exit ms
  row "  delete" cycle delete ms
  row "  cpu (runtime + container)" cycle cpu ms
  row "the same, Docker-shaped" cycle-docker wall ms
  row "  create" cycle-docker create ms
  row "  start" cycle-docker start ms
  row "  wait for exit" cycle-docker exit ms
  row "  delete" cycle-docker delete ms
  row "  cpu (runtime + container)" cycle-docker cpu ms
  row "exec /bin/true" exec wall ms
  row "state" state wall ms
  row "list (1 container)" list wall ms
  row "peak RSS, create minimal" cycle rss KiB
  row "peak RSS, create Docker-shaped" cycle-docker rss KiB
  row "peak RSS, run" run rss KiB
  row "peak RSS, exec" exec rss KiB
  row "$par_count containers, $par_jobs parallel" parallel wall ms
  fi
  if [ "$spaced" -gt 0 ]; then
    echo "spaced ($spaced samples, each after an idle gap of 50-100 ms; run and cycles a fresh driver each):"
    row "run /bin/true" run-spaced wall ms
    row "  cpu (runtime + container)" run-spaced cpu ms
    row "create+start+wait+delete" cycle-spaced wall ms
    row "  create" cycle-spaced create ms
    row "  cpu (runtime + container)" cycle-spaced cpu ms
    row "the same, Docker-shaped" cycle-docker-spaced wall ms
    row "  create" cycle-docker-spaced create ms
    row "  start" cycle-docker-spaced start ms
    row "  delete" cycle-docker-spaced delete ms
    row "  cpu (runtime + container)" cycle-docker-spaced cpu ms
    row "exec /bin/true" exec-spaced wall ms
    row "peak RSS, create minimal" cycle-spaced rss KiB
  fi
  line=$(printf '%-34s' "binary size (KiB)")
  for rt in "${rts[@]}"; do
    b=$(rt_bin "$rt")
    case $rt in berth|berth-unsealed) b=$berth_src ;; berth2) b=$berth2_src ;; esac
    s=$(( $(stat -L -c %s "$b") / 1024 ))
    case $rt in berth*) s="$s/$(( $(stat -c %s "$(rt_bin "$rt")") / 1024 ))" ;; esac
    line+=$(printf ' %16s' "$s")
  done
  echo "$line"
  line=$(printf '%-34s' "shared objects loaded")
  for rt in "${rts[@]}"; do
    line+=$(printf ' %16s' "$(ldd "$(rt_bin "$rt")" 2>/dev/null | grep -vc 'linux-vdso\|ld-linux')")
  done
  echo "$line"
  echo "  (berth's size: as built / stripped as installed; runc and crun: Debian's stripped binaries)"
  [ "$spaced_only" = 0 ] && echo && echo "floor (no runtime), median (p90) ms:"
  for l in exec ns net cgroup cgroup-mkdir cgroup-attach cgroup-rmdir; do
    [ "$spaced_only" = 1 ] && break
    case $l in
      exec) d="fork + exec + wait of busybox /bin/true" ;;
      ns) d="+ mount/uts/ipc/pid ns, pivot_root, proc" ;;
      net) d="+ network namespace, lo up" ;;
      cgroup) d="+ cgroup in every hierarchy, limits, attach, rmdir" ;;
      cgroup-mkdir) d="  of which mkdir and limits" ;;
      cgroup-attach) d="  of which the cgroup.procs writes" ;;
      cgroup-rmdir) d="  of which rmdir" ;;
    esac
    printf '  %-52s %8s (%s)\n' "$d" "$(fmt_ms "$(stat_of "$S" floor "$l" wall median)")" "$(fmt_ms "$(stat_of "$S" floor "$l" wall p90)")"
  done
  if [ "$has_crun" = 1 ]; then
    echo
    echo "targets (the performance goals; berth's median / crun's median; the wall time is what the target means,"
    echo "the CPU time of the same calls is shown because other load on the machine moves it much less):"
    for t in "run:wall:0.5:run /bin/true" "cycle:wall:0.5:create+start+delete" \
             "cycle-docker:wall:0.4:Docker-shaped create+start+delete" "exec:wall:0.5:exec /bin/true" \
             "cycle:rss:1.0:peak RSS of create" "run:rss:1.0:peak RSS of run" "exec:rss:1.0:peak RSS of exec" \
             "run-spaced:wall:0.5:spaced run /bin/true" "cycle-spaced:wall:0.5:spaced create+start+delete" \
             "cycle-docker-spaced:wall:0.4:spaced Docker-shaped cycle" "exec-spaced:wall:0.5:spaced exec /bin/true"; do
      IFS=: read -r scen metric target what <<< "$t"
      for rt in "${rts[@]}"; do
        case $rt in berth*) ;; *) continue ;; esac
        [ -z "$(stat_of "$S" "$scen" crun "$metric" median)" ] && continue  # a mode not run
        r=$(ratio "$(stat_of "$S" "$scen" "$rt" "$metric" median)" "$(stat_of "$S" "$scen" crun "$metric" median)")
        verdict=$(awk -v r="$r" -v t="$target" 'BEGIN { print (r != "-" && r <= t) ? "met" : "NOT met" }')
        cpu=""
        [ "$metric" = wall ] && cpu="  (cpu $(ratio "$(stat_of "$S" "$scen" "$rt" cpu median)" "$(stat_of "$S" "$scen" crun cpu median)") x)"
        case $scen in *-spaced) cpu+="  (pairs $(pair_ratio "$samples" "$scen" "$rt" "$metric"))" ;; esac
        printf '  %-15s %-34s %5s x crun, target <= %s: %-7s%s\n' "$rt" "$what" "$r" "$target" "$verdict" "$cpu"
      done
    done
  fi
  # The floor target needs no crun: run against the kernel floor of the same run (the last
  # step, cgroups in every hierarchy, is what a runtime's run does at the least).
  for rt in "${rts[@]}"; do
    case $rt in berth*) ;; *) continue ;; esac
    [ "$spaced_only" = 1 ] && continue  # no floor measured
    r=$(ratio "$(stat_of "$S" run "$rt" wall median)" "$(stat_of "$S" floor cgroup wall median)")
    verdict=$(awk -v r="$r" 'BEGIN { print (r != "-" && r <= 2.5) ? "met" : "NOT met" }')
    printf '  %-15s %-34s %5s x floor, target <= 2.5: %s\n' "$rt" "run /bin/true" "$r" "$verdict"
  done
  echo
  echo "took $(( $(date +%s) - start )) s; raw samples: $samples"
} | tee "$results/report.txt"
