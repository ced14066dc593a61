# shellcheck shell=bash
# Private containerd and dockerd instances: everything they own lives under $ECO_WORK, they
# listen on sockets there, and they are stopped by the engine script's exit trap.
# (podman has no daemon: engines/podman.sh gives each command its own roots.)

# ---- containerd ----
# Its config.toml: our own roots and socket, the CRI plugin disabled, and the repository's
# contrib/containerd/config.toml (the runtime registered as io.containerd.runc.v2 with
# BinaryName, and runc under its own name) with the paths of this run. The CRI plugin is
# what reads those runtime tables; containerd still parses them, so a broken snippet fails
# here. Tasks created by ctr get the same two options from --runc-binary/--runc-root.
ECO_CTD_DIR=; ECO_CTD_SOCK=; ECO_CTD_PID=
eco_containerd_start() {
  ECO_CTD_DIR=$ECO_WORK/containerd
  ECO_CTD_SOCK=$ECO_CTD_DIR/containerd.sock
  mkdir -p "$ECO_CTD_DIR"/{root,state,tmp,opt,fifo,cri-root}
  # containerd's shims put their sockets in /run/containerd/s whatever the state dir is.
  eco_note_host_path /run/containerd
  eco_note_host_path /run/containerd/s
  eco_note_host_path /run/containerd/fifo   # ctr without --fifo-dir
  local runc_path; runc_path=$(command -v runc || echo /usr/sbin/runc)
  {
    echo "# written by tests/ecosystem for one test run"
    echo "root = \"$ECO_CTD_DIR/root\""
    echo "state = \"$ECO_CTD_DIR/state\""
    echo "temp = \"$ECO_CTD_DIR/tmp\""
    echo 'disabled_plugins = ["io.containerd.grpc.v1.cri"]'
    sed -e "s#\"/usr/local/bin/berth\"#\"$ECO_RUNTIME\"#" \
        -e "s#\"/run/containerd/berth\"#\"$ECO_CTD_DIR/cri-root\"#" \
        -e "s#\"/usr/sbin/runc\"#\"$runc_path\"#" \
        "$ECO_REPO/contrib/containerd/config.toml"
    echo
    echo "[grpc]"
    echo "  address = \"$ECO_CTD_SOCK\""
    echo "[plugins.\"io.containerd.internal.v1.opt\"]"
    echo "  path = \"$ECO_CTD_DIR/opt\""
  } >"$ECO_CTD_DIR/config.toml"
  containerd --config "$ECO_CTD_DIR/config.toml" --log-level info \
    </dev/null >"$ECO_CTD_DIR/containerd.log" 2>&1 &
  ECO_CTD_PID=$!
  echo "$ECO_CTD_PID" >"$ECO_CTD_DIR/containerd.pid"
  local i
  for i in $(seq 150); do
    if [[ -S "$ECO_CTD_SOCK" ]] && ctr --address "$ECO_CTD_SOCK" version >/dev/null 2>&1; then return 0; fi
    kill -0 "$ECO_CTD_PID" 2>/dev/null || break
    sleep 0.2
  done
  eco_log "containerd did not start; its log:"; tail -n 30 "$ECO_CTD_DIR/containerd.log" >&2
  return 1
}

# eco_stop_pid PID NAME: SIGTERM, wait up to 30 s, then SIGKILL.
eco_stop_pid() {
  local pid=$1 name=$2 i
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null
  for i in $(seq 150); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.2; done
  eco_log "$name ($pid) ignored SIGTERM for 30 s: SIGKILL"
  kill -KILL "$pid" 2>/dev/null
}

eco_containerd_stop() { eco_stop_pid "$ECO_CTD_PID" containerd; ECO_CTD_PID=; }

# ---- dockerd ----
# daemon.json: contrib/docker/daemon.json with the runtime renamed test-<name> (Docker
# reserves "runc") and pointed at the runtime under test; it is also the default runtime.
# The shim then calls it with --root <exec-root>/runtime-test-<name>/moby.
ECO_DK_DIR=; ECO_DK_SOCK=; ECO_DK_PID=; ECO_DK_RUNTIME=
eco_dockerd_start() {
  ECO_DK_DIR=$ECO_WORK/docker
  ECO_DK_SOCK=$ECO_DK_DIR/docker.sock
  ECO_DK_RUNTIME=test-$ECO_RTNAME
  mkdir -p "$ECO_DK_DIR"/{data,exec}
  # Written by dockerd 20.10 whatever its roots (removed at the end if we created them).
  eco_note_host_path /etc/docker
  eco_note_host_path /etc/docker/key.json
  eco_note_host_path /run/docker
  eco_note_host_path /run/docker/plugins
  jq --arg n "$ECO_DK_RUNTIME" --arg p "$ECO_RUNTIME" \
    '.runtimes = {($n): (.runtimes.berth | .path = $p)} | ."default-runtime" = $n' \
    "$ECO_REPO/contrib/docker/daemon.json" >"$ECO_DK_DIR/daemon.json" || return 1
  dockerd --config-file "$ECO_DK_DIR/daemon.json" \
    --data-root "$ECO_DK_DIR/data" --exec-root "$ECO_DK_DIR/exec" \
    --pidfile "$ECO_DK_DIR/dockerd.pid" -H "unix://$ECO_DK_SOCK" \
    --containerd "$ECO_CTD_SOCK" \
    --iptables=false --ip-masq=false --bridge=none --storage-driver overlay2 \
    --exec-opt native.cgroupdriver=cgroupfs --cgroup-parent "/eco-$ECO_TOKEN/docker" \
    </dev/null >"$ECO_DK_DIR/dockerd.log" 2>&1 &
  ECO_DK_PID=$!
  local i
  for i in $(seq 300); do
    if [[ -S "$ECO_DK_SOCK" ]] && "$ECO_DOCKER_CLI" -H "unix://$ECO_DK_SOCK" version >/dev/null 2>&1; then
      return 0
    fi
    kill -0 "$ECO_DK_PID" 2>/dev/null || break
    sleep 0.2
  done
  eco_log "dockerd did not start; its log:"; tail -n 30 "$ECO_DK_DIR/dockerd.log" >&2
  return 1
}
eco_dockerd_stop() { eco_stop_pid "$ECO_DK_PID" dockerd; ECO_DK_PID=; }
