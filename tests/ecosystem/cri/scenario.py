#!/usr/bin/python3
"""The CRI scenario, run once per RuntimeClass handler (runc, berth): pods with a bridge and a
host network, shared namespaces, an init container, exec probes, security contexts,
resources, stats, OOM, stop/restart/log reopen, kubelet cgroup parents, GPUs and a CDI
device on the fake GPU host (started, seen from inside), and a churn of pods with a census
of what stays on the host. One PASS/FAIL line per check; exit 1 on a failure.

  scenario.py --socket SOCK --stubs DIR --handler NAME --log-root DIR --work DIR
              --runtime-root DIR [--probes N] [--churn N] [--only a,b] [--out FILE]
              [--systemd] [--host-network] [--oom-repeat N] [--oom-hog init|child]

--systemd: containerd runs the handlers with SystemdCgroup = true (a systemd host, pure
cgroup v2): pods get kubelet's systemd parents (kubepods-<qos>-pod<uid>.slice), resources
checks the container's scope and its properties, the census covers the pod slices and units.
--host-network: every pod on the node's network (a host without CNI plugins).
"""
import argparse
import json
import os
import statistics
import sys
import time

import cri_lib
from cri_lib import cgroup_of, status_field, unit_prop, units

SCENARIOS = []
EXPLICIT = set()   # run only when named in --only


def scenario(fn):
    SCENARIOS.append(fn)
    return fn


def explicit(fn):
    EXPLICIT.add(fn.__name__)
    return fn


def ms(t0):
    return round((time.perf_counter() - t0) * 1000, 1)


def ns_of(c, cid, names=("net", "ipc", "uts", "pid")):
    # busybox readlink takes one path per call
    return [c.out(cid, "readlink", f"/proc/self/ns/{n}") for n in names]


TRAP_TERM = ["sh", "-c", "echo hello-from-c1; trap 'echo got-TERM; exit 0' TERM; sleep 3600 & wait"]


@scenario
def pod_bridge(c, k, a):
    """RunPodSandbox on the CNI bridge, two containers sharing net/ipc/uts, graceful stop."""
    pb = cri_lib.pb
    cfg = c.pod_config("bridge")
    t_all = time.perf_counter()
    pod = c.run_pod(cfg)
    k.timings["RunPodSandbox"] = ms(t_all)
    t0 = time.perf_counter()
    c1 = c.create(pod, c.container_config(cfg, "c1", TRAP_TERM))
    k.timings["CreateContainer"] = ms(t0)
    t0 = time.perf_counter()
    c.start(c1)
    k.timings["StartContainer"] = ms(t0)
    k.timings["PodStart"] = ms(t_all)
    ps = c.rt.PodSandboxStatus(pb.PodSandboxStatusRequest(pod_sandbox_id=pod, verbose=True))
    info = json.loads(ps.info.get("info", "{}"))
    k.check("sandbox ready, handler", ps.status.state == pb.SANDBOX_READY
            and info.get("runtimeHandler") == a.handler,
            f"{info.get('runtimeHandler')} {info.get('runtimeOptions')}")
    st, _ = c.status(c1)
    k.check("c1 running", st.state == pb.CONTAINER_RUNNING, pb.ContainerState.Name(st.state))
    k.check("hostname is the pod's", c.out(c1, "hostname") == cfg.hostname, cfg.hostname)
    ip = ps.status.network.ip
    k.check("pod IP on eth0", ip and ip in c.out(c1, "ip", "-4", "-o", "addr", "show", "eth0"), ip)
    c2 = c.run(pod, "c2", ["sleep", "3600"])
    n1, n2 = ns_of(c, c1), ns_of(c, c2)
    k.check("c1/c2 share net, ipc, uts", all(n1[:3]) and n1[:3] == n2[:3], f"{n1[:3]} {n2[:3]}")
    k.check("c1/c2 separate pid ns", all(n1) and n1[3] != n2[3], f"{n1[3]} {n2[3]}")
    k.check("pod net ns is not the host's", n1[0] != os.readlink("/proc/self/ns/net"), n1[0])
    k.check("c2 sees c1's hostname", c.out(c2, "hostname") == cfg.hostname)
    # c1 traps TERM (exit 0); c2 is `sleep` as PID 1, which ignores TERM: KILL after 2 s
    t0 = time.perf_counter()
    c.rt.StopContainer(pb.StopContainerRequest(container_id=c1, timeout=10))
    t1 = ms(t0)
    t0 = time.perf_counter()
    c.rt.StopContainer(pb.StopContainerRequest(container_id=c2, timeout=2))
    t2 = ms(t0)
    e1, e2 = c.status(c1)[0], c.status(c2)[0]
    k.check("stop: TERM trapped, exit 0", e1.exit_code == 0 and t1 < 5000, f"{e1.exit_code} in {t1} ms")
    k.check("stop: grace period 2 s then KILL (137)", e2.exit_code == 137 and 1800 < t2 < 8000,
            f"{e2.exit_code} in {t2} ms")
    log = os.path.join(cfg.log_directory, "c1/0.log")
    text = open(log).read() if os.path.exists(log) else ""
    k.check("CRI log in the pod's log directory",
            " stdout F hello-from-c1" in text and " stdout F got-TERM" in text, text.splitlines())


@scenario
def pod_host_network(c, k, a):
    cfg = c.pod_config("hostnet", host_network=True)
    pod = c.run_pod(cfg)
    c1 = c.run(pod, "c1", ["sleep", "3600"])
    c2 = c.run(pod, "c2", ["sleep", "3600"])
    n1, n2 = ns_of(c, c1, ("net", "ipc")), ns_of(c, c2, ("net", "ipc"))
    host = os.readlink("/proc/self/ns/net")
    k.check("hostNetwork: host net ns in both", n1[0] == host and n2[0] == host, n1[0])
    k.check("hostNetwork: shared pod ipc ns", n1[1] and n1[1] == n2[1], n1[1])
    k.check("hostNetwork: host's hostname", c.out(c1, "hostname") == os.uname().nodename)


@scenario
def pod_shared_pid(c, k, a):
    pb = cri_lib.pb
    cfg = c.pod_config("sharedpid", pid=pb.POD)
    pod = c.run_pod(cfg)
    c1 = c.run(pod, "c1", ["sleep", "3601"])
    c2 = c.run(pod, "c2", ["sleep", "3602"])
    n1, n2 = ns_of(c, c1, ("pid",)), ns_of(c, c2, ("pid",))
    k.check("shared pid ns", n1[0] and n1 == n2, f"{n1} {n2}")
    ps = c.out(c2, "ps", "-o", "pid,args")
    k.check("c2 sees c1's process and the pause process",
            "sleep 3601" in ps and "sleep infinity" in ps, ps.splitlines())


@scenario
def init_container(c, k, a):
    """kubelet runs init containers one by one to completion before the app containers."""
    pb = cri_lib.pb
    cfg = c.pod_config("init")
    pod = c.run_pod(cfg)
    share = os.path.join(a.work, "volumes", cfg.metadata.uid)
    os.makedirs(share)
    vol = [pb.Mount(container_path="/data", host_path=share)]
    init = c.run(pod, "init", ["sh", "-c", "sleep 0.3; echo initialized >/data/ready"], mounts=vol)
    st = c.wait_exited(init)
    k.check("init container completed with exit 0",
            st.state == pb.CONTAINER_EXITED and st.exit_code == 0, f"{st.exit_code} {st.reason}")
    app = c.run(pod, "app", ["sh", "-c", "cat /data/ready; exec sleep 3600"], mounts=vol)
    ast = c.status(app)[0]
    k.check("app starts after init finished", ast.started_at >= st.finished_at,
            f"init finished {st.finished_at}, app started {ast.started_at}")
    k.check("app reads what init wrote", c.out(app, "cat", "/data/ready") == "initialized")


@scenario
def probes(c, k, a):
    """ExecSync as kubelet's exec liveness/readiness probes."""
    cfg = c.pod_config("probe")
    pod = c.run_pod(cfg)
    cid = c.run(pod, "c", ["sleep", "3600"])
    code, out, err = c.exec(cid, ["echo", "ok"])
    k.check("probe output", (code, out) == (0, "ok\n"), repr((code, out, err)))
    code, out, err = c.exec(cid, ["sh", "-c", "echo to-err >&2; exit 3"])
    k.check("probe exit code and stderr", code == 3 and err == "to-err\n", repr((code, err)))
    try:      # containerd 1.6 answers an error (kubelet: probe failure), not an exit code
        code, _, err = c.exec(cid, ["/no/such/probe"])
        outcome = f"exit {code}: {err[:100]}"
    except cri_lib.grpc.RpcError as e:
        code, outcome = -1, e.details()[-100:]
    k.check("probe binary missing: a failure", code != 0 and "no such file" in outcome.lower(), outcome)
    t0 = time.perf_counter()
    try:
        code, _, _ = c.exec(cid, ["sleep", "30"], timeout=1)
        outcome = f"exit {code}"
        timed_out = False
    except cri_lib.grpc.RpcError as e:
        outcome = f"{e.code().name}: {e.details()}"
        timed_out = "timeout" in e.details() or e.code() == cri_lib.grpc.StatusCode.DEADLINE_EXCEEDED
    dt = ms(t0)
    k.check("probe timeout (1 s) reported as a timeout", timed_out and dt < 6000, f"{outcome} after {dt} ms")
    k.check("container still running after the timed-out probe",
            c.status(cid)[0].state == cri_lib.pb.CONTAINER_RUNNING)
    lat, bad = [], 0
    for _ in range(a.probes):
        t0 = time.perf_counter()
        code, out, _ = c.exec(cid, ["echo", "ok"])
        lat.append((time.perf_counter() - t0) * 1000)
        bad += (code, out) != (0, "ok\n")
    if lat:
        lat.sort()
        med, p95 = statistics.median(lat), lat[min(len(lat) - 1, int(len(lat) * 0.95))]
        k.timings["ExecSync_median"], k.timings["ExecSync_p95"] = round(med, 1), round(p95, 1)
        k.check(f"{len(lat)} probes in a row", bad == 0,
                f"median {med:.1f} ms, p95 {p95:.1f} ms, max {lat[-1]:.1f} ms, {bad} wrong")


def proc_status(c, cid, key):
    """KEY of the container's init (/proc/1) and of an exec'ed process (/proc/self)."""
    text = c.out(cid, "sh", "-c", "cat /proc/1/status; echo ==; cat /proc/self/status")
    init, _, ex = text.partition("==")
    return status_field(init, key), status_field(ex, key)


@scenario
def security(c, k, a):
    pb = cri_lib.pb
    cfg = c.pod_config("sec", sysctls={"net.core.somaxconn": "1234",
                                       "net.ipv4.ip_unprivileged_port_start": "100"})
    pod = c.run_pod(cfg)
    sleep = ["sleep", "3600"]
    u = c.run(pod, "user", sleep, sc={"run_as_user": pb.Int64Value(value=1000),
                                      "run_as_group": pb.Int64Value(value=2000)})
    k.check("runAsUser/runAsGroup", c.out(u, "id") .startswith("uid=1000 gid=2000"), c.out(u, "id"))
    k.check("runAsUser: the init too", proc_status(c, u, "Uid")[0].split()[:1] == ["1000"])
    ro = c.run(pod, "ro", sleep, sc={"readonly_rootfs": True})
    code, _, err = c.exec(ro, ["touch", "/newfile"])
    k.check("readOnlyRootFilesystem: / not writable", code != 0 and "Read-only" in err, err.strip())
    caps = c.run(pod, "caps", sleep, sc={"capabilities": pb.Capability(
        add_capabilities=["NET_ADMIN"], drop_capabilities=["CHOWN", "NET_RAW"])})
    eff = int(proc_status(c, caps, "CapEff")[0] or "0", 16)
    # CAP_CHOWN 0, CAP_NET_ADMIN 12, CAP_NET_RAW 13, CAP_KILL 5 (in containerd's default set)
    k.check("capabilities add NET_ADMIN, drop CHOWN/NET_RAW",
            eff & (1 << 12) and not eff & 1 and not eff & (1 << 13) and eff & (1 << 5), hex(eff))
    code, _, _ = c.exec(caps, ["chown", "1:1", "/tmp"])
    k.check("dropped CHOWN: chown fails", code != 0, f"exit {code}")
    sd = c.run(pod, "seccomp-default", sleep)
    k.check("seccomp RuntimeDefault: filter on init and exec",
            proc_status(c, sd, "Seccomp") == ("2", "2"), proc_status(c, sd, "Seccomp"))
    un = c.run(pod, "seccomp-unconfined", sleep, sc={
        "seccomp": pb.SecurityProfile(profile_type=pb.SecurityProfile.Unconfined)})
    k.check("seccomp Unconfined: no filter", proc_status(c, un, "Seccomp") == ("0", "0"),
            proc_status(c, un, "Seccomp"))
    nnp = c.run(pod, "nnp", sleep, sc={"no_new_privs": True})
    k.check("no_new_privs (allowPrivilegeEscalation=false)",
            proc_status(c, nnp, "NoNewPrivs") == ("1", "1"), proc_status(c, nnp, "NoNewPrivs"))
    k.check("without no_new_privs: NoNewPrivs 0", proc_status(c, un, "NoNewPrivs") == ("0", "0"),
            proc_status(c, un, "NoNewPrivs"))
    k.check("pod sysctls net.* in the container", c.out(sd, "cat", "/proc/sys/net/core/somaxconn")
            == "1234" and c.out(sd, "cat", "/proc/sys/net/ipv4/ip_unprivileged_port_start") == "100")
    k.check("pod sysctls did not touch the host",
            open("/proc/sys/net/core/somaxconn").read().strip() != "1234")
    # privileged needs a privileged sandbox (containerd refuses it otherwise)
    pcfg = c.pod_config("priv", privileged=True)
    ppod = c.run_pod(pcfg)
    pr = c.run(ppod, "priv", sleep, sc={"privileged": True})
    eff = int(proc_status(c, pr, "CapEff")[0] or "0", 16)
    # every capability of the bounding set (root here may lack some, e.g. CAP_SYS_RESOURCE)
    bnd = int(status_field(open("/proc/self/status").read(), "CapBnd"), 16)
    k.check("privileged: every capability", eff == bnd, f"{hex(eff)} (bounding set {hex(bnd)})")
    k.check("privileged: host devices in /dev", "loop0" in c.out(pr, "ls", "/dev").split()
            or not os.path.exists("/dev/loop0"))
    k.check("privileged: no seccomp filter", proc_status(c, pr, "Seccomp")[0] == "0")
    code, _, _ = c.exec(pr, ["sh", "-c", "echo 1 >/proc/sys/net/ipv4/ip_forward"])
    k.check("privileged: /proc/sys writable", code == 0, f"exit {code}")


def cg_read(pid, ctrl, name):
    p = f"/sys/fs/cgroup/{ctrl}{cgroup_of(pid, ctrl)}/{name}"
    return open(p).read().strip() if os.path.exists(p) else None


@scenario
def resources(c, k, a):
    pb = cri_lib.pb
    cfg = c.pod_config("res", qos="burstable")
    pod = c.run_pod(cfg)
    cid = c.run(pod, "c", ["sh", "-c", "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exec sleep 3600"])
    pid = c.pid(cid)
    upd = pb.LinuxContainerResources(cpu_period=100000, cpu_quota=50000, cpu_shares=512,
                                     memory_limit_in_bytes=128 << 20)
    if a.systemd:
        resources_systemd(c, k, pod, cfg, cid, pid, upd)
        return
    want_cg = f"{cfg.linux.cgroup_parent}/{cid}"
    cgs = {ctl: cgroup_of(pid, ctl) for ctl in ("memory", "cpu", "pids")}
    k.check("kubelet cgroup parent /kubepods/burstable/pod<uid>/<id>",
            all(v == want_cg for v in cgs.values()), json.dumps(cgs))
    t0 = time.perf_counter()
    c.rt.UpdateContainerResources(pb.UpdateContainerResourcesRequest(container_id=cid, linux=upd))
    k.timings["UpdateContainerResources"] = ms(t0)
    seen = {"memory.limit_in_bytes": cg_read(pid, "memory", "memory.limit_in_bytes"),
            "cpu.cfs_quota_us": cg_read(pid, "cpu", "cpu.cfs_quota_us"),
            "cpu.shares": cg_read(pid, "cpu", "cpu.shares")}
    k.check("UpdateContainerResources in the cgroup",
            seen == {"memory.limit_in_bytes": str(128 << 20), "cpu.cfs_quota_us": "50000",
                     "cpu.shares": "512"}, json.dumps(seen))
    time.sleep(0.5)
    s = c.rt.ContainerStats(pb.ContainerStatsRequest(container_id=cid)).stats
    k.check("ContainerStats: cpu, memory, writable layer",
            s.attributes.id == cid and s.cpu.usage_core_nano_seconds.value > 0
            and s.memory.working_set_bytes.value > 0,
            f"cpu {s.cpu.usage_core_nano_seconds.value} ns, ws {s.memory.working_set_bytes.value}")
    ls = c.rt.ListContainerStats(pb.ListContainerStatsRequest(
        filter=pb.ContainerStatsFilter(pod_sandbox_id=pod))).stats
    k.check("ListContainerStats for the pod", [x.attributes.id for x in ls] == [cid],
            [x.attributes.id[:12] for x in ls])
    oom_killed(c, k, pod)


def shim_watch(c, cid):
    """What the shim's OOM watch looks at: the inodes its inotify fds watch, against the
    container's memory.events and cgroup.events (cgroup v2)."""
    try:
        pid = c.pid(cid)
        cg = cgroup_of(pid, "")
        shim = int(status_field(open(f"/proc/{pid}/status").read(), "PPid"))
        want = {f"{os.stat(f'/sys/fs/cgroup{cg}/{f}').st_ino:x}": f for f in ("memory.events", "cgroup.events")}
        seen = []
        for fd in os.listdir(f"/proc/{shim}/fd"):
            if os.readlink(f"/proc/{shim}/fd/{fd}") != "anon_inode:inotify":
                continue
            for line in open(f"/proc/{shim}/fdinfo/{fd}"):
                if line.startswith("inotify"):
                    ino = line.split("ino:")[1].split()[0]
                    seen.append(want.get(ino, "other:" + ino))
        return f"init {pid} in {cg}; shim {shim} watches {sorted(seen)}"
    except (OSError, ValueError, TypeError, IndexError) as e:
        return f"shim watch: {e!r}"


def oom_killed(c, k, pod, hog="init", watch_report=None):
    """OOM: 16 MiB limit, tail buffers an endless line. The shim publishes TaskOOM (from its
    memory.events watch) and TaskExit (from its reaper) independently; where TaskExit comes
    first (seen in the TCG guest, with runc and berth alike) the status reads "Error" until
    TaskOOM lands, so the reason is polled for a few seconds more, as kubelet polls. The
    shim watches memory.events only once the start returned: a process killed before that
    is never reported (seen in the loaded TCG guest), so the hog waits 2 s first.

    HOG "init": tail is the container's init. "child": tail is a child of the init (sh),
    which stays 2 s after the kill, then exits with tail's status (137). The systemd driver
    needs "child": containerd 1.6's shim stops its memory.events watch once the cgroup is
    empty or gone, and with the systemd driver the cgroup is a scope that systemd removes
    as soon as its last process exits; under load the shim's re-read then comes too late
    and TaskOOM is never sent (runc and berth alike; docs/kubernetes.md has the rates)."""
    pb = cri_lib.pb
    cmd = "sleep 2; exec tail /dev/zero" if hog == "init" else "sleep 2; tail /dev/zero; s=$?; sleep 2; exit $s"
    oom = c.run(pod, "oom", ["sh", "-c", cmd], resources=pb.LinuxContainerResources(
        memory_limit_in_bytes=16 << 20, cpu_shares=2))
    t0 = time.perf_counter()
    if watch_report is not None:
        watch_report.append(shim_watch(c, oom))
    st = c.wait_exited(oom, 30)
    end = time.monotonic() + 10
    while st.reason != "OOMKilled" and time.monotonic() < end:
        time.sleep(0.2)
        st, _ = c.status(oom)
    k.timings["OOM_s"] = round(time.perf_counter() - t0, 1)
    got = f"{pb.ContainerState.Name(st.state)} {st.exit_code} {st.reason}"
    k.check(f"OOM kill ({hog}) reported as OOMKilled", st.reason == "OOMKilled" and st.exit_code == 137, got)
    return oom


@scenario
@explicit
def oom_repeat(c, k, a):
    """--oom-repeat N (only when named in --only): the OOM check alone, N containers in a row
    in one pod, each removed before the next: a race shows as a rate, not as one run.
    --oom-hog init|child: which process the kernel kills (oom_killed; default: child with
    --systemd, else init). Each line says which files the shim's inotify watches."""
    cfg = c.pod_config("oomr", qos="burstable")
    pod = c.run_pod(cfg)
    ok = 0
    for i in range(a.oom_repeat):
        k.prefix = f"oom_repeat {i + 1}/{a.oom_repeat}: "
        n = len(k.failed)
        seen = []
        cid = oom_killed(c, k, pod, hog=a.oom_hog or ("child" if a.systemd else "init"), watch_report=seen)
        ok += len(k.failed) == n
        print(f"    container {cid[:12]} OOM_s {k.timings['OOM_s']}: {seen[0]}", flush=True)
        c.rt.RemoveContainer(cri_lib.pb.RemoveContainerRequest(container_id=cid))
    k.prefix = "oom_repeat: "
    k.timings["oom_repeat_ok"] = f"{ok}/{a.oom_repeat}"
    k.check("every OOM kill reported as OOMKilled", ok == a.oom_repeat, f"{ok}/{a.oom_repeat}")


def resources_systemd(c, k, pod, cfg, cid, pid, upd):
    """The systemd half: cgroupsPath kubepods-burstable-pod<uid>.slice:cri-containerd:<id>
    is a transient scope in the pod's slice (systemd nests kubepods.slice ->
    kubepods-burstable.slice -> the pod slice); the update lands in the unit's properties and
    its cgroup v2 files (runc's conversion: shares 512 -> weight 20); removing the container
    removes the scope, and stopping the pod slice (kubelet's part) leaves nothing."""
    pb = cri_lib.pb
    slice_ = cfg.linux.cgroup_parent
    unit = f"cri-containerd-{cid}.scope"
    want = f"/kubepods.slice/kubepods-burstable.slice/{slice_}/{unit}"
    got = cgroup_of(pid, "")
    k.check("systemd: the container's scope in the pod slice", got == want, got)
    props = {p: unit_prop(unit, p) for p in ("Slice", "ActiveState", "Delegate")}
    k.check("systemd: scope properties", props == {"Slice": slice_, "ActiveState": "active",
                                                   "Delegate": "yes"}, json.dumps(props))
    t0 = time.perf_counter()
    c.rt.UpdateContainerResources(pb.UpdateContainerResourcesRequest(container_id=cid, linux=upd))
    k.timings["UpdateContainerResources"] = ms(t0)

    # shares 512 -> weight: 59 with the mapping of runc >= 1.3.2, crun and berth (1024 -> 100),
    # 20 with runc 1.1's linear one (Debian 12's runc)
    weight = "20" if c.handler == "runc" else "59"

    def v2(name):
        f = f"/sys/fs/cgroup{want}/{name}"
        return open(f).read().strip() if os.path.exists(f) else None
    seen = {"memory.max": v2("memory.max"), "cpu.max": v2("cpu.max"), "cpu.weight": v2("cpu.weight"),
            "MemoryMax": unit_prop(unit, "MemoryMax"),
            "CPUQuotaPerSecUSec": unit_prop(unit, "CPUQuotaPerSecUSec")}
    k.check("UpdateContainerResources in the unit and its cgroup",
            seen == {"memory.max": str(128 << 20), "cpu.max": "50000 100000", "cpu.weight": weight,
                     "MemoryMax": str(128 << 20), "CPUQuotaPerSecUSec": "500ms"}, json.dumps(seen))
    s = c.rt.ContainerStats(pb.ContainerStatsRequest(container_id=cid)).stats
    k.check("ContainerStats: memory", s.memory.working_set_bytes.value > 0,
            f"ws {s.memory.working_set_bytes.value}")
    oom = oom_killed(c, k, pod, hog="child")
    for x in (cid, oom):
        c.rt.StopContainer(pb.StopContainerRequest(container_id=x, timeout=1))
        c.rt.RemoveContainer(pb.RemoveContainerRequest(container_id=x))
    k.check("stop, remove: the scope is gone",
            units(unit) == [] and not os.path.exists(f"/sys/fs/cgroup{want}"), units(unit))
    c.remove_pod(pod)
    c.cleanup()
    k.check("pod removed, its slice stopped: no unit, no cgroup",
            units(f"*{cfg.metadata.uid.replace('-', '_')}*") == []
            and not os.path.exists(f"/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/{slice_}"),
            units(f"*{cfg.metadata.uid.replace('-', '_')}*"))


@scenario
def lifecycle(c, k, a):
    """A crashed container restarted in the same sandbox (attempt 1); ReopenContainerLog."""
    pb = cri_lib.pb
    cfg = c.pod_config("life")
    pod = c.run_pod(cfg)
    first = c.run(pod, "app", ["sh", "-c", "echo attempt0; exit 1"])
    st = c.wait_exited(first)
    k.check("attempt 0 crashed with exit 1", st.exit_code == 1, f"{st.exit_code} {st.reason}")
    second = c.run(pod, "app", ["sh", "-c", "i=0; while :; do echo tick $i; i=$((i+1)); sleep 0.1; done"],
                   attempt=1)
    st2, _ = c.status(second)
    cs = c.rt.ListContainers(pb.ListContainersRequest(
        filter=pb.ContainerFilter(pod_sandbox_id=pod))).containers
    k.check("restart: attempt 1 runs in the same sandbox",
            st2.state == pb.CONTAINER_RUNNING and st2.metadata.attempt == 1 and len(cs) == 2,
            f"{pb.ContainerState.Name(st2.state)}, {len(cs)} containers")
    d = os.path.join(cfg.log_directory, "app")
    time.sleep(0.5)
    log1 = os.path.join(d, "1.log")
    os.rename(log1, log1 + ".rotated")              # what kubelet's log rotation does
    c.rt.ReopenContainerLog(pb.ReopenContainerLogRequest(container_id=second))
    time.sleep(0.6)
    new = open(log1).read() if os.path.exists(log1) else ""
    old = open(os.path.join(d, "0.log")).read()
    k.check("ReopenContainerLog: a new 1.log with new lines", " stdout F tick" in new,
            new.splitlines()[:2])
    k.check("attempt 0's log kept in 0.log", " stdout F attempt0" in old)


# The fake host's GPUs (make-fixture.sh --gpus 2): index 0 has minor 1, index 1 minor 0
# (minors rotated against PCI order, as on real hosts).
GPU_MINOR = {0: 1, 1: 0}
DRIVER = "550.54.15"
# Everything a GPU container shows of the module's work, one "key value" line each.
GPU_PROBE = (
    "for n in /dev/nvidia*; do [ -c $n ] && echo \"node $n $(stat -c '%t:%T' $n)\"; done; "
    "echo \"smi $(/usr/bin/nvidia-smi 2>&1)\"; "
    "grep -E ' /usr/lib(64|/x86_64-linux-gnu)/libcuda.so.[0-9.]+ ' /proc/self/mountinfo | "
    "  awk '{print \"lib \" $5 \" \" $6}'; "
    "l=$(ls -d /usr/lib/x86_64-linux-gnu /usr/lib64 2>/dev/null | head -1); "
    "echo \"link $(readlink $l/libcuda.so.1)\"; "
    "[ -e /proc/driver/nvidia ] && echo 'proc nvidia' || echo 'proc none'; "
    "tr '\\0' '\\n' </proc/1/environ | grep '^NVIDIA_' | sed 's/^/env /'")


def gpu_view(c, cid):
    """What GPU_PROBE prints, as {key: [values]}."""
    view = {}
    for line in c.out(cid, "sh", "-c", GPU_PROBE).splitlines():
        key, _, rest = line.partition(" ")
        view.setdefault(key, []).append(rest)
    return view


def host_node(fixture, name):
    st = os.stat(os.path.join(fixture, "dev", name))
    return f"{os.major(st.st_rdev):x}:{os.minor(st.st_rdev):x}"


def check_gpu(c, k, a, what, cid, index, env):
    """Container CID started with the fake host's GPU INDEX (berth), or with nothing (runc)."""
    view = gpu_view(c, cid)
    nodes = sorted(view.get("node", []))
    if a.handler != "berth":
        k.check(f"{what}: runc injects nothing (no /dev/nvidia*, no nvidia-smi, no driver libraries)",
                not nodes and "lib" not in view and "(fake) driver" not in view.get("smi", [""])[0],
                view)
        return
    minor = GPU_MINOR[index]
    want = sorted(f"/dev/{n} {host_node(a.gpu_fixture, n)}"
                  for n in ("nvidiactl", f"nvidia{minor}", "nvidia-uvm", "nvidia-uvm-tools"))
    k.check(f"{what}: /dev/nvidia* of GPU {index} only, with the fake host's major:minor", nodes == want,
            f"{nodes} (want {want})")
    rules = cg_read(c.pid(cid), "devices", "devices.list") or ""
    other = GPU_MINOR[1 - index]
    k.check(f"{what}: device cgroup allows nvidia{minor}, not nvidia{other}",
            f"c 195:{minor} rw" in rules and f"c 195:{other} " not in rules,
            [r for r in rules.splitlines() if " 195:" in r or " 510:" in r])
    k.check(f"{what}: the fixture's nvidia-smi", view.get("smi") == [f"nvidia-smi (fake) driver {DRIVER}"],
            view.get("smi"))
    libs = view.get("lib", [])
    k.check(f"{what}: libcuda.so.{DRIVER} bound read-only, nosuid, nodev; SONAME link",
            len(libs) == 1 and libs[0].split()[0].endswith(f"/libcuda.so.{DRIVER}")
            and libs[0].split()[1].startswith("ro,nosuid,nodev")
            and view.get("link") == [f"libcuda.so.{DRIVER}"], f"{libs} {view.get('link')}")
    # This kernel has no NVIDIA driver: the container's procfs has no /proc/driver/nvidia,
    # so there is nothing to mask (docs/gpu.md); berth leaves the mask out and starts.
    # berth's log of the create (the shim's --log, in the task's bundle) says so.
    log = os.path.join(a.work, "state/io.containerd.runtime.v2.task/k8s.io", cid, "log.json")
    said = "/proc/driver/nvidia is not in the container's procfs" in \
        (open(log).read() if os.path.exists(log) else "")
    k.check(f"{what}: no /proc/driver/nvidia in this driverless kernel's procfs, mask left out (logged)",
            view.get("proc") == ["none"] and said, f"{view.get('proc')}, logged: {said}")
    k.check(f"{what}: NVIDIA_* in the init's environment", sorted(view.get("env", [])) == env,
            f"{view.get('env', [])} (want {env})")


@scenario
def gpu_cdi(c, k, a):
    """Devices without the NVIDIA container runtime: CDI annotations (cdi.k8s.io/*, passed
    through by containerd's pod_annotations/container_annotations) and a device plugin's
    NVIDIA_VISIBLE_DEVICES are applied by berth itself, from the fake GPU host of
    tests/fixtures/gpu (BERTH_CONFIG in containerd's environment reaches berth through the
    shim) and a vendor CDI spec in its spec directory. Every container is started and
    looked at from inside. containerd 1.6 applies no CDI and runc reads none of it: with
    runc nothing is injected."""
    if not a.gpu_fixture:
        print("SKIP gpu_cdi: no fake GPU host (make-fixture.sh failed or cc missing)", flush=True)
        return
    cfg = c.pod_config("gpu", annotations={"cdi.k8s.io/fpga": "vendor.com/fpga=f0"})
    pod = c.run_pod(cfg)
    cdi = c.run(pod, "cdi", ["sleep", "3600"])
    # The env edit reaches the init (pid 1) only: ExecSync processes get containerd's own
    # copy of the process spec, made before berth applied CDI.
    fpga = c.out(cdi, "sh", "-c", "stat -c '%F %t:%T' /dev/fpga0; "
                 "echo env=$(tr '\\0' '\\n' </proc/1/environ | sed -n 's/^FPGA_VISIBLE=//p'); "
                 "cat /opt/vendor/data")
    if a.handler == "berth":
        k.check("vendor CDI device from a pod annotation", fpga.splitlines() ==
                ["character special file f0:7", "env=f0", "vendor data"], fpga.splitlines())
    else:
        k.check("runc: the CDI annotation is not applied (containerd 1.6 and runc read none)",
                "/dev/fpga0" not in fpga and "vendor data" not in fpga, fpga.splitlines())
    # A device plugin's env (DEVICE_LIST_STRATEGY=envvar) and its CDI annotation
    # (cdi-annotations), in the pod that also has the vendor device: CDI devices of other
    # kinds keep the env's GPUs.
    env = c.run(pod, "gpu-env", ["sleep", "3600"], envs={"NVIDIA_VISIBLE_DEVICES": "0"})
    ann = c.run(pod, "gpu-cdi", ["sleep", "3600"], annotations={"cdi.k8s.io/gpu": "nvidia.com/gpu=1"})
    spec = c.status(ann, verbose=True)[1].get("runtimeSpec", {})
    notes = spec.get("annotations", {})
    k.check("config.json: the pod's and the container's cdi.k8s.io/* annotations",
            notes.get("cdi.k8s.io/gpu") == "nvidia.com/gpu=1"
            and notes.get("cdi.k8s.io/fpga") == "vendor.com/fpga=f0",
            {x: notes[x] for x in notes if x.startswith("cdi.")})
    # The module sets no NVIDIA_* variable of its own: the env container keeps the device
    # plugin's, the annotated one has none.
    check_gpu(c, k, a, "env NVIDIA_VISIBLE_DEVICES=0", env, 0, ["NVIDIA_VISIBLE_DEVICES=0"])
    check_gpu(c, k, a, "container annotation nvidia.com/gpu=1", ann, 1, [])
    # A pod-level annotation reaches every container of the pod, the sandbox (pause) too:
    # containerd copies pod_annotations into its config.json as well.
    pcfg = c.pod_config("gpupod", annotations={"cdi.k8s.io/gpu": "nvidia.com/gpu=1"})
    ppod = c.run_pod(pcfg)
    pc = c.run(ppod, "app", ["sleep", "3600"])
    check_gpu(c, k, a, "pod annotation nvidia.com/gpu=1", pc, 1, [])
    ps = c.rt.PodSandboxStatus(cri_lib.pb.PodSandboxStatusRequest(pod_sandbox_id=ppod, verbose=True))
    pause = json.loads(ps.info.get("info", "{}")).get("pid", 0)
    has = os.path.exists(f"/proc/{pause}/root/dev/nvidia{GPU_MINOR[1]}")
    k.check("pod annotation: the sandbox gets the GPU too" if a.handler == "berth"
            else "pod annotation: runc's sandbox gets nothing", pause and has == (a.handler == "berth"),
            f"pause pid {pause}, /dev/nvidia{GPU_MINOR[1]}: {has}")


def census(a):
    """What a pod may leave on the host: mounts, cgroups, runtime state, processes, netns."""
    mounts = [l.split()[4] for l in open("/proc/self/mountinfo")
              if a.work in l or "/run/containerd/" in l or "/netns/cni-" in l]
    cgroups = []
    for ctl in sorted(os.listdir("/sys/fs/cgroup")):
        top = f"/sys/fs/cgroup/{ctl}/kubepods"
        for root, dirs, _ in os.walk(top):
            # /kubepods/<qos> are the node's (kubelet keeps them); pods are below
            cgroups += [os.path.join(root, x) for x in dirs if root != top]
    # the systemd driver's: kubepods.slice/kubepods-<qos>.slice are the node's; pod slices and
    # scopes below, and their units
    top = "/sys/fs/cgroup/kubepods.slice"
    for root, dirs, _ in os.walk(top):
        cgroups += [os.path.join(root, x) for x in dirs if "-pod" in root + "/" + x]
    if a.systemd:
        cgroups += units("kubepods-*pod*", "cri-containerd-*")
    # runtime state: one directory per container (not berth's .seccomp-cache)
    d = os.path.join(a.runtime_root, "k8s.io")
    state = [x for x in os.listdir(d) if not x.startswith(".")] if os.path.isdir(d) else []
    procs = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                cmd = open(f"/proc/{p}/cmdline", "rb").read().replace(b"\0", b" ").decode()
                cg = open(f"/proc/{p}/cgroup").read()
            except OSError:
                continue
            if "containerd-shim" in cmd and a.socket in cmd or ":/kubepods" in cg:
                procs.append(f"{p} {cmd[:60]}")
    netns = [x for x in os.listdir("/var/run/netns") if x.startswith("cni-")] \
        if os.path.isdir("/var/run/netns") else []
    runc_tmp = [x for x in os.listdir("/tmp") if x.startswith("runc-process")]
    cache = "/var/lib/cni/results"          # libcni's cache, one file per attachment
    netns += [f"cache {x}" for x in os.listdir(cache)] if os.path.isdir(cache) else []
    return {"mounts": sorted(mounts), "cgroups": sorted(cgroups), "state": sorted(state),
            "processes": sorted(procs), "netns": sorted(netns), "exec-specs": runc_tmp}


@scenario
def churn(c, k, a):
    """N pods x 2 containers started, then removed: nothing may stay behind."""
    before = census(a)
    t0 = time.perf_counter()
    pods = []
    for i in range(a.churn):
        cfg = c.pod_config(f"churn{i}")
        pod = c.run_pod(cfg)
        pods.append(pod)
        for n in ("a", "b"):
            c.run(pod, n, ["sleep", "3600"])
    running = len(c.rt.ListContainers(cri_lib.pb.ListContainersRequest(
        filter=cri_lib.pb.ContainerFilter(state=cri_lib.pb.ContainerStateValue(
            state=cri_lib.pb.CONTAINER_RUNNING)))).containers)
    k.check(f"{a.churn} pods x 2 containers running", running >= 2 * a.churn, running)
    for pod in pods:
        c.remove_pod(pod)
    errors = c.cleanup()
    k.timings["churn_s"] = round(time.perf_counter() - t0, 1)
    k.check("churn: every pod removed", not errors, errors)
    after = census(a)
    for key in before:
        extra = sorted(set(after[key]) - set(before[key]))
        k.check(f"churn: no {key} left", not extra, extra[:5])


def main():
    ap = argparse.ArgumentParser()
    for opt in ("socket", "stubs", "handler", "log-root", "work", "runtime-root"):
        ap.add_argument("--" + opt, required=True)
    ap.add_argument("--image", default="localhost/busybox:offline")
    ap.add_argument("--probes", type=int, default=200)
    ap.add_argument("--churn", type=int, default=50)
    ap.add_argument("--gpu-fixture", default="", help="fake GPU host (make-fixture.sh)")
    ap.add_argument("--only", default="")
    ap.add_argument("--oom-repeat", type=int, default=10, help="oom_repeat: containers in a row")
    ap.add_argument("--oom-hog", choices=("init", "child"), default="", help="oom_repeat: the killed process")
    ap.add_argument("--systemd", action="store_true", help="containerd has SystemdCgroup = true")
    ap.add_argument("--host-network", action="store_true", help="every pod on the node's network")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    rt, im = cri_lib.connect(a.socket, a.stubs)
    pb = cri_lib.pb
    k = cri_lib.Checks()
    v = rt.Version(pb.VersionRequest(version="0.1.0"))
    print(f"runtime {v.runtime_name} {v.runtime_version} api {v.runtime_api_version}, "
          f"handler {a.handler}", flush=True)
    c = cri_lib.Cri(rt, im, a.handler, a.image, a.log_root)
    c.systemd, c.host_network = a.systemd, a.host_network
    only = set(filter(None, a.only.split(",")))
    for fn in SCENARIOS:
        if (only or fn.__name__ in EXPLICIT) and fn.__name__ not in only:
            continue
        k.prefix = fn.__name__ + ": "
        t0 = time.perf_counter()
        try:
            fn(c, k, a)
        except Exception as e:    # an RPC error or a broken step fails the scenario, not the run
            detail = e.details() if isinstance(e, cri_lib.grpc.RpcError) else repr(e)
            k.check("completed", False, f"{type(e).__name__}: {detail}")
        finally:
            for err in c.cleanup():
                k.check("cleanup", False, err)
        print(f"TIME {fn.__name__} {ms(t0) / 1000:.1f}s", flush=True)
    k.prefix = ""
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"handler": a.handler, "checks": k.results, "failed": k.failed,
                       "timings_ms": k.timings}, f, indent=1)
    print("timings_ms " + json.dumps(k.timings))
    print(("ALL OK" if not k.failed else f"{len(k.failed)} FAILED: " + "; ".join(k.failed)), flush=True)
    return 0 if not k.failed else 1


if __name__ == "__main__":
    sys.exit(main())
