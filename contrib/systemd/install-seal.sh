#!/bin/sh
# install-seal.sh: seals the installed berth binary (a read-only bind mount of the file over
# itself, docs/security.md), or lifts the seal before the file is replaced.
#
#   install-seal.sh [--unseal] [BIN]        BIN: the installed binary (/usr/local/bin/berth)
#
# With systemd as PID 1 it installs and enables the mount unit of this folder (renamed and
# pointed at BIN when BIN is elsewhere), so that the seal is made again at every boot; else
# it makes the bind mount once (a reboot drops it; berth then re-executes from a read-only
# clone on every create/run/exec until it is sealed again). Needs root.
set -eu
unseal=
[ "${1:-}" = --unseal ] && { unseal=1; shift; }
bin=${1:-/usr/local/bin/berth}
here=$(cd "$(dirname "$0")" && pwd)
case $bin in /*) ;; *) echo "install-seal.sh: $bin: not an absolute path" >&2; exit 2 ;; esac

unit=
if [ -d /run/systemd/system ]; then  # systemd is PID 1 (sd_booted's test)
  unit=$(systemd-escape -p --suffix=mount "$bin")
fi

if [ -n "$unseal" ]; then
  [ -z "$unit" ] || systemctl stop "$unit" 2>/dev/null || true
  # a seal made by hand (or before the unit existed)
  while findmnt -rn "$bin" >/dev/null 2>&1; do umount "$bin"; done
  exit 0
fi

[ -f "$bin" ] || { echo "install-seal.sh: no file at $bin" >&2; exit 1; }
if [ -n "$unit" ]; then
  # Where= and What= are the path; a path with characters that need quoting is refused
  case $bin in *[!A-Za-z0-9/._+-]*) echo "install-seal.sh: $bin: use a plain path" >&2; exit 1 ;; esac
  while findmnt -rn "$bin" >/dev/null 2>&1; do umount "$bin"; done
  sed "s|/usr/local/bin/berth|$bin|g" "$here/usr-local-bin-berth.mount" > "/etc/systemd/system/$unit"
  systemctl daemon-reload
  systemctl enable --now "$unit"
else
  findmnt -rn "$bin" >/dev/null 2>&1 || { mount --bind "$bin" "$bin" && mount -o remount,bind,ro "$bin"; }
fi
# the kernel's answer, as berth reads it
findmnt -rn -o OPTIONS "$bin" | grep -q '^ro[,]' || { echo "install-seal.sh: $bin is not on a read-only mount" >&2; exit 1; }
echo "install-seal.sh: $bin sealed${unit:+ (at every boot: $unit)}"
