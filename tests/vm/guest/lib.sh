# lib.sh: helpers for guest scripts, present in every VM as /vm/lib.sh (source it with
# `. /vm/lib.sh`). Output is TAP-like: one "ok - ..." / "not ok - ..." line per check.
#
#   check DESC CMD...          CMD must succeed
#   check_not DESC CMD...      CMD must fail
#   check_eq DESC WANT GOT     strings must be equal
#   check_match DESC ERE TEXT  TEXT must contain a line matching the extended regex ERE
#   skip_all REASON            stop here, exit 77 (reported as SKIP, never as PASS)
#   done_testing               exit 0 when every check passed and at least one ran, else 1
#   bundle_copy NAME           copy /bundle to /tmp/bundles/NAME, print its path
#   cfg BUNDLE FILTER [JQ-ARG...]  edit BUNDLE/config.json in place with jq (run-suite.sh
#                              carries jq), e.g. cfg "$b" '.process.args=[$a]' --arg a x
#   sysfs_dev_matches NODE SYSFS_DEV_FILE   NODE is a char device with the "MAJ:MIN" of the file
#
# The runtime under test is $RUNTIME (run-suite.sh sets it; default runc). Call iproute2 as
# /usr/sbin/ip: busybox sh runs its own applets (ip included) before searching PATH.

RUNTIME=${RUNTIME:-runc}
vm_checks=0
vm_failed=0

ok() { vm_checks=$((vm_checks + 1)); echo "ok - $*"; }
not_ok() { vm_checks=$((vm_checks + 1)); vm_failed=$((vm_failed + 1)); echo "not ok - $*"; }

check() {
  d=$1; shift
  if "$@"; then ok "$d"; else not_ok "$d (command failed: $*)"; fi
}
check_not() {
  d=$1; shift
  if "$@"; then not_ok "$d (command succeeded: $*)"; else ok "$d"; fi
}
check_eq() {
  if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: want [$2] got [$3]"; fi
}
check_match() {
  if printf '%s\n' "$3" | grep -Eq -- "$2"; then ok "$1"
  else not_ok "$1: no line matches /$2/ in:"; printf '%s\n' "$3" | sed 's/^/    | /'; fi
}
skip_all() { echo "SKIP: $*"; exit 77; }
done_testing() {
  if [ "$vm_checks" = 0 ]; then echo "not ok - no check ran"; exit 1; fi
  echo "# $vm_checks checks, $vm_failed failed"
  [ "$vm_failed" = 0 ]
  exit $?
}

bundle_copy() {
  [ -f /bundle/config.json ] || { echo "no /bundle in this VM (run-vm.sh --bundle)" >&2; return 1; }
  mkdir -p /tmp/bundles
  rm -rf "/tmp/bundles/$1"
  cp -a /bundle "/tmp/bundles/$1" && echo "/tmp/bundles/$1"
}
cfg() {
  cfg_b=$1; cfg_f=$2; shift 2
  jq "$@" "$cfg_f" "$cfg_b/config.json" > "$cfg_b/config.json.new" &&
    mv "$cfg_b/config.json.new" "$cfg_b/config.json"
}

# major:minor of a device node, in decimal
dev_majmin() {
  set -- $(stat -c '%t %T' "$1" 2>/dev/null) || return 1
  [ $# = 2 ] || return 1
  echo "$((0x$1)):$((0x$2))"
}
sysfs_dev_matches() {
  [ -c "$1" ] || { echo "    $1 is not a character device" >&2; return 1; }
  want=$(cat "$2") || return 1
  got=$(dev_majmin "$1")
  [ "$want" = "$got" ] || { echo "    $1 is $got, $2 says $want" >&2; return 1; }
}
