# The console socket: with process.terminal, create (and run -d) send the pty master over
# --console-socket with SCM_RIGHTS (one fd, a pty master: the helper checks TIOCGPTN);
# the container's shell talks to whoever holds it. The marker texts are computed by the
# shell ($((6*7))) so that the pty's echo of the typed line cannot match them.

# create + start: an interactive shell (no -c) on the pty: its prompt, the pty as its
# stdin (tty, [ -t 0 ]), process.consoleSize as the window size; `exit` ends the container.
tc.console.create() {
  local id pid
  id=$(cid c)
  bundle c sh
  config c '.process.terminal = true | .process.env += ["PS1=agn-prompt# "] | .process.consoleSize = {height: 33, width: 111}'
  console "$T/console.sock" -w 'agn-prompt# ' \
    -s 'tty; stty size; [ -t 0 ] && [ -t 1 ] && echo "isatty-$((6*7))"\n' -w "isatty-42" -s 'exit\n' -e
  call create --bundle "$T/c" --console-socket "$T/console.sock" "$id"
  expect_ok "create --console-socket"
  pid=$(rt state "$id" | jq .pid)
  call start "$id"
  expect_ok start
  console_wait "$T/console.sock"
  expect_match "$(tr -d '\r' <"$T/console.sock.out")" '^/dev/pts/[0-9]+$' "the shell's tty"
  expect_match "$(tr -d '\r' <"$T/console.sock.out")" '^33 111$' "stty size (process.consoleSize 33x111)"
  wait_until 10 "the container's shell to exit" pid_gone "$pid"
  wait_status "$id" stopped
}

# run -d --console-socket: the same hand-off without create/start; the shell's stdin,
# stdout and stderr are one pty, and a line typed on the master reaches it.
tc.console.run-detach() {
  local id
  id=$(cid c)
  bundle c sh -c 'echo "fds:$(readlink /proc/$$/fd/0) $(readlink /proc/$$/fd/1) $(readlink /proc/$$/fd/2)"
                  read l; echo "got-$l-$((6*7))"; sleep 1000'
  config c '.process.terminal = true'
  console "$T/console.sock" -w 'fds:' -s 'line\n' -w "got-line-42"
  call run -d --bundle "$T/c" --console-socket "$T/console.sock" "$id"
  expect_ok "run -d --console-socket"
  console_wait "$T/console.sock"
  expect_match "$(tr -d '\r' <"$T/console.sock.out")" '^fds:(/dev/pts/[0-9]+) \1 \1$' "fds 0, 1 and 2 of the shell"
  wait_status "$id" running
}
