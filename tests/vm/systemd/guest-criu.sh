# vm-systemd guest, checkpoint/restore with --systemd-cgroup (sourced by guest-suite.sh, which
# defines RT, rt, bundle, expect, say, show, prop and counts the failures): a container
# checkpointed and restored with the driver lands in its transient scope again, with its
# limits, and the runtime itself is not left in the scope. The container has a network
# namespace of its own and no --empty-ns is given: CRIU never saves its contents (runc and
# berth set CRIU's empty_ns for the network), so the guest needs no iproute2.
rc=1; t_criu=$(up)
if ! command -v criu >/dev/null; then
  say "SKIP checkpoint/restore: no criu in the image"
elif ! out=$(criu check 2>&1); then
  say "SKIP checkpoint/restore: criu check fails: $(printf '%s\n' "$out" | grep -m1 Error)"
else
  u=$rt-cr.scope
  bundle /run/bc cr || fail "bundle"
  # as in the plain VM's criu-checkpoint: no masked or read-only /proc paths; stdio is the
  # host's /dev/null, which the init reopens on the container's own (CRIU cannot dump a
  # descriptor of the host's /dev)
  sed -i -e '/"maskedPaths": \[/,/\]/c\		"maskedPaths": [],' -e '/"readonlyPaths": \[/,/\]/c\		"readonlyPaths": []' /run/bc/config.json
  $RT --systemd-cgroup run -d --bundle /run/bc cr </dev/null >/dev/null 2>&1
  expect "criu: run -d cr" 0 $?
  $RT checkpoint --image-path /run/imgc cr >/tmp/out 2>&1
  rc=$?; expect "criu: checkpoint cr" 0 $rc
  [ $rc = 0 ] || { show < /tmp/out; grep -m5 Error /run/imgc/dump.log 2>&1 | show; }
  expect "criu: $u gone after the checkpoint" 0 "$(systemctl list-units --all --plain --no-legend "$u" | wc -l)"
  [ $rc = 0 ] || $RT delete -f cr >/dev/null 2>&1
fi
if [ "${rc:-1}" = 0 ]; then
  $RT --systemd-cgroup restore -d --image-path /run/imgc --bundle /run/bc cr </dev/null >/tmp/out 2>&1
  rc=$?; expect "criu: --systemd-cgroup restore -d cr" 0 $rc
  [ $rc = 0 ] || { show < /tmp/out; grep -m5 Error /run/imgc/restore.log 2>&1 | show; }
  pid=$($RT state cr 2>/dev/null | sed -n 's/^ *"pid": \([0-9]*\),/\1/p')
  expect "criu: restored init's cgroup" "0::/system.slice/$u" "$(cat /proc/${pid:-0}/cgroup 2>&1)"
  expect "criu: $u ActiveState" active "$(prop $u ActiveState)"
  expect "criu: only the restored init in the scope" "${pid:-none}" "$(cat "$cg/$u"/cgroup.procs 2>&1 | tr '\n' ' ' | sed 's/ $//')"
  expect "criu: memory.max after restore" 67108864 "$(cat "$cg/$u"/memory.max 2>&1)"
  expect "criu: pids.max after restore" 32 "$(cat "$cg/$u"/pids.max 2>&1)"
  $RT delete -f cr 2>&1 | show
  expect "criu: delete stops $u" 0 "$(systemctl list-units --all --plain --no-legend "$u" | wc -l)"
fi
say "criu: checkpoint/restore steps took $(since "$t_criu")s"
