#!/usr/bin/env bash
# Copyright The berth authors.
# SPDX-License-Identifier: Apache-2.0
#
# Runs the OCI runtime-tools validation suite (validation/*/*.t + runtimetest)
# against an OCI runtime binary and compares the `not ok` lines with
# conformance/expectations/<runtime name>.txt.  See docs/conformance.md.
#
# Exit status: 0 every failure was expected, 1 an unexpected failure,
# 2 the suite could not be built or run, 77 (skipped, one line says why) no
# suite source was found.

set -uo pipefail
shopt -s nullglob

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
script_path="$script_dir/$(basename "${BASH_SOURCE[0]}")"
repo_root=$(git -C "$script_dir" rev-parse --show-toplevel 2>/dev/null) || repo_root=$(cd "$script_dir/.." && pwd)

readonly suite_repo_url=https://github.com/opencontainers/runtime-tools
readonly suite_commit=0105384
readonly suite_deb_source=golang-github-opencontainers-runtime-tools
# Bump when the way the suite is staged or built changes: forces a rebuild.
readonly build_recipe=2

# The suite's imports, as Debian packages (GOPATH mode, /usr/share/gocode).
readonly build_packages=(
  golang-go golang-github-opencontainers-runtime-tools-dev
  golang-github-opencontainers-specs-dev golang-github-google-uuid-dev
  golang-github-hashicorp-go-multierror-dev golang-github-mrunalp-fileutils-dev
  golang-github-opencontainers-selinux-dev golang-github-sirupsen-logrus-dev
  golang-github-urfave-cli-dev golang-github-xeipuuv-gojsonschema-dev
  golang-gocapability-dev golang-golang-x-sys-dev golang-github-blang-semver-dev
  make tar gzip coreutils util-linux
)

say() { printf 'oci-suite: %s\n' "$*" >&2; }
die() { say "error: $*"; exit 2; }

usage() {
  cat <<'EOF'
usage: conformance/oci-suite.sh [options] [TEST...]

Builds the OCI runtime-tools validation suite and runs its tests (all, or the
named ones, e.g. `default process_user`) against RUNTIME.

options:
  --runtime PATH        runtime binary (default: $RUNTIME, else `runc` from PATH)
  --source DIR|TARBALL  suite source tree or tarball (default: the cache, else
                        `apt-get source`, else a git clone; see docs)
  --cache DIR           where a runtime-tools-*.tar.gz may be (default:
                        $OCI_SUITE_CACHE, else <repo root>/../shared/oci-runtime-tools)
  --work DIR            build and result dir (default: conformance/.work)
  --timeout SECONDS     per test file limit (default: 120)
  --expectations FILE   expected failures (default: conformance/expectations/<name>.txt,
                        <name> being the runtime binary's basename)
  --private-cgroup2-unmount
                        run the tests in a private mount namespace where the
                        cgroup2 mounts of a hybrid host are unmounted (crun 1.8)
  --default-root        let the runtime use its default state root instead of a
                        private one (stray containers are then found by
                        comparing `list -q` before and after each test)
  --build-only          find and build the suite, run nothing
  --list                print the test names and exit
  -h, --help            this text
EOF
}

# ---------------------------------------------------------------- options
runtime=${RUNTIME:-runc}
source_arg=""
cache_dir=${OCI_SUITE_CACHE:-$repo_root/../shared/oci-runtime-tools}
work_dir="$script_dir/.work"
timeout_s=120
expectations_file=""
private_cgroup2=0
private_root=1
build_only=0
list_only=0
selected=()

parse_args() {
  while (($#)); do
    case $1 in
      --runtime) runtime=${2:?--runtime needs a path}; shift ;;
      --runtime=*) runtime=${1#*=} ;;
      --source) source_arg=${2:?--source needs a path}; shift ;;
      --source=*) source_arg=${1#*=} ;;
      --cache) cache_dir=${2:?--cache needs a dir}; shift ;;
      --cache=*) cache_dir=${1#*=} ;;
      --work) work_dir=${2:?--work needs a dir}; shift ;;
      --work=*) work_dir=${1#*=} ;;
      --timeout) timeout_s=${2:?--timeout needs seconds}; shift ;;
      --timeout=*) timeout_s=${1#*=} ;;
      --expectations) expectations_file=${2:?--expectations needs a file}; shift ;;
      --expectations=*) expectations_file=${1#*=} ;;
      --private-cgroup2-unmount) private_cgroup2=1 ;;
      --default-root) private_root=0 ;;
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
  gopath="$work_dir/gopath"
  suite_dir="$gopath/src/github.com/opencontainers/runtime-tools"
}

# ---------------------------------------------------------------- packages
ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  ((${#missing[@]})) || return 0
  if ((EUID != 0)); then
    say "missing Debian packages: ${missing[*]}"
    return 1
  fi
  say "installing ${missing[*]}"
  apt-get update -qq >&2 || return 1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# ---------------------------------------------------------------- source
# Each finder sets source_tree (a dir holding cmd/runtimetest) and
# source_print (a fingerprint of what was found), or adds why it could not to
# source_misses: where none works, one line names every reason.
source_tree=""
source_print=""
source_desc=""
source_misses=()
miss() { source_misses+=("$*"); }

# The dir at or at most two levels below $1 that holds the suite.
suite_root_in() {
  local d
  for d in "$1" "$1"/* "$1"/*/*; do
    if [[ -f $d/cmd/runtimetest/main.go && -d $d/validation ]]; then
      printf '%s\n' "$d"
      return 0
    fi
  done
  return 1
}

dir_fingerprint() {
  (cd "$1" && find . -type f ! -path './.git/*' ! -name '*.t' ! -name runtimetest \
      ! -name oci-runtime-tool -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) |
    sha256sum | cut -d' ' -f1
}

unpack_tarball() { # tarball -> source_tree
  local tarball=$1 dest="$work_dir/unpacked" root
  rm -rf "$dest" && mkdir -p "$dest" || return 1
  tar -xzf "$tarball" -C "$dest" 2>/dev/null || { miss "cannot unpack $tarball"; return 1; }
  root=$(suite_root_in "$dest") || { miss "$tarball holds no cmd/runtimetest and validation/"; return 1; }
  source_tree=$root
  source_print=$(sha256sum "$tarball" | cut -d' ' -f1)
}

source_from_arg() {
  local p=$source_arg root
  [[ -e $p ]] || { say "--source $p: no such file or directory"; return 1; }
  p=$(cd "$(dirname "$p")" && pwd)/$(basename "$p")
  if [[ -d $p ]]; then
    root=$(suite_root_in "$p") || { say "--source $p: no cmd/runtimetest and validation/ in it"; return 1; }
    source_tree=$root
    source_print=$(dir_fingerprint "$root")
  else
    unpack_tarball "$p" || { say "${source_misses[-1]}"; return 1; }
  fi
  source_desc="--source $p"
}

# A cache of the pinned tree, when the machine has one (--cache, $OCI_SUITE_CACHE, or the
# development machines' ../shared): read only, never required.
source_from_cache() {
  local tarballs
  tarballs=("$cache_dir"/runtime-tools-*.tar.gz)
  if ((${#tarballs[@]} == 0)); then
    miss "cache: no runtime-tools-*.tar.gz in $cache_dir"
    return 1
  fi
  unpack_tarball "${tarballs[-1]}" || return 1
  source_desc="$(cd "$cache_dir" && pwd)/$(basename "${tarballs[-1]}") (cache)"
}

# apt-get source needs deb-src entries; the host's list may have only binary ones.
# Adds them (same mirrors, same suites) in a file of their own, as runc-bats.sh does.
ensure_deb_src() {
  apt-get source --print-uris -qq "$suite_deb_source" >/dev/null 2>&1 && return 0
  ((EUID == 0)) || return 1
  local src
  src=$(grep -l '^Types:.*deb' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  if [[ -n $src ]]; then
    sed -E 's/^Types:.*/Types: deb-src/' "$src" >/etc/apt/sources.list.d/berth-deb-src.sources
  elif [[ -f /etc/apt/sources.list ]]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/berth-deb-src.list
  fi
  say "added deb-src entries; apt-get update"
  apt-get update -qq >&2 && apt-get source --print-uris -qq "$suite_deb_source" >/dev/null 2>&1
}

# Debian's version names the upstream commit (0.9.0+git20220423.g0105384-2 in bookworm):
# another one is used, with a warning, since the expectations were made at ours.
check_deb_version() {
  local version
  version=$(apt-cache showsrc "$suite_deb_source" 2>/dev/null | awk '/^Version:/ { print $2; exit }')
  [[ $version == *".g$suite_commit"* ]] ||
    say "warning: Debian's $suite_deb_source $version is not upstream $suite_commit, which the expectations were made with"
}

source_from_apt() {
  local dest="$work_dir/fetched/apt" root
  if root=$(suite_root_in "$dest" 2>/dev/null); then
    say "reusing the source package fetched earlier into $dest"
  else
    command -v apt-get >/dev/null || { miss "apt-get source: no apt-get"; return 1; }
    ensure_packages dpkg-dev >/dev/null 2>&1 || { miss "apt-get source: needs dpkg-dev"; return 1; }
    ensure_deb_src || { miss "apt-get source: no deb-src entry serves $suite_deb_source"; return 1; }
    rm -rf "$dest" && mkdir -p "$dest" || return 1
    chown _apt "$dest" 2>/dev/null  # apt-get source downloads as _apt where it can
    if ! (cd "$dest" && timeout 300 apt-get source -qq "$suite_deb_source") >"$dest.log" 2>&1; then
      miss "apt-get source $suite_deb_source failed: $(grep -m1 -iE 'E:|error' "$dest.log" || tail -n1 "$dest.log")"
      return 1
    fi
    root=$(suite_root_in "$dest") || { miss "the $suite_deb_source source package holds no validation suite"; return 1; }
  fi
  check_deb_version
  source_tree=$root
  source_print=$(dir_fingerprint "$root")
  source_desc="apt-get source $suite_deb_source ($root)"
}

source_from_git() {
  local dest="$work_dir/fetched/git"
  if [[ -d $dest/.git ]] && git -C "$dest" rev-parse -q --verify "$suite_commit^{commit}" >/dev/null; then
    say "reusing the clone made earlier in $dest"
  else
    command -v git >/dev/null || ensure_packages git >/dev/null 2>&1 || { miss "git clone: no git"; return 1; }
    rm -rf "$dest" && mkdir -p "$(dirname "$dest")" || return 1
    if ! timeout 300 git clone -q "$suite_repo_url" "$dest" >"$dest.log" 2>&1; then
      miss "git clone $suite_repo_url failed: $(tail -n1 "$dest.log")"
      return 1
    fi
  fi
  git -C "$dest" -c advice.detachedHead=false checkout -q "$suite_commit" ||
    { miss "git clone: commit $suite_commit not in the clone"; return 1; }
  source_tree=$dest
  source_print=$(git -C "$dest" rev-parse HEAD)
  source_desc="git clone $suite_repo_url at $suite_commit"
}

# No source at all is the machine's absence, not a result: one line, exit 77 (ctest's
# SKIP_RETURN_CODE), so that it counts as skipped, never as passed or failed.
find_source() {
  if [[ -n $source_arg ]]; then
    source_from_arg || die "the suite source given with --source is unusable"
  elif ! { source_from_cache || source_from_apt || source_from_git; }; then
    local why
    why=$(printf '%s; ' "${source_misses[@]}")
    say "skipped: no runtime-tools source (${why%; }); give one with --source or --cache"
    exit 77
  fi
  say "suite source: $source_desc"
}

# ---------------------------------------------------------------- build
# Set by parse_args from --work: the GOPATH the suite is built in.
gopath=""
suite_dir=""

go_env() {
  env GO111MODULE=off GOPROXY=off GOFLAGS= GOPATH="$gopath:/usr/share/gocode" \
    GOCACHE="$work_dir/go-cache" "$@"
}

build_suite() {
  local stamp="$work_dir/build.stamp" print
  print=$(
    printf 'recipe %s\nsource %s\n' "$build_recipe" "$source_print"
    go version
    cat "$script_dir"/tap-go/*.go | sha256sum
  )
  if [[ -f $stamp && "$(cat "$stamp")" == "$print" && -x $suite_dir/runtimetest ]] &&
    all_tests_built; then
    say "reusing the build in $suite_dir (source unchanged)"
    return 0
  fi
  say "building the suite in $suite_dir"
  rm -f "$stamp"
  rm -rf "$gopath" && mkdir -p "$suite_dir" "$gopath/src/github.com/mndrix/tap-go" || return 1
  (cd "$source_tree" && tar -cf - --exclude=./.git --exclude=./vendor .) | tar -xf - -C "$suite_dir" || return 1
  cp "$script_dir"/tap-go/*.go "$gopath/src/github.com/mndrix/tap-go/" || return 1
  # The suite's own vendor/ (a git clone has one) would shadow Debian's
  # packages and our tap-go; build against the same imports whatever the source.
  rm -rf "$suite_dir/vendor"
  local log="$work_dir/build.log"
  if ! (cd "$gopath/src/github.com/mndrix/tap-go" && go_env go test ./...) >"$log" 2>&1; then
    tail -n 20 "$log" >&2; say "tap-go tests failed (log: $log)"; return 1
  fi
  if ! (cd "$suite_dir" && go_env make COMMIT="$suite_commit" runtimetest validation-executables) >>"$log" 2>&1; then
    tail -n 20 "$log" >&2; say "build failed (log: $log)"; return 1
  fi
  all_tests_built || { say "build finished but test executables are missing"; return 1; }
  printf '%s\n' "$print" >"$stamp"
}

all_test_names() {
  local f
  for f in "$suite_dir"/validation/*/*.go; do
    [[ $(basename "$(dirname "$f")") == util ]] && continue
    basename "$f" .go
  done
}

all_tests_built() {
  local t n=0
  for t in $(all_test_names); do
    [[ -x $suite_dir/validation/$t/$t.t ]] || return 1
    n=$((n + 1))
  done
  ((n > 0))
}

# ---------------------------------------------------------------- cgroups
# Every test runs from a cgroup of our own in each hierarchy (the relative
# cgroupsPath tests create cgroups below the caller's), so nothing the runner
# did not create is touched.  The runner's own process stays where it was.
cg_name="oci-suite.$$"
cg_dirs=()            # our cgroup in each hierarchy
# The suite's fixed cgroup names: /cgrouptest (absolute cgroupsPath tests) and
# testdir/ (relative ones: runc resolves the cgroup2 part of a relative path
# against the root, crun every part).  Removed when the run created them.
readonly suite_cgroup_names=(cgrouptest testdir)
suite_cg_dirs=()

cgroup_mounts() { # mount points of cgroup and cgroup2 file systems
  awk '{ sep = 0; for (i = 7; i <= NF; i++) if ($i == "-") { sep = i; break }
         if (sep && ($(sep + 1) == "cgroup" || $(sep + 1) == "cgroup2")) print $5 }' \
    /proc/self/mountinfo | awk '!seen[$0]++'
}

setup_cgroups() {
  local m dir
  for m in $(cgroup_mounts); do
    dir="$m/$cg_name"
    mkdir "$dir" || { say "cannot create cgroup $dir"; return 1; }
    cg_dirs+=("$dir")
    if [[ -f $m/cpuset.cpus && ! -f $m/cgroup.controllers ]]; then
      # A new v1 cpuset is empty and refuses tasks until it is given cpus and mems.
      if ! { cat "$m/cpuset.cpus" >"$dir/cpuset.cpus" && cat "$m/cpuset.mems" >"$dir/cpuset.mems"; }; then
        say "cannot set up $dir"; return 1
      fi
    fi
  done
  ((${#cg_dirs[@]})) || { say "no cgroup file system mounted"; return 1; }
  find_suite_cgroups warn
  # What else is at the top of each hierarchy now: anything new at the end
  # is reported (not removed: it may belong to someone else).
  for m in $(cgroup_mounts); do
    find "$m" -mindepth 1 -maxdepth 1 -type d
  done >"$run_dir/cgroups.before"
}

find_suite_cgroups() { # [warn]: sets suite_cg_dirs to the names absent now
  local m n
  suite_cg_dirs=()
  for m in $(cgroup_mounts); do
    for n in "${suite_cgroup_names[@]}"; do
      if [[ ! -e $m/$n ]]; then
        suite_cg_dirs+=("$m/$n")
      elif [[ ${1:-} == warn ]]; then
        say "warning: $m/$n exists before the run (not ours): the tests will reuse it"
      fi
    done
  done
}

report_new_cgroups() {
  local m d
  for m in $(cgroup_mounts); do
    for d in "$m"/*/; do
      d=${d%/}
      grep -qxF -- "$d" "$run_dir/cgroups.before" ||
        say "warning: cgroup $d appeared during the run and is left alone (not the suite's name)"
    done
  done
}

join_cgroups() { # moves the calling shell (and so its children) into ours
  local dir
  for dir in "${cg_dirs[@]}"; do
    echo "$BASHPID" >"$dir/cgroup.procs" || { say "cannot join $dir"; return 1; }
  done
}

# Kills what is left in the cgroup tree at $1 and removes its dirs (deepest
# first).  With keep_top=1 the top dir itself stays (the runner lives there).
remove_cgroup_tree() {
  local top=$1 keep_top=${2:-0} d pid
  [[ -d $top ]] || return 0
  while IFS= read -r d; do
    [[ $keep_top == 1 && $d == "$top" ]] && continue
    [[ -f $d/freezer.state ]] && echo THAWED >"$d/freezer.state" 2>/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      [[ -s $d/cgroup.procs ]] || break
      while read -r pid; do kill -9 "$pid" 2>/dev/null; done <"$d/cgroup.procs"
      sleep 0.2
    done
    rmdir "$d" 2>/dev/null || say "warning: cannot remove cgroup $d"
  done < <(find "$top" -depth -type d 2>/dev/null)
}

# ---------------------------------------------------------------- per-test cleanup
list_containers() {
  {
    "$runtime_cmd" list -q 2>/dev/null
    if ((private_root)); then
      local d
      for d in "$state_root"/*/; do basename "$d"; done
    fi
  } | awk 'NF && !seen[$0]++'
}

cleanup_after_test() { # test-name
  local id mp
  # Containers the test left: force-delete them through the runtime.
  while read -r id; do
    if ((!private_root)) && grep -qxF -- "$id" "$run_dir/containers.before"; then continue; fi
    say "  $1: deleting leftover container $id"
    timeout 30 "$runtime_cmd" delete --force "$id" >/dev/null 2>&1 ||
      say "  $1: warning: $runtime_name delete --force $id failed"
  done < <(list_containers)
  ((private_root)) && rm -rf "${state_root:?}"/* 2>/dev/null
  # Mounts under the bundles (some tests leave them), deepest first.
  while read -r mp; do
    umount -l "$mp" 2>/dev/null || say "  $1: warning: cannot unmount $mp"
  done < <(awk '{ print $5 }' /proc/self/mountinfo |
    grep -E "^($test_tmp/|/tmp/ocitest)" | LC_ALL=C sort -r)
  local leftovers=("$test_tmp"/* /tmp/ocitest*) d
  for d in "${leftovers[@]}"; do
    grep -qxF -- "$d" "$run_dir/tmp.before" && continue
    rm -rf --one-file-system "$d" 2>/dev/null
  done
  # Cgroups: the absolute /cgrouptest of the cgroup tests, and anything below ours.
  for d in "${suite_cg_dirs[@]}"; do remove_cgroup_tree "$d"; done
  for d in "${cg_dirs[@]}"; do
    [[ -d $d ]] && remove_cgroup_tree "$d" 1
  done
}

# ---------------------------------------------------------------- running
run_one() { # test-name
  local t=$1 start end rc
  start=$(date +%s.%N)
  (cd "$suite_dir" && exec env RUNTIME="$runtime_cmd" TMPDIR="$test_tmp" \
    timeout -k 10 "$timeout_s" "./validation/$t/$t.t") \
    >"$results/$t.tap" 2>"$results/$t.stderr" </dev/null &
  # timeout(1) leads its own process group; the runner's TERM handler stops it
  # through this file.
  echo $! >"$run_dir/test.pid"
  wait $!
  rc=$?
  rm -f "$run_dir/test.pid"
  end=$(date +%s.%N)
  printf '%s %s\n' "$rc" "$(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }')" \
    >"$results/$t.rc"
  cleanup_after_test "$t"
}

# The test loop; runs in a child that has joined our cgroups (and, with
# --private-cgroup2-unmount, inside its own mount namespace).
run_tests() {
  local t i=0 n=${#tests[@]}
  for t in "${tests[@]}"; do
    i=$((i + 1))
    ((private_root)) || list_containers >"$run_dir/containers.before"
    printf '%s\n' "$test_tmp"/* /tmp/ocitest* >"$run_dir/tmp.before"
    run_one "$t"
    say "[$i/$n] $t: $(summarize_line "$t")"
  done
}

inner_main() { # re-entry inside `unshare -m`
  local m
  mount --make-rprivate / || die "cannot make the mount namespace private"
  for m in $(cgroup_mounts); do
    [[ -f $m/cgroup.controllers ]] || continue   # cgroup2 only
    umount "$m" || die "cannot unmount $m in the private namespace"
    # The runtime may still write below the mount point (crun mkdirs the
    # "0::" hierarchy of /proc/self/cgroup there): give it a scratch tmpfs
    # that goes away with the namespace instead of the host's /sys/fs/cgroup.
    mount -t tmpfs -o size=1m,mode=755 oci-suite-scratch "$m" ||
      die "cannot mount a scratch tmpfs on $m"
    say "replaced $m by a scratch tmpfs in a private mount namespace"
  done
  # The parent's cgroups, as far as they are still visible, for per-test cleanup.
  for m in $(cgroup_mounts); do
    [[ -d $m/$cg_name ]] && cg_dirs+=("$m/$cg_name")
  done
  find_suite_cgroups
  run_tests
}

# ---------------------------------------------------------------- TAP and expectations
# parse_tap FILE: prints "N<TAB>description" for each failing test point,
# "X<TAB>(what)" for each TAP stream whose plan is missing or wrong (a test
# file may print several streams, each from "TAP version" to its plan), and
# a last line "C<TAB>ok<TAB>notok<TAB>skip<TAB>todo".
parse_tap() {
  awk '
    function end_stream() {
      if (!started) return
      if (plan < 0) print "X\t(no plan)"
      else if (plan != points) printf "X\t(plan 1..%d, %d test points)\n", plan, points
      started = 0
    }
    function start_stream() { started = 1; plan = -1; points = 0; leading = 0 }
    BEGIN { ok = nok = skip = todo = 0; started = 0 }
    /^TAP version / { end_stream(); start_stream(); next }
    /^1\.\.[0-9]+/ {
      if (!started) start_stream()
      else if (plan >= 0) { end_stream(); start_stream() }
      p = $0; sub(/^1\.\./, "", p); plan = p + 0
      leading = (points == 0)
      next
    }
    /^(not )?ok([ \t]|$)/ {
      # After a trailing plan, a test point starts a new stream.
      if (!started || (plan >= 0 && !leading)) { end_stream(); start_stream() }
      points++
      failed = ($0 ~ /^not /)
      line = $0
      sub(/^(not )?ok[ \t]*/, "", line)
      sub(/^[0-9]+[ \t]*/, "", line)
      sub(/^-[ \t]*/, "", line)
      directive = ""
      u = toupper(line)
      if (match(u, /(^|[^\\])#[ \t]*(SKIP|TODO)/)) {
        directive = (index(substr(u, RSTART), "SKIP") ? "SKIP" : "TODO")
        line = substr(line, 1, RSTART - 1 + (substr(u, RSTART, 1) != "#"))
      }
      sub(/[ \t]+$/, "", line)
      if (directive == "SKIP") skip++
      else if (directive == "TODO") { if (failed) todo++; else ok++ }
      else if (failed) { nok++; printf "N\t%s\n", line }
      else ok++
    }
    END { end_stream(); printf "C\t%d\t%d\t%d\t%d\n", ok, nok, skip, todo }
  ' "$1"
}

# failures_of TEST: the failing descriptions, one a line, then the synthetic
# ones of a file that did not finish properly: "(timeout)", "(exit status N)",
# "(no plan)", "(plan 1..N, M test points)", "(no test points)".
failures_of() {
  local t=$1 rc secs parsed ok nok skip todo
  read -r rc secs <"$results/$t.rc"
  parsed=$(parse_tap "$results/$t.tap")
  awk -F'\t' '$1 == "N" { print $2 }' <<<"$parsed"
  if ((rc == 124 || rc == 137)); then
    echo "(timeout)"
  elif ((rc != 0)); then
    echo "(exit status $rc)"
  else
    awk -F'\t' '$1 == "X" { print $2 }' <<<"$parsed" | awk '!seen[$0]++'
  fi
  read -r ok nok skip todo < <(awk -F'\t' '$1 == "C" { print $2, $3, $4, $5 }' <<<"$parsed")
  ((ok + nok + skip + todo == 0)) && echo "(no test points)"
  return 0
}

counts_of() { parse_tap "$results/$1.tap" | awk -F'\t' '$1 == "C" { print $2, $3, $4, $5 }'; }

summarize_line() {
  local ok nok skip todo
  read -r ok nok skip todo < <(counts_of "$1")
  printf '%s ok, %s not ok, %s skip (%ss, exit %s)' "$ok" "$nok" "$skip" \
    "$(cut -d' ' -f2 "$results/$1.rc")" "$(cut -d' ' -f1 "$results/$1.rc")"
}

# Expectations: "TEST: DESCRIPTION  # reason" or "TEST  # reason" (whole file).
# In DESCRIPTION `*` matches any text; everything else is literal.  A reason
# that starts with "flaky" is not reported when the failure does not happen.
exp_tests=() exp_descs=() exp_reasons=() exp_lines=()

load_expectations() {
  local f=$1 line body reason n=0 t d
  [[ -f $f ]] || { say "warning: no expectations file $f: every not ok is unexpected"; return 0; }
  while IFS= read -r line || [[ -n $line ]]; do
    n=$((n + 1))
    [[ $line =~ ^[[:space:]]*(#|$) ]] && continue
    [[ $line == *" # "* ]] || die "$f:$n: an expected failure needs a ' # reason'"
    body=${line% # *} reason=${line##* # }
    body=${body%"${body##*[![:space:]]}"}
    if [[ $body == *:* ]]; then
      t=${body%%:*} d=${body#*:} d=${d# }
    else
      t=$body d='*'
    fi
    [[ $t =~ ^[a-z0-9_]+$ ]] || die "$f:$n: '$t' is not a test name"
    exp_tests+=("$t") exp_descs+=("$d") exp_reasons+=("$reason") exp_lines+=("$n")
  done <"$f"
}

# shellcheck disable=SC1003 # '\' below is a lone backslash, not an escaped quote
glob_of() { # literal text with `*` as the only wildcard -> bash pattern
  local s=$1 out="" c i
  for ((i = 0; i < ${#s}; i++)); do
    c=${s:i:1}
    case $c in
      '*') out+='*' ;;
      '\' | '?' | '[' | ']') out+="\\$c" ;;
      *) out+=$c ;;
    esac
  done
  printf '%s' "$out"
}

# Sets match_index to the first expectation matching test $1, description $2.
match_expectation() {
  local i pat
  match_index=-1
  for i in "${!exp_tests[@]}"; do
    [[ ${exp_tests[i]} == "$1" ]] || continue
    pat=$(glob_of "${exp_descs[i]}")
    # shellcheck disable=SC2053
    if [[ $2 == $pat ]]; then match_index=$i; return 0; fi
  done
  return 1
}

report() {
  local t ok nok skip todo rc secs status desc note
  local tot_ok=0 tot_nok=0 tot_skip=0 tot_todo=0 n_pass=0 n_skip=0 n_xfail=0 n_fail=0
  local unexpected=() used=() i
  local out="$results/summary.txt"
  {
    printf '%-36s %5s %7s %5s %7s  %s\n' TEST ok "not ok" skip seconds STATUS
    for t in "${tests[@]}"; do
      read -r ok nok skip todo < <(counts_of "$t")
      read -r rc secs <"$results/$t.rc"
      local fails=0 xfails=0
      note=""
      while IFS= read -r desc; do
        if match_expectation "$t" "$desc"; then
          xfails=$((xfails + 1)); used[match_index]=1
        else
          fails=$((fails + 1)); unexpected+=("$t: $desc")
        fi
      done < <(failures_of "$t")
      if ((fails)); then status=FAIL n_fail=$((n_fail + 1))
      elif ((xfails)); then status=XFAIL n_xfail=$((n_xfail + 1))
      elif ((ok == 0 && skip > 0)); then status=SKIP n_skip=$((n_skip + 1))
      else status=PASS n_pass=$((n_pass + 1))
      fi
      ((rc == 124 || rc == 137)) && note=" (timeout)"
      ((rc != 0 && rc != 124 && rc != 137)) && note=" (exit $rc)"
      ((todo)) && note+=" ($todo todo)"
      printf '%-36s %5d %7d %5d %7s  %s%s\n' "$t" "$ok" "$nok" "$skip" "$secs" "$status" "$note"
      tot_ok=$((tot_ok + ok)) tot_nok=$((tot_nok + nok)) tot_skip=$((tot_skip + skip))
      tot_todo=$((tot_todo + todo))
    done
    printf '%-36s %5d %7d %5d %7s\n' TOTAL "$tot_ok" "$tot_nok" "$tot_skip" "$(($(date +%s) - run_started))"
    printf '\n%s files: %d pass, %d expected failures only, %d skipped, %d failing\n' \
      "${#tests[@]}" "$n_pass" "$n_xfail" "$n_skip" "$n_fail"
    printf 'runtime %s (%s), expectations %s\n' "$runtime_path" "$runtime_version" \
      "${expectations_file#"$repo_root"/}"
    local ran=" ${tests[*]} "
    local fixed=()
    for i in "${!exp_tests[@]}"; do
      [[ $ran == *" ${exp_tests[i]} "* ]] || continue
      # A known-flaky failure that did not happen this time is no news.
      [[ -n ${used[i]:-} || ${exp_reasons[i]} == flaky* ]] || fixed+=("line ${exp_lines[i]}: ${exp_tests[i]}: ${exp_descs[i]}  # ${exp_reasons[i]}")
    done
    if ((${#fixed[@]})); then
      printf '\nexpected failures that did not fail (update the expectations):\n'
      printf '  %s\n' "${fixed[@]}"
    fi
    if ((${#unexpected[@]})); then
      printf '\nUNEXPECTED failures:\n'
      printf '  %s\n' "${unexpected[@]}"
    fi
    printf '\nTAP output: %s/<test>.tap (stderr: <test>.stderr)\n' "$results"
  } >"$out"
  cat "$out"
  ((${#unexpected[@]} == 0))
}

# ---------------------------------------------------------------- main
cleanup_run() {
  local d id
  # Interrupted mid-test: delete what the runtime still knows, then kill
  # whatever is left in the cgroups we made.
  if [[ -n ${state_root:-} && -d $state_root ]]; then
    while read -r id; do
      timeout 30 "$runtime_cmd" delete --force "$id" >/dev/null 2>&1
    done < <(list_containers)
  fi
  for d in "${cg_dirs[@]}"; do remove_cgroup_tree "$d"; done
  for d in "${suite_cg_dirs[@]}"; do remove_cgroup_tree "$d"; done
  [[ -f ${run_dir:-}/cgroups.before ]] && report_new_cgroups
  [[ -n ${state_root:-} && -d $state_root ]] && rm -rf "$state_root"
  if [[ -n ${test_tmp:-} && -d $test_tmp ]]; then
    awk '{ print $5 }' /proc/self/mountinfo | grep -E "^$test_tmp/" | LC_ALL=C sort -r |
      while read -r d; do umount -l "$d"; done
    rm -rf --one-file-system "$test_tmp"
  fi
}

inner_pid=""
interrupted() { # INT/TERM: stop the test loop and the running test, then clean up
  trap '' INT TERM
  say "interrupted: stopping"
  [[ -n $inner_pid ]] && kill -TERM "$inner_pid" 2>/dev/null
  [[ -f ${run_dir:-}/test.pid ]] && kill -TERM "$(cat "$run_dir/test.pid")" 2>/dev/null
  [[ -n $inner_pid ]] && wait "$inner_pid" 2>/dev/null
  exit 130
}

main() {
  parse_args "$@"
  find_source
  ensure_packages "${build_packages[@]}" || die "install the packages above (as root, the runner does it itself)"
  # One build at a time per work dir: tests/run-all.sh builds the suite ahead (--build-only)
  # while other tests run, and the test's own call must wait for it, not build over it.
  mkdir -p "$work_dir" && exec 8>"$work_dir/.build.lock" && flock 8 || die "cannot lock $work_dir/.build.lock"
  build_suite || exit 2
  exec 8>&-

  mapfile -t all < <(all_test_names)
  if ((list_only)); then printf '%s\n' "${all[@]}"; exit 0; fi
  ((build_only)) && { say "built: $suite_dir"; exit 0; }

  tests=()
  local t
  if ((${#selected[@]})); then
    for t in "${selected[@]}"; do
      [[ -x $suite_dir/validation/$t/$t.t ]] || die "no test named $t (see --list)"
      tests+=("$t")
    done
  else
    tests=("${all[@]}")
  fi

  ((EUID == 0)) || die "the suite creates containers: run as root"
  runtime_path=$(command -v "$runtime") || die "runtime $runtime not found"
  runtime_path=$(readlink -f "$runtime_path")
  runtime_name=$(basename "$runtime_path")
  runtime_version=$("$runtime_path" --version 2>/dev/null | head -n1)
  [[ -n $expectations_file ]] || expectations_file="$script_dir/expectations/$runtime_name.txt"
  load_expectations "$expectations_file"

  if ((private_cgroup2)); then
    command -v unshare >/dev/null || die "--private-cgroup2-unmount needs unshare (util-linux)"
    [[ -f /sys/fs/cgroup/cgroup.controllers ]] &&
      die "--private-cgroup2-unmount: /sys/fs/cgroup is cgroup2 (unified host); nothing to unmount"
  fi

  results="$work_dir/results/$runtime_name"
  run_dir="$work_dir/run"
  rm -rf "$results" "$run_dir"
  mkdir -p "$results" "$run_dir" || die "cannot create $results"
  trap cleanup_run EXIT
  trap interrupted INT TERM
  # 0755: a user-namespaced container root must be able to reach its bundle.
  test_tmp=$(mktemp -d /tmp/oci-suite.XXXXXX) || die "mktemp failed"
  chmod 755 "$test_tmp"
  if ((private_root)); then
    state_root=$(mktemp -d /run/oci-suite-state.XXXXXX) || die "mktemp failed"
    # The tests call $RUNTIME with no global flags; a wrapper adds --root so
    # that every container they make is ours to find and remove.
    runtime_cmd="$run_dir/bin/$runtime_name"
    mkdir -p "$run_dir/bin"
    printf '#!/bin/sh\nexec %q --root %q "$@"\n' "$runtime_path" "$state_root" >"$runtime_cmd"
    chmod +x "$runtime_cmd"
  else
    state_root=""
    runtime_cmd=$runtime_path
  fi
  setup_cgroups || die "cannot set up the runner's cgroups"

  say "running ${#tests[@]} test files against $runtime_path ($runtime_version), ${timeout_s}s each"
  run_started=$(date +%s)
  if ((private_cgroup2)); then
    # The re-entered script gets the run's settings from this file.
    declare -p work_dir suite_dir results run_dir test_tmp state_root runtime_cmd \
      runtime_name timeout_s private_root cg_name >"$run_dir/inner.env"
    (
      join_cgroups || exit 2
      exec unshare -m -- "$BASH" "$script_path" --__inner-run "$run_dir/inner.env" "${tests[@]}"
    ) &
  else
    (join_cgroups || exit 2; run_tests) &
  fi
  inner_pid=$!
  wait "$inner_pid"
  local rc=$?
  ((rc == 0)) || die "the test run stopped early (status $rc)"
  report
  local ok=$?
  say "wall time $(($(date +%s) - run_started))s"
  exit $((ok == 0 ? 0 : 1))
}

# Sourced (by selftest.sh): define the functions only.
[[ ${BASH_SOURCE[0]} != "$0" ]] && return 0

if [[ ${1:-} == --__inner-run ]]; then
  # shellcheck disable=SC1090
  source "$2" || exit 2
  shift 2
  tests=("$@")
  inner_main
  exit $?
fi

main "$@"
