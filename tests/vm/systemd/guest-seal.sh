#!/bin/sh
# vm-systemd seal suite, in the systemd guest (image.sh), chosen by vmsd.suite=seal on the
# kernel command line; seal.sh boots the same disk twice. First boot: berth is installed
# but not sealed (features says "false", --debug create re-executes from a clone); the seal
# is installed as contrib/setup.sh installs it (contrib/systemd/install-seal.sh: the mount
# unit, enabled), then the guest powers off. Second boot, from the same disk: the unit made
# the seal at boot, the binary's mount is read-only, features says "true", --debug create
# does not re-execute, and a container runs. Lines start with "VMTEST:"; each boot ends with
# "VMTEST: RESULT1:" or "VMTEST: RESULT:" PASS|FAIL.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
B=/usr/local/bin/berth
unit=usr-local-bin-berth.mount
mark=/var/lib/vmsd-seal/first-boot-done
. /usr/local/lib/vm-systemd-lib.sh   # fails, up, say, show, pass, fail, expect, prop (guest-lib.sh)
sealed() { $B features 2>/dev/null | sed -n 's/^ *"org.berth.exe.sealed": "\([a-z]*\)",*$/\1/p'; }
# what --debug create says about the binary (the exe: lines), and whether the container ran
debug_run() { # NAME
  mkdir -p /run/bs && (cd /run/bs && rm -f config.json && runc spec) || return 1
  sed -i -e 's/"terminal": true/"terminal": false/' -e 's|"path": "rootfs"|"path": "/opt/bb"|' \
    -e 's/^\(\t*\)"sh"$/\1"true"/' /run/bs/config.json
  $B --debug run --bundle /run/bs "$1" </dev/null >/tmp/seal.out 2>&1
  echo "run=$?"
  grep -o 'exe: [a-z ,:-]*' /tmp/seal.out | sed 's/ *$//'
}

say "begin: seal, $($B --version | head -n 1), uptime $(cut -d' ' -f1 /proc/uptime)s"
expect "systemctl is-system-running" running "$(systemctl is-system-running --wait 2>&1)"
if [ ! -f $mark ]; then
  expect "first boot: $B on a mount of its own" no "$(findmnt -rn $B >/dev/null && echo yes || echo no)"
  expect "first boot: features org.berth.exe.sealed" false "$(sealed)"
  expect "first boot: --debug run re-executes from a clone" "run=0
exe: not sealed: re-executing from a read-only clone of the binary
exe: running from a read-only clone of the binary" "$(debug_run s1)"
  /usr/local/share/berth/systemd/install-seal.sh $B 2>&1 | show
  expect "install-seal.sh: $unit enabled" enabled "$(systemctl is-enabled $unit 2>&1)"
  expect "install-seal.sh: features org.berth.exe.sealed" true "$(sealed)"
  mkdir -p "$(dirname $mark)" && touch $mark && sync
  if [ $fails = 0 ]; then say "RESULT1: PASS"; else say "RESULT1: FAIL ($fails failed)"; fi
  exit $fails  # vm-test.service powers the guest off; seal.sh boots the disk again
fi

say "second boot (the first one installed the seal)"
expect "$unit at boot" active "$(systemctl is-active $unit 2>&1)"
expect "$B mount options" ro "$(findmnt -rn -o OPTIONS $B 2>&1 | cut -d, -f1)"
systemctl status --no-pager $unit 2>&1 | head -n 6 | show
expect "features org.berth.exe.sealed" true "$(sealed)"
expect "--debug run: sealed, no re-exec" "run=0
exe: sealed: the binary is on a read-only mount, no re-exec" "$(debug_run s2)"
# (in a shell of its own: a failed redirection on ":" ends the shell that runs it)
expect "the binary cannot be opened for writing" EROFS \
  "$(sh -c ": >> $B" 2>&1 | grep -o 'Read-only file system' | sed 's/.*/EROFS/')"
# a replacement as contrib/setup.sh makes it: unseal, replace, seal again
/usr/local/share/berth/systemd/install-seal.sh --unseal $B 2>&1 | show
expect "unsealed: features" false "$(sealed)"
cp $B /tmp/berth.new && mv /tmp/berth.new $B
expect "unsealed: the file can be replaced" 0 $?
/usr/local/share/berth/systemd/install-seal.sh $B 2>&1 | show
expect "sealed again: $unit" active "$(systemctl is-active $unit 2>&1)"
expect "sealed again: features" true "$(sealed)"
if [ $fails = 0 ]; then say "RESULT: PASS"; else say "RESULT: FAIL ($fails failed)"; fi
exit $fails
