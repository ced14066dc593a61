# kill (--all, signal forms, a paused container) and delete --force of live containers:
# which processes get the signal, and that nothing is left (processes, cgroups, state).

# kill without --all signals only the init; kill --all every process of the container.
# The init is pid 1 of its namespace without a handler for SIGTERM, so the kernel drops
# that signal for it: after `kill --all TERM` the init still runs and the others are gone.
tc.kill.all() {
  local p1 p2
  up c sleep 1000
  call exec --detach --pid-file "$T/p1" "$ID" sleep 1001
  expect_ok "exec --detach (1)"
  call exec --detach --pid-file "$T/p2" "$ID" sleep 1002
  expect_ok "exec --detach (2)"
  p1=$(cat "$T/p1")
  p2=$(cat "$T/p2")
  call kill "$ID" TERM
  expect_ok "kill TERM"
  sleep 0.3
  pid_alive "$p1" && pid_alive "$p2" || fail "kill without --all reached an exec'd process"
  call kill --all "$ID" TERM
  expect_ok "kill --all TERM"
  wait_until 5 "the exec'd processes to end" eval "pid_gone $p1 && pid_gone $p2"
  pid_alive "$INIT" || fail "the init (pid 1 of its namespace, no TERM handler) died of kill --all TERM"
  call state "$ID"
  expect_json "$OUT" '.status == "running"' "status after kill --all TERM"
  call kill --all "$ID" KILL
  expect_ok "kill --all KILL"
  wait_status "$ID" stopped
  wait_until 5 "the init to end" pid_gone "$INIT"
}

# The signal as a name, a SIG name, a lower-case name or a number reaches the init (its
# trap counts them); signal 0 only checks the init is there; an unknown signal is refused
# and the container keeps running.
tc.kill.signal-forms() {
  up c sh -c 'n=0; trap "n=\$((n+1)); echo \$n > /tmp/usr1" USR1; trap "exit 0" TERM; while :; do sleep 0.05; done'
  wait_until 5 "the USR1 trap to be set" catches "$INIT" 10
  call kill "$ID" USR1
  expect_ok "kill USR1"
  wait_until 5 "the 1st USR1" file_has "$T/c/rootfs/tmp/usr1" '^1$'
  call kill "$ID" SIGUSR1
  expect_ok "kill SIGUSR1"
  wait_until 5 "the 2nd USR1" file_has "$T/c/rootfs/tmp/usr1" '^2$'
  call kill "$ID" 10
  expect_ok "kill 10"
  wait_until 5 "the 3rd USR1" file_has "$T/c/rootfs/tmp/usr1" '^3$'
  call kill "$ID" usr1
  expect_ok "kill usr1"
  wait_until 5 "the 4th USR1" file_has "$T/c/rootfs/tmp/usr1" '^4$'
  call kill "$ID" 0
  expect_ok "kill 0 (no signal, the init exists)"
  sleep 0.2
  expect_eq "$(cat "$T/c/rootfs/tmp/usr1")" 4 "USR1 count after kill 0"
  call kill "$ID" NOSUCHSIGNAL
  expect_rc 1 "kill with an unknown signal"
  call state "$ID"
  expect_json "$OUT" '.status == "running"' "status after the unknown signal"
  call kill "$ID"
  expect_ok "kill (default signal: SIGTERM)"
  wait_status "$ID" stopped
}

# kill KILL of a paused container stops it (cgroup v1 holds signals to frozen tasks:
# runc thaws the container after SIGKILL).
tc.kill.paused() {
  up c
  call pause "$ID"
  expect_ok pause
  call kill "$ID" KILL
  expect_ok "kill KILL of a paused container"
  wait_status "$ID" stopped
  wait_until 5 "the init to end" pid_gone "$INIT"
  call delete "$ID"
  expect_ok "delete"
}

# Nothing of a deleted container is left: its state, its processes, its cgroups.
expect_all_gone() {
  local what=$1 name=$2
  shift 2
  local p
  call state "$ID"
  expect_error "container does not exist" 1 "state after $what"
  call list -q
  expect_eq "$OUT" "" "list -q after $what"
  for p in "$@"; do
    wait_until 5 "process $p to end after $what" pid_gone "$p"
  done
  [ -z "$(cg_dirs "$name")" ] || fail "cgroups left after $what: $(cg_dirs "$name" | paste -sd ' ' -)"
}

# delete --force of a running container with an exec'd process and children of the init.
tc.delete.force-running() {
  local kids
  up c sh -c 'sleep 1000 & sleep 1001 & wait'
  call exec --detach --pid-file "$T/p" "$ID" sleep 1002
  expect_ok "exec --detach"
  wait_until 5 "the init's children" eval "[ \$(cat /proc/$INIT/task/*/children | wc -w) -eq 2 ]"
  kids=$(cat /proc/"$INIT"/task/*/children)
  [ -n "$(cg_dirs c)" ] || fail "the container has no cgroup directory to check"
  call delete --force "$ID"
  expect_ok "delete --force of a running container"
  # shellcheck disable=SC2086
  expect_all_gone "delete --force" c "$INIT" $kids "$(cat "$T/p")"
}

# delete --force of a paused container.
tc.delete.force-paused() {
  local start
  up c sh -c 'sleep 1000 & wait'
  call pause "$ID"
  expect_ok pause
  start=$SECONDS
  call delete --force "$ID"
  expect_ok "delete --force of a paused container"
  [ $((SECONDS - start)) -lt 5 ] || fail "delete --force of a paused container took $((SECONDS - start)) s"
  expect_all_gone "delete --force" c "$INIT"
}

# delete --force of a created container (its init waits for start).
tc.delete.force-created() {
  local pid
  ID=$(cid c)
  bundle c sleep 1000
  call create --bundle "$T/c" "$ID"
  expect_ok create
  pid=$(rt state "$ID" | jq .pid)
  call delete --force "$ID"
  expect_ok "delete --force of a created container"
  expect_all_gone "delete --force" c "$pid"
}
