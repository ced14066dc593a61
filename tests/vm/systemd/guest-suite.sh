#!/bin/sh
# vm-systemd guest suite: run by vm-test.service in the systemd guest (image.sh) once the boot
# is done, with the runtime named on the kernel command line (vmsd.runtime=berth|runc). The
# same steps for either runtime, with --systemd-cgroup and cgroupsPath "system.slice:RT:NAME":
# the scope exists with the expected properties, update changes property and file,
# pause/resume, exec joins the unit's cgroup, delete removes the unit, a create that fails
# after the unit was started leaves nothing, a second create naming a live unit does not
# stop it (berth); rootless with limits in a user session's delegated subtree, and rootless
# with --systemd-cgroup through the user's own systemd (systemdUser); a limit the kernel
# refuses after the unit started (create, run, restore, rootless; guest-fail.sh); then berth
# and runc timed side by side. Lines start with "VMTEST:"; the last one is
# "VMTEST: RESULT: PASS|FAIL"; the exit status is the number of failures.
PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin; export PATH
# the suites of disk.sh (seal, bench, probe) run in their own scripts
case " $(cat /proc/cmdline) " in *" vmsd.suite=seal "*) exec vm-systemd-seal ;; *" vmsd.suite=bench "*) exec vm-systemd-bench ;; *" vmsd.suite=probe "*) exec vm-systemd-probe ;; esac
rt=$(sed -n 's/.*vmsd\.runtime=\([a-z]*\).*/\1/p' /proc/cmdline)
case $rt in
  berth) RT=/usr/local/bin/berth ;;
  runc) RT=/usr/sbin/runc ;;
  *) echo "VMTEST: RESULT: FAIL (no vmsd.runtime= on the kernel command line)"; exit 1 ;;
esac
. /usr/local/lib/vm-systemd-lib.sh   # fails, up, say, show, pass, fail, expect, prop (guest-lib.sh)
since() { awk -v a="$1" -v b="$(up)" 'BEGIN { printf "%.2f", b - a }'; }
cg=/sys/fs/cgroup/system.slice

say "begin: $rt ($($RT --version | head -n 1)), uptime $(up)s, kernel $(uname -r)"
expect "systemctl is-system-running" running "$(systemctl is-system-running --wait 2>&1)"
expect "fs type of /sys/fs/cgroup" cgroup2fs "$(stat -fc %T /sys/fs/cgroup)"
say "features: $($RT features 2>/dev/null | tr -d ' \n' | grep -o '"systemd":[a-z]*,"systemdUser":[a-z]*')"

# A bundle from runc's template, edited the same way for both runtimes.
bundle() { # DIR NAME [extra mount JSON]
  mkdir -p "$1" && (cd "$1" && rm -f config.json && runc spec) || return 1
  sed -i -e 's/"terminal": true/"terminal": false/' -e 's|"path": "rootfs"|"path": "/opt/bb"|' \
    -e 's/^\(\t*\)"sh"$/\1"sleep", "600"/' \
    -e "s/\"linux\": {/\"linux\": {\n\t\t\"cgroupsPath\": \"system.slice:$rt:$2\",/" \
    -e 's/"resources": {/"resources": {\n\t\t\t"memory": { "limit": 67108864 },\n\t\t\t"pids": { "limit": 32 },\n\t\t\t"cpu": { "quota": 50000, "period": 100000 },/' \
    "$1/config.json"
  [ -z "${3:-}" ] || sed -i -e "s|\"mounts\": \[|\"mounts\": [\n\t\t$3,|" "$1/config.json"
}

u=$rt-t1.scope
bundle /run/b1 t1 || fail "bundle"
# a node of the guest's root disk in the container (linux.devices), which the device rules
# (runc spec's deny-all and the default list) do not allow: only the cgroup's filter stands
# between the container's root and the disk (mode 0666, and opening a block device for
# reading needs no capability)
set -- $(stat -Lc '%t %T' /dev/vda)
sed -i "s|\"linux\": {|\"linux\": {\n\t\t\"devices\": [{ \"path\": \"/dev/disk0\", \"type\": \"b\", \"major\": $((0x$1)), \"minor\": $((0x$2)), \"fileMode\": 438, \"uid\": 0, \"gid\": 0 }],|" /run/b1/config.json
t=$(up)
# the container keeps the stdio it is given: never a pipe that $(...) waits on
$RT --systemd-cgroup run -d --bundle /run/b1 t1 </dev/null >/tmp/out 2>&1
expect "$rt --systemd-cgroup run -d t1" 0 $?
say "run -d: $(since "$t")s"
show < /tmp/out
pid=$($RT state t1 2>/dev/null | sed -n 's/^ *"pid": \([0-9]*\),/\1/p')
expect "init's cgroup" "0::/system.slice/$u" "$(cat /proc/$pid/cgroup 2>&1)"
systemctl show -p Id -p Slice -p ActiveState -p Delegate -p MemoryMax -p TasksMax -p CPUQuotaPerSecUSec "$u" 2>&1 | show
expect "$u ActiveState" active "$(prop $u ActiveState)"
expect "$u Slice" system.slice "$(prop $u Slice)"
expect "$u Delegate" yes "$(prop $u Delegate)"
expect "$u MemoryMax" 67108864 "$(prop $u MemoryMax)"
expect "$u TasksMax" 32 "$(prop $u TasksMax)"
expect "$u CPUQuotaPerSecUSec" 500ms "$(prop $u CPUQuotaPerSecUSec)"
expect "memory.max" 67108864 "$(cat $cg/$u/memory.max 2>&1)"
expect "pids.max" 32 "$(cat $cg/$u/pids.max 2>&1)"
expect "cpu.max" "50000 100000" "$(cat $cg/$u/cpu.max 2>&1)"

# The device filter holds, also after `systemctl daemon-reload` (the runtime's program
# replaced the one systemd attached for DevicePolicy=strict when create wrote the rules).
expect "the guest's root reads its disk" 1 "$(head -c 1 /dev/vda | wc -c)"
disk() { $RT exec t1 sh -c 'head -c 1 /dev/zero >/dev/null && echo zero-ok; head -c 1 /dev/disk0 >/dev/null' 2>&1; }
expect "devices: /dev/zero read, the disk's node refused" \
  "zero-ok head: /dev/disk0: Operation not permitted" "$(echo $(disk))"
expect "$u DevicePolicy" strict "$(prop $u DevicePolicy)"
systemctl daemon-reload
expect "devices after daemon-reload: the disk's node refused" \
  "zero-ok head: /dev/disk0: Operation not permitted" "$(echo $(disk))"

$RT update --pids-limit 50 --memory 134217728 t1 2>&1 | show
expect "update: $u TasksMax" 50 "$(prop $u TasksMax)"
expect "update: pids.max" 50 "$(cat $cg/$u/pids.max 2>&1)"
expect "update: $u MemoryMax" 134217728 "$(prop $u MemoryMax)"
expect "update: memory.max" 134217728 "$(cat $cg/$u/memory.max 2>&1)"

$RT pause t1 2>&1 | show
expect "pause: status" paused "$($RT state t1 2>/dev/null | sed -n 's/^ *"status": "\([a-z]*\)",/\1/p')"
expect "pause: cgroup.freeze" 1 "$(cat $cg/$u/cgroup.freeze 2>&1)"
$RT resume t1 2>&1 | show
expect "resume: status" running "$($RT state t1 2>/dev/null | sed -n 's/^ *"status": "\([a-z]*\)",/\1/p')"
expect "resume: cgroup.freeze" 0 "$(cat $cg/$u/cgroup.freeze 2>&1)"

$RT exec -d t1 sleep 301 </dev/null >/tmp/out 2>&1; show < /tmp/out
epid=$(pgrep -f '^sleep 301$' | head -n 1)
expect "exec joins the unit's cgroup" "0::/system.slice/$u" "$(cat /proc/$epid/cgroup 2>&1)"
expect "ps lists init and exec" 2 "$($RT ps t1 2>/dev/null | tail -n +2 | wc -l)"

$RT kill --all t1 KILL 2>&1 | show
sleep 1
$RT delete -f t1 2>&1 | show
expect "delete: $u" inactive "$(systemctl is-active $u 2>&1)"
expect "delete: $u not loaded" 0 "$(systemctl list-units --all --plain --no-legend "$u" | wc -l)"
expect "delete: cgroup gone" no "$([ -d $cg/$u ] && echo yes || echo no)"
if [ $rt = berth ]; then
  # as root berth talks to systemd over its private socket, no dbus-daemon hop (--debug says)
  $RT --debug --systemd-cgroup run -d --bundle /run/b1 t1 </dev/null >/tmp/out 2>&1
  expect "run -d again: over systemd's private socket" 1 "$(grep -c 'connected to /run/systemd/private' /tmp/out)"
  $RT --debug delete -f t1 </dev/null >/tmp/out 2>&1
  # delete -f kills the init first: systemd may stop and free the emptied unit before
  # delete reaches it, and then delete asks nothing (its --debug says so); else it asks
  # over the private socket. Exactly one of the two, and never through the system bus.
  expect "delete: over systemd's private socket, or nothing to ask" 1 \
    "$(grep -c -e 'connected to /run/systemd/private' -e 'already stopped and freed: nothing to ask' /tmp/out)"
  expect "delete: not through the system bus" 0 "$(grep -c 'connected to the system bus' /tmp/out)"
  expect "delete: $u not loaded (private socket)" 0 "$(systemctl list-units --all --plain --no-legend "$u" | wc -l)"
fi

# A create that fails after the unit was started (the init, in the scope by then, finds no
# executable): no unit, no cgroup, no state left. Then one refused before the unit (a bind
# mount of a missing source).
u=$rt-bad.scope
bundle /run/b2 bad || fail "bundle"
sed -i 's|"sleep", "600"|"/no/such/binary"|' /run/b2/config.json
$RT --systemd-cgroup create --bundle /run/b2 bad </dev/null >/tmp/out 2>&1
expect "create with a missing executable fails" 1 $?
show < /tmp/out
journalctl -q -o cat -u "$u" --no-pager 2>&1 | tail -n 3 | show
expect "failed create: state" absent "$($RT state bad >/dev/null 2>&1 && echo present || echo absent)"
expect "failed create: $u not loaded" 0 "$(systemctl list-units --all --plain --no-legend "$u" | wc -l)"
expect "failed create: cgroup gone" no "$([ -d $cg/$u ] && echo yes || echo no)"
u=$rt-bad2.scope
bundle /run/b3 bad2 '{ "destination": "/x", "type": "bind", "source": "/nonexistent", "options": ["bind"] }' ||
  fail "bundle"
$RT --systemd-cgroup create --bundle /run/b3 bad2 </dev/null >/tmp/out 2>&1
expect "create with a missing bind source fails" 1 $?
show < /tmp/out
expect "failed create (mount): state" absent "$($RT state bad2 >/dev/null 2>&1 && echo present || echo absent)"
expect "failed create (mount): $u not loaded" 0 "$(systemctl list-units --all --plain --no-legend "$u" | wc -l)"
expect "failed create (mount): cgroup gone" no "$([ -d $cg/$u ] && echo yes || echo no)"

# A bad cgroupsPath is refused before anything exists.
sed -i "s/system.slice:$rt:t1/system.slice:$rt:..\/..\/x/" /run/b1/config.json
$RT --systemd-cgroup create --bundle /run/b1 t3 </dev/null > /tmp/err 2>&1
expect "hostile unit name refused" 1 $?
show < /tmp/err
sed -i "s/system.slice:$rt:..\/..\/x/system.slice:$rt:t1/" /run/b1/config.json

# A second container naming the same unit as a running one: berth refuses it (UnitExists)
# and its cleanup leaves the first unit alone. runc 1.1 instead runs the second container in
# the first one's scope (with its "non-empty cgroup" deprecation warning): shown, not asserted.
bundle /run/b4 t9 || fail "bundle"
$RT --systemd-cgroup run -d --bundle /run/b4 t9 </dev/null >/dev/null 2>&1 || fail "run -d t9"
$RT --systemd-cgroup create --bundle /run/b4 t9dup </dev/null >/tmp/out 2>&1
code=$?
st=$(prop $rt-t9.scope ActiveState)
if [ "$rt" = berth ]; then
  expect "same unit twice: the second create fails" 1 $code
  show < /tmp/out
  expect "same unit twice: the first unit stays" active "$st"
else
  say "INFO same unit twice: $rt create exits $code, the first unit is $st"
fi
$RT delete -f t9dup >/dev/null 2>&1
$RT delete -f t9 >/dev/null 2>&1

# Rootless with a delegated cgroup v2 subtree: a user with a systemd user session (linger:
# user@UID.service, whose subtree systemd delegates with memory, pids and cpu) runs the
# runtime with --rootless true from a scope of its own (systemd-run --user --scope -p
# Delegate=yes), with a memory and a pids limit; an exec is made from a user scope too (the
# kernel lets a process move only where it may write the common ancestor's cgroup.procs).
# A cgroup namespace: without one runc 1.1 binds the whole /sys/fs/cgroup into the container.
ru=vmsd-user
id $ru >/dev/null 2>&1 || useradd -m -s /bin/sh $ru
ruid=$(id -u $ru); rgid=$(id -g $ru); rx=/run/user/$ruid
loginctl enable-linger $ru 2>&1 | show
# the user manager's own socket (systemd-run --user talks to it)
i=0; while [ ! -S $rx/systemd/private ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
# (with dbus-user-session the socket is there a few seconds before the manager is up)
i=0; while [ "$(systemctl is-active user@$ruid.service)" != active ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
st=$(systemctl is-active user@$ruid.service 2>&1)
expect "user@$ruid.service (linger)" active "$st"
[ "$st" = active ] ||
  journalctl -q -b -o cat -u user@$ruid.service -u user-runtime-dir@$ruid.service --no-pager 2>&1 | tail -n 15 | show
asu() {
  setpriv --reuid "$ruid" --regid "$rgid" --clear-groups -- env -C /home/$ru -i PATH="$PATH" HOME=/home/$ru \
    USER=$ru LOGNAME=$ru XDG_RUNTIME_DIR=$rx "$@"
}
rb=/home/$ru/b
asu sh -c "mkdir -p $rb && cd $rb && runc spec --rootless" 2>&1 | show
[ -f $rb/config.json ] || fail "rootless bundle"
sed -i -e 's/"terminal": true/"terminal": false/' -e 's|"path": "rootfs"|"path": "/opt/bb"|' \
  -e 's/^\(\t*\)"sh"$/\1"sleep", "600"/' \
  -e 's/"linux": {/"linux": {\n\t\t"resources": { "memory": { "limit": 67108864 }, "pids": { "limit": 32 } },/' \
  $rb/config.json
# (runc spec adds the cgroup namespace itself on a cgroup v2 host)
grep -q '"type": "cgroup"' $rb/config.json ||
  sed -i 's/"namespaces": \[/"namespaces": [\n\t\t\t{ "type": "cgroup" },/' $rb/config.json
# In the scope (delegated: systemd leaves its inside alone) the shell moves itself into a
# leaf first, so that the scope may enable controllers for its children; without a
# cgroupsPath both runtimes then make the container's cgroup next to that leaf, in the scope.
asu systemd-run --user --scope -q -p Delegate=yes -- sh -c \
  'c=/sys/fs/cgroup$(sed -n "s/^0:://p" /proc/self/cgroup); mkdir "$c/sup" && echo $$ > "$c/sup/cgroup.procs" &&
   exec "$0" --rootless true run -d --bundle "$1" rl' $RT $rb </dev/null >/tmp/rl.out 2>&1
expect "rootless $rt run -d with limits, in a delegated user scope" 0 $?
show < /tmp/rl.out
pid=$(asu $RT state rl 2>/dev/null | sed -n 's/^ *"pid": \([0-9]*\),/\1/p')
rcg=$(sed -n 's/^0:://p' /proc/${pid:-0}/cgroup 2>/dev/null)
case $rcg in
  /user.slice/user-$ruid.slice/user@$ruid.service/app.slice/run-*.scope/rl) where=in-the-scope ;;
  *) where=$rcg ;;
esac
expect "rootless: the container's cgroup (user@$ruid.service/app.slice/run-*.scope/rl)" in-the-scope "$where"
expect "rootless: memory.max" 67108864 "$(cat /sys/fs/cgroup$rcg/memory.max 2>&1)"
expect "rootless: pids.max" 32 "$(cat /sys/fs/cgroup$rcg/pids.max 2>&1)"
expect "rootless: the cgroup is the user's" "$ruid" "$(stat -c %u /sys/fs/cgroup$rcg 2>&1)"
expect "rootless: limits seen inside" "67108864 32" \
  "$(asu systemd-run --user --scope -q -- $RT exec rl sh -c 'echo $(cat /sys/fs/cgroup/memory.max) $(cat /sys/fs/cgroup/pids.max)' 2>&1)"
asu $RT delete -f rl 2>&1 | show
expect "rootless: delete leaves no state" absent "$(asu $RT state rl >/dev/null 2>&1 && echo present || echo absent)"
expect "rootless: delete leaves no cgroup" no "$([ -n "$rcg" ] && [ -d /sys/fs/cgroup$rcg ] && echo yes || echo no)"

# Rootless with --systemd-cgroup (features: systemdUser): the user's own systemd, on its bus
# ($XDG_RUNTIME_DIR/bus, from dbus-user-session), makes the unit in its subtree, as runc's
# rootless systemd manager does. Run from a user scope: the manager may move the init only
# out of a cgroup the user owns.
i=0; while [ ! -S $rx/bus ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
expect "systemdUser: the user's bus $rx/bus" yes "$([ -S $rx/bus ] && echo yes || echo no)"
mcg=/user.slice/user-$ruid.slice/user@$ruid.service
uu=$rt-su.scope; ucg=/sys/fs/cgroup$mcg/user.slice/$uu
sb=/home/$ru/bs; mkdir -p $sb
sed "s/\"linux\": {/\"linux\": {\n\t\t\"cgroupsPath\": \"user.slice:$rt:su\",/" $rb/config.json > $sb/config.json
chown -R $ru: $sb
asu systemd-run --user --scope -q -- $RT --rootless true --systemd-cgroup run -d --bundle $sb su </dev/null >/tmp/su.out 2>&1
expect "systemdUser: $rt --rootless true --systemd-cgroup run -d" 0 $?
show < /tmp/su.out
uprop() { asu systemctl --user show -P "$2" "$1" 2>&1; }
pid=$(asu $RT state su 2>/dev/null | sed -n 's/^ *"pid": \([0-9]*\),/\1/p')
expect "systemdUser: init's cgroup" "0::$mcg/user.slice/$uu" "$(cat /proc/${pid:-0}/cgroup 2>&1)"
expect "systemdUser: $uu (user manager) ActiveState" active "$(uprop $uu ActiveState)"
expect "systemdUser: $uu Delegate" yes "$(uprop $uu Delegate)"
expect "systemdUser: $uu MemoryMax" 67108864 "$(uprop $uu MemoryMax)"
expect "systemdUser: memory.max" 67108864 "$(cat $ucg/memory.max 2>&1)"
expect "systemdUser: pids.max" 32 "$(cat $ucg/pids.max 2>&1)"
asu $RT update --pids-limit 40 su 2>&1 | show
expect "systemdUser: update: $uu TasksMax" 40 "$(uprop $uu TasksMax)"
expect "systemdUser: update: pids.max" 40 "$(cat $ucg/pids.max 2>&1)"
asu $RT delete -f su 2>&1 | show
expect "systemdUser: delete: $uu not loaded" 0 "$(asu systemctl --user list-units --all --plain --no-legend $uu 2>/dev/null | wc -l)"
expect "systemdUser: delete: cgroup gone" no "$([ -d $ucg ] && echo yes || echo no)"
expect "systemdUser: delete: no state" absent "$(asu $RT state su >/dev/null 2>&1 && echo present || echo absent)"
# a create that fails after the user's manager started the unit leaves nothing
sed -i 's|"sleep", "600"|"/no/such/binary"|' $sb/config.json
asu systemd-run --user --scope -q -- $RT --rootless true --systemd-cgroup create --bundle $sb su2 </dev/null >/tmp/su.out 2>&1
expect "systemdUser: create with a missing executable fails" 1 $?
show < /tmp/su.out
expect "systemdUser: failed create: $rt-su.scope not loaded" 0 \
  "$(asu systemctl --user list-units --all --plain --no-legend $uu 2>/dev/null | wc -l)"
expect "systemdUser: failed create: cgroup gone" no "$([ -d $ucg ] && echo yes || echo no)"
expect "systemdUser: failed create: no state" absent "$(asu $RT state su2 >/dev/null 2>&1 && echo present || echo absent)"

# checkpoint/restore with the driver (criu3), when the image has CRIU
[ -f /usr/local/sbin/vm-systemd-criu ] && . /usr/local/sbin/vm-systemd-criu

# a limit systemd accepts and the kernel refuses, after the unit started: create, run,
# restore, rootless; each fails at once, with a message, and leaves nothing (guest-fail.sh)
. /usr/local/sbin/vm-systemd-fail

# create + start + delete with the driver (the D-Bus round trips are its cost): berth and
# runc interleaved in this one boot, 5 cycles each, so that host load hits both alike.
bundle /run/bt tc || fail "bundle"
sum_berth=0; sum_runc=0
for i in 1 2 3 4 5; do
  for r in berth runc; do
    bin=/usr/local/bin/berth; [ $r = runc ] && bin=/usr/sbin/runc
    t=$(up)
    $bin --systemd-cgroup run -d --bundle /run/bt tc </dev/null >/dev/null 2>&1 || fail "timing: $r run, cycle $i"
    $bin delete -f tc >/dev/null 2>&1 || fail "timing: $r delete, cycle $i"
    d=$(since "$t")
    if [ $r = berth ]; then sum_berth=$(awk -v a=$sum_berth -v b=$d 'BEGIN { printf "%.2f", a + b }')
    else sum_runc=$(awk -v a=$sum_runc -v b=$d 'BEGIN { printf "%.2f", a + b }'); fi
  done
done
say "TIMING run -d + delete -f, 5 cycles each, interleaved: berth ${sum_berth}s, runc ${sum_runc}s"
expect "after the cycles: $rt-tc.scope" 0 "$(systemctl list-units --all --plain --no-legend "$rt-tc.scope" | wc -l)"

say "end: uptime $(up)s"
if [ $fails = 0 ]; then say "RESULT: PASS"; else say "RESULT: FAIL ($fails failed)"; fi
exit $fails
