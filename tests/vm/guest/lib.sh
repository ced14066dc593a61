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
#   wait_for_gid0 DEV NETDEV   until DEV's GID 0 (NETDEV's IPv6 link-local address) is set and
#                              past duplicate address detection; 30 s at most
#   rc_pingpong DEV ITERS      ibv_rc_pingpong server and client on DEV here; sets pp_out
#                              (the client's output) and pp_server_rc; fails after 3 tries.
#                              The server's log goes to ${PP_LOG_DIR:-/tmp}. Containers
#                              source a copy of this file for it (rdma-berth.sh)
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

wait_for_gid0() {
  gid_i=0
  while { [ "$(cat "/sys/class/infiniband/$1/ports/1/gids/0")" = 0000:0000:0000:0000:0000:0000:0000:0000 ] ||
          [ -n "$(/usr/sbin/ip -6 addr show dev "$2" tentative)" ]; } && [ $gid_i -lt 300 ]; do
    sleep 0.1; gid_i=$((gid_i + 1))
  done
}

# tcp_listening PORT_HEX: some socket here listens on that TCP port (IPv4 or IPv6)
tcp_listening() {
  cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | grep -Eq "^ *[0-9]+: [0-9A-F]+:$1 [0-9A-F]+:[0-9A-F]+ 0A "
}

# The pingpong server serves one client and exits, also when that client fails midway (a
# QP that could not reach RTR): a retry needs a fresh server, never a second client. And the
# server's start alone takes seconds in an emulated guest on a busy host, so each try waits
# until it listens (port 18515, 4853 in hex) rather than for a fixed time. timeout bounds a
# side that would wait for a peer gone.
rc_pingpong() {
  pp_out="" pp_server_rc=1
  for pp_try in 1 2 3; do
    timeout 120 ibv_rc_pingpong -d "$1" -g 0 -n "$2" > "${PP_LOG_DIR:-/tmp}/pp-server.log" 2>&1 &
    pp_srv=$!
    pp_i=0
    until tcp_listening 4853 || ! kill -0 $pp_srv 2>/dev/null || [ $pp_i -ge 600 ]; do
      sleep 0.1; pp_i=$((pp_i + 1))
    done
    pp_out=$(timeout 60 ibv_rc_pingpong -d "$1" -g 0 -n "$2" 127.0.0.1 2>&1)
    pp_rc=$?
    [ $pp_rc = 0 ] || kill $pp_srv 2>/dev/null
    wait $pp_srv; pp_server_rc=$?
    [ $pp_rc = 0 ] && return 0
    echo "# rc_pingpong try $pp_try failed (client $pp_rc, server $pp_server_rc):"
    printf '%s\n' "$pp_out" server: "$(cat "${PP_LOG_DIR:-/tmp}/pp-server.log")" | sed 's/^/#   /'
  done
  return 1
}
