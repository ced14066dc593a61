#!/bin/bash
# README command (b): on Debian 12, as root, installs what the tests need, builds berth
# (-Werror), runs every suite through ctest — unit, integration (real containers),
# conformance (OCI runtime-tools), vm (pure cgroup v2 + Soft-RoCE under qemu), ecosystem
# (containerd, Docker, podman) — then the unit, integration and reliability suites again
# under ASan+UBSan, and the libFuzzer targets for a bounded time. Ends with "N passed, N failed".
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export DEBIAN_FRONTEND=noninteractive
jobs=$(nproc)
fuzz_seconds=${BERTH_FUZZ_SECONDS:-10}   # per target; 13 targets (tests/fuzz/fuzz_*.cc)
passed=0
failed=0
step() { printf '\n==== %s (%s)\n' "$*" "$(date +%T)"; }

step "installing packages"
apt-get update -q
apt-get install -y -q --no-install-recommends build-essential cmake pkg-config git ca-certificates \
  libseccomp-dev libcap-dev libyajl-dev libmnl-dev libyaml-dev criu libprotobuf-c-dev googletest libgtest-dev clang libclang-rt-14-dev \
  busybox-static runc crun iproute2 util-linux procps psmisc jq xz-utils qemu-system-x86 dpkg-dev >/dev/null

count() {  # count <ctest log>: adds its totals
  local line
  line=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$1" | tail -1)
  if [ -z "$line" ]; then failed=$((failed + 1)); return; fi
  local total fails
  fails=$(sed -E 's/.*passed, ([0-9]+) tests failed out of ([0-9]+).*/\1/' <<<"$line")
  total=$(sed -E 's/.*passed, ([0-9]+) tests failed out of ([0-9]+).*/\2/' <<<"$line")
  passed=$((passed + total - fails))
  failed=$((failed + fails))
}

step "build (-Werror)"
cmake -S . -B build -DBERTH_WERROR=ON -DBERTH_VM_RUNTIMES="runc;berth" >/dev/null &&
  cmake --build build -j"$jobs" 2>&1 | grep -E 'error|warning|Error' ; build_ok=${PIPESTATUS[0]}
if [ ! -x build/berth ]; then echo "build failed"; echo "0 passed, 1 failed"; exit 1; fi

step "ctest: unit, integration, conformance, vm, ecosystem"
# Not the full runc integration suite (label runc-bats, 5 to 13 min per runtime): CI runs its fast
# subset (conformance.runc-bats-fast.berth); `ctest -L runc-bats` runs the full one.
ctest --test-dir build -LE '^runc-bats$' --output-on-failure --timeout 1800 2>&1 | tee build/ctest.log
count build/ctest.log

step "ASan + UBSan build: unit and integration"
cmake -S . -B build-asan -DBERTH_WERROR=ON -DBERTH_SANITIZE="address;undefined" >/dev/null &&
  cmake --build build-asan -j"$jobs" --target berth berth_unit_tests berth_integration_tests berth_reliability_tests 2>&1 | grep -E 'error|Error'
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan -L 'unit|integration' --output-on-failure 2>&1 | tee build-asan/ctest.log
count build-asan/ctest.log

step "ASan + UBSan: reliability (50 kills, 30 containers)"
ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  BERTH_KILL_ITERATIONS=50 BERTH_LOAD_CONTAINERS=30 \
  ctest --test-dir build-asan -L reliability --output-on-failure 2>&1 | tee build-asan/ctest-reliability.log
count build-asan/ctest-reliability.log

step "libFuzzer targets, ${fuzz_seconds}s each"
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DBERTH_FUZZ=ON -DBERTH_TESTS=OFF >/dev/null &&
  cmake --build build-fuzz -j"$jobs" --target fuzz_all 2>&1 | grep -E 'error|Error'
# A fixed seed: this bounded run is a regression check that gives the same verdict on the
# same tree. Finding new bugs is the long campaigns' job (docs/reliability.md).
if BERTH_FUZZ_ARGS="-seed=${BERTH_FUZZ_SEED:-1} ${BERTH_FUZZ_ARGS:-}" tests/fuzz/run-fuzzers.sh build-fuzz "$fuzz_seconds"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi

step "summary"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
