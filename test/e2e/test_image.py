"""The image, built and run without a container runtime: its runtime root filesystem from the
Dockerfile's own install step (test/image/rootfs.sh: debootstrap + deploy/image/install-runtime.sh),
the stripped binary as its last layer, run by test/image/run-pod.sh as the rendered DaemonSet runs
it: the image's ENTRYPOINT and CMD as the image's non-root USER, a read-only root, the ConfigMaps'
config and hooks, hostPath-like directories, and in-cluster credentials (a real ServiceAccount
token from TokenRequest, bound to the derived ClusterRole) for the loopback test API server."""

import base64
import json
import os
import re
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

from conftest import REPO, _binary, parse_log_line, wait_until
from deploy_tools import DEPLOY, configmap_of_volume, find, grant, pod_spec, render, revoke, shipped_config

IMAGE = REPO / "test" / "image"


def dockerfile_json(instruction):
    """The exec-form argument list of the Dockerfile's last `instruction` (ENTRYPOINT, CMD)."""
    lines = [line for line in (REPO / "Dockerfile").read_text().splitlines() if line.startswith(instruction + " ")]
    return json.loads(lines[-1][len(instruction) + 1:])


def dockerfile_user():
    lines = [line for line in (REPO / "Dockerfile").read_text().splitlines() if line.startswith("USER ")]
    return lines[-1].split()[1]


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    """(rootfs, stripped binary): the image's two layers."""
    if os.geteuid() != 0:
        pytest.fail("the image test needs root (debootstrap, mount and PID namespaces, chroot)")
    built = subprocess.run([str(IMAGE / "rootfs.sh")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    rootfs = Path(built.stdout.splitlines()[-1])
    binary = tmp_path_factory.mktemp("image") / "nodehook"
    source = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    subprocess.run(["strip", "--strip-unneeded", "-o", str(binary), str(source)], check=True)
    return rootfs, binary


class Pod:
    """The pod of an overlay's rendered DaemonSet on one node, run from the image."""

    def __init__(self, directory, image, cluster, node, namespace, overlay):
        self.dir = directory
        self.rootfs, self.binary = image
        self.objects = render(DEPLOY / "overlays" / overlay)
        self.spec = pod_spec(self.objects)
        for volume in ("config", "hooks", "serviceaccount", "state", "widgets"):
            (directory / volume).mkdir()
        (directory / "config" / "config.json").write_text(shipped_config(self.objects))
        for name, text in configmap_of_volume(self.objects, "hooks")["data"].items():
            (directory / "hooks" / name).write_text(text)
            (directory / "hooks" / name).chmod(0o555)  # defaultMode
        ca = re.search(r"certificate-authority-data:\s*(\S+)", open(cluster.kubeconfig).read()).group(1)
        sa = directory / "serviceaccount"
        (sa / "ca.crt").write_bytes(base64.b64decode(ca))
        (sa / "namespace").write_text(namespace)  # the ServiceAccount's
        self.host, self.port = re.match(r"https://([^:]+):(\d+)", cluster.kube.server).groups()
        self.node = node
        self.proc = None

    def run(self, user, command, **popen):
        return subprocess.Popen([str(IMAGE / "run-pod.sh"), str(self.rootfs), str(self.binary), str(self.dir), user,
                                 *command], **popen)

    def init_container(self):
        """Runs the DaemonSet's init container (as its user, root) to completion."""
        init = self.spec["initContainers"][0]
        proc = self.run(f"{init['securityContext']['runAsUser']}:0", init["command"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        out, _ = proc.communicate(timeout=60)
        assert proc.returncode == 0, out

    def user(self):
        """The pod's runAsUser:runAsGroup, which overrides the image's USER, else that USER."""
        ctx = self.spec.get("securityContext", {})
        if "runAsUser" in ctx:
            return f"{ctx['runAsUser']}:{ctx.get('runAsGroup', 0)}"
        return dockerfile_user()

    def start(self, extra_env=()):
        container = self.spec["containers"][0]
        env = [*extra_env, f"NODE_NAME={self.node}", f"KUBERNETES_SERVICE_HOST={self.host}",
               f"KUBERNETES_SERVICE_PORT={self.port}",
               "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
               # A free port: other agents on this machine may hold 8090.
               "NODEHOOK_HEALTH_ADDRESS=127.0.0.1:0"]
        command = ["env", "-i", *env, *dockerfile_json("ENTRYPOINT"), *container["args"]]
        self.log_path = self.dir / "agent.log"
        self.proc = self.run(self.user(), command, stdout=subprocess.DEVNULL,
                             stderr=open(self.log_path, "wb"))

    def log_events(self, event=None):
        lines = self.log_path.read_text(errors="replace").splitlines()
        parsed = [parse_log_line(line) for line in lines if " level=" in line]
        return [p for p in parsed if event is None or p.get("event") == event]

    def init_pid(self):
        """The PID, seen from here, of the pod's PID 1 (tini): run-pod.sh's forked child."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        assert len(children) == 1, children
        return int(children[0])


def run_the_pod(cluster, widgets, image, tmp_path, overlay, written_in, owner, extra_env=()):
    """Runs `overlay`'s pod from the image: it must list, run its hook for a new widget (the hook
    writes `written_in`/NAMESPACE_NAME.json as `owner`), remove the file on delete, and exit 0 on
    SIGTERM. The pod's credentials: a TokenRequest token of a ServiceAccount bound to the
    overlay's own ClusterRole."""
    kube = cluster.kube
    name = f"nodehook-image-{overlay}-{os.getpid()}"
    pod = Pod(tmp_path, image, cluster, node=f"image-node-{overlay}", namespace=widgets.namespace,
              overlay=overlay)
    token = grant(kube, widgets.namespace, name, find(pod.objects, "ClusterRole"))
    (tmp_path / "serviceaccount" / "token").write_text(token)  # the projected token's file
    try:
        pod.init_container()
        assert (tmp_path / "state").stat().st_uid == 65532 and (tmp_path / "widgets").stat().st_uid == 65532
        assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700

        pod.start(extra_env)
        wait_until(lambda: pod.log_events("listed") or pod.proc.poll() is not None,
                   f"the agent in the image to list the widgets (log: {pod.log_path})")
        assert pod.proc.poll() is None, pod.log_path.read_text()
        widgets.create(f"from-{overlay}", {"size": 1})
        written = written_in / f"{widgets.namespace}_from-{overlay}.json"
        wait_until(written.exists, f"the hook to write {written} (log: {pod.log_path})")
        assert json.loads(written.read_text())["spec"] == {"size": 1}
        assert written.stat().st_uid == owner
        widgets.delete(f"from-{overlay}")
        wait_until(lambda: not written.exists(), f"the delete hook to remove {written} (log: {pod.log_path})")

        # Nothing in the image is writable, not even for root in the host overlay.
        probe = pod.run(pod.user(), ["/bin/sh", "-c", "touch /usr/local/bin/nodehook /probe 2>&1; echo $?"],
                        stdout=subprocess.PIPE, text=True)
        out, _ = probe.communicate(timeout=60)
        assert "Read-only file system" in out and out.strip().endswith("1"), out

        os.kill(pod.init_pid(), signal.SIGTERM)
        assert pod.proc.wait(timeout=60) == 0, pod.log_path.read_text()
        assert pod.log_events("agent stopped")
        assert not [e for e in pod.log_events() if e.get("level") == "error"], pod.log_path.read_text()
    finally:
        if pod.proc and pod.proc.poll() is None:
            pod.proc.kill()
        revoke(kube, name)


def test_the_restricted_image_lists_writes_a_host_path_as_its_user_and_stops_cleanly(cluster, widgets, image,
                                                                                    tmp_path):
    run_the_pod(cluster, widgets, image, tmp_path, "restricted", written_in=tmp_path / "widgets", owner=65532)


def test_the_host_image_runs_its_hook_in_the_namespaces_of_pid_1_and_stops_cleanly(cluster, widgets, image,
                                                                                   tmp_path):
    # PID 1 here is the pod's own tini, whose mount namespace has this machine's root, not the
    # image's: so a file the hook writes through nsenter lands outside the read-only image, as it
    # would on a real node's host filesystem. HOST_WIDGET_DIR points it into this test's directory.
    host_dir = tmp_path / "host-run"
    run_the_pod(cluster, widgets, image, tmp_path, "host", written_in=host_dir, owner=0,
                extra_env=[f"HOST_WIDGET_DIR={host_dir}"])


def test_the_runtime_stage_installs_only_the_shared_package_list_and_bakes_in_no_hooks():
    dockerfile = (REPO / "Dockerfile").read_text()
    runtime = dockerfile[dockerfile.rindex("\nFROM "):]
    assert "install-runtime.sh" in runtime and "apt-get install" not in runtime
    assert "config/hooks" not in runtime and "/etc/nodehook/hooks" not in runtime
    packages = [line for line in (REPO / "deploy/image/runtime-packages.txt").read_text().splitlines()
                if line and not line.startswith("#")]
    assert "tini" in packages
    assert "tzdata" in packages  # rollout windows read /usr/share/zoneinfo
    for test_only in ("catch2", "python3", "sqlite3", "build-essential"):
        assert test_only not in packages
    assert dockerfile_json("ENTRYPOINT")[:2] == ["/usr/bin/tini", "--"]
    assert dockerfile_user().split(":")[0] == "65532"
    assert re.search(r"^ARG BASE=", dockerfile, re.M) and "FROM ${BASE}" in runtime
