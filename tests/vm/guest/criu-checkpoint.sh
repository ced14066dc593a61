#!/bin/sh
# criu-checkpoint: checkpoint and restore of a container runtime ($RUNTIME) through CRIU on
# Debian's 6.1 kernel: a counter checkpointed and restored (the value continues), the
# container gone after a plain checkpoint, --leave-running, pre-dump + dump with
# --parent-path, restore under a new id and bundle (--pid-file, a prestart hook), cgroup
# limits after restore, a terminal restored in the foreground, and a failed restore that
# leaves nothing behind; a terminal restored through --console-socket (berth_recvtty, the
# build's console-socket peer, holds the masters) and a TCP listener with an established
# connection inside the container restored with --tcp-established (CRIU locks the
# connection with iptables-restore: the legacy one and its modules are carried), --empty-ns
# network (a namespace of its own, one named by path), and lazy migration (--lazy-pages, --page-server, --status-fd, `criu
# lazy-pages`). The same steps run for runc and berth.
# CRIU needs the sock_diag, tun and nf_tables modules loaded, and GNU tar and gzip for tmpfs
# contents (busybox tar lacks its options). The containers have no network namespace (CRIU
# dumps one with iproute2, which the VM lacks) except the --empty-ns one.
# vm-options: --bin /usr/bin/script --bin /usr/sbin/criu --bin /usr/bin/tar --bin /usr/bin/gzip --mem 768 --timeout 480 --module unix_diag --module inet_diag
# vm-options: --module tcp_diag --module udp_diag --module netlink_diag --module af_packet_diag
# vm-options: --module tun --module crc32c_generic --module nf_tables
# vm-options: --bin /usr/sbin/xtables-legacy-multi --file /usr/lib/x86_64-linux-gnu/xtables:/usr/lib/x86_64-linux-gnu/xtables
# vm-options: --module ip_tables --module iptable_filter --module xt_tcpudp --module xt_mark --module ip6_tables --module ip6table_filter --module nf_conntrack_netlink
. /vm/lib.sh

command -v "$RUNTIME" >/dev/null || { not_ok "runtime $RUNTIME not in the VM"; done_testing; }
command -v criu >/dev/null || skip_all "criu is not in the VM"
if ! out=$(criu check 2>&1); then
  printf '%s\n' "$out" | sed 's/^/    criu check| /'
  skip_all "criu check fails on this kernel: $(printf '%s\n' "$out" | grep -m1 Error)"
fi
ok "criu check: $out"

b=$(bundle_copy cr) || { not_ok "bundle copy"; done_testing; }
# The counter keeps its value in memory and writes it to /count. `run -d` gets the host's
# /dev/null as stdio, which the init reopens on the container's own /dev/null as runc does
# (CRIU cannot dump a descriptor of the host's /dev): no redirection inside the container.
cfg "$b" '.process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /count; sleep 0.1; done"]
  | .root.readonly = false
  | .linux.cgroupsPath = "/berth-criu/cr"
  | .linux.resources = {"memory": {"limit": 134217728}, "pids": {"limit": 64}}
  | .linux.namespaces |= map(select(.type != "network"))
  | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
count() {  # BUNDLE: the counter's last value (0 before the first); `echo > /count`
  # truncates before it writes, so an empty read is tried again
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    c=$(cat "$1/rootfs/count" 2>/dev/null)
    case $c in ''|*[!0-9]*) c=0; sleep 0.05 ;; *) break ;; esac
  done
  echo "$c"
}
wait_count() {  # BUNDLE MIN: until the counter reaches MIN (10 s at most)
  n=0
  while [ "$(count "$1")" -lt "$2" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
}
state_of() { "$RUNTIME" state "$1" 2>/dev/null | jq -r .status; }
show_log() {  # LOG: CRIU's errors and its last lines
  [ -f "$1" ] || return 0
  grep -m 5 'Error' "$1" | sed 's/^/    log error| /'
  tail -n 15 "$1" | sed 's/^/    log| /'
}

# checkpoint_ok DESC IMG ID [FLAG...]: `checkpoint FLAG... --image-path IMG ID`, checked to
# exit 0 ("DESC exits 0"); its output and CRIU's log shown when not
checkpoint_ok() {
  _d=$1 _img=$2 _id=$3; shift 3
  "$RUNTIME" checkpoint "$@" --image-path "$_img" "$_id" >/tmp/ck.out 2>&1
  rc=$?; check_eq "$_d exits 0" 0 "$rc"
  [ $rc = 0 ] || { cat /tmp/ck.out; show_log "$_img/dump.log"; }
}

# restore_ok DESC BUNDLE IMG ID [FLAG...]: `restore -d FLAG... --image-path IMG ID` run in
# BUNDLE, checked the same way
restore_ok() {
  _d=$1 _dir=$2 _img=$3 _id=$4; shift 4
  (cd "$_dir" && "$RUNTIME" restore -d "$@" --image-path "$_img" "$_id" </dev/null >/tmp/rs.out 2>&1)
  rc=$?; check_eq "$_d exits 0" 0 "$rc"
  [ $rc = 0 ] || { cat /tmp/rs.out; show_log "$_img/restore.log"; }
}

(cd "$b" && "$RUNTIME" run -d cr </dev/null >/dev/null 2>&1)
check_eq "run -d" 0 "$?"
wait_count "$b" 20

# 1. checkpoint: the container is gone, the counter stops.
checkpoint_ok "checkpoint" /tmp/img1 cr
check "descriptors.json written" test -s /tmp/img1/descriptors.json
check_match "descriptors.json is runc's array of the init's fds" '^\[".*",".*",".*"\]$' "$(cat /tmp/img1/descriptors.json 2>&1)"
check_not "container deleted after checkpoint" "$RUNTIME" state cr
check_not "its cgroup removed" test -d /sys/fs/cgroup/berth-criu/cr
v1=$(count "$b"); sleep 0.5
check_eq "counter stopped at $v1" "$v1" "$(count "$b")"

# 2. restore: the value continues from v1.
restore_ok "restore -d" "$b" /tmp/img1 cr
check_eq "restored container running" running "$(state_of cr)"
wait_count "$b" $((v1 + 5))
v2=$(count "$b")
check "counter continues ($v1 -> $v2)" test "$v2" -gt "$v1"
pid=$("$RUNTIME" state cr 2>/dev/null | jq -r .pid)
check "restored init $pid in the container's cgroup" grep -qx "$pid" /sys/fs/cgroup/berth-criu/cr/cgroup.procs
check_eq "memory limit after restore" 134217728 "$(cat /sys/fs/cgroup/berth-criu/cr/memory.max 2>&1)"
check_eq "pids limit after restore" 64 "$(cat /sys/fs/cgroup/berth-criu/cr/pids.max 2>&1)"

# 3. --leave-running: the container keeps counting.
checkpoint_ok "checkpoint --leave-running" /tmp/img2 cr --leave-running
check_eq "still running" running "$(state_of cr)"
v3=$(count "$b"); wait_count "$b" $((v3 + 3))
check "still counting ($v3 -> $(count "$b"))" test "$(count "$b")" -gt "$v3"

# 4. pre-dump, then a dump on top of it.
checkpoint_ok "checkpoint --pre-dump" /tmp/pre cr --pre-dump
check_eq "running after pre-dump" running "$(state_of cr)"
checkpoint_ok "checkpoint --parent-path ../pre" /tmp/img3 cr --parent-path ../pre
check_not "container deleted after the dump" "$RUNTIME" state cr
v4=$(count "$b")

# 5. restore under a new id and a new bundle (a copy of the rootfs as it is now).
# Its config has a prestart hook, which runs when CRIU has made the namespaces.
b2=/tmp/bundles/cr2
rm -rf "$b2"; cp -a "$b" "$b2"
cfg "$b2" '.hooks = {"prestart": [{"path": "/bin/sh", "args": ["sh", "-c", "cat > /tmp/cr2-hook.json"]}]}'
restore_ok "restore -b new bundle as cr2" /tmp /tmp/img3 cr2 -b "$b2" --pid-file /tmp/cr2.pid
check_eq "cr2 running" running "$(state_of cr2)"
check_eq "cr2's bundle" "$b2" "$("$RUNTIME" state cr2 2>/dev/null | jq -r .bundle)"
check_eq "--pid-file names the restored init" "$("$RUNTIME" state cr2 2>/dev/null | jq -r .pid)" "$(cat /tmp/cr2.pid 2>&1)"
check_eq "prestart hook ran at restore with the new id" cr2 "$(jq -r .id /tmp/cr2-hook.json 2>&1)"
check "... and a pid" test "$(jq -r .pid /tmp/cr2-hook.json 2>/dev/null)" -gt 0
wait_count "$b2" $((v4 + 5))
check "cr2 counts on in its own rootfs ($v4 -> $(count "$b2"))" test "$(count "$b2")" -gt "$v4"
check_eq "old bundle's counter stays at $v4" "$v4" "$(count "$b")"
check "delete -f cr2" "$RUNTIME" delete -f cr2
check_not "cgroup removed by delete" test -d /sys/fs/cgroup/berth-criu/cr

# 6. a terminal: `run` in the foreground holds the pty master; CRIU hands a new one back at
# restore (orphan pts), which a foreground restore proxies to its stdout. Both run under
# util-linux script(1): runc's foreground terminal mode needs a terminal on its stdin.
t=$(bundle_copy tty) || { not_ok "bundle copy"; done_testing; }
cfg "$t" '.process.terminal = true
  | .process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.2; done"]
  | .root.readonly = false
  | .linux.cgroupsPath = "/berth-criu/tty"
  | .linux.namespaces |= map(select(.type != "network"))
  | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
last_tick() { tr -d '\r' < "$1" | sed -n 's/^tick \([0-9]*\)$/\1/p' | tail -n 1; }
first_tick() { tr -d '\r' < "$1" | sed -n 's/^tick \([0-9]*\)$/\1/p' | head -n 1; }
wait_file() {  # FILE ERE: until a line matches (10 s at most)
  n=0
  while ! { tr -d '\r' < "$1"; } 2>/dev/null | grep -Eq "$2" && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
}
(cd "$t" && exec script -qfc "exec $RUNTIME run tty1" /dev/null </dev/null >/tmp/tty-run.out 2>&1) &
wait_file /tmp/tty-run.out '^tick 10$'
checkpoint_ok "checkpoint of a terminal container" /tmp/imgt tty1
wait
t1=$(last_tick /tmp/tty-run.out)
(cd "$t" && exec script -qfc "exec $RUNTIME restore --image-path /tmp/imgt tty1" /dev/null </dev/null >/tmp/tty-rs.out 2>&1) &
wait_file /tmp/tty-rs.out '^tick [0-9]+$'
t2=$(first_tick /tmp/tty-rs.out)
check "foreground restore proxies the restored terminal (tick $t1 -> ${t2:-none})" test "${t2:-0}" -gt "${t1:-0}"
[ -n "$t2" ] || { sed 's/^/    restore| /' /tmp/tty-rs.out; show_log /tmp/imgt/restore.log; }
check_eq "restored terminal container running" running "$(state_of tty1)"
"$RUNTIME" kill tty1 KILL
wait
check_not "the foreground restore deleted the container when its init died" "$RUNTIME" state tty1

# 7. a terminal through --console-socket: run -d sends the master to berth_recvtty, which
# feeds the shell lines from a fifo; the restore sends CRIU's new master to the same socket
# and the restored shell answers on it.
if [ -x "${RECVTTY:-}" ]; then
  sb=$(bundle_copy cs) || { not_ok "bundle copy"; done_testing; }
  cfg "$sb" '.process.terminal = true
    | .process.args = ["sh", "-c", "echo ready; while read l; do echo \"got $l\"; done"]
    | .root.readonly = false
    | .linux.cgroupsPath = "/berth-criu/cs"
    | .linux.namespaces |= map(select(.type != "network"))
    | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
  rm -f /tmp/cs.in /tmp/cs.sock; mkfifo /tmp/cs.in
  "$RECVTTY" /tmp/cs.sock </tmp/cs.in >/tmp/cs.out 2>/tmp/cs.err &
  rpid=$!
  exec 4>/tmp/cs.in
  n=0; while [ ! -S /tmp/cs.sock ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
  (cd "$sb" && "$RUNTIME" run -d --console-socket /tmp/cs.sock cs1 </dev/null >/tmp/cs-run.out 2>&1)
  check_eq "run -d --console-socket" 0 "$?"
  wait_file /tmp/cs.out '^ready$'
  echo ping1 >&4
  wait_file /tmp/cs.out '^got ping1$'
  check "the terminal answers before the checkpoint" grep -q '^got ping1' /tmp/cs.out
  checkpoint_ok "checkpoint --shell-job of a console-socket container" /tmp/imgcs cs1 --shell-job
  check_not "container deleted after checkpoint" "$RUNTIME" state cs1
  restore_ok "restore -d --console-socket" "$sb" /tmp/imgcs cs1 --shell-job --console-socket /tmp/cs.sock
  check_eq "restored console-socket container running" running "$(state_of cs1)"
  n=0; while [ "$(grep -c 'got a terminal master' /tmp/cs.err)" -lt 2 ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
  check_eq "a new master arrived on the console socket" 2 "$(grep -c 'got a terminal master' /tmp/cs.err)"
  echo ping2 >&4
  wait_file /tmp/cs.out '^got ping2$'
  check "the restored shell answers on the new master" grep -q '^got ping2' /tmp/cs.out
  grep -q '^got ping2' /tmp/cs.out || sed 's/^/    tty| /' /tmp/cs.out /tmp/cs.err
  check "delete -f cs1" "$RUNTIME" delete -f cs1
  exec 4>&-
  kill "$rpid" 2>/dev/null; wait "$rpid" 2>/dev/null
else
  not_ok "RECVTTY (the build's berth_recvtty) not in the VM"
fi

# 8. TCP: a listener and an established connection, both inside the container (which
# shares the VM's network namespace), dumped and restored with --tcp-established. The
# client is the init (nc reading a fifo, writing /tout); the server answers each line.
# CRIU locks the connection with iptables-restore (legacy, carried into the VM).
mkdir -p /usr/local/sbin
for t in iptables-restore ip6tables-restore iptables-save ip6tables-save iptables ip6tables; do
  ln -sf /usr/sbin/xtables-legacy-multi /usr/local/sbin/$t
done
tb=$(bundle_copy tcp) || { not_ok "bundle copy"; done_testing; }
printf '#!/bin/sh\nwhile read l; do echo "tcp $l"; done\n' > "$tb/rootfs/srv.sh"
chmod 755 "$tb/rootfs/srv.sh"
cfg "$tb" '.process.args = ["sh", "-c", "mkfifo /tin; exec 3<>/tin; nc -ll -p 7777 -e /srv.sh & sleep 0.5; exec nc 127.0.0.1 7777 <&3 >/tout"]
  | .root.readonly = false
  | .linux.cgroupsPath = "/berth-criu/tcp"
  | .linux.namespaces |= map(select(.type != "network"))
  | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
(cd "$tb" && "$RUNTIME" run -d tcp1 </dev/null >/dev/null 2>&1)
check_eq "run -d (TCP)" 0 "$?"
w=0; while [ ! -p "$tb/rootfs/tin" ] && [ $w -lt 50 ]; do sleep 0.1; w=$((w + 1)); done
sleep 0.5
echo one > "$tb/rootfs/tin"
wait_file "$tb/rootfs/tout" '^tcp one$'
check "the connection answers before the checkpoint" grep -q '^tcp one$' "$tb/rootfs/tout"
checkpoint_ok "checkpoint --tcp-established" /tmp/imgtcp tcp1 --tcp-established
check_not "container deleted after checkpoint" "$RUNTIME" state tcp1
restore_ok "restore -d --tcp-established" "$tb" /tmp/imgtcp tcp1 --tcp-established
check_eq "restored TCP container running" running "$(state_of tcp1)"
echo two > "$tb/rootfs/tin"
wait_file "$tb/rootfs/tout" '^tcp two$'
check "the restored connection still answers" grep -q '^tcp two$' "$tb/rootfs/tout"
(echo three; sleep 1) | nc 127.0.0.1 7777 >/tmp/tcp-new.out 2>&1
check "the restored listener accepts a new connection" grep -q '^tcp three$' /tmp/tcp-new.out
check "delete -f tcp1" "$RUNTIME" delete -f tcp1

# 9. --empty-ns network: a container with its own network namespace, checkpointed without
# the namespace's contents (CRIU saves no links, addresses or routes: no iproute2 needed)
# and restored into a new empty one, as runc does.
e=$(bundle_copy en) || { not_ok "bundle copy"; done_testing; }
cfg "$e" '.process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /count; sleep 0.1; done"]
  | .root.readonly = false
  | .linux.cgroupsPath = "/berth-criu/en"
  | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
(cd "$e" && "$RUNTIME" run -d en1 </dev/null >/dev/null 2>&1)
check_eq "run -d (own network namespace)" 0 "$?"
wait_count "$e" 5
checkpoint_ok "checkpoint --empty-ns network" /tmp/imgen en1 --empty-ns network
check_not "container deleted after checkpoint" "$RUNTIME" state en1
v5=$(count "$e")
restore_ok "restore -d --empty-ns network" "$e" /tmp/imgen en1 --empty-ns network
check_eq "restored container running" running "$(state_of en1)"
wait_count "$e" $((v5 + 5))
check "counter continues ($v5 -> $(count "$e"))" test "$(count "$e")" -gt "$v5"
pid=$("$RUNTIME" state en1 2>/dev/null | jq -r .pid)
check_not "the restored init has a network namespace of its own" test "$(readlink /proc/"$pid"/ns/net)" = "$(readlink /proc/self/ns/net)"
check_eq "... with nothing but lo in it" "lo" "$(sed -n 's/^ *\([^ :]*\):.*/\1/p' /proc/"$pid"/net/dev | tr '\n' ' ' | sed 's/ $//')"
check "delete -f en1" "$RUNTIME" delete -f en1

# 9b. the same container without --empty-ns (what podman --network none does): as runc,
# berth never has CRIU save or restore a network namespace's contents (CRIU would run `ip`,
# which the VM lacks), so both steps pass and the restored init gets a new empty namespace.
(cd "$e" && "$RUNTIME" run -d en2 </dev/null >/dev/null 2>&1)
check_eq "run -d en2 (own network namespace)" 0 "$?"
wait_count "$e" $(($(count "$e") + 3))
checkpoint_ok "checkpoint of a container with its own network namespace, no --empty-ns," /tmp/imgen2 en2
v8=$(count "$e")
restore_ok "restore -d, no --empty-ns," "$e" /tmp/imgen2 en2
wait_count "$e" $((v8 + 5))
check "counter continues ($v8 -> $(count "$e"))" test "$(count "$e")" -gt "$v8"
pid=$("$RUNTIME" state en2 2>/dev/null | jq -r .pid)
check_eq "... in a new namespace with nothing but lo" "lo" "$(sed -n 's/^ *\([^ :]*\):.*/\1/p' /proc/"$pid"/net/dev 2>&1 | tr '\n' ' ' | sed 's/ $//')"
check "delete -f en2" "$RUNTIME" delete -f en2

# 10. --empty-ns network with a namespace the config names by path (made here with
# busybox unshare): CRIU records it as external at checkpoint and the restore hands the
# same namespace back, with the tasks in it.
mkdir -p /run/netns; : > /run/netns/crnet
if unshare --net=/run/netns/crnet true 2>/tmp/unshare.err; then
  p=$(bundle_copy pn) || { not_ok "bundle copy"; done_testing; }
  cfg "$p" '.process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /count; sleep 0.1; done"]
    | .root.readonly = false
    | .linux.cgroupsPath = "/berth-criu/pn"
    | .linux.namespaces |= map(if .type == "network" then .path = "/run/netns/crnet" else . end)
    | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
  (cd "$p" && "$RUNTIME" run -d pn1 </dev/null >/dev/null 2>&1)
  check_eq "run -d (network namespace by path)" 0 "$?"
  wait_count "$p" 5
  checkpoint_ok "checkpoint --empty-ns network (namespace by path)" /tmp/imgpn pn1 --empty-ns network
  v7=$(count "$p")
  restore_ok "restore -d --empty-ns network (namespace by path)" "$p" /tmp/imgpn pn1 --empty-ns network
  check_eq "restored container running" running "$(state_of pn1)"
  wait_count "$p" $((v7 + 5))
  check "counter continues ($v7 -> $(count "$p"))" test "$(count "$p")" -gt "$v7"
  pid=$("$RUNTIME" state pn1 2>/dev/null | jq -r .pid)
  check_eq "the restored init is in the namespace the config names" \
    "$(stat -L -c %i /run/netns/crnet)" "$(stat -L -c %i /proc/"$pid"/ns/net 2>&1)"
  check "delete -f pn1" "$RUNTIME" delete -f pn1
  umount /run/netns/crnet
else
  not_ok "unshare --net=/run/netns/crnet: $(cat /tmp/unshare.err)"
fi

# 11. lazy migration, as runc's checkpoint.bats "checkpoint --lazy-pages and restore": the
# dump serves the memory from a page server and says so with one \0 on --status-fd;
# `criu lazy-pages` fetches the pages for a restore under a new id (the checkpointed
# container lives on, frozen, until the last page is sent) in a copy of the bundle with
# its own cgroup. Needs a kernel with non-cooperative userfaultfd.
if ! why=$(criu check --feature uffd-noncoop 2>&1); then
  echo "# SKIP lazy pages: no non-cooperative userfaultfd: $(printf '%s\n' "$why" | tail -n 1)"
else
  l=$(bundle_copy lz) || { not_ok "bundle copy"; done_testing; }
  cfg "$l" '.process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /count; sleep 0.1; done"]
    | .root.readonly = false
    | .linux.cgroupsPath = "/berth-criu/lz"
    | .linux.namespaces |= map(select(.type != "network"))
    | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
  (cd "$l" && "$RUNTIME" run -d lz1 </dev/null >/dev/null 2>&1)
  check_eq "run -d (lazy)" 0 "$?"
  wait_count "$l" 5
  rm -rf /tmp/lz-img /tmp/lz-work /tmp/lz.fifo; mkdir -p /tmp/lz-img /tmp/lz-work; mkfifo /tmp/lz.fifo
  exec 6<>/tmp/lz.fifo
  "$RUNTIME" checkpoint --lazy-pages --page-server 0.0.0.0:27277 --status-fd 7 --work-path /tmp/lz-work \
    --image-path /tmp/lz-img lz1 7>/tmp/lz.fifo </dev/null >/tmp/cklz.out 2>&1 &
  ckpid=$!
  ready=$(timeout 60 head -c 1 <&6 | od -An -tx1 | tr -d ' \n')
  exec 6<&-
  check_eq "--status-fd: one NUL byte when the page server is ready" 00 "$ready"
  [ "$ready" = 00 ] || { cat /tmp/cklz.out; show_log /tmp/lz-work/dump.log; }
  check "inventory.img written" test -e /tmp/lz-img/inventory.img
  v6=$(count "$l")
  l2=/tmp/bundles/lz2
  rm -rf "$l2"; cp -a "$l" "$l2"
  cfg "$l2" '.linux.cgroupsPath = "/berth-criu/lz2"'
  criu lazy-pages --page-server --address 127.0.0.1 --port 27277 -D /tmp/lz-img </dev/null >/tmp/lzd.out 2>&1 &
  lzpid=$!
  (cd "$l2" && "$RUNTIME" restore -d --lazy-pages --work-path /tmp/lz-img --image-path /tmp/lz-img lz2 </dev/null >/tmp/rslz.out 2>&1)
  rc=$?; check_eq "restore -d --lazy-pages as lz2 exits 0" 0 "$rc"
  [ $rc = 0 ] || { cat /tmp/rslz.out /tmp/lzd.out; show_log /tmp/lz-img/restore.log; }
  check_eq "lz2 running" running "$(state_of lz2)"
  wait_count "$l2" $((v6 + 5))
  check "lz2's counter continues ($v6 -> $(count "$l2"))" test "$(count "$l2")" -gt "$v6"
  n=0; while kill -0 "$ckpid" 2>/dev/null && [ $n -lt 300 ]; do sleep 0.2; n=$((n + 1)); done
  kill "$ckpid" "$lzpid" 2>/dev/null
  wait "$ckpid"; rc=$?
  check_eq "checkpoint --lazy-pages exits 0 once every page is sent" 0 "$rc"
  [ $rc = 0 ] || { cat /tmp/cklz.out; show_log /tmp/lz-work/dump.log; }
  wait "$lzpid"
  check_not "lz1 deleted after the lazy checkpoint" "$RUNTIME" state lz1
  check "delete -f lz2" "$RUNTIME" delete -f lz2
fi

# 11b. runc's org.criu.config, as runc's checkpoint.bats "checkpoint and restore with
# container specific CRIU config": the annotation's file wins over /etc/criu/runc.conf (the
# default without it); each names its own log file, and only the annotation's is written.
mkdir -p /etc/criu
echo "log-file=runc-conf.log" > /etc/criu/runc.conf
echo "log-file=app-conf.log" > /tmp/criu-app.conf
k=$(bundle_copy cc) || { not_ok "bundle copy"; done_testing; }
cfg "$k" '.process.args = ["sh", "-c", "i=0; while :; do i=$((i+1)); echo $i > /count; sleep 0.1; done"]
  | .root.readonly = false
  | .linux.cgroupsPath = "/berth-criu/cc"
  | .annotations["org.criu.config"] = "/tmp/criu-app.conf"
  | .linux.maskedPaths = [] | .linux.readonlyPaths = []'
(cd "$k" && "$RUNTIME" run -d cc1 </dev/null >/dev/null 2>&1)
check_eq "run -d (org.criu.config)" 0 "$?"
wait_count "$k" 5
rm -rf /tmp/cc-img /tmp/cc-work; mkdir -p /tmp/cc-work
"$RUNTIME" checkpoint --work-path /tmp/cc-work --image-path /tmp/cc-img cc1 >/tmp/ckcc.out 2>&1
rc=$?; check_eq "checkpoint with org.criu.config exits 0" 0 "$rc"
[ $rc = 0 ] || cat /tmp/ckcc.out
check "the annotation's file names the log (app-conf.log)" test -s /tmp/cc-work/app-conf.log
check_not "runc.conf is not read when the annotation names a file" test -e /tmp/cc-work/runc-conf.log
v9=$(count "$k")
(cd "$k" && "$RUNTIME" restore -d --work-path /tmp/cc-work --image-path /tmp/cc-img cc1 </dev/null >/tmp/rscc.out 2>&1)
rc=$?; check_eq "restore -d with org.criu.config exits 0" 0 "$rc"
[ $rc = 0 ] || cat /tmp/rscc.out
wait_count "$k" $((v9 + 5))
check "counter continues ($v9 -> $(count "$k"))" test "$(count "$k")" -gt "$v9"
check "delete -f cc1" "$RUNTIME" delete -f cc1
rm -f /etc/criu/runc.conf

# 12. a failed restore leaves no container and no cgroup behind.
(cd "$b" && "$RUNTIME" restore -d --image-path /tmp/no-such-image bad </dev/null >/tmp/bad.out 2>&1)
check_not "restore from a missing image fails" test $? = 0
sed 's/^/    restore| /' /tmp/bad.out
check_not "no container left" "$RUNTIME" state bad
check_not "no cgroup left" test -d /sys/fs/cgroup/berth-criu/cr
done_testing
