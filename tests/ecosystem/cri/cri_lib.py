"""A small kubelet-like CRI (runtime.v1) client: pod and container configs the way kubelet
builds them, ExecSync, waits, checks, and the cleanup kubelet would do (pod cgroups).

Needs stubs generated from api.proto (gen-stubs.sh) and Debian's python3-grpcio; run with
/usr/bin/python3. Used by scenario.py; reusable on its own (see README).
"""
import json
import os
import subprocess
import sys
import time
import uuid

pb = None      # api_pb2, set by connect()
grpc = None


def connect(socket, stubs):
    """Import the stubs from STUBS and open the CRI services on SOCKET."""
    global pb, grpc
    sys.path.insert(0, stubs)
    import grpc as grpc_mod
    import api_pb2
    import api_pb2_grpc
    pb, grpc = api_pb2, grpc_mod
    ch = grpc.insecure_channel("unix://" + socket)
    return api_pb2_grpc.RuntimeServiceStub(ch), api_pb2_grpc.ImageServiceStub(ch)


class Checks:
    """PASS/FAIL lines, one per assertion, and the failed names."""

    def __init__(self):
        self.results, self.failed, self.timings = {}, [], {}
        self.prefix = ""

    def check(self, name, ok, detail=""):
        name = self.prefix + name
        self.results[name] = {"ok": bool(ok), "detail": str(detail)}
        print(("PASS " if ok else "FAIL ") + name + (": " + str(detail) if detail != "" else ""),
              flush=True)
        if not ok:
            self.failed.append(name)
        return bool(ok)


class Cri:
    """One handler's view of the CRI: creates pods and containers, remembers them, and
    removes them (and their kubelet-owned pod cgroups) in cleanup()."""

    def __init__(self, rt, im, handler, image, log_root):
        self.rt, self.im, self.handler, self.log_root = rt, im, handler, log_root
        st = im.ImageStatus(pb.ImageStatusRequest(image=pb.ImageSpec(image=image)))
        if not st.image.id:
            raise RuntimeError(f"image {image} not found in namespace k8s.io")
        self.image, self.image_id = image, st.image.id
        self.pods = {}          # pod id -> PodSandboxConfig
        self.parents = []       # cgroup parents created for our pods (kubelet's job)
        # containerd's SystemdCgroup = true: kubelet's systemd parents (slices); with
        # host_network every pod is on the node's network (no CNI needed)
        self.systemd, self.host_network = False, False

    # ---- configs ----
    def pod_config(self, name, host_network=False, pid=None, cgroup_parent=None,
                   sysctls=None, privileged=False, qos="besteffort", annotations=None):
        uid = str(uuid.uuid4())
        pod_name = f"{name}-{uid[:8]}"
        host_network = host_network or self.host_network
        if cgroup_parent is None and self.systemd:
            # kubelet's systemd names: '-' nests slices, so the uid's dashes become '_'
            cgroup_parent = f"kubepods-{qos}-pod{uid.replace('-', '_')}.slice"
        elif cgroup_parent is None:
            cgroup_parent = f"/kubepods/{qos}/pod{uid}"
        log_dir = os.path.join(self.log_root, f"default_{pod_name}_{uid}")
        os.makedirs(log_dir, exist_ok=True)      # kubelet creates the pod log dir itself
        ns = pb.NamespaceOption(network=pb.NODE if host_network else pb.POD,
                                pid=pid if pid is not None else pb.CONTAINER, ipc=pb.POD)
        cfg = pb.PodSandboxConfig(
            metadata=pb.PodSandboxMetadata(name=pod_name, uid=uid, namespace="default"),
            # kubelet leaves the hostname empty for hostNetwork pods (host UTS namespace)
            hostname="" if host_network else pod_name,
            log_directory=log_dir,
            labels={"io.kubernetes.pod.name": pod_name, "io.kubernetes.pod.uid": uid},
            annotations=annotations or {},
            linux=pb.LinuxPodSandboxConfig(
                cgroup_parent=cgroup_parent, sysctls=sysctls or {},
                security_context=pb.LinuxSandboxSecurityContext(
                    namespace_options=ns, privileged=privileged,
                    seccomp=pb.SecurityProfile(profile_type=pb.SecurityProfile.RuntimeDefault))))
        return cfg

    def container_config(self, pod_cfg, name, cmd, attempt=0, resources=None, sc=None,
                         mounts=None, envs=None, annotations=None):
        """SC: keyword arguments of LinuxContainerSecurityContext (namespace options and a
        RuntimeDefault seccomp profile are filled in as kubelet does)."""
        sc = dict(sc or {})
        sc.setdefault("namespace_options", pod_cfg.linux.security_context.namespace_options)
        sc.setdefault("seccomp", pb.SecurityProfile(profile_type=pb.SecurityProfile.RuntimeDefault))
        return pb.ContainerConfig(
            metadata=pb.ContainerMetadata(name=name, attempt=attempt),
            image=pb.ImageSpec(image=self.image_id, user_specified_image=self.image),
            command=cmd, log_path=f"{name}/{attempt}.log",
            labels={"io.kubernetes.container.name": name},
            annotations=annotations or {},
            # KeyValue.value is bytes in cri-api >= v0.34 (string before; the same on the wire)
            envs=[pb.KeyValue(key=k, value=v.encode()) for k, v in (envs or {}).items()],
            mounts=mounts or [],
            linux=pb.LinuxContainerConfig(
                resources=resources or pb.LinuxContainerResources(cpu_shares=2, cpu_period=100000),
                security_context=pb.LinuxContainerSecurityContext(**sc)))

    # ---- lifecycle ----
    def run_pod(self, cfg):
        pod_id = self.rt.RunPodSandbox(pb.RunPodSandboxRequest(
            config=cfg, runtime_handler=self.handler)).pod_sandbox_id
        self.pods[pod_id] = cfg
        if cfg.linux.cgroup_parent:
            self.parents.append(cfg.linux.cgroup_parent)
        return pod_id

    def create(self, pod_id, ccfg):
        # sandbox_config is required: containerd 1.6.20 panics (the daemon exits) without
        # it, and takes log_directory and cgroup_parent from this copy.
        return self.rt.CreateContainer(pb.CreateContainerRequest(
            pod_sandbox_id=pod_id, config=ccfg, sandbox_config=self.pods[pod_id])).container_id

    def start(self, cid):
        self.rt.StartContainer(pb.StartContainerRequest(container_id=cid))

    def run(self, pod_id, name, cmd, **kw):
        cid = self.create(pod_id, self.container_config(self.pods[pod_id], name, cmd, **kw))
        self.start(cid)
        return cid

    def exec(self, cid, cmd, timeout=10):
        r = self.rt.ExecSync(pb.ExecSyncRequest(container_id=cid, cmd=cmd, timeout=timeout))
        return r.exit_code, r.stdout.decode(), r.stderr.decode()

    def out(self, cid, *cmd):
        """stdout of CMD, stripped ('' on a non-zero exit)."""
        code, out, _ = self.exec(cid, list(cmd))
        return out.strip() if code == 0 else ""

    def status(self, cid, verbose=False):
        r = self.rt.ContainerStatus(pb.ContainerStatusRequest(container_id=cid, verbose=verbose))
        return r.status, json.loads(r.info.get("info", "{}")) if verbose else {}

    def wait_exited(self, cid, timeout=20):
        end = time.monotonic() + timeout
        while True:
            st, _ = self.status(cid)
            if st.state == pb.CONTAINER_EXITED or time.monotonic() > end:
                return st
            time.sleep(0.1)

    def pid(self, cid):
        return self.status(cid, verbose=True)[1].get("pid", 0)

    def remove_pod(self, pod_id):
        """kubelet's order: stop and remove the containers, then the sandbox."""
        cs = self.rt.ListContainers(pb.ListContainersRequest(
            filter=pb.ContainerFilter(pod_sandbox_id=pod_id))).containers
        for c in cs:
            self.rt.StopContainer(pb.StopContainerRequest(container_id=c.id, timeout=0))
            self.rt.RemoveContainer(pb.RemoveContainerRequest(container_id=c.id))
        self.rt.StopPodSandbox(pb.StopPodSandboxRequest(pod_sandbox_id=pod_id))
        self.rt.RemovePodSandbox(pb.RemovePodSandboxRequest(pod_sandbox_id=pod_id))
        self.pods.pop(pod_id, None)

    def cleanup(self):
        errors = []
        for pod_id in list(self.pods):
            try:
                self.remove_pod(pod_id)
            except grpc.RpcError as e:
                errors.append(f"{pod_id[:12]}: {e.details()}")
                self.pods.pop(pod_id, None)
        # kubelet owns the pod-level cgroups and removes them once the pod is gone
        for parent in self.parents:
            if parent.endswith(".slice"):
                stop_unit(parent)
            else:
                remove_cgroup_dirs(parent)
        self.parents = []
        return errors


def remove_cgroup_dirs(parent):
    """rmdir PARENT in every v1 hierarchy and in cgroup2 (only empty directories go)."""
    roots = [f"/sys/fs/cgroup/{c}" for c in sorted(os.listdir("/sys/fs/cgroup"))]
    roots.append("/sys/fs/cgroup")
    for root in roots:
        try:
            os.rmdir(root + parent)
        except OSError:
            pass


def stop_unit(name):
    """systemctl stop NAME: what kubelet does with a removed pod's slice (systemd driver)."""
    subprocess.run(["systemctl", "stop", name], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)


def unit_prop(name, prop):
    """systemctl show -P PROP NAME ('' when systemd does not answer)."""
    r = subprocess.run(["systemctl", "show", "-P", prop, name], capture_output=True,
                       text=True, check=False)
    return r.stdout.strip()


def units(*patterns):
    """Names of the loaded units (any state) matching PATTERNS."""
    r = subprocess.run(["systemctl", "list-units", "--all", "--plain", "--no-legend", *patterns],
                       capture_output=True, text=True, check=False)
    return sorted(l.split()[0] for l in r.stdout.splitlines() if l.strip())


def cgroup_of(pid, controller):
    """The cgroup path of PID in the v1 hierarchy holding CONTROLLER ('' = cgroup2)."""
    with open(f"/proc/{pid}/cgroup") as f:
        for line in f:
            num, ctrls, path = line.rstrip("\n").split(":", 2)
            if (controller and controller in ctrls.split(",")) or \
                    (not controller and num == "0"):
                return path
    return None


def status_field(text, key):
    """The value of KEY in a /proc/<pid>/status text."""
    for line in text.splitlines():
        if line.startswith(key + ":"):
            return line.split(":", 1)[1].strip()
    return None
