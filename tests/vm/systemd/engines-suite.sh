#!/bin/sh
# vm-systemd engines suite: run by vm-test.service in the engines variant of the systemd guest
# (image.sh WORK BERTH engines) once the boot is done, for the runtime named on the kernel
# command line (vmsd.runtime=berth|runc). The engines with their systemd defaults drive the
# runtime, each started once:
#   1. dockerd (native.cgroupdriver=systemd; berth registered in daemon.json "runtimes"):
#      run, exec, limits and device rules in the unit and its cgroup, update, stop, rm, a
#      failed create;
#   2. containerd's runc v2 shim through ctr with the shim's SystemdCgroup option
#      (--runc-systemd-cgroup) and BinaryName (--runc-binary);
#   3. podman --cgroup-manager systemd --runtime PATH; then podman container checkpoint and
#      restore (CRIU), in place and --export/--import under a new name;
#   4. containerd's CRI plugin with SystemdCgroup = true: tests/ecosystem/cri's scenario.py
#      with --systemd (kubelet's kubepods-<qos>-pod<uid>.slice parents; host network, as the
#      guest has no CNI plugins): the container's scope in the pod slice, an update, OOM
#      (of the init's child), stop/remove and a small churn with a census of what stays;
# and at the end no scope of any engine is left. Lines start with "VMTEST:"; the last one is
# "VMTEST: RESULT: PASS|FAIL"; the exit status is the number of failures.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
rt=$(sed -n 's/.*vmsd\.runtime=\([a-z]*\).*/\1/p' /proc/cmdline)
case $rt in
  berth) RT=/usr/local/bin/berth ;;
  runc) RT=/usr/sbin/runc ;;
  *) echo "VMTEST: RESULT: FAIL (no vmsd.runtime= on the kernel command line)"; exit 1 ;;
esac
. /usr/local/lib/vm-systemd-lib.sh   # fails, up, say, show, pass, fail, expect, prop (guest-lib.sh)
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.1f", b - a }'; }
loaded() { systemctl list-units --all --plain --no-legend "$1" 2>/dev/null | wc -l; }
cgof() { sed -n 's/^0:://p' "/proc/$1/cgroup" 2>/dev/null; }
short() { printf '%s' "$1" | sed 's/\([0-9a-f]\{12\}\)[0-9a-f]\{52\}/\1../'; }  # a unit name in a label
# limits WHO UNIT SLICE: the unit of a container run with 64 MiB and 32 pids, in SLICE
limits() {
  n=$(short "$2")
  expect "$1: $n Slice" "$3" "$(prop "$2" Slice)"
  expect "$1: $n Delegate" yes "$(prop "$2" Delegate)"
  expect "$1: $n MemoryMax" 67108864 "$(prop "$2" MemoryMax)"
  expect "$1: memory.max" 67108864 "$(cat "/sys/fs/cgroup/$3/$2/memory.max" 2>&1)"
}
IMG=localhost/busybox:offline
IMGS=/opt/engines/images
# containerd with the CRI plugin (step 4): tests/ecosystem/cri's config with SystemdCgroup = true
W=/var/lib/berth-cri
cri_driver=systemd   # cgroupfs: SystemdCgroup = false (vmsd.oomloop's comparison only)
cri_up() {
  mkdir -p $W/cni/net.d $W/pod-logs
  sed -e "s|@WORK@|$W|g" -e "s|@RESTRICT_OOM@|false|" -e "s|@RUNC@|/usr/sbin/runc|" \
      -e "s|@BERTH@|/usr/local/bin/berth|" -e "s|@CNI_BIN@|/usr/lib/cni|" \
      -e "s/SystemdCgroup = false/SystemdCgroup = $([ $cri_driver = systemd ] && echo true || echo false)/" \
      /opt/engines/cri/containerd.toml.in > $W/containerd.toml
  [ $cri_driver = cgroupfs ] ||
    expect "CRI config: SystemdCgroup = true for both handlers" 2 "$(grep -c "^ *SystemdCgroup = true" $W/containerd.toml)"
  systemd-run -q --unit=cri-containerd -p Delegate=yes -p KillMode=process containerd --config $W/containerd.toml
  i=0; while ! ctr -a $W/containerd.sock version >/dev/null 2>&1 && [ $i -lt 150 ]; do sleep 0.2; i=$((i + 1)); done
  for i in pause busybox; do
    ctr -a $W/containerd.sock -n k8s.io images import $IMGS/$i.tar >/dev/null 2>/tmp/out || show < /tmp/out
  done
}
cri_scenario() { # scenario.py's own arguments
  PYTHONPATH=/opt/engines/cri /usr/bin/python3 -u /opt/engines/cri/scenario.py --socket $W/containerd.sock \
    --stubs /opt/engines/cri/gen --handler "$rt" --log-root $W/pod-logs --work $W \
    --runtime-root "$W/$rt-root" $([ $cri_driver = systemd ] && echo --systemd) --host-network "$@" > /tmp/cri.out 2>&1
}
T0=$(up)

say "begin: engines with $rt ($($RT --version | head -n 1)), uptime $(up)s, kernel $(uname -r)"
expect "systemctl is-system-running" running "$(systemctl is-system-running --wait 2>&1)"
systemctl --failed --plain --no-legend 2>&1 | show

# vmsd.oomloop=N[,B[,HOG[,DRIVER]]] on the kernel command line (run.sh --append): only the CRI's
# OOM check, N containers in a row (scenario.py's oom_repeat), with B CPU burners in the guest,
# HOG init|child (scenario.py's --oom-hog), DRIVER systemd (default) or cgroupfs; then the
# journal's account of each kill (kernel, the scope, containerd's TaskOOM/TaskExit).
oomloop=$(sed -n 's/.*vmsd\.oomloop=\([0-9a-z,]*\).*/\1/p' /proc/cmdline)
if [ -n "$oomloop" ]; then
  IFS=, read -r n b hog drv <<EOF
$oomloop
EOF
  b=${b:-0}; [ "$drv" = cgroupfs ] && cri_driver=cgroupfs
  burners=; i=0
  while [ $i -lt "$b" ]; do nice -n 5 sh -c 'while :; do :; done' & burners="$burners $!"; i=$((i + 1)); done
  say "oomloop: $n OOM containers with $rt, $b burners, hog ${hog:-default}, $cri_driver driver, load $(cut -d' ' -f1-3 /proc/loadavg)"
  cri_up
  cri_scenario --only oom_repeat --oom-repeat "$n" ${hog:+--oom-hog "$hog"}
  expect "CRI oom_repeat x$n, $cri_driver driver" 0 $?
  show < /tmp/cri.out
  say "oomloop: load $(cut -d' ' -f1-3 /proc/loadavg)"
  [ -z "$burners" ] || kill $burners
  journalctl -q -o short-monotonic --no-pager 2>&1 | grep -E 'Killed process|cri-containerd-.*scope: |TaskOOM|TaskExit|level=(error|warning)' |
    cut -c 1-260 | show
  systemctl stop cri-containerd 2>&1 | show
  if [ $fails = 0 ]; then say "RESULT: PASS"; else say "RESULT: FAIL ($fails failed)"; fi
  exit $fails
fi

# ---- 1. dockerd, systemd cgroup driver ------------------------------------------------
t=$(up)
expect "docker.service" active "$(systemctl is-active docker.service 2>&1)"
expect "docker info: cgroup driver, version" "systemd 2" "$(docker info -f '{{.CgroupDriver}} {{.CgroupVersion}}' 2>&1)"
docker load -q -i $IMGS/busybox.tar 2>&1 | show
out=$(docker run --rm --runtime "$rt" $IMG sh -c 'echo to-stdout; echo to-stderr >&2; exit 3' 2>/tmp/err)
expect "docker run --rm: exit code" 3 $?
expect "docker run --rm: stdout" to-stdout "$out"
expect "docker run --rm: stderr" to-stderr "$(cat /tmp/err)"
docker run -d --runtime "$rt" --name d1 --memory 64m --pids-limit 32 --cpus 0.5 --cpuset-cpus 0 $IMG sleep 600 >/tmp/out 2>&1
expect "docker run -d --runtime $rt d1" 0 $?
show < /tmp/out
read -r id pid hrt <<EOF
$(docker inspect -f '{{.Id}} {{.State.Pid}} {{.HostConfig.Runtime}}' d1 2>/dev/null)
EOF
u=docker-$id.scope; n=$(short "$u")
expect "docker: HostConfig.Runtime" "$rt" "$hrt"
expect "docker: $rt's state of the container" running \
  "$($RT --root /run/docker/runtime-runc/moby state "$id" 2>&1 | sed -n 's/^ *"status": "\([a-z]*\)",/\1/p')"
expect "docker: the init's cgroup" "/system.slice/$u" "$(cgof "$pid")"
limits docker "$u" system.slice
expect "docker: $n TasksMax" 32 "$(prop "$u" TasksMax)"
expect "docker: $n CPUQuotaPerSecUSec" 500ms "$(prop "$u" CPUQuotaPerSecUSec)"
expect "docker: pids.max" 32 "$(cat /sys/fs/cgroup/system.slice/$u/pids.max 2>&1)"
expect "docker: $n AllowedCPUs" 0 "$(prop "$u" AllowedCPUs)"
expect "docker: cpuset.cpus" 0 "$(cat /sys/fs/cgroup/system.slice/$u/cpuset.cpus 2>&1)"
# Docker's device rules (deny all, then its default list) as DevicePolicy=strict + DeviceAllow:
# a node outside the list (the guest's root disk: reading a block device needs no
# capability, so only the filter refuses it) cannot be opened even though mknod works
expect "docker: $n DevicePolicy" strict "$(prop "$u" DevicePolicy)"
set -- $(stat -Lc '%t %T' /dev/vda)
# stdout and stderr apart: docker's client writes its two streams in no fixed order
out=$(docker exec d1 sh -c 'echo $(cat /proc/self/cgroup) $(cat /sys/fs/cgroup/memory.max)
  head -c 1 /dev/zero >/dev/null && echo zero-ok; mknod /tmp/m b '$((0x$1))' '$((0x$2))' && head -c 1 /tmp/m; exit 5' \
  2>/tmp/dexec.err)
expect "docker exec: exit code" 5 $?
expect "docker exec: its cgroup (namespaced), memory.max inside, /dev/zero allowed" \
  "0::/ 67108864 zero-ok" "$(echo $out)"
expect "docker exec: the root disk's node denied" "head: /tmp/m: Operation not permitted" "$(cat /tmp/dexec.err)"
docker exec -d d1 sleep 301 2>&1 | show
sleep 1
epid=$(pgrep -f '^sleep 301$' | head -n 1)
expect "docker exec joins the unit's cgroup" "/system.slice/$u" "$(cgof "${epid:-0}")"
docker update --memory 128m --memory-swap 256m --pids-limit 50 d1 2>&1 | show
expect "docker update: $n MemoryMax" 134217728 "$(prop "$u" MemoryMax)"
expect "docker update: memory.max" 134217728 "$(cat /sys/fs/cgroup/system.slice/$u/memory.max 2>&1)"
expect "docker update: $n TasksMax" 50 "$(prop "$u" TasksMax)"
expect "docker update: pids.max" 50 "$(cat /sys/fs/cgroup/system.slice/$u/pids.max 2>&1)"
docker stop -t 1 d1 >/dev/null 2>&1
expect "docker stop: status, exit code" "exited 137" "$(docker inspect -f '{{.State.Status}} {{.State.ExitCode}}' d1 2>&1)"
expect "docker stop: $n not loaded" 0 "$(loaded "$u")"
docker rm d1 2>&1 | show
expect "docker rm: $rt state" absent "$([ -e /run/docker/runtime-runc/moby/$id ] && echo present || echo absent)"
expect "docker rm: cgroup gone" no "$([ -d /sys/fs/cgroup/system.slice/$u ] && echo yes || echo no)"
docker run --rm --runtime "$rt" $IMG /nonexistent >/tmp/out 2>&1
expect "docker run of a missing command: exit code" 127 $?
show < /tmp/out
expect "docker: no container left" "" "$(docker ps -aq 2>&1)"
say "TIME docker: $(since "$t")s"

# ---- 2. containerd's runc v2 shim (ctr): SystemdCgroup and BinaryName -------------------
t=$(up)
C="ctr -n vmsd"
$C images import $IMGS/busybox.tar >/dev/null 2>/tmp/out || show < /tmp/out
$C run -d --runtime io.containerd.runc.v2 --runc-binary "$RT" --runc-systemd-cgroup \
  --cgroup system.slice:ctr:c1 --memory-limit 67108864 $IMG c1 sleep 600 >/tmp/out 2>&1
expect "ctr run -d --runc-binary $RT --runc-systemd-cgroup" 0 $?
show < /tmp/out
pid=$($C task ls 2>/dev/null | awk '$1 == "c1" { print $2 }')
u=ctr-c1.scope
expect "ctr: the init's cgroup" "/system.slice/$u" "$(cgof "${pid:-0}")"
limits ctr "$u" system.slice
expect "ctr: $rt's state of the container (BinaryName)" running \
  "$($RT --root /run/containerd/runc/vmsd state c1 2>&1 | sed -n 's/^ *"status": "\([a-z]*\)",/\1/p')"
$C task exec --exec-id e1 c1 sh -c 'exit 4' >/dev/null 2>&1
expect "ctr task exec: exit code" 4 $?
$C task kill -s KILL c1 2>&1 | show
i=0; while [ "$($C task ls 2>/dev/null | awk '$1 == "c1" { print $3 }')" = RUNNING ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
$C task rm c1 2>&1 | show
$C container rm c1 2>&1 | show
expect "ctr: $u not loaded" 0 "$(loaded "$u")"
expect "ctr: cgroup gone" no "$([ -d /sys/fs/cgroup/system.slice/$u ] && echo yes || echo no)"
say "TIME ctr: $(since "$t")s"

# ---- 3. podman, systemd cgroup manager ----------------------------------------------------
t=$(up)
P="podman --cgroup-manager systemd --runtime $RT"
$P load -q -i $IMGS/busybox.tar >/dev/null 2>/tmp/out || show < /tmp/out
$P run -d --network none --name p1 --memory 64m --pids-limit 32 $IMG sleep 600 >/tmp/out 2>&1
expect "podman run -d p1" 0 $?
show < /tmp/out
read -r id pid <<EOF
$($P inspect -f '{{.Id}} {{.State.Pid}}' p1 2>/dev/null)
EOF
u=libpod-$id.scope; n=$(short "$u")
expect "podman: conmon runs $RT" 1 "$(pgrep -f "conmon .*-r $RT " | wc -l)"
expect "podman: the init's cgroup" "/machine.slice/$u" "$(cgof "${pid:-0}")"
limits podman "$u" machine.slice
expect "podman: $n TasksMax" 32 "$(prop "$u" TasksMax)"
out=$($P exec p1 sh -c 'cat /sys/fs/cgroup/pids.max; exit 5' 2>&1)
expect "podman exec: exit code" 5 $?
expect "podman exec: pids.max inside" 32 "$out"
$P stop -t 1 p1 >/dev/null 2>&1
expect "podman stop: status" exited "$($P inspect -f '{{.State.Status}}' p1 2>&1)"
$P rm p1 >/dev/null 2>&1
expect "podman rm: $n not loaded" 0 "$(loaded "$u")"
expect "podman rm: no container left" "" "$($P ps -aq 2>&1)"
say "TIME podman: $(since "$t")s"

# ---- 3b. podman checkpoint/restore (CRIU) ------------------------------------------------
# A counter checkpointed and restored in place (the value goes on from the same start, the
# init in its scope again), then exported to a tarball and imported under a new name.
# Skipped, with the reason, where the image has no CRIU or CRIU's kernel probe fails.
t=$(up); laps=
lap() { laps="$laps $1 $(since "$t1")s"; t1=$(up); }
tick() { cat "/proc/$($P inspect -f '{{.State.Pid}}' "$1" 2>/dev/null)/root/tmp/n" 2>/dev/null || echo none; }
goes_on() { # BEFORE AFTER: "start count" pairs: the same start (no restart), a higher count
  [ "${1% *}" = "${2% *}" ] && [ "${2#* }" -gt "${1#* }" ] 2>/dev/null && echo yes
}
if ! command -v criu >/dev/null; then
  say "SKIP podman checkpoint/restore: no criu in the image"
elif ! out=$(criu check 2>&1); then
  say "SKIP podman checkpoint/restore: criu check fails: $(printf '%s\n' "$out" | grep -m1 Error)"
else
  t1=$t; lap criu-check
  ud() { echo "/var/lib/containers/storage/overlay-containers/$1/userdata"; }
  # the start (uptime) kept in memory: a restarted counter would show another one. A network
  # namespace of its own (--network none, no path in the config): CRIU saves none of its
  # contents (no iproute2 in the guest), as runc and berth both set CRIU's empty_ns for it
  $P run -d --network none --name k1 $IMG sh -c \
    's=$(cut -d" " -f1 /proc/uptime); i=0; while :; do i=$((i + 1)); echo "$s $i" > /tmp/m; mv /tmp/m /tmp/n; sleep 0.1; done' >/tmp/out 2>&1
  expect "podman run -d k1 (a counter)" 0 $?
  show < /tmp/out
  id=$($P inspect -f '{{.Id}}' k1 2>/dev/null); u=libpod-$id.scope; n=$(short "$u")
  sleep 1; n1=$(tick k1); lap run
  $P container checkpoint k1 >/tmp/out 2>&1
  rc=$?; expect "podman container checkpoint k1" 0 $rc
  [ $rc = 0 ] || { show < /tmp/out; grep -hm5 Error "$(ud "$id")/dump.log" 2>&1 | show; }
  expect "podman checkpoint: status" exited "$($P inspect -f '{{.State.Status}}' k1 2>&1)"
  expect "podman checkpoint: $n not loaded" 0 "$(loaded "$u")"
  lap checkpoint
  $P container restore k1 >/tmp/out 2>&1
  rc=$?; expect "podman container restore k1" 0 $rc
  [ $rc = 0 ] || { show < /tmp/out; grep -hm5 Error "$(ud "$id")/restore.log" 2>&1 | show; }
  lap restore
  expect "podman restore: status" running "$($P inspect -f '{{.State.Status}}' k1 2>&1)"
  expect "podman restore: the init's cgroup" "/machine.slice/$u" "$(cgof "$($P inspect -f '{{.State.Pid}}' k1 2>/dev/null)")"
  sleep 0.5; n2=$(tick k1)
  expect "podman restore: the counter goes on ($n1, then $n2)" yes "$(goes_on "$n1" "$n2")"
  $P container checkpoint --compress none --export /tmp/k1.tar k1 >/tmp/out 2>&1
  rc=$?; expect "podman container checkpoint --export" 0 $rc
  [ $rc = 0 ] || show < /tmp/out
  lap export
  $P container restore --import /tmp/k1.tar --name k2 >/tmp/out 2>&1
  rc=$?; expect "podman container restore --import --name k2" 0 $rc
  [ $rc = 0 ] || show < /tmp/out
  lap import
  id2=$($P inspect -f '{{.Id}}' k2 2>/dev/null)
  expect "podman --import: k2 running, another id" "running yes" \
    "$($P inspect -f '{{.State.Status}}' k2 2>&1) $([ -n "$id2" ] && [ "$id2" != "$id" ] && echo yes)"
  sleep 0.5; n3=$(tick k2)
  expect "podman --import: the counter goes on in k2 ($n2, then $n3)" yes "$(goes_on "$n2" "$n3")"
  # podman 4.3 keeps the exported spec's cgroupsPath: k2 lands in k1's scope name (runc too)
  expect "podman --import: k2's init in a libpod scope of machine.slice" yes \
    "$(cgof "$($P inspect -f '{{.State.Pid}}' k2 2>/dev/null)" | grep -qx '/machine.slice/libpod-[0-9a-f]\{64\}\.scope' && echo yes)"
  $P rm -f -t 0 k1 >/dev/null 2>&1; $P rm -f -t 0 k2 >/dev/null 2>&1
  rm -f /tmp/k1.tar
  expect "podman rm -f: no container left" "" "$($P ps -aq 2>&1)"
  lap rm
  say "TIME podman-criu steps:$laps"
fi
say "TIME podman-criu: $(since "$t")s"

# ---- 4. containerd's CRI plugin with SystemdCgroup = true ----------------------------------
# A second containerd (the one of tests/ecosystem/cri, its config with SystemdCgroup = true),
# in a unit of its own as a node's would be.
t=$(up)
cri_up
cri_scenario --only resources,churn --churn 1
code=$?
show < /tmp/cri.out
expect "CRI scenario (resources, churn) with SystemdCgroup" 0 $code
# containerd's errors, and the shim's "failed to remove runc container ... exit status 255"
# after a shim disconnects: containerd 1.6's cleanup race, seen with runc as well
journalctl -q -o cat -u cri-containerd --no-pager 2>&1 | grep -E 'level=error|failed to remove' |
  grep -v 'failed to load cni during init' | tail -n 8 | cut -c 1-400 | show
[ $code = 0 ] || journalctl -q -o cat -u cri-containerd --no-pager 2>&1 | grep -E 'TaskOOM|TaskExit' |
  tail -n 8 | cut -c 1-300 | show
systemctl stop cri-containerd 2>&1 | show
say "TIME cri: $(since "$t")s"

# ---- nothing left ----------------------------------------------------------------------------
left=$(systemctl list-units --all --plain --no-legend '*.scope' '*.slice' 2>/dev/null |
       awk '$1 ~ /^(docker-|libpod|ctr-|cri-containerd-|kubepods-.*pod)/ { print $1 }')
expect "no scope or pod slice of an engine left" "" "$left"
expect "no $rt state left (docker, ctr, CRI)" "" \
  "$(ls /run/docker/runtime-runc/moby /run/containerd/runc/vmsd $W/$rt-root/k8s.io 2>/dev/null | grep -v -e '^/' -e '^$' -e '^\.')"
say "TIME engines: $(since "$T0")s"

say "end: uptime $(up)s"
if [ $fails = 0 ]; then say "RESULT: PASS"; else say "RESULT: FAIL ($fails failed)"; fi
exit $fails
