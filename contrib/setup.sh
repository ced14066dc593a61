#!/bin/sh
# README command (a), for a fresh Debian 12 machine, as root: installs the build
# dependencies, builds and installs berth, seals the installed binary read-only (see
# docs/security.md; with systemd as PID 1 also at every boot, by the mount unit in
# contrib/systemd), prepares a busybox bundle and runs a container with berth.
set -eu
cd "$(dirname "$0")/.."
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y --no-install-recommends build-essential cmake pkg-config git ca-certificates \
  libseccomp-dev libcap-dev libyajl-dev libmnl-dev libyaml-dev libsystemd-dev criu libprotobuf-c-dev busybox-static util-linux
cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DBERTH_TESTS=OFF
cmake --build build-release -j"$(nproc)"
bin=/usr/local/bin/berth
# A sealed binary is a read-only bind mount over itself: lift it to replace the file.
contrib/systemd/install-seal.sh --unseal "$bin"
cmake --install build-release --strip
# Seal: with the binary on a read-only mount, a container can never write it through
# /proc/<pid>/exe (CVE-2019-5736) and berth needs no protective re-exec per call. With
# systemd as PID 1 this installs and enables usr-local-bin-berth.mount (made at every boot).
contrib/systemd/install-seal.sh "$bin"
berth --version
bundle=/var/lib/berth/demo-bundle
BERTH="$bin" contrib/mkbundle.sh "$bundle" sh -c \
  'echo "hello from a berth container"; echo "hostname: $(hostname)"; id; echo "processes:"; ps'
berth run --bundle "$bundle" demo
