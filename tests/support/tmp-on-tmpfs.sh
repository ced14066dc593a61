#!/usr/bin/env bash
# Copyright The berth authors.
# SPDX-License-Identifier: Apache-2.0
#
# Runs COMMAND with a fresh tmpfs on /tmp, in a private mount namespace (the host's /tmp
# is untouched): the `*.tmp_on_tmpfs` ctest entries, where every bundle sits on another
# file system than the root's.
#
#   tmp-on-tmpfs.sh [--keep DIR]... -- COMMAND [ARG]...
#
# A checkout or build dir under /tmp (a clone in /tmp/berth, as a newcomer makes it) would
# vanish under the tmpfs with the test binary, berth and the fixtures in it ("exec: ...:
# not found"). Each --keep DIR under /tmp is opened before the tmpfs goes on and bound
# back at its own path from that descriptor (a path would now name the tmpfs), so the
# tests still find everything where it was built, while the bundles they make under /tmp
# land on the tmpfs as before.
set -euo pipefail

if [[ ${1:-} != --inner ]]; then
  exec unshare -m --propagation private "$BASH" "${BASH_SOURCE[0]}" --inner "$@"
fi
shift

keep=()
while (($#)) && [[ $1 != -- ]]; do
  [[ $1 == --keep && $# -ge 2 ]] || { echo "usage: tmp-on-tmpfs.sh [--keep DIR]... -- COMMAND..." >&2; exit 2; }
  keep+=("$(readlink -f "$2")")
  shift 2
done
(($# >= 2)) || { echo "usage: tmp-on-tmpfs.sh [--keep DIR]... -- COMMAND..." >&2; exit 2; }
shift

# The top entry under /tmp of each kept dir (/tmp/berth for /tmp/berth/build), once.
tops=()
for d in "${keep[@]}"; do
  [[ $d == /tmp/?* ]] || continue
  rest=${d#/tmp/}
  top=/tmp/${rest%%/*}
  [[ " ${tops[*]-} " == *" $top "* ]] || tops+=("$top")
done

fds=()
for top in "${tops[@]}"; do
  exec {fd}<"$top"
  fds+=("$fd")
done
mount -t tmpfs berth-test-tmp /tmp
for i in "${!tops[@]}"; do
  mkdir -p "${tops[$i]}"
  # -c: no canonicalisation, which would resolve the descriptor's link to the path on
  # the tmpfs; the kernel follows /proc/PID/fd/N to the directory itself.
  mount -c --bind "/proc/$$/fd/${fds[$i]}" "${tops[$i]}"
  fd=${fds[$i]}
  exec {fd}<&-
done
exec "$@"
