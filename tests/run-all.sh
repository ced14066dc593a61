#!/bin/bash
# README command (b): on Debian 12, as root, installs what the tests need, builds berth
# (-Werror), runs every suite's CI subset through ctest — unit, integration (real
# containers), conformance (OCI runtime-tools, runc's bats fast subset), vm (pure cgroup v2 +
# Soft-RoCE under qemu), ecosystem (containerd, Docker, podman, the CRI path), security (the
# attack suite) — then the unit, integration, security and reliability suites again under
# ASan+UBSan, and the libFuzzer targets for a bounded time. Tests labelled `full` (a suite's
# complete run, whose representative subset CI runs) are left out: docs/testing.md. Ends with "N passed, N failed" (skips counted apart, the line before), after a report of
# where the time went: each step's wall time and the 25 slowest tests of each ctest run.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
export DEBIAN_FRONTEND=noninteractive
jobs=$(nproc)
fuzz_seconds=${BERTH_FUZZ_SECONDS:-10}   # per target; 13 targets (tests/fuzz/fuzz_*.cc)
passed=0
failed=0
skipped=0   # a skip is neither: it names its absence (no 32-bit syscall entry, ...) in the log
run_start=$(date +%s)
step_name=""
step_start=0
timings=()
step_end() {
  [ -n "$step_name" ] || return 0
  local s=$(($(date +%s) - step_start))
  timings+=("$(printf '%5d s  %s' "$s" "$step_name")")
  printf '==== %s: %d s\n' "$step_name" "$s"
}
step() {
  step_end
  step_name=$*
  step_start=$(date +%s)
  printf '\n==== %s (%s)\n' "$*" "$(date +%T)"
}

# ---------------------------------------------------------------- packages, once
# Every suite's packages in two apt-get runs after one apt-get update (each suite still
# installs what it lacks when run on its own; a list here that falls behind a suite's
# costs time, not a failure). What the build needs first; the suites' packages (mostly
# download and unpacking) are installed while berth builds.
build_packages=(
  build-essential cmake pkg-config git ca-certificates libseccomp-dev libcap-dev libyajl-dev
  libmnl-dev libyaml-dev libsystemd-dev criu libprotobuf-c-dev googletest libgtest-dev clang libclang-rt-14-dev busybox-static runc
  crun iproute2 util-linux uidmap procps psmisc strace jq xz-utils dpkg-dev
)
suite_packages=(
  qemu-system-x86 debootstrap e2fsprogs   # tests/vm (debootstrap: the systemd guest)
  # conformance/runc-bats.sh: bats, and the Go libraries its helpers import
  bats gawk golang-go golang-dbus-dev golang-github-cilium-ebpf-dev
  golang-github-containerd-console-dev golang-github-coreos-go-systemd-dev
  golang-github-cpuguy83-go-md2man-v2-dev golang-github-cyphar-filepath-securejoin-dev
  golang-github-moby-sys-dev golang-github-opencontainers-specs-dev
  golang-github-russross-blackfriday-v2-dev golang-github-seccomp-libseccomp-golang-dev
  golang-github-sirupsen-logrus-dev golang-github-urfave-cli-dev golang-golang-x-sys-dev
  # conformance/oci-suite.sh
  golang-github-opencontainers-runtime-tools-dev golang-github-google-uuid-dev
  golang-github-hashicorp-go-multierror-dev golang-github-mrunalp-fileutils-dev
  golang-github-opencontainers-selinux-dev golang-github-xeipuuv-gojsonschema-dev
  golang-gocapability-dev golang-github-blang-semver-dev make
  # tests/ecosystem/run.sh and tests/ecosystem/cri/run.sh
  containerd docker.io podman conmon umoci skopeo containernetworking-plugins python3-grpcio
  python3-protobuf protobuf-compiler protobuf-compiler-grpc
)

# runc-bats.sh and oci-suite.sh fetch Debian source packages: deb-src entries (the host's
# own mirrors and suites) before the one apt-get update, so that neither updates again.
add_deb_src() {
  apt-get source --print-uris -qq runc >/dev/null 2>&1 && return 0
  local src
  src=$(grep -l '^Types:.*deb' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1)
  if [ -n "$src" ]; then
    sed -E 's/^Types:.*/Types: deb-src/' "$src" >/etc/apt/sources.list.d/berth-deb-src.sources
  elif [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb /deb-src /p' /etc/apt/sources.list >/etc/apt/sources.list.d/berth-deb-src.list
  fi
}

apt_install() {  # apt_install LOG PACKAGES...: prints how many were new
  local log=$1
  shift
  apt-get -o DPkg::Lock::Timeout=600 install -y -q --no-install-recommends "$@" >"$log" 2>&1 ||
    { tail -n 20 "$log"; echo "apt-get install failed (each suite installs what it lacks)"; }
  echo "$(grep -c '^Setting up ' "$log") packages newly installed ($log)"
}

step "installing packages for the build"
mkdir -p build
add_deb_src
apt-get update -q >/dev/null
apt_install build/apt.log "${build_packages[@]}"

# ---------------------------------------------------------------- helpers
ctest_listed() {  # ctest_listed <ctest log> <heading>: the "  N - name (why)" lines under it
  sed -n "/^$2\$/,/^[^[:space:]]/p" "$1" | grep -E '^[[:space:]]+[0-9]+ - '
}

skips_seen=()
count() {  # count <ctest log>: adds its totals
  local line
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$1" | tail -1)
  if [ -z "$line" ]; then failed=$((failed + 1)); failures+=("$1: no ctest summary (ctest itself failed)"); return; fi
  local total fails
  fails=$(sed -E 's/.*passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.*passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/' <<<"$line")
  local names skips=0
  names=$(ctest_listed "$1" "The following tests did not run:")
  [ -n "$names" ] && skips=$(wc -l <<<"$names") && skips_seen+=("$1:" "$names")
  passed=$((passed + total - fails - skips))
  failed=$((failed + fails))
  skipped=$((skipped + skips))
}

slowest=()
slowest_tests() {  # slowest_tests <ctest log> <title>: the 25 slowest, kept for the report
  local report
  report=$(sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) \.+.* +([0-9.]+) sec$/\2 \1/p' "$1" |
    sort -rn | head -25 | awk '{ printf "  %8.1f s  %s\n", $1, $2 }')
  local total
  total=$(sed -nE 's/^Total Test time \(real\) = +([0-9.]+) sec$/\1/p' "$1" | tail -1)
  slowest+=("$2 (${total:-?} s in all; the 25 slowest):" "$report")
  printf '\n%s\n%s\n' "${slowest[@]: -2}"
}

failures=()
failed_tests() {  # failed_tests <ctest log> <title>: names what failed, kept for the summary
  local names
  names=$(ctest_listed "$1" "The following tests FAILED:")
  [ -n "$names" ] && failures+=("$2:" "$names")
  return 0
}

ctest_run() {  # ctest_run <build dir> <log name> <title> ctest args...: runs, counts, reports
  local dir=$1 log=$1/$2 title=$3
  shift 3
  ctest --test-dir "$dir" --output-on-failure --output-junit "$(basename "$log" .log).xml" "$@" 2>&1 |
    tee "$log"
  count "$log"
  failed_tests "$log" "$title"
  slowest_tests "$log" "$title"
}

bg_build() {  # bg_build <dir> <log> "<cmake -D args>" <targets...> &: configure + build, niced
  local dir=$1 log=$2 args=$3
  shift 3
  # shellcheck disable=SC2086 # the -D arguments are split on purpose ("a;b" lists stay whole)
  (nice -n 19 cmake -S . -B "$dir" $args >"$log" 2>&1 &&
    nice -n 19 cmake --build "$dir" -j"$jobs" --target "$@" >>"$log" 2>&1) &
}
bg_build_wait() {  # bg_build_wait <pid> <log>: waits, shows the errors, says how it ended
  local rc=0
  wait "$1" || rc=$?
  grep -E 'error|Error' "$2"
  echo "background build ended with status $rc ($2)"
}

prepare_suites() {  # the caches each suite makes on its first run, made ahead, niced
  # Two lanes: downloads and unpacking in one overlap compiling in the other. A failure
  # here costs nothing but time: the suite then makes its cache itself and reports.
  (
    nice -n 19 tests/vm/fetch-kernel.sh --cache "$root/build/vm-cache" --rdma-userspace
    mkdir -p "$root/build/vm-systemd"
    nice -n 19 flock "$root/build/vm-systemd/.lock" tests/vm/systemd/image.sh "$root/build/vm-systemd" - prepare
  ) &
  local lane=$!
  nice -n 19 conformance/oci-suite.sh --build-only
  nice -n 19 conformance/runc-bats.sh --fast --build-only --runtime runc --work "$root/build/runc-bats"
  wait "$lane"
}

# ---------------------------------------------------------------- build and suites
step "build (-Werror), the suites' packages installing meanwhile"
# Without systemd, the engines' init scripts would start dockerd and containerd on the
# host's default paths: no service starts while apt runs.
made_policy=0
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && made_policy=1
fi
# Once the packages are in, the suites' own caches (prepare_suites): what each would
# otherwise fetch and build at its start. That runs on, niced, beside the build and the
# first (unit, integration) tests; each suite's lock makes it wait for its cache.
bg_start=$(date +%s)
rm -f build/apt-suites.done
(
  apt_install build/apt-suites.log "${suite_packages[@]}"
  echo "suite packages done after $(($(date +%s) - bg_start)) s"
  touch build/apt-suites.done
  prepare_suites >build/prepare.log 2>&1
  echo "the suites' caches done (status $?) after $(($(date +%s) - bg_start)) s (build/prepare.log)" >>build/prepare.log
) >build/apt-suites.out 2>&1 &
prepare_pid=$!
cmake -S . -B build -DBERTH_WERROR=ON -DBERTH_VM_RUNTIMES="runc;berth" >/dev/null &&
  cmake --build build -j"$jobs" 2>&1 | grep -E 'error|warning|Error'
echo "build done after $(($(date +%s) - step_start)) s"
while [ ! -e build/apt-suites.done ] && kill -0 "$prepare_pid" 2>/dev/null; do sleep 2; done
cat build/apt-suites.out
[ "$made_policy" = 1 ] && rm -f /usr/sbin/policy-rc.d
if [ ! -x build/berth ]; then echo "build failed"; echo "0 passed, 1 failed"; exit 1; fi

step "ctest: unit, integration, security, conformance, vm, ecosystem (CI subsets; label full left out)"
# Not the suites' full runs (label full, e.g. runc's whole bats suite, 5 to 13 min per
# runtime): CI runs their subsets (conformance.runc-bats-fast.berth); `ctest -L full` runs them.
# The sanitized build runs meanwhile, in the background at nice 19: the suites wait on
# containers, daemons and VMs for much of their time (about half the CPU sat idle in the
# ASan integration run), and a niced build takes only what they leave.
bg_build build-asan build/asan-build.log \
  "-DBERTH_WERROR=ON -DBERTH_SANITIZE=address;undefined" \
  berth berth_unit_tests berth_integration_tests berth_security_tests berth_reliability_tests
asan_build=$!
ctest_run build ctest.log "ctest" -LE '^full$' --timeout 1800
wait "$prepare_pid"
tail -n 1 build/prepare.log

step "ASan + UBSan build (what was left of it when the suites ended)"
bg_build_wait "$asan_build" build/asan-build.log

step "ASan + UBSan: unit, integration and the attack suite"
# The fuzzing build (clang, libFuzzer) in the background, as the ASan build above.
CC=clang CXX=clang++ bg_build build-fuzz build/fuzz-build.log "-DBERTH_FUZZ=ON -DBERTH_TESTS=OFF" fuzz_all
fuzz_build=$!
# The visibility attack repeats a race 200 times per case in the normal run; under ASan the
# point is memory errors on the same paths, which 50 rounds exercise as well (docs/testing.md).
# The tmp_on_tmpfs reruns (the same cases with /tmp on a tmpfs: path handling, not memory)
# run in the normal build only, and so does PtraceWindow.*: it looks for the caller's
# environment in berth's memory, and the sanitizers' runtime keeps a copy of its own (and
# reserves terabytes of shadow a reader cannot walk). -j2 pairs the unit tests (156 s under
# ASan); the others are RUN_SERIAL and still run alone.
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  BERTH_VISIBILITY_ITERATIONS=${BERTH_ASAN_VISIBILITY_ITERATIONS:-50} \
  ctest_run build-asan ctest.log "ASan ctest: unit, integration, security" -L 'unit|integration|security' -LE '^full$' \
  -E '\.tmp_on_tmpfs$|^PtraceWindow\.' -j2

step "ASan + UBSan: reliability (50 kills, 30 containers)"
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  BERTH_KILL_ITERATIONS=50 BERTH_LOAD_CONTAINERS=30 \
  ctest_run build-asan ctest-reliability.log "ASan ctest: reliability" -L reliability -LE '^full$'

step "libFuzzer build (what was left of it), then the targets, ${fuzz_seconds}s each"
bg_build_wait "$fuzz_build" build/fuzz-build.log
# A fixed seed: this bounded run is a regression check that gives the same verdict on the
# same tree. Finding new bugs is the long campaigns' job (docs/reliability.md).
if BERTH_FUZZ_ARGS="-seed=${BERTH_FUZZ_SEED:-1} ${BERTH_FUZZ_ARGS:-}" tests/fuzz/run-fuzzers.sh build-fuzz "$fuzz_seconds"; then
  passed=$((passed + 1))
else
  failed=$((failed + 1)); failures+=("fuzzing:" "  tests/fuzz/run-fuzzers.sh (its output above)")
fi

step "summary"
step_name=""
echo "where the time went (wall, $jobs CPUs; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)):"
printf '%s\n' "${timings[@]}"
printf '%5d s  in all\n' $(($(date +%s) - run_start))
printf '\n%s\n' "${slowest[@]}"
# Last, next to the counts: the tail of this output is often all a reader gets.
if [ "${#skips_seen[@]}" -gt 0 ]; then printf '\nskipped (each says why in its log):\n'; printf '%s\n' "${skips_seen[@]}"; fi
if [ "${#failures[@]}" -gt 0 ]; then printf '\nwhat failed:\n'; printf '%s\n' "${failures[@]}"; fi
echo
echo "$skipped skipped, counted as neither"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
