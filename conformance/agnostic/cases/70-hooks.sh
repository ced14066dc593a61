# Hooks: order and timing across create, start and delete, the state on their stdin, and a
# failing prestart hook.

# hooks_config NAME: every host-side hook of bundle NAME appends its name to $T/hooks.log
# and keeps its stdin in $T/hook.NAME.json; startContainer (run inside the container,
# its path resolved there) keeps its stdin in the container's /startContainer.json.
hooks_config() {
  local kind
  local -a hooks=()
  for kind in prestart createRuntime createContainer poststart poststop; do
    hooks+=(--argjson "$kind" "$(jq -n --arg k "$kind" --arg t "$T" \
      '{path: "/bin/sh", args: ["sh", "-c", "cat > \($t)/hook.\($k).json; echo \($k) >> \($t)/hooks.log"]}')")
  done
  config "$1" '.hooks = {prestart: [$prestart], createRuntime: [$createRuntime], createContainer: [$createContainer],
                         startContainer: [{path: "/bin/sh", args: ["sh", "-c", "cat > /startContainer.json"]}],
                         poststart: [$poststart], poststop: [$poststop]}' "${hooks[@]}"
}
hooks_log() { paste -sd ' ' "$T/hooks.log" 2>/dev/null; }

# The order prestart, createRuntime, createContainer (all before create returns),
# startContainer (before the process runs), poststart, poststop (only at delete); each
# hook's stdin is the container's state: ociVersion, id, status, bundle, and the pid of
# the container process while it lives.
tc.hooks.order() {
  local id pid log
  id=$(cid c)
  bundle c sh -c 'if [ -s /startContainer.json ]; then echo hook-ran-first > /tmp/order; fi; sleep 0.2'
  hooks_config c
  call create --bundle "$T/c" "$id"
  expect_ok "create"
  pid=$(rt state "$id" | jq .pid)
  log=$(hooks_log)
  expect_match "$log" '^prestart createRuntime createContainer( poststart)?$' "hooks run by create, in order"
  call start "$id"
  expect_ok start
  expect_eq "$(hooks_log)" "prestart createRuntime createContainer poststart" "hooks run by create and start"
  wait_status "$id" stopped
  expect_eq "$(cat "$T/c/rootfs/tmp/order" 2>/dev/null)" hook-ran-first "startContainer ran before the process"
  expect_eq "$(hooks_log)" "prestart createRuntime createContainer poststart" "hooks after the process exited"
  call delete "$id"
  expect_ok delete
  expect_eq "$(hooks_log)" "prestart createRuntime createContainer poststart poststop" "hooks after delete"
  local kind f
  for kind in prestart createRuntime createContainer poststart poststop; do
    f=$T/hook.$kind.json
    ID=$id B=$T/c expect_json "$(cat "$f")" '(.ociVersion | type == "string") and .id == $ENV.ID and .bundle == $ENV.B
                                             and (.status | type == "string")' "the state on the stdin of $kind"
  done
  for kind in prestart createRuntime; do
    PID=$pid expect_json "$(cat "$T/hook.$kind.json")" '(.status == "creating" or .status == "created")
                                                       and .pid == ($ENV.PID | tonumber)' "status and pid given to $kind"
  done
  expect_json "$(cat "$T/hook.poststop.json")" '.status == "stopped"' "status given to poststop"
  ID=$id expect_json "$(cat "$T/c/rootfs/startContainer.json")" '.id == $ENV.ID' "the state on the stdin of startContainer"
}

# poststart hooks run during start, after the user process has started and before start
# returns, with status "running" on stdin. runtime-spec 1.0.2, config.md, "Poststart":
# "The poststart hooks MUST be called after the user-specified process is executed but
# before the `start` operation returns." runc 1.1 runs them in create, with "created".
tc.hooks.poststart() {
  local id pid
  id=$(cid c)
  bundle c sleep 1000
  hooks_config c
  call create --bundle "$T/c" "$id"
  expect_ok create
  pid=$(rt state "$id" | jq .pid)
  [ ! -e "$T/hook.poststart.json" ] || fail "poststart hooks ran during create, before start (log: $(hooks_log))"
  call start "$id"
  expect_ok start
  [ -e "$T/hook.poststart.json" ] || fail "poststart hooks had not run when start returned"
  PID=$pid expect_json "$(cat "$T/hook.poststart.json")" '.status == "running" and .pid == ($ENV.PID | tonumber)' \
    "status and pid given to poststart"
}

# A failing prestart hook fails create (exit 1, the hook's exit status, stdout and stderr
# in the error) and leaves no container, process or cgroup.
tc.hooks.prestart-fails() {
  local id
  id=$(cid c)
  bundle c sleep 1000
  config c '.hooks.prestart = [{path: "/bin/sh", args: ["sh", "-c", "echo hook-out; echo hook-err >&2; exit 3"]}]'
  call create --bundle "$T/c" "$id"
  expect_error 'error running (prestart )?hook #0: .*exit status 3, stdout: hook-out\\n, stderr: hook-err' 1 \
    "create with a failing prestart hook"
  call state "$id"
  expect_error "container does not exist" 1 "state after the failed create"
  call list -q
  expect_eq "$OUT" "" "list -q after the failed create"
  [ -z "$(cg_dirs c)" ] || fail "cgroups left after the failed create: $(cg_dirs c | paste -sd ' ' -)"
}

# A failing poststart hook is a warning: start succeeds, the container runs, the next
# poststart hook still runs. runtime-spec 1.0.2, runtime.md, Lifecycle: "If any poststart
# hook fails, the runtime MUST log a warning, but the remaining hooks and lifecycle
# continue as if the hook had succeeded."
tc.hooks.poststart-fails() {
  local id
  id=$(cid c)
  bundle c sleep 1000
  config c '.hooks.poststart = [{path: "/bin/sh", args: ["sh", "-c", "exit 5"]},
                                {path: "/bin/sh", args: ["sh", "-c", "echo ran > \($t)/second"]}]' --arg t "$T"
  call create --bundle "$T/c" "$id"
  expect_ok "create of a container whose first poststart hook fails"
  call start "$id"
  expect_ok "start with a failing poststart hook"
  expect_match "$ERR" 'level=warning.*hook #0.*exit status 5' "the warning about the failing hook"
  call state "$id"
  expect_json "$OUT" '.status == "running"' "status after start"
  expect_eq "$(cat "$T/second" 2>/dev/null)" ran "the poststart hook after the failing one"
}

# A failing poststop hook is a warning: delete succeeds, the container and its cgroups are
# gone, the next poststop hook still runs (runtime-spec 1.0.2, runtime.md, Lifecycle: "If
# any poststop hook fails, the runtime MUST log a warning, but the remaining hooks and
# lifecycle continue as if the hook had succeeded.").
tc.hooks.poststop-fails() {
  local id
  id=$(cid c)
  bundle c true
  config c '.hooks.poststop = [{path: "/bin/sh", args: ["sh", "-c", "exit 6"]},
                               {path: "/bin/sh", args: ["sh", "-c", "echo ran > \($t)/second"]}]' --arg t "$T"
  call run -d --bundle "$T/c" "$id"
  expect_ok "run -d"
  wait_status "$id" stopped
  call delete "$id"
  expect_ok "delete with a failing poststop hook"
  expect_match "$ERR" 'hook #0.*exit status 6' "the message about the failing hook"
  call state "$id"
  expect_error "container does not exist" 1 "state after delete"
  [ -z "$(cg_dirs c)" ] || fail "cgroups left after delete: $(cg_dirs c | paste -sd ' ' -)"
  expect_eq "$(cat "$T/second" 2>/dev/null)" ran "the poststop hook after the failing one"
}
