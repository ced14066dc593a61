# exec: its flags observed from inside the container, --detach/--pid-file, --process, the
# exit status.

# --env adds variables and overrides the config's (the process's environ holds one entry,
# the new value: with two, getenv() would return the first); the config's other variables
# and HOME are kept. The exec'd process is `env` itself: a shell would rebuild environ.
tc.exec.env() {
  bundle c sleep 1000
  config c '.process.env += ["AGN_CFG=from-config", "AGN_OVR=from-config"]'
  ID=$(cid c)
  call run -d --bundle "$T/c" "$ID"
  expect_ok "run -d"
  call exec --env AGN_OVR=from-exec --env AGN_NEW=new "$ID" env
  expect_ok "exec --env"
  expect_eq "$(printf '%s\n' "$OUT" | grep -c '^AGN_OVR=')" 1 "entries of AGN_OVR in the environment"
  expect_match "$OUT" '^AGN_OVR=from-exec$' "the overridden variable"
  expect_match "$OUT" '^AGN_NEW=new$' "the added variable"
  expect_match "$OUT" '^AGN_CFG=from-config$' "the config's variable"
  expect_match "$OUT" '^PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin$' "the config's PATH"
  expect_match "$OUT" '^HOME=/root$' "HOME (from the container's /etc/passwd)"
  call exec "$ID" env
  expect_lacks "$OUT" AGN_NEW "the next exec's environment (--env is per exec)"
}

# --cwd: the process starts there; without it the config's cwd; a relative or missing
# directory is an exec failure (255) naming it.
tc.exec.cwd() {
  bundle c sleep 1000
  config c '.process.cwd = "/home"'
  ID=$(cid c)
  call run -d --bundle "$T/c" "$ID"
  expect_ok "run -d"
  call exec "$ID" pwd
  expect_ok "exec pwd"
  expect_eq "$OUT" /home "cwd without --cwd (the config's)"
  call exec --cwd /tmp "$ID" pwd
  expect_ok "exec --cwd /tmp pwd"
  expect_eq "$OUT" /tmp "cwd with --cwd /tmp"
  call exec --cwd tmp "$ID" pwd
  expect_error "Cwd must be an absolute path" 255 "exec --cwd with a relative path"
  call exec --cwd /nonexistent/dir "$ID" pwd
  expect_error 'chdir to cwd \(\\"/nonexistent/dir\\"\) set in config.json.*no such file or directory' 255 \
    "exec --cwd with a missing directory"
}

# --user UID:GID, --additional-gids, --user UID (gid 0): the ids inside, HOME from the
# container's passwd, and the owner of a file the process creates, seen from the host.
tc.exec.user() {
  up c
  call exec --user 1000:1000 "$ID" sh -c 'echo "$(id -u) $(id -g) [$(id -G)] $HOME"; touch /tmp/by-1000'
  expect_ok "exec --user 1000:1000"
  expect_eq "$OUT" "1000 1000 [1000] /home/agn" "uid gid [groups] HOME with --user 1000:1000"
  expect_eq "$(stat -c %u:%g "$T/c/rootfs/tmp/by-1000")" 1000:1000 "owner of the file it created (host view)"
  call exec --user 1000:1000 --additional-gids 5 --additional-gids 65534 "$ID" id -G
  expect_ok "exec --additional-gids"
  expect_eq "$(printf '%s\n' $OUT | sort -n | paste -sd ' ' -)" "5 1000 65534" "groups with --additional-gids 5 and 65534"
  call exec --user 65534 "$ID" sh -c 'echo "$(id -u) $(id -g) $HOME"'
  expect_ok "exec --user 65534"
  expect_eq "$OUT" "65534 0 /nonexistent" "uid gid HOME with --user 65534 (no gid: 0)"
  call exec "$ID" id -u
  expect_eq "$OUT" 0 "uid without --user (the config's)"
}

# --detach with --pid-file: exec returns while the process runs; the file holds its host
# pid, a process in the container's pid namespace and cgroup, listed by ps.
tc.exec.detach() {
  local pid start
  up c
  start=$SECONDS
  call exec --detach --pid-file "$T/exec.pid" "$ID" sleep 4242
  expect_ok "exec --detach --pid-file"
  [ $((SECONDS - start)) -lt 10 ] || fail "exec --detach took $((SECONDS - start)) s"
  pid=$(cat "$T/exec.pid")
  expect_match "$pid" '^[0-9]+$' "the pid file"
  pid_alive "$pid" || fail "the exec'd process $pid is not alive"
  wait_until 5 "/proc/$pid/cmdline to be 'sleep 4242'" cmdline_is "$pid" sleep 4242
  expect_eq "$(readlink "/proc/$pid/ns/pid")" "$(readlink "/proc/$INIT/ns/pid")" "pid namespace of the exec'd process"
  expect_eq "$(readlink "/proc/$pid/ns/mnt")" "$(readlink "/proc/$INIT/ns/mnt")" "mount namespace of the exec'd process"
  expect_eq "$(grep -E '^[0-9]+:(pids|memory):' "/proc/$pid/cgroup")" "$(grep -E '^[0-9]+:(pids|memory):' "/proc/$INIT/cgroup")" \
    "v1 pids and memory cgroups of the exec'd process"
  call ps --format json "$ID"
  PID=$pid expect_json "$OUT" 'index($ENV.PID | tonumber) != null' "ps --format json lists the exec'd process"
  kill "$pid"
  wait_until 5 "the exec'd process to end" pid_gone "$pid"
}

# --process FILE: args, env, cwd, user and additionalGids come from the file; exit status
# of the process; stdin of exec reaches it.
tc.exec.process-json() {
  up c
  jq -n '{terminal: false, user: {uid: 1000, gid: 1000, additionalGids: [5]},
          args: ["sh", "-c", "read line; echo \"$(id -u):$(id -g):$(id -G | tr \" \" ,)|$(pwd)|$AGN_P|$line\"; exit 9"],
          env: ["PATH=/bin", "AGN_P=from-process-json"], cwd: "/tmp"}' >"$T/process.json"
  echo from-stdin >"$T/stdin"
  CALL_STDIN=$T/stdin call exec --process "$T/process.json" "$ID"
  expect_rc 9 "exec --process (the process exits with 9)"
  expect_eq "$OUT" "1000:1000:1000,5|/tmp|from-process-json|from-stdin" "what the process saw"
  jq '.args = ["true"] | .cwd = "relative"' "$T/process.json" >"$T/bad.json"
  call exec --process "$T/bad.json" "$ID"
  expect_error "Cwd must be an absolute path" 255 "exec --process with a relative cwd"
}

# The exit status of exec is the process's: 0, 7, 128+signal when it is killed; 255 when
# the executable does not exist (with runc's text).
tc.exec.exit-status() {
  up c
  call exec "$ID" true
  expect_rc 0 "exec true"
  call exec "$ID" sh -c 'exit 7'
  expect_rc 7 "exec of a process exiting with 7"
  call exec "$ID" sh -c 'kill -KILL $$'
  expect_rc 137 "exec of a process killed by SIGKILL"
  call exec "$ID" sh -c 'kill -TERM $$'
  expect_rc 143 "exec of a process killed by SIGTERM"
  call exec "$ID" no-such-command
  expect_error 'exec: \\"no-such-command\\": executable file not found in \$PATH' 255 "exec of a missing executable"
  call exec "$ID" sh -c 'echo out; echo err >&2'
  expect_eq "$OUT" out "exec's stdout"
  expect_eq "$ERR" err "exec's stderr"
}

# exec --tty --detach --console-socket: the runtime sends the pty master over the socket;
# the process has the pty as its terminal, reads what is typed and its output comes back.
tc.exec.tty() {
  local pid
  up c
  console "$T/exec.sock" -w "isatty-$((6 * 7))" -s 'typed-line\n' -w 'got:typed-line' -e
  call exec --tty --detach --pid-file "$T/exec.pid" --console-socket "$T/exec.sock" "$ID" \
    sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo "isatty-$((6*7))"; read l; echo "got:$l"'
  expect_ok "exec --tty --detach --console-socket"
  pid=$(cat "$T/exec.pid")
  console_wait "$T/exec.sock"
  expect_match "$(cat "$T/exec.sock.out")" '^/dev/pts/[0-9]+' "tty inside the container"
  wait_until 5 "the exec'd process to end" pid_gone "$pid"
}
