# state, list and run: what the runtime reports about its containers, and run's exit status.

# `state` of a created container: the runtime-spec fields (ociVersion, id, status, pid,
# bundle, annotations) and the fields runc adds (rootfs, created, owner); the pid is the
# container's process, alive on the host and in a pid namespace of its own.
tc.state.created() {
  local id before after created pid
  id=$(cid c)
  bundle c sleep 100
  config c '.annotations = {"org.berth.agnostic.case": "state.created"}'
  before=$(date +%s)
  call create --bundle "$T/c" "$id"
  expect_ok create
  after=$(date +%s)
  call state "$id"
  expect_ok state
  expect_json "$OUT" 'type == "object"' "state prints one JSON object"
  expect_json "$OUT" '.ociVersion | type == "string" and length > 0' ociVersion
  ID=$id expect_json "$OUT" '.id == $ENV.ID' id
  expect_json "$OUT" '.status == "created"' status
  expect_json "$OUT" '.pid | type == "number" and . > 1' pid
  B=$T/c expect_json "$OUT" '.bundle == $ENV.B' "bundle (absolute path)"
  expect_json "$OUT" '.annotations == {"org.berth.agnostic.case": "state.created"}' annotations
  B=$T/c expect_json "$OUT" '.rootfs == $ENV.B + "/rootfs"' rootfs
  expect_json "$OUT" '.owner | type == "string"' owner
  created=$(printf '%s' "$OUT" | jq -r .created)
  expect_match "$created" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?(Z|[+-][0-9]{2}:[0-9]{2})$' \
    "created (RFC 3339)"
  created=$(date -d "$created" +%s) || fail "created: date cannot parse it"
  [ "$created" -ge $((before - 1)) ] && [ "$created" -le $((after + 1)) ] ||
    fail "created: $created is not between $before and $after (the create call)"
  pid=$(printf '%s' "$OUT" | jq -r .pid)
  pid_alive "$pid" || fail "pid $pid is not a live process"
  [ "$(readlink "/proc/$pid/ns/pid")" != "$(readlink /proc/self/ns/pid)" ] ||
    fail "pid $pid is in the host's pid namespace; the config asks for a new one"
}

# The status through the lifecycle: created, running (same pid), stopped when the process
# exits, and gone after delete ("container does not exist"), its cgroups with it.
tc.state.lifecycle() {
  local id pid
  id=$(cid c)
  bundle c sh -c 'while [ ! -e /tmp/stop ]; do sleep 0.05; done'
  call create --bundle "$T/c" "$id"
  expect_ok create
  call state "$id"
  expect_json "$OUT" '.status == "created"' "status after create"
  pid=$(printf '%s' "$OUT" | jq -r .pid)
  call start "$id"
  expect_ok start
  call state "$id"
  expect_json "$OUT" '.status == "running"' "status after start"
  PID=$pid expect_json "$OUT" '.pid == ($ENV.PID | tonumber)' "pid after start (the created pid)"
  wait_until 5 "the container process to run the config's args" \
    cmdline_is "$pid" sh -c 'while [ ! -e /tmp/stop ]; do sleep 0.05; done'
  touch "$T/c/rootfs/tmp/stop"
  wait_status "$id" stopped
  wait_until 5 "pid $pid to end" pid_gone "$pid"
  call state "$id"
  expect_ok "state of a stopped container"
  expect_json "$OUT" '.status == "stopped"' "status after the process exited"
  [ -n "$(cg_dirs c)" ] || fail "no cgroup directory of the container to check"
  call delete "$id"
  expect_ok "delete of a stopped container"
  call state "$id"
  expect_error "container does not exist" 1 "state after delete"
  [ -z "$(cg_dirs c)" ] || fail "cgroups left after delete: $(cg_dirs c | paste -sd ' ' -)"
}

# `list`: the table (header and one row per container), -q (ids only) and --format json
# (runc's fields), for one created and one running container; an empty root lists
# nothing in either form.
tc.list.formats() {
  local a b pa pb header
  a=$(cid a)
  b=$(cid b)
  bundle a sleep 100
  bundle b sleep 100
  call create --bundle "$T/a" "$a"
  expect_ok "create $a"
  call run -d --bundle "$T/b" "$b"
  expect_ok "run -d $b"
  pa=$(rt state "$a" | jq .pid)
  pb=$(rt state "$b" | jq .pid)
  call list -q
  expect_ok "list -q"
  expect_eq "$(printf '%s\n' "$OUT" | sort | paste -sd ' ' -)" "$(printf '%s\n' "$a" "$b" | sort | paste -sd ' ' -)" "list -q"
  call list --format json
  expect_ok "list --format json"
  expect_json "$OUT" 'type == "array" and length == 2' "list --format json: an array of 2"
  expect_json "$OUT" 'all(.[]; has("ociVersion") and has("id") and has("pid") and has("status") and has("bundle")
                              and has("rootfs") and has("created") and has("owner"))' "list --format json: fields"
  A=$a PA=$pa B=$T/a expect_json "$OUT" \
    '.[] | select(.id == $ENV.A) | .status == "created" and .pid == ($ENV.PA | tonumber) and .bundle == $ENV.B' \
    "list --format json: $a"
  B=$b PB=$pb expect_json "$OUT" '.[] | select(.id == $ENV.B) | .status == "running" and .pid == ($ENV.PB | tonumber)' \
    "list --format json: $b"
  expect_json "$OUT" 'all(.[]; .owner == "root")' "list --format json: owner of root's containers"
  call list
  expect_ok list
  header=$(printf '%s\n' "$OUT" | head -1 | tr -s ' ')
  expect_eq "$header" "ID PID STATUS BUNDLE CREATED OWNER" "list: header"
  expect_match "$OUT" "^$a +$pa +created +$T/a +[0-9T:.Z+-]+ +root\$" "list: row of $a"
  expect_match "$OUT" "^$b +$pb +running +$T/b +[0-9T:.Z+-]+ +root\$" "list: row of $b"
  expect_eq "$(printf '%s\n' "$OUT" | wc -l)" 3 "list: header and two rows"
  mkdir "$T/empty-root"
  ROOT=$T/empty-root call list --format json
  expect_ok "list --format json (no containers)"
  expect_json "$OUT" '. == null or . == []' "list --format json with no containers: null or []"
  ROOT=$T/empty-root call list -q
  expect_eq "$OUT" "" "list -q with no containers"
}

# `run` (foreground, no terminal): the container's stdout and stderr pass through, run
# exits with the process's exit status, and with 128+9 when the process is killed; the
# container is gone afterwards.
tc.run.exit-status() {
  local id rc pid
  id=$(cid exit3)
  bundle exit3 sh -c 'echo to-stdout; echo to-stderr >&2; exit 3'
  call run --bundle "$T/exit3" "$id"
  expect_rc 3 "run of a process exiting with 3"
  expect_eq "$OUT" to-stdout "the container's stdout"
  expect_has "$ERR" to-stderr "the container's stderr"
  call state "$id"
  expect_error "container does not exist" 1 "state after run returned"
  id=$(cid killed)
  bundle killed sleep 100
  rt run --bundle "$T/killed" "$id" >"$T/killed.out" 2>&1 &
  pid=$!
  wait_status "$id" running
  call kill "$id" KILL
  expect_ok "kill KILL"
  rc=0
  wait "$pid" || rc=$?
  expect_eq "$rc" 137 "exit status of run when the process is killed by SIGKILL"
}
