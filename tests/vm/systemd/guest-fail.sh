# vm-systemd guest, a limit systemd accepts but the kernel refuses (sourced by guest-suite.sh,
# which defines RT, rt, bundle, expect, say, show, since, fail, asu, ru, rb and counts the
# failures): cpuset.cpus "7" on this 2-CPU guest. systemd starts the scope (AllowedCPUs=7 is
# only logged), then the runtime's write of cpuset.cpus fails with EINVAL. create, run -d,
# restore (a checkpoint of the runtime's own container) and rootless create through the
# user's systemd: each must exit 1 with a message naming cpuset.cpus and leave no unit, no
# cgroup, no state directory and (restore) no criu-root mount. In the berth boot each case
# runs with berth and with runc, timed, and berth must fail within 2 s of runc's time; the
# runc boot runs runc's alone (the reference).
fail_rts=runc; [ "$rt" = berth ] && fail_rts="berth runc"
rtbin() { if [ "$1" = berth ]; then echo /usr/local/bin/berth; else echo /usr/sbin/runc; fi; }
# into bundle()'s cpu object: a second "cpu" key would be a duplicate, which runc (Go) merges
# into the first and berth (the last one wins) would not see
cpus7() { sed -i 's/"cpu": { "quota"/"cpu": { "cpus": "7", "quota"/' "$1"; grep -q '"cpus": "7"' "$1"; }
# bundle() names the boot's runtime in cgroupsPath; each case's unit is its own runtime's
fbundle() { # DIR NAME RUNTIME
  bundle "$1" "$2" && sed -i "s/\"system.slice:$rt:$2\"/\"system.slice:$3:$2\"/" "$1/config.json"
}
# nothing_left LABEL R ID SCOPE CGROUP-DIR [user]: no unit, cgroup, state, criu-root mount
nothing_left() {
  if [ "${6:-}" = user ]; then
    expect "$1: $4 not loaded" 0 "$(asu systemctl --user list-units --all --plain --no-legend "$4" 2>/dev/null | wc -l)"
    expect "$1: no state" absent "$(asu "$(rtbin "$2")" state "$3" >/dev/null 2>&1 && echo present || echo absent)"
  else
    expect "$1: $4 not loaded" 0 "$(systemctl list-units --all --plain --no-legend "$4" | wc -l)"
    expect "$1: no state" absent "$("$(rtbin "$2")" state "$3" >/dev/null 2>&1 && echo present || echo absent)"
    expect "$1: no state directory" no "$([ -e "/run/$2/$3" ] && echo yes || echo no)"
  fi
  expect "$1: cgroup gone" no "$([ -d "$5" ] && echo yes || echo no)"
  expect "$1: no criu-root mount" 0 "$(grep -c "/$3/criu-root " /proc/self/mountinfo)"
}
# failed LABEL R CODE OUT-FILE SECONDS: exit 1 and a message naming cpuset.cpus; the time kept
failed() {
  expect "$1: exits 1" 1 "$3"
  expect "$1: the message names cpuset.cpus" yes "$(grep -q 'cpuset.cpus' "$4" && echo yes || echo no)"
  show < "$4"
  say "TIMING $1: ${5}s"
  eval "fail_t_$2_$(echo "$1" | sed 's/.*: //; s/[^a-z]/_/g')=$5"
}
# within LABEL: berth's time for the case against runc's (both recorded by failed)
within() {
  k=$(echo "$1" | sed 's/[^a-z]/_/g')
  eval "b=\${fail_t_berth_$k:-}; r=\${fail_t_runc_$k:-}"
  if [ -z "$b" ] || [ -z "$r" ]; then
    [ "$rt" = berth ] && say "SKIP limit failure, $1: no time of both runtimes to compare (a step before failed)"
    return 0
  fi
  ok=$(awk -v b="$b" -v r="$r" 'BEGIN { print (b < r + 2) ? "yes" : "no" }')
  expect "limit failure, $1: berth ${b}s within 2 s of runc ${r}s" yes "$ok"
}

# restore_case (R, B set): the runtime's own container checkpointed, then restored with the
# refused limit; afterwards the id restores without it
restore_case() {
  id=lfcr; u=$R-$id.scope; bc=/run/bf-$R-cr; img=/run/imgf-$R
  fbundle $bc $id $R || fail "bundle"
  # a rootfs of its own: runc 1.1.5's delete -f of the killed restore below empties the
  # rootfs through the criu-root bind it left, and /opt/bb is every other step's
  rm -rf $bc/rootfs; cp -a /opt/bb $bc/rootfs && sed -i "s|\"path\": \"/opt/bb\"|\"path\": \"$bc/rootfs\"|" $bc/config.json ||
    fail "bundle: rootfs copy"
  # as guest-criu.sh: no masked or read-only /proc paths
  sed -i -e '/"maskedPaths": \[/,/\]/c\		"maskedPaths": [],' -e '/"readonlyPaths": \[/,/\]/c\		"readonlyPaths": []' $bc/config.json
  $B --systemd-cgroup run -d --bundle $bc $id </dev/null >/dev/null 2>&1 || fail "$R limit failure: run -d $id to checkpoint"
  if ! $B checkpoint --image-path $img $id >/tmp/lf.out 2>&1; then
    fail "$R limit failure: checkpoint $id"; show < /tmp/lf.out; $B delete -f $id >/dev/null 2>&1; return
  fi
  cpus7 $bc/config.json || fail "bundle"
  t=$(up)
  $B --systemd-cgroup restore -d --image-path $img --bundle $bc $id </dev/null >/tmp/lf.out 2>&1
  code=$?; d=$(since "$t")
  failed "$R limit failure: restore" $R $code /tmp/lf.out "$d"
  nothing_left "$R limit failure: restore" $R $id $u "$cg/$u"
  sed -i 's/"cpu": { "cpus": "7", /"cpu": { /' $bc/config.json
  $B --systemd-cgroup restore -d --image-path $img --bundle $bc $id </dev/null >/tmp/lf.out 2>&1
  expect "$R limit failure: restore: the id restores afterwards" 0 $?
  $B delete -f $id >/dev/null 2>&1
  killed_restore
}

# killed_restore (after restore_case): the runtime SIGKILLed by its own prestart hook while
# CRIU restores (criu-root bound, the state "creating"); delete -f must then remove the
# unit, the cgroup, the state and the criu-root bind, and leave the rootfs whole (an
# unfixed berth's delete walked into the bind and emptied the rootfs; runc 1.1.5's does
# too, and leaves the bind). Asserted for berth; runc's outcome is shown.
killed_restore() {
  sed -i 's/^\(\t*\)"ociVersion": \(.*\),$/&\n\1"hooks": { "prestart": [ { "path": "\/bin\/sh", "args": ["sh", "-c", "kill -9 $PPID"] } ] },/' $bc/config.json
  $B --systemd-cgroup restore -d --image-path $img --bundle $bc $id </dev/null >/tmp/lf.out 2>&1
  code=$?
  mounted=$(grep -c "/$id/criu-root " /proc/self/mountinfo)
  $B delete -f $id >/tmp/lf2.out 2>&1
  dcode=$?
  if [ $R = berth ]; then
    expect "$R killed restore: the runtime died by its hook" 137 $code
    expect "$R killed restore: delete -f" 0 $dcode
    show < /tmp/lf2.out
    nothing_left "$R killed restore: delete -f" $R $id $u "$cg/$u"
    expect "$R killed restore: the rootfs is whole" yes "$([ -x $bc/rootfs/bin/busybox ] && echo yes || echo no)"
  else
    say "INFO $R killed restore: exit $code, criu-root mounts $mounted; delete -f exit $dcode, unit loaded $(systemctl list-units --all --plain --no-legend "$u" | wc -l), criu-root left $(grep -c "/$id/criu-root " /proc/self/mountinfo), rootfs whole $([ -x $bc/rootfs/bin/busybox ] && echo yes || echo no)"
    show < /tmp/lf2.out
  fi
  # whatever a runtime left, the next steps need the rootfs and no mount on it
  grep " /run/$R/$id/criu-root " /proc/self/mountinfo >/dev/null && umount -l /run/$R/$id/criu-root
  sed -i '/"hooks": { "prestart"/d' $bc/config.json
}

for R in $fail_rts; do
  B=$(rtbin $R)
  # create and run -d
  for how in create run; do
    id=lf$how; u=$R-$id.scope
    fbundle /run/bf-$R-$how $id $R && cpus7 /run/bf-$R-$how/config.json || fail "bundle"
    flag=; [ $how = run ] && flag=-d
    t=$(up)
    $B --systemd-cgroup $how $flag --bundle /run/bf-$R-$how $id </dev/null >/tmp/lf.out 2>&1
    code=$?; d=$(since "$t")
    failed "$R limit failure: $how" $R $code /tmp/lf.out "$d"
    nothing_left "$R limit failure: $how" $R $id $u "$cg/$u"
    $B delete -f $id >/dev/null 2>&1
  done

  # restore: the runtime's own checkpoint, restored with the refused limit
  if command -v criu >/dev/null && criu check >/dev/null 2>&1; then
    restore_case
  else
    say "SKIP $R limit failure: restore: no usable criu in the image"
  fi

  # rootless create through the user's systemd (the user manager set up by guest-suite.sh)
  if [ -n "${ru:-}" ] && [ -f "${rb:-/nonexistent}/config.json" ]; then
    id=lfu; u=$R-$id.scope; sb=/home/$ru/bf-$R
    mcg=/user.slice/user-$ruid.slice/user@$ruid.service
    mkdir -p $sb
    sed -e "s/\"linux\": {/\"linux\": {\n\t\t\"cgroupsPath\": \"user.slice:$R:$id\",/" \
      -e 's/"resources": {/"resources": { "cpu": { "cpus": "7" },/' -e 's|"/no/such/binary"|"sleep", "600"|' \
      $rb/config.json > $sb/config.json
    chown -R $ru: $sb
    t=$(up)
    asu systemd-run --user --scope -q -- $B --rootless true --systemd-cgroup create --bundle $sb $id </dev/null >/tmp/lf.out 2>&1
    code=$?; d=$(since "$t")
    failed "$R limit failure: rootless" $R $code /tmp/lf.out "$d"
    nothing_left "$R limit failure: rootless" $R $id $u "/sys/fs/cgroup$mcg/user.slice/$u" user
    asu $B delete -f $id >/dev/null 2>&1
  else
    fail "$R limit failure: rootless: no rootless bundle from the steps before"
  fi
done
for c in create run restore rootless; do within "$c"; done
