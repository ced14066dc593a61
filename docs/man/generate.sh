#!/bin/sh
# generate.sh: the roff man pages (berth*.8) from their markdown sources (berth*.8.md),
# with go-md2man (Debian package go-md2man). Run it after editing a page and commit both;
# `cmake --install` installs the .8 files. --check: fail when a .8 file is out of date.
set -eu
cd "$(dirname "$0")"
command -v go-md2man >/dev/null || { echo "generate.sh: go-md2man not found (apt-get install go-md2man)" >&2; exit 2; }
check=0; [ "${1:-}" = --check ] && check=1
stale=0
for md in berth*.8.md; do
  out=${md%.md}
  if [ $check = 1 ]; then
    go-md2man -in "$md" | cmp -s - "$out" || { echo "out of date: $out (run docs/man/generate.sh)"; stale=1; }
  else
    go-md2man -in "$md" -out "$out"
  fi
done
exit $stale
