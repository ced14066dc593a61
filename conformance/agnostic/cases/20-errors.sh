# Common mistakes: the one-line error (`level=error msg="..."`, runc's texts) and exit
# status, and that the mistake changes nothing. The runtime's name appears in some of
# runc's texts ("runc create failed: ..."), so the patterns leave it out.

# An id no container has: start, state, kill, delete, pause, resume, ps, events, update
# say "container does not exist" and exit 1; exec exits 255 (runc's exec failure status).
tc.errors.missing-id() {
  local id cmd
  id=$(cid nothing)
  for cmd in start state kill delete pause resume ps "events --stats" "update --pids-limit 10"; do
    # shellcheck disable=SC2086
    call $cmd "$id"
    expect_error "container does not exist" 1 "$cmd of a missing container"
  done
  call exec "$id" true
  expect_error "container does not exist" 255 "exec in a missing container"
}

# create with an id that is taken: exit 1, runc's text (1.1: "container with given ID
# already exists"; earlier and later: "container with id exists: ID"), and the first
# container is untouched.
tc.errors.create-existing() {
  local id pid
  id=$(cid c)
  bundle c sleep 100
  bundle other sleep 100
  call create --bundle "$T/c" "$id"
  expect_ok "first create"
  pid=$(rt state "$id" | jq .pid)
  call create --bundle "$T/other" "$id"
  expect_rc 1 "second create with the same id"
  expect_match "$ERR" "level=error msg=\".*container with (given ID already exists|id exists: $id)" "error of the second create"
  call state "$id"
  expect_ok "state after the failed create"
  PID=$pid B=$T/c expect_json "$OUT" '.status == "created" and .pid == ($ENV.PID | tonumber) and .bundle == $ENV.B' \
    "the first container after the failed create"
  pid_alive "$pid" || fail "the first container's process $pid died"
  call start "$id"
  expect_ok "start of the first container"
  wait_status "$id" running
}

# delete of a running (and of a paused) container without --force: exit 1, "cannot
# delete container ID that is not stopped: STATUS"; the container keeps running.
tc.errors.delete-running() {
  local id pid
  id=$(cid c)
  bundle c sleep 100
  call run -d --bundle "$T/c" "$id"
  expect_ok "run -d"
  pid=$(rt state "$id" | jq .pid)
  call delete "$id"
  expect_error "cannot delete container $id that is not stopped: running" 1 "delete of a running container"
  call state "$id"
  expect_json "$OUT" '.status == "running"' "status after the refused delete"
  pid_alive "$pid" || fail "the container's process $pid died"
  call pause "$id"
  expect_ok pause
  call delete "$id"
  expect_error "cannot delete container $id that is not stopped: paused" 1 "delete of a paused container"
  call state "$id"
  expect_json "$OUT" '.status == "paused"' "status after the refused delete"
}

# A stopped container: kill, pause and update say "container not running" (exit 1),
# start "cannot start a container that has stopped", exec "cannot exec in a stopped
# container" (255); delete then works.
tc.errors.stopped() {
  local id
  id=$(cid c)
  bundle c true
  call run -d --bundle "$T/c" "$id"
  expect_ok "run -d"
  wait_status "$id" stopped
  call kill "$id" KILL
  expect_error "container not running" 1 "kill of a stopped container"
  call kill "$id"
  expect_error "container not running" 1 "kill (default signal) of a stopped container"
  call pause "$id"
  expect_error "container not running" 1 "pause of a stopped container"
  call update --pids-limit 10 "$id"
  expect_error "container not running" 1 "update of a stopped container"
  call start "$id"
  expect_error "cannot start a container that has stopped" 1 "start of a stopped container"
  call exec "$id" true
  expect_error "cannot exec in a stopped container" 255 "exec in a stopped container"
  call state "$id"
  expect_json "$OUT" '.status == "stopped"' "status after the refused commands"
  call delete "$id"
  expect_ok "delete of a stopped container"
}

# start of a running container: "cannot start an already running container", exit 1;
# resume of a running container: "container not paused".
tc.errors.start-running() {
  local id
  id=$(cid c)
  bundle c sleep 100
  call run -d --bundle "$T/c" "$id"
  expect_ok "run -d"
  call start "$id"
  expect_error "cannot start an already running container" 1 "start of a running container"
  call resume "$id"
  expect_error "container not paused" 1 "resume of a running container"
  call state "$id"
  expect_json "$OUT" '.status == "running"' "status after the refused commands"
}

# create with process.terminal but no --console-socket, and with --console-socket but no
# terminal: runc's texts, exit 1, nothing created. The same mistakes with exec (--tty
# --detach without a socket, a socket without --detach): exit 255.
tc.errors.console-misuse() {
  local id
  id=$(cid c)
  bundle c sleep 100
  config c '.process.terminal = true'
  call create --bundle "$T/c" "$id"
  expect_error "cannot allocate tty if [a-z]+ will detach without setting console socket" 1 \
    "create of a terminal container without --console-socket"
  bundle plain sleep 100
  call create --bundle "$T/plain" --console-socket "$T/unused.sock" "$id"
  expect_error "cannot use console socket if [a-z]+ will not detach or allocate tty" 1 \
    "create with --console-socket of a container without terminal"
  call list -q
  expect_eq "$OUT" "" "containers after the refused creates"
  [ -z "$(cg_dirs c)$(cg_dirs plain)" ] || fail "cgroups left by the refused creates: $(cg_dirs c) $(cg_dirs plain)"
  up running
  call exec --tty --detach "$ID" true
  expect_error "cannot allocate tty if [a-z]+ will detach without setting console socket" 255 \
    "exec --tty --detach without --console-socket"
  call exec --tty --console-socket "$T/unused.sock" "$ID" true
  expect_error "cannot use console socket if [a-z]+ will not detach or allocate tty" 255 \
    "exec --tty --console-socket without --detach"
  call exec --detach --console-socket "$T/unused.sock" "$ID" true
  expect_error "cannot use console socket if [a-z]+ will not detach or allocate tty" 255 \
    "exec --detach --console-socket without --tty"
}
