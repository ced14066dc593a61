#!/usr/bin/env bash
# Copyright The berth authors.
# SPDX-License-Identifier: Apache-2.0
#
# Runs runc's own integration suite (the bats files in tests/integration of
# Debian's runc source package) against an OCI runtime binary, berth or runc,
# and compares the results with conformance/expectations/runc-bats-<name>.txt.
# See docs/conformance.md ("runc's integration suite").
#
# Exit status: 0 every result was expected, 1 an unexpected result (a new
# failure, an expected failure that passed, or something left behind), 2 the
# suite could not be fetched, built or run, 77 skipped (not root).

set -uo pipefail
shopt -s nullglob

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Bump when the way the suite is staged or built changes: forces a rebuild.
readonly build_recipe=3
readonly source_package=runc

# What the suite and its helpers need, as Debian packages. The helpers' Go imports
# (GOPATH mode, /usr/share/gocode) are the packages that hold what `go list -deps` names
# for recvtty, sd-helper and seccompagent (-tags seccomp: cgo, libseccomp): 13 of runc's
# build dependencies. `apt-get build-dep runc` would add 31 more (debhelper, autotools,
# criu, netlink...) that no helper imports.
readonly run_packages=(bats jq gawk gcc libc6-dev busybox-static xz-utils tar iproute2
  util-linux procps dpkg-dev golang-go pkg-config libseccomp-dev
  golang-dbus-dev golang-github-cilium-ebpf-dev golang-github-containerd-console-dev
  golang-github-coreos-go-systemd-dev golang-github-cpuguy83-go-md2man-v2-dev
  golang-github-cyphar-filepath-securejoin-dev golang-github-moby-sys-dev
  golang-github-opencontainers-specs-dev golang-github-russross-blackfriday-v2-dev
  golang-github-seccomp-libseccomp-golang-dev golang-github-sirupsen-logrus-dev
  golang-github-urfave-cli-dev golang-golang-x-sys-dev)

# The fast subset (--fast), which CI runs: every .bats file of the suite, so that a
# regression any file would catch is caught (seccomp.bats' defaultErrnoRet=ENXIO case was
# missed while the subset was 21 files). Whole files, but for the two longest, whose
# FILE:REGEX entries keep the cases that cover distinct code (update: the v1/v2 limits,
# cpu, devices and a paused container; tty: a run and an exec through the console socket,
# the owner and the console size). Measured times are in docs/conformance.md.
readonly fast_files=(version help spec create start start_detached start_hello state list
  delete kill pause ps exec events cwd umask mask dev root run
  cgroup_delegation cgroups checkpoint debug hooks mounts mounts_recursive mounts_sshfs
  no_pivot seccomp seccomp-notify seccomp-notify-compat userns
  'update:common limits|cgroup cpu limits|devices|paused container'
  'tty:tty ptsname|tty owner\] \(|tty consolesize|-d \[terminal=false')

# Other apt users on the host (another suite's setup) hold dpkg's lock for a while.
readonly apt_wait=(-o DPkg::Lock::Timeout=600)

say() { printf 'runc-bats: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

usage() {
  cat <<'EOF'
usage: conformance/runc-bats.sh [options] [FILE[:REGEX]...]

Fetches Debian's runc source package, builds the suite's helpers (recvtty,
sd-helper, seccompagent) and runs runc's bats integration tests (all files, the
fast subset, or the named files, e.g. `exec` or `update:cpu`) against RUNTIME.

options:
  --runtime PATH        runtime binary (default: $RUNTIME, else `runc` from PATH)
  --work DIR            cache, build and result dir (default: conformance/.work/runc-bats)
  --fast                only the fast subset of files (see docs/conformance.md)
  --timeout SECONDS     a file without a new result for this long is unstuck (default: 180)
  --expectations FILE   expected failures (default: conformance/expectations/
                        runc-bats-<name>.txt, <name> the runtime binary's basename)
  --build-only          fetch and build the suite, run nothing
  --list                print the file and test names and exit
  -h, --help            this text
EOF
}

# ---------------------------------------------------------------- options
runtime=${RUNTIME:-runc}
work_dir="$script_dir/.work/runc-bats"
timeout_s=180
expectations_file=""
fast=0
build_only=0
list_only=0
selected=()

parse_args() {
  while (($#)); do
    case $1 in
      --runtime) runtime=${2:?--runtime needs a path}; shift ;;
      --runtime=*) runtime=${1#*=} ;;
      --work) work_dir=${2:?--work needs a dir}; shift ;;
      --work=*) work_dir=${1#*=} ;;
      --timeout) timeout_s=${2:?--timeout needs seconds}; shift ;;
      --timeout=*) timeout_s=${1#*=} ;;
      --expectations) expectations_file=${2:?--expectations needs a file}; shift ;;
      --expectations=*) expectations_file=${1#*=} ;;
      --fast) fast=1 ;;
      --build-only) build_only=1 ;;
      --list) list_only=1 ;;
      -h|--help) usage; exit 0 ;;
      -*) usage >&2; die "unknown option $1" ;;
      *) selected+=("$1") ;;
    esac
    shift
  done
  [[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout wants a positive number of seconds"
  mkdir -p "$work_dir" || die "cannot create $work_dir"
  work_dir=$(cd "$work_dir" && pwd)
}

# ---------------------------------------------------------------- packages
missing_packages() {
  local p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || echo "$p"
  done
}

# apt-get source needs deb-src entries; the host's list may have only
# binary ones. Adds them (same mirrors, same suites) in a file of their own.
ensure_deb_src() {
  apt-get source --print-uris -qq "$source_package" >/dev/null 2>&1 && return 0
  local f=/etc/apt/sources.list.d/berth-deb-src.sources src
  src=$(grep -l '^Types:.*deb' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  if [ -n "$src" ]; then
    sed -E 's/^Types:.*/Types: deb-src/' "$src" >"$f"
  elif [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/berth-deb-src.list
  fi
  say "added deb-src entries; apt-get update"
  apt-get update -qq >&2 || return 1
}

ensure_packages() {
  local missing
  missing=$(missing_packages "${run_packages[@]}")
  if [ -n "$missing" ]; then
    say "installing" $missing
    apt-get update -qq >&2 || return 1
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive apt-get "${apt_wait[@]}" install -y -qq --no-install-recommends $missing >&2 ||
      return 1
  fi
  ensure_deb_src || return 1
}

# ---------------------------------------------------------------- source and helpers
# Fetches and unpacks the source package once (a stamp names the version and the
# recipe); the staged copy's get-images.sh is replaced by one that names local images.
stage_suite() {
  local version stamp cache="$work_dir/cache"
  version=$(apt-cache showsrc "$source_package" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
  [ -n "$version" ] || { say "no source package $source_package in apt's lists"; return 1; }
  stamp="$version recipe $build_recipe"
  suite_root="$work_dir/gopath/src/github.com/opencontainers/runc"
  if [ "$(cat "$work_dir/stamp" 2>/dev/null)" = "$stamp" ] && [ -d "$suite_root/tests/integration" ]; then
    suite_version=$version
    return 0
  fi
  say "fetching $source_package $version"
  rm -rf "$cache" "$work_dir/gopath" "$work_dir/stamp"
  mkdir -p "$cache" "$(dirname "$suite_root")" || return 1
  chown _apt "$cache" 2>/dev/null  # apt-get source downloads as _apt where it can
  (cd "$cache" && apt-get source --download-only -qq "$source_package=$version" >&2 2>&1) || return 1
  local dsc
  dsc=$(echo "$cache"/*.dsc)
  [ -f "$dsc" ] || { say "apt-get source left no .dsc"; return 1; }
  dpkg-source --no-check -x "$dsc" "$suite_root" >/dev/null || return 1
  build_helpers || return 1
  build_images || return 1
  echo "$stamp" >"$work_dir/stamp"
  suite_version=$version
}

# recvtty, sd-helper and seccompagent, built in GOPATH mode against Debian's
# golang-*-dev packages (the +ds source has no vendor tree); one job, nice. The
# seccompagent without the `seccomp` tag (cgo, libseccomp) only prints "Not supported".
build_helpers() {
  local h
  for h in recvtty sd-helper seccompagent; do
    say "building helper $h"
    (cd "$suite_root" && GO111MODULE=off GOPATH="$work_dir/gopath:/usr/share/gocode" \
      GOCACHE="$work_dir/gocache" GOFLAGS=-p=1 nice -n 10 go build -tags seccomp \
      -o "contrib/cmd/$h/$h" "./contrib/cmd/$h" >&2) || { say "cannot build $h"; return 1; }
  done
}

# The suite downloads a busybox image and a Debian image from GitHub; neither is
# reachable here. Both are replaced by tarballs built from Debian's busybox-static:
# "busybox" is the usual busybox rootfs, "debian" adds the host's static ldconfig,
# the one thing of Debian's the only test using it (hooks.bats) runs in it.
build_images() {
  local r="$work_dir/images/rootfs" img="$work_dir/images" a
  [ -x /bin/busybox ] || { say "needs /bin/busybox (Debian: busybox-static)"; return 1; }
  if LC_ALL=C ldd /bin/busybox >/dev/null 2>&1; then
    say "/bin/busybox is dynamically linked; the images need busybox-static"; return 1
  fi
  # No /proc and /sys, as in the image: mask.bats makes them symlinks with `ln -s`, which
  # would otherwise put the link inside the directory and test nothing.
  rm -rf "$img" && mkdir -p "$r"/{bin,sbin,dev,etc,home,lib,root,tmp,usr/bin,usr/sbin,var/tmp} ||
    return 1
  cp /bin/busybox "$r/bin/busybox" || return 1
  for a in $(/bin/busybox --list); do
    [ "$a" = busybox ] || ln -sf busybox "$r/bin/$a"
  done
  # Users and groups as in the busybox image the suite downloads.
  printf '%s\n' root:x:0:0:root:/root:/bin/sh daemon:x:1:1:daemon:/usr/sbin:/bin/false \
    bin:x:2:2:bin:/bin:/bin/false sys:x:3:3:sys:/dev:/bin/false \
    nobody:x:65534:65534:nobody:/home:/bin/false >"$r/etc/passwd"
  printf '%s\n' root:x:0: daemon:x:1: bin:x:2: sys:x:3: tty:x:5: users:x:100: \
    nogroup:x:65534: >"$r/etc/group"
  chmod 1777 "$r/tmp" "$r/var/tmp"
  tar -C "$r" -cJf "$img/busybox.tar.xz" . || return 1
  local ldc
  ldc=$(readlink -f /sbin/ldconfig)
  LC_ALL=C ldd "$ldc" 2>&1 | grep -qE 'not a dynamic|statically linked' ||
    { say "/sbin/ldconfig is not static"; return 1; }
  cp "$ldc" "$r/sbin/ldconfig" && : >"$r/etc/ld.so.conf" || return 1
  tar -C "$r" -cJf "$img/debian.tar.xz" . || return 1
  rm -rf "$r"
  cat >"$suite_root/tests/integration/get-images.sh" <<EOF
#!/bin/bash
# Replaced by berth's conformance/runc-bats.sh: local images, no download.
echo BUSYBOX_IMAGE=$img/busybox.tar.xz
echo DEBIAN_IMAGE=$img/debian.tar.xz
EOF
}

# ---------------------------------------------------------------- selection
test_names() {  # test_names FILE: the @test names of one .bats file
  sed -nE 's/^@test "(.*)" \{$/\1/p' "$suite_root/tests/integration/$1.bats"
}

select_files() {
  local f
  files=()
  if ((${#selected[@]})); then
    for f in "${selected[@]}"; do files+=("${f%%:*}"); done
  elif ((fast)); then
    selected=("${fast_files[@]}")
    for f in "${selected[@]}"; do files+=("${f%%:*}"); done
  else
    for f in "$suite_root"/tests/integration/*.bats; do f=${f##*/}; files+=("${f%.bats}"); done
  fi
  for f in "${files[@]}"; do
    [ -f "$suite_root/tests/integration/$f.bats" ] || die "no file $f.bats in the suite"
  done
}

filter_of() {  # filter_of FILE: the REGEX given as FILE:REGEX, if any
  local s
  for s in "${selected[@]}"; do
    [[ $s == "$1:"* ]] && { echo "${s#*:}"; return; }
  done
}

# ---------------------------------------------------------------- expectations
# Lines "FILE: TEST NAME  # reason"; prints the reason for FILE: TEST if listed.
expected_reason() {
  [ -f "$expectations_file" ] || return 1
  awk -v key="$1" '
    /^[ \t]*(#|$)/ { next }
    { i = index($0, "  # "); head = i ? substr($0, 1, i - 1) : $0; sub(/[ \t]+$/, "", head)
      if (head == key) { print (i ? substr($0, i + 4) : "(no reason given)"); found = 1; exit } }
    END { exit !found }' "$expectations_file"
}

# ---------------------------------------------------------------- run and clean up
# The suite runs in cgroups of its own in every hierarchy: runc and berth put a
# container without cgroupsPath below the caller's cgroup, so nothing lands elsewhere.
make_run_cgroup() {
  local mp
  run_cgroups=()
  while read -r mp; do
    mkdir -p "$mp/$cg_name" || return 1
    if [ -f "$mp/cpuset.cpus" ]; then
      cat "$mp/cpuset.cpus" >"$mp/$cg_name/cpuset.cpus" && cat "$mp/cpuset.mems" >"$mp/$cg_name/cpuset.mems" ||
        return 1
    fi
    run_cgroups+=("$mp/$cg_name")
  done < <(awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo | sort -u)
}

cmdline() { { tr '\0' ' ' <"/proc/$1/cmdline"; } 2>/dev/null; }

# remove_cgroup DIR: kills what is left in DIR and below (our suite's processes),
# removes the directories leaf first; prints what it found.
remove_cgroup() {
  local d pid
  [ -d "$1" ] || return 0
  while read -r d; do
    # SIGKILL waits for a frozen task to thaw.
    grep -qs FROZEN "$d/freezer.state" && echo THAWED >"$d/freezer.state"
    grep -qs 1 "$d/cgroup.freeze" && echo 0 >"$d/cgroup.freeze"
    for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do
      echo "process $pid ($(cmdline "$pid" | cut -c1-60)) in $d"
      kill -9 "$pid" 2>/dev/null
    done
  done < <(find "$1" -mindepth 0 -type d 2>/dev/null | sort -r)
  sleep 0.2
  while read -r d; do
    rmdir "$d" 2>/dev/null || { sleep 0.5; rmdir "$d" 2>/dev/null; } || echo "cannot remove cgroup $d"
  done < <(find "$1" -mindepth 0 -type d 2>/dev/null | sort -r)
}

# remove_tmp: the run's temp dir, after unmounting what an interrupted file left below
# it (never crossing into a mount: a bind mount there may show host files).
remove_tmp() {
  local m
  while read -r m; do umount -l "$m" 2>/dev/null; done < <(mounts_below "$run_tmp")
  rm -rf --one-file-system "$run_tmp"
}

mounts_below() {  # mounts_below DIR: mount points below DIR, deepest first
  awk -v p="$1/" 'index($5, p) == 1 { print $5 }' /proc/self/mountinfo | sort -r
}

# check_leftovers FILE: processes, containers, mounts and cgroups FILE left behind;
# prints one line each and removes them. Run after each file.
check_leftovers() {
  local d c m mp
  cat "$results/$1.left" 2>/dev/null
  while read -r d; do
    for c in $("$runtime_path" --root "$d" list -q 2>/dev/null); do
      echo "container $c in $d"
      "$runtime_path" --root "$d" delete -f "$c" >/dev/null 2>&1
    done
  done < <(find "$run_tmp" -type d -name state 2>/dev/null)
  while read -r m; do
    echo "mount $m"
    umount -l "$m" 2>/dev/null
  done < <(mounts_below "$run_tmp")
  for mp in "${run_cgroups[@]}"; do
    for d in "$mp"/*/; do
      d=${d%/}
      echo "cgroup $d"
      remove_cgroup "$d"
    done
  done
  # The suite's parent cgroup for explicit cgroupsPath tests: its teardown removes it
  # (and a pod cgroup below it) from the v1 hierarchies only, so on a hybrid host empty
  # cgroup2 ones stay (with runc too). A container's own cgroup (test-cgroup-N) or a
  # process anywhere below is something left behind.
  while read -r mp; do
    d="$mp/runc-cgroups-integration-test"
    [ -d "$d" ] || continue
    find "$d" -type d -name 'test-cgroup-*' 2>/dev/null | sed 's/^/cgroup /'
    while read -r c; do  # cgroupfs files show size 0: read them
      [ -n "$(head -c1 "$c" 2>/dev/null)" ] && echo "cgroup ${c%/cgroup.procs} (has processes)"
    done < <(find "$d" -name cgroup.procs 2>/dev/null)
    remove_cgroup "$d" >/dev/null
  done < <(awk '$9 == "cgroup" || $9 == "cgroup2" { print $5 }' /proc/self/mountinfo | sort -u)
}

# run_file FILE: runs one .bats file; its TAP output goes to $results/FILE.tap.
run_file() {
  local f=$1 filter args=()
  filter=$(filter_of "$f")
  [ -n "$filter" ] && args+=(--filter "$filter")
  mkdir -p "$run_tmp"
  : >"$results/$f.tap"
  # The suite's userns tests need every directory above the bundle searchable.
  chmod a+x "$run_tmp"
  (
    exec 9>&-  # the run's lock stays with the runner, not with what the suite leaves
    for d in "${run_cgroups[@]}"; do echo "$BASHPID" >"$d/cgroup.procs" || exit 2; done
    cd "$suite_root/tests/integration" || exit 2
    # Not BATS_TEST_TIMEOUT: bats 1.8 runs its timer as a background job of the test's
    # shell, and the suite's bare `wait` (events.bats) then waits for the timer too.
    export RUNC="$runtime_path"
    # A controlling terminal, as in runc's CI: `runc spec` sets process.terminal, and a
    # foreground `run` with a terminal and no --console-socket uses the caller's tty
    # (runc: "open /dev/tty: no such device or address" without one). script(1) gives
    # bats a pty for that; the TAP output still goes to a file, not through the pty.
    local cmd
    cmd=$(printf '%q ' "$reaper" reap bats --tap --timing --tempdir "$run_tmp/bats" "${args[@]}" "$f.bats")
    exec nice -n 10 script -qefc "$cmd >$(printf '%q' "$results/$f.tap") 2>$(printf '%q' "$results/$f.stderr")" \
      /dev/null
  ) >"$results/$f.script" 2>&1 </dev/null &
  local pid=$! size=-1 now last tries=0
  last=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    sleep 2
    now=$(date +%s)
    if [ "$(stat -c %s "$results/$f.tap")" != "$size" ]; then
      size=$(stat -c %s "$results/$f.tap"); last=$now; tries=0
    elif ((now - last > timeout_s)); then
      tries=$((tries + 1)); last=$now
      if ((tries == 1)); then
        unstick "$f" >>"$results/$f.stderr"
      else
        echo "runc-bats: $f.bats: still no progress; killing the file's run" >>"$results/$f.stderr"
        echo "not ok 999 (the rest of $f.bats: killed after $((2 * timeout_s)) s without progress)" \
          >>"$results/$f.tap"
        kill_run_cgroups
      fi
    fi
  done
  wait "$pid"
  rm -rf --one-file-system "$run_tmp/bats"
  # The reaper names (and kills) what outlived bats: a process left behind.
  sed -n 's/^helper reap: \(process .*\) outlived the run.*/\1/p' "$results/$f.stderr" >"$results/$f.left"
}

# kill_run_cgroups: kills every process of the run (bats included), thawing first.
kill_run_cgroups() {
  local d pid
  for d in "${run_cgroups[@]}"; do
    grep -qs FROZEN "$d/freezer.state" && echo THAWED >"$d/freezer.state"
    for pid in $(cat "$d/cgroup.procs" 2>/dev/null); do kill -9 "$pid" 2>/dev/null; done
  done
}

# A test that hangs, typically in a `run -d` that never returns (seen: a container
# started in a frozen cgroup), holds the file up. Thaws what the suite froze and
# kills the runtime processes the suite started, so that the test fails and the
# file goes on.
unstick() {
  local d pid
  echo "runc-bats: $1.bats: no progress for $timeout_s s; thawing, killing $runtime_path and recvtty"
  while read -r d; do
    case $d in
      */freezer.state) grep -q FROZEN "$d" && echo THAWED >"$d" ;;
      */cgroup.freeze) grep -q 1 "$d" && echo 0 >"$d" ;;
    esac
  done < <(find "${run_cgroups[@]}" /sys/fs/cgroup/*/runc-cgroups-integration-test \
             /sys/fs/cgroup/runc-cgroups-integration-test \( -name freezer.state -o -name cgroup.freeze \) \
             2>/dev/null)
  # The suite's recvtty in "single" mode waits forever when the runtime failed to
  # send it a console (update.bats starts one the test's teardown does not end).
  local exe
  for pid in $(cat "${run_cgroups[@]/%//cgroup.procs}" 2>/dev/null); do
    exe=$(cmdline "$pid" | cut -d' ' -f1)
    [[ $exe == "$runtime_path" || $exe == */contrib/cmd/recvtty/recvtty ]] || continue
    echo "runc-bats: killing $pid: $(cmdline "$pid" | cut -c1-200)"
    kill -9 "$pid" 2>/dev/null
  done
}

# TAP lines to "STATUS<tab>FILE: NAME<tab>seconds"; bats --timing adds " in Nms".
parse_tap() {
  local f=$1
  sed -nE 's/^(ok|not ok) [0-9]+ (.*)$/\1\t\2/p' "$results/$f.tap" | while IFS=$'\t' read -r st rest; do
    local status=PASS name=$rest ms=""
    if [[ $rest =~ ^(.*)\ \#\ skip(.*)$ ]]; then status=SKIP; name=${BASH_REMATCH[1]}; fi
    if [[ $name =~ ^(.*)\ in\ ([0-9]+)ms(\ \#\ .*)?$ ]]; then name=${BASH_REMATCH[1]}; ms=${BASH_REMATCH[2]}; fi
    [ "$st" = "not ok" ] && status=FAIL
    printf '%s\t%s: %s\t%s\n' "$status" "$f" "$name" "$ms"
  done
}

# ---------------------------------------------------------------- main
main() {
  parse_args "$@"
  if ((EUID != 0)); then say "SKIP: runc's integration suite needs root"; exit 77; fi
  runtime_path=$(command -v "$runtime") || die "runtime $runtime not found"
  runtime_path=$(readlink -f "$runtime_path")
  local name
  name=$(basename "$runtime")
  [ -n "$expectations_file" ] || expectations_file="$script_dir/expectations/runc-bats-$name.txt"
  ensure_packages || die "cannot install what the suite needs"
  # One build at a time per work dir (tests/run-all.sh builds ahead with --build-only).
  mkdir -p "$work_dir" && exec 8>"$work_dir/.build.lock" && flock 8 || die "cannot lock $work_dir/.build.lock"
  stage_suite || die "cannot fetch or build runc's integration suite"
  exec 8>&-
  ((build_only)) && { say "suite ready in $suite_root"; exit 0; }
  select_files
  if ((list_only)); then
    local f
    for f in "${files[@]}"; do test_names "$f" | sed "s/^/$f: /"; done
    exit 0
  fi

  # The suite's explicit cgroupsPaths share one fixed parent (/runc-cgroups-integration-test)
  # that each test's teardown removes: two runs on one host break each other's tests.
  exec 9>/run/lock/berth-runc-bats.lock || die "cannot open /run/lock/berth-runc-bats.lock"
  if ! flock -n 9; then
    say "another run of the suite holds /run/lock/berth-runc-bats.lock; waiting for it"
    flock -w 7200 9 || die "the other run did not end"
  fi
  results="$work_dir/results/$name"
  rm -rf "$results" && mkdir -p "$results" || die "cannot create $results"
  run_tmp=$(mktemp -d "${TMPDIR:-/tmp}/berth-runc-bats.XXXXXX") || die "cannot create a temp dir"
  cg_name="berth-runc-bats-$name-$$"
  make_run_cgroup || die "cannot create the run's cgroups"
  # PID 1 may reap nothing: bats runs under a child subreaper (agnostic.sh's helper)
  # that adopts the inits of detached containers and reports what outlives a file.
  reaper="$work_dir/reaper"
  cc -O2 -o "$reaper" "$script_dir/agnostic/helper.c" || die "cannot build the reaper"
  trap 'for d in "${run_cgroups[@]}"; do remove_cgroup "$d" >/dev/null; done; remove_tmp' EXIT
  say "runtime $runtime_path ($("$runtime_path" --version 2>/dev/null | head -1))"
  say "runc $suite_version suite, ${#files[@]} files, results in $results"

  local f line start secs leftovers=0 unexpected=0 pass=0 fail=0 xfail=0 skip=0 status key ms reason
  : >"$results/summary.txt"
  for f in "${files[@]}"; do
    start=$(date +%s)
    run_file "$f"
    secs=$(($(date +%s) - start))
    while IFS=$'\t' read -r status key ms; do
      reason=""
      if reason=$(expected_reason "$key"); then :; else reason=""; fi
      case $status in
        PASS) pass=$((pass + 1))
              if [[ $reason == flaky* ]]; then line="PASS   $key  (known flaky: $reason)"
              elif [ -n "$reason" ]; then
                unexpected=$((unexpected + 1)); line="XPASS  $key  (expected to fail: $reason; update $expectations_file)"
              else line="PASS   $key"; fi ;;
        SKIP) skip=$((skip + 1)); line="SKIP   $key" ;;
        FAIL) if [ -n "$reason" ]; then xfail=$((xfail + 1)); line="XFAIL  $key  # $reason"
              else fail=$((fail + 1)); unexpected=$((unexpected + 1)); line="FAIL   $key"; fi ;;
      esac
      echo "$line${ms:+  (${ms} ms)}" | tee -a "$results/summary.txt"
    done < <(parse_tap "$f")
    say "$f.bats: ${secs}s"
    echo "TIME   $f.bats  ${secs}s" >>"$results/summary.txt"
    local left
    left=$(check_leftovers "$f")
    if [ -n "$left" ]; then
      leftovers=$((leftovers + 1))
      echo "$left" | sed "s|^|LEFT   $f.bats: |" | tee -a "$results/summary.txt"
    fi
  done
  local total=$((pass + fail + xfail))
  say "$name: $pass of $total passed ($fail failed unexpectedly, $xfail failed as expected), $skip skipped"
  ((leftovers)) && say "$leftovers file(s) left containers, mounts or cgroups behind (LEFT lines)"
  ((unexpected)) && say "$unexpected unexpected result(s) (FAIL, XPASS lines); logs in $results"
  ((unexpected == 0 && leftovers == 0))
}

main "$@"; exit $?  # one line: bash reads a running script as it goes
