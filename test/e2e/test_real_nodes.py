"""The DaemonSet on real kubelets: the image built from the Dockerfile (test/image/build-image.sh),
a cluster of two real nodes (test/cluster/real-node.sh: kubelet + containerd + runc each, in
namespaces of their own), and the shipped overlays plus test/cluster/real-node-component applied
with `kubectl apply -k`, as users install. One cluster for the whole module; the tests run in
file order and each leaves the cluster as the next one expects (the install stays). First come
the README's install block and its Uninstall block as written (no component: the pods on the
pod network), which leave nothing behind.

What the kubelet does here is real: runc enforces the securityContext, the kubelet projects the
ConfigMaps, the service account token and the emptyDirs, runs the probes and restarts crashed
containers, the DaemonSet controller rolls out and Pod Security admission judges the pods."""

import base64
import copy
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, _binary, parse_log_line, wait_until
from deploy_tools import DEPLOY, kubectl, kubectl_binary, nodehook_rbac_documents
from kube import ApiError, Kube
from test_helm_chart import CHART, helm
from test_rbac import refused_lines

SLOW_HOOK = Path(__file__).resolve().parent / "hooks" / "slow-node-file-hook"
NODE_OUTPUT_HOOK = Path(__file__).resolve().parent / "hooks" / "node-output-hook"

NODES = 2
NAMESPACE = "nodehook"
COMPONENT = REPO / "test" / "cluster" / "real-node-component"
WIDGET_NS = "real-nodes"
PROGRAMS = ("containerd", "containerd-shim-runc-v2", "runc", "ctr", "buildah", "debootstrap", "iptables", "cc")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="real nodes need root (namespaces, mounts, cgroups)")


def _missing_programs():
    return [p for p in PROGRAMS if shutil.which(p) is None] + \
        [p for p in ("/usr/lib/cni/bridge",) if not Path(p).exists()]


class RealCluster:
    def __init__(self, directory):
        missing = _missing_programs()
        if missing:
            pytest.skip(f"not installed: {', '.join(missing)} (test/install-deps.sh installs them)")
        self.dir = directory
        built = subprocess.run([str(REPO / "test" / "image" / "build-image.sh")], capture_output=True, text=True)
        assert built.returncode == 0, built.stderr
        fields = dict(f.split("=", 1) for f in built.stdout.splitlines()[-1].split())
        self.image, archive = fields["image"], fields["archive"]
        # The Go binaries first (cached), so the cluster's own start is what the deadline below covers.
        for target in ("testcluster", "nodes", "kubectl"):
            subprocess.run([str(REPO / "test" / "cluster" / "build.sh"), target], check=True,
                           stdout=subprocess.DEVNULL)
        self.log = open(directory / "real-node.log", "wb")
        self.proc = subprocess.Popen([str(REPO / "test" / "cluster" / "real-node.sh"), "--dir", str(directory),
                                      "--nodes", str(NODES), "--image", archive],
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()  # real-node.sh gives up by itself after 180 s
        if not line.startswith("ready kubeconfig="):
            self.stop()
            pytest.fail(f"real-node.sh did not get ready; see {directory / 'real-node.log'}")
        self.kubeconfig = line.strip().split("=", 1)[1]
        self.kube = Kube(self.kubeconfig)
        self.agents_seen = set()  # PIDs of agents found in the nodes, for the cleanup check
        # nhrnK: the bridge, and the prefix of the nodes' network namespaces and cgroups.
        self.prefix = re.search(r"^cgroupRoot: /(nhrn\d+)-node-1$", (self.node_dir("node-1") / "kubelet.yaml").read_text(),
                                re.M).group(1)

    def node_dir(self, node):
        return self.dir / "nodes" / node

    def host_path(self, node, path):
        """Where the node's `path` (under /var/lib or /run, node-private) is on this machine."""
        top, rest = re.match(r"/(var/lib|run)/(.*)", path).groups()
        return self.node_dir(node) / top.replace("/", "-") / rest

    def node_pid(self, node):
        return int((self.node_dir(node) / "pid").read_text())

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=120)


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    c = RealCluster(tmp_path_factory.mktemp("real-nodes"))
    yield c
    c.stop()
    assert c.proc.returncode == 0, f"real-node.sh exited {c.proc.returncode}; see {c.dir / 'real-node.log'}"
    # It leaves nothing behind: no agent of its nodes, namespace or cgroup. (Other tests' agents
    # may run on this machine meanwhile: only the ones seen in the nodes count.)
    assert not set(agent_processes()) & c.agents_seen, "agent processes outlived the cluster"
    leftovers = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"{c.prefix}-n" not in leftovers, leftovers
    assert not Path(f"/sys/class/net/{c.prefix}").exists(), "bridge left behind"
    assert not list(Path("/sys/fs/cgroup").glob(f"*/{c.prefix}-node-*")), "cgroups left behind"


_installs = itertools.count(1)


def install(real, tmp_path, overlay, namespace=None, config=None, hook=None, patch=None):
    """`kubectl apply -k` of deploy/overlays/OVERLAY plus the real-node component, as a user's own
    overlay would: optionally into another namespace, with another agent config (and the
    ClusterRole `nodehook rbac` derives from it), another program as the widget hook, or a
    patch of the DaemonSet."""
    k = tmp_path / f"install-{next(_installs)}"
    k.mkdir()
    text = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
            # kustomize takes only relative paths
            "resources": [os.path.relpath(DEPLOY / "overlays" / overlay, k)],
            "components": [os.path.relpath(COMPONENT, k)]}
    if namespace:
        text["namespace"] = namespace
    if config:
        (k / "config.json").write_text(json.dumps(config, indent=2))
        documents = nodehook_rbac_documents(json.dumps(config), tmp_path)
        (k / "clusterrole.yaml").write_text(json.dumps(documents[0]))
        text["configMapGenerator"] = [{"name": "nodehook-config", "behavior": "replace", "files": ["config.json"]}]
        text["patches"] = [{"path": "clusterrole.yaml"}]
        # The Roles the base does not ship (a rollout's Leases), bound to the agents' account.
        extra = [d for d in documents[1:] if d["kind"] == "Role"
                 and d["metadata"]["name"] not in ("nodehook-lease", "nodehook-agent-pods")]
        for d in extra:
            name, ns = d["metadata"]["name"], namespace or NAMESPACE
            d["metadata"]["namespace"] = ns
            (k / f"{name}.yaml").write_text(json.dumps(d) + "\n---\n" + json.dumps({
                "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": name, "namespace": ns},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": [{"kind": "ServiceAccount", "name": "nodehook", "namespace": namespace or NAMESPACE}]}))
            text["resources"].append(f"{name}.yaml")
    if patch:
        (k / "daemonset-patch.yaml").write_text(json.dumps(patch))
        text["patches"] = text.get("patches", []) + [{"path": "daemonset-patch.yaml"}]
    if hook:
        shutil.copy(hook, k / "widget-hook")
        text["configMapGenerator"] = text.get("configMapGenerator", []) + [
            {"name": "nodehook-hooks", "behavior": "replace", "files": ["widget-hook"]}]
    (k / "kustomization.yaml").write_text(json.dumps(text))
    kubectl("apply", "-k", str(k), kubeconfig=real.kubeconfig)
    return k


def pods(real, namespace=NAMESPACE):
    return real.kube.request("GET", f"/api/v1/namespaces/{namespace}/pods?labelSelector=app.kubernetes.io/name%3Dnodehook")["items"]


def ready(pod):
    return pod["status"].get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def wait_rolled_out(real, timeout=180, namespace=NAMESPACE, daemonset="nodehook"):
    """Every node runs one Ready pod of the DaemonSet's current template, and no other; returns them."""
    def done():
        ds = real.kube.request("GET", f"/apis/apps/v1/namespaces/{namespace}/daemonsets/{daemonset}")
        s = ds["status"]
        settled = (s.get("observedGeneration") == ds["metadata"]["generation"]
                   and s.get("updatedNumberScheduled") == NODES and s.get("numberReady") == NODES
                   and s.get("numberAvailable") == NODES)
        current = pods(real, namespace)
        return settled and len(current) == NODES and all(ready(p) for p in current) and current
    try:
        return wait_until(done, "the DaemonSet's pods Ready on every node", timeout=timeout)
    except pytest.fail.Exception as e:
        names = [p["metadata"]["name"] for p in pods(real, namespace)]
        tails = [f"{name}: " + kubectl("-n", namespace, "logs", name, "-c", "nodehook", "--tail=15",
                                       kubeconfig=real.kubeconfig, check=False).stdout for name in names]
        pytest.fail("\n".join([str(e), namespace_story(real, namespace)] + tails))


def watch_rollout(real, before, timeout=180, namespace=NAMESPACE):
    """Polls the pods until none of `before` is left and every node's new pod is Ready; returns the
    fewest Ready pods seen meanwhile."""
    deadline = time.monotonic() + timeout
    fewest_ready = NODES
    while time.monotonic() < deadline:
        current = pods(real, namespace)
        ready_now = sum(1 for p in current if ready(p))
        fewest_ready = min(fewest_ready, ready_now)
        if not {p["metadata"]["name"] for p in current} & before and ready_now == NODES:
            return fewest_ready
        time.sleep(0.05)
    pytest.fail(f"no rollout within {timeout} s")


def agent_processes():
    """PIDs of running agents (`nodehook run`) on this machine, in any node."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv[0].endswith(b"/nodehook") and argv[1:2] == [b"run"]:
                found.append(int(proc.name))
    return found


def agent_on(real, node):
    """The PID of the agent process in `node`'s network namespace, or None."""
    node_net = os.stat(f"/proc/{real.node_pid(node)}/ns/net").st_ino
    for pid in agent_processes():
        try:
            if os.stat(f"/proc/{pid}/ns/net").st_ino == node_net:
                real.agents_seen.add(pid)
                return pid
        except OSError:
            pass
    return None


def environ(pid):
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


def pod_log(real, pod, previous=False, namespace=NAMESPACE):
    return kubectl("-n", namespace, "logs", pod, "-c", "nodehook", *(["--previous"] if previous else []),
                   kubeconfig=real.kubeconfig)


def hook_runs(log_text, object_name=None):
    """(handler, object) of each `hook succeeded` line of an agent log."""
    runs = []
    for line in log_text.splitlines():
        fields = parse_log_line(line)
        if fields.get("event") == "hook succeeded" and object_name in (None, fields.get("object")):
            runs.append((fields.get("handler"), fields.get("object")))
    return runs


def create_widget(real, name, size, finalizers=()):
    real.kube.request("POST", f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets",
                      {"apiVersion": "example.com/v1", "kind": "Widget",
                       "metadata": {"name": name, "finalizers": list(finalizers)}, "spec": {"size": size}})


def widget_gone(real, name):
    try:
        real.kube.request("GET", f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets/{name}")
        return False
    except ApiError as e:
        if e.status != 404:
            raise
        return True


def widget_file(real, node, name):
    return real.host_path(node, f"/var/lib/nodehook-widgets/{WIDGET_NS}_{name}.json")


# --- The README's install block, run as written (issue 25, item 6). First in the file: they
# need a cluster without the CRD, and leave none of what they install behind (the namespaces,
# the CRD and the widgets deleted, the nodes' host directories of the DaemonSet emptied).

README = REPO / "README.md"
ROLLOUT_SECONDS = 180  # what `rollout status` gets before the case fails
LOGS_SECONDS = 60  # a user re-runs the `logs | grep` line until the hooks had their turn


def readme_steps(heading):
    """The commands of the first ```sh block under the README's `## heading`, in order, as
    (comment, command): the comment lines just above the command, joined, and the command with
    its continuation lines."""
    text = README.read_text()
    section = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.M | re.S)
    assert section, f"README.md has no '## {heading}' section"
    block = re.search(r"^```sh\n(.*?)^```", section.group(1), re.M | re.S)
    assert block, f"README.md's '## {heading}' section has no ```sh block"
    steps, comment, command = [], [], None
    for line in block.group(1).splitlines():
        if command is not None:
            command += "\n" + line
        elif line.startswith("#"):
            comment.append(line.lstrip("#").strip())
        elif line.strip():
            command = line
        if command is not None and not command.endswith("\\"):
            steps.append((" ".join(comment), command))
            comment, command = [], None
    return steps


def manifest_kinds(path):
    return {d["kind"] for d in yaml.safe_load_all(path.read_text()) if d}


class ReadmeInstall:
    """The README's install block run as a user runs it on this cluster, in a checkout of their
    own: a copy of deploy/ and config/ (the kustomize path edits a kustomization there, never in
    the repository), with `kubectl`, `helm` and `kubectl-nodehook` on PATH being the test's
    binaries and KUBECONFIG the cluster's. The substitutions are the ones a user makes: the
    `docker build ... && docker push` line is not run, because the nodes already have the image
    built from the Dockerfile (test/image/build-image.sh, imported into every node's containerd);
    the README's image (registry.example.com/nodehook:0.1.0) becomes that image's name."""

    def __init__(self, real, tmp_path):
        self.real = real
        self.checkout = tmp_path / "checkout"
        for d in ("deploy", "config"):
            shutil.copytree(REPO / d, self.checkout / d)
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir()
        (bin_dir / "kubectl").symlink_to(kubectl_binary())
        (bin_dir / "kubectl-nodehook").symlink_to(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook"))
        helm_binary = Path(os.environ.get("NODEHOOK_HELM", REPO / "build" / "cache" / "helm"))
        if helm_binary.exists():
            (bin_dir / "helm").symlink_to(helm_binary)
        self.has_helm = helm_binary.exists()
        self.env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", KUBECONFIG=str(real.kubeconfig),
                        **{f"HELM_{k}_HOME": str(tmp_path / f"helm-{k.lower()}") for k in ("CACHE", "CONFIG", "DATA")})
        self.seconds = {}  # step -> seconds it took

        self.steps = []  # (kind, comment, command)
        for comment, command in readme_steps("Install on a cluster"):
            self.steps.append((self.kind(command), comment, command))
        kinds = [k for k, _, _ in self.steps]
        for kind in ("build", "crd", "helm", "kustomize", "rollout", "objects", "logs"):
            assert kinds.count(kind) == 1, f"README install block: expected one {kind} step, found {kinds}"
        build = next(c for k, _, c in self.steps if k == "build")
        self.readme_image = re.match(r"docker build -t (\S+) ", build).group(1)
        self.readme_repository, self.readme_tag = self.readme_image.rsplit(":", 1)
        self.repository, self.tag = real.image.rsplit(":", 1)
        self.objects = [f"{d['metadata']['namespace']}/{d['metadata']['name']}"
                        for d in yaml.safe_load_all(self.file_of("objects").read_text())
                        if d and d["kind"] == "Widget"]
        assert self.objects, "the README's objects step applies no Widget"

    def kind(self, command):
        """What a README step does, for the cases that reorder or skip some."""
        if command.startswith("docker "):
            return "build"
        if command.startswith("helm install"):
            return "helm"
        if re.match(r"kubectl apply -k ", command):
            return "kustomize"
        if " rollout status " in command:
            return "rollout"
        if " logs " in command and "hook succeeded" in command:
            return "logs"
        applied = re.match(r"kubectl apply -f (\S+)$", command.split("#")[0].strip())
        if applied:
            return "crd" if "CustomResourceDefinition" in manifest_kinds(self.checkout / applied.group(1)) else "objects"
        return "other"

    def command(self, kind):
        return next(c for k, _, c in self.steps if k == kind)

    def file_of(self, kind):
        return self.checkout / re.match(r"kubectl apply -f (\S+)", self.command(kind)).group(1)

    def substituted(self, command):
        """The command with the image the nodes have instead of the README's."""
        out = command.replace(self.readme_image, self.real.image) \
            .replace(f"image.tag={self.readme_tag}", f"image.tag={self.tag}") \
            .replace(self.readme_repository, self.repository)
        if command.startswith("helm install"):
            assert f"image.repository={self.repository}" in out and f"image.tag={self.tag}" in out, \
                f"the README's helm line no longer names the image as --set image.repository/tag: {command}"
        return out

    def start(self, command):
        return subprocess.Popen(["bash", "-o", "pipefail", "-c", self.substituted(command)], cwd=self.checkout,
                                env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def run(self, command, timeout=120, check=True):
        t0 = time.monotonic()
        try:
            out = subprocess.run(["bash", "-o", "pipefail", "-c", self.substituted(command)], cwd=self.checkout,
                                 env=self.env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.fail(f"`{command}` did not return within {timeout} s; {namespace_story(self.real, NAMESPACE)}")
        self.seconds[command.split("\n")[0][:60]] = round(time.monotonic() - t0, 1)
        if check:
            assert out.returncode == 0, f"`{command}` exited {out.returncode}: {out.stdout}{out.stderr}"
        return out

    def name_the_image_in_the_overlay(self, comment):
        """What the README's comment above `kubectl apply -k` says to do: its `images:` entry (with
        the image the nodes have) added to the kustomization.yaml it names, in the checkout."""
        entry = re.search(r"`(images: .*?)`", comment)
        target = re.search(r"(\S+/kustomization\.yaml)", comment)
        assert entry and target, f"the README's kustomize comment names no `images:` entry or file: {comment}"
        images = yaml.safe_load(entry.group(1))["images"]
        for image in images:
            assert (image["newName"], str(image["newTag"])) == (self.readme_repository, self.readme_tag), image
            image.update(newName=self.repository, newTag=self.tag)
        path = self.checkout / target.group(1)
        kustomization = yaml.safe_load(path.read_text())
        kustomization["images"] = kustomization.get("images", []) + images
        path.write_text(yaml.safe_dump(kustomization))

    def rollout_status(self, proc, t0):
        try:
            out, _ = proc.communicate(timeout=ROLLOUT_SECONDS)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"`{self.command('rollout')}` did not return within {ROLLOUT_SECONDS} s; "
                        f"{namespace_story(self.real, NAMESPACE)}")
        assert proc.returncode == 0, f"`{self.command('rollout')}` exited {proc.returncode}: {out}"
        self.seconds[self.command("rollout")] = round(time.monotonic() - t0, 1)

    def logs_show_hook_succeeded(self):
        """The README's last line, run until it finds a line (the hooks run right after the
        objects are applied, a user may be quicker), then every node's agent log has the create
        hook of every object succeeded: the README's line reads one pod of the DaemonSet only."""
        command = self.command("logs")
        deadline = time.monotonic() + LOGS_SECONDS
        while (out := self.run(command, check=False)).returncode != 0:
            assert time.monotonic() < deadline, f"`{command}` found nothing in {LOGS_SECONDS} s: {out.stderr}"
            time.sleep(1)
        assert "hook succeeded" in out.stdout, out.stdout
        running = pods(self.real)
        assert sorted(p["spec"]["nodeName"] for p in running) == [f"node-{i}" for i in range(1, NODES + 1)], running
        for pod in running:
            name = pod["metadata"]["name"]
            wait_until(lambda: {("create", o) for o in self.objects} <= set(hook_runs(pod_log(self.real, name))),
                       f"{name} on {pod['spec']['nodeName']} to log 'hook succeeded' for {self.objects}")

    def host_directories(self):
        """The hostPath directories of the installed DaemonSet (none when it was never made)."""
        try:
            ds = self.real.kube.request("GET", f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/nodehook")
        except ApiError as e:
            if e.status != 404:
                raise
            return []
        return [v["hostPath"]["path"] for v in ds["spec"]["template"]["spec"]["volumes"] if "hostPath" in v]

    def uninstall(self, path):
        """The README's Uninstall block for the kustomize path; for Helm `helm uninstall` (which the
        README says runs it as a pre-delete Job) and the namespace `--create-namespace` made. Then
        the objects and the CRD, and what the agents left on the nodes (state, hook files), so the
        cluster is as before the install."""
        directories = self.host_directories()
        if path == "helm":
            commands = ["helm uninstall nodehook -n nodehook", "kubectl delete namespace nodehook --ignore-not-found"]
        else:
            commands = [command for _, command in readme_steps("Uninstall")]
        commands += [f"kubectl delete --ignore-not-found -f {self.file_of(kind).relative_to(self.checkout)}"
                     for kind in ("objects", "crd")]
        # Every step, even after one failed, so that the next tests find the cluster clean.
        failed = []
        for command in commands:
            try:
                self.run(command)
            except (AssertionError, pytest.fail.Exception) as e:
                failed.append(str(e))
        if failed:  # then at least the namespace, and with it the agents
            kubectl("delete", "namespace", NAMESPACE, "--ignore-not-found", kubeconfig=self.real.kubeconfig)
        wait_until(lambda: not pods(self.real), "the agent pods to be gone")
        for i in range(1, NODES + 1):
            for d in directories:
                shutil.rmtree(self.real.host_path(f"node-{i}", d), ignore_errors=True)
        assert not failed, "\n".join(failed)


def agent_health(real, pod):
    """(GET /healthz status, GET /readyz status) of the pod's agent, asked from inside its node's
    network namespace (the pod address exists only there)."""
    port = next(p["containerPort"] for c in pod["spec"]["containers"] for p in c.get("ports", []) if p["name"] == "health")
    script = ("import sys, urllib.request, urllib.error\n"
              "for path in ('/healthz', '/readyz'):\n"
              "    try:\n"
              "        print(urllib.request.urlopen(sys.argv[1] + path, timeout=5).status)\n"
              "    except urllib.error.HTTPError as e:\n"
              "        print(e.code)\n")
    out = subprocess.run(["nsenter", f"--net=/proc/{real.node_pid(pod['spec']['nodeName'])}/ns/net", sys.executable,
                          "-c", script, f"http://{pod['status']['podIP']}:{port}"],
                         capture_output=True, text=True, timeout=30, check=True)
    return tuple(int(s) for s in out.stdout.split())


def logged(real, pod, event):
    out = kubectl("-n", NAMESPACE, "logs", pod["metadata"]["name"], "-c", "nodehook", kubeconfig=real.kubeconfig,
                  check=False)
    return out.returncode == 0 and any(parse_log_line(line).get("event") == event for line in out.stdout.splitlines())


@pytest.mark.parametrize("path", ["helm", "kustomize"])
def test_the_readmes_install_block_runs_as_written(real, tmp_path, path):
    """README.md's "Install on a cluster" block, each command in the order written: the Helm
    line or the kustomize one (the other is the alternative the README offers)."""
    readme = ReadmeInstall(real, tmp_path)
    if path == "helm" and not readme.has_helm:
        pytest.skip("helm not built (test/cluster/build.sh helm)")
    t0 = time.monotonic()
    try:
        for kind, comment, command in readme.steps:
            if kind == "build" or kind == ("kustomize" if path == "helm" else "helm"):
                continue
            if kind == "kustomize":
                readme.name_the_image_in_the_overlay(comment)
            if kind == "rollout":
                readme.rollout_status(readme.start(command), time.monotonic())
            elif kind == "logs":
                readme.logs_show_hook_succeeded()
            else:
                readme.run(command)
        installed = time.monotonic() - t0
    finally:
        t1 = time.monotonic()
        readme.uninstall(path)
    print(json.dumps({"readme_install": path, "case_seconds": round(time.monotonic() - t0, 1),
                      "install_seconds": round(installed, 1), "uninstall_seconds": round(time.monotonic() - t1, 1),
                      "steps": readme.seconds}))


def test_the_readmes_install_block_with_the_crd_after_the_daemonset(real, tmp_path):
    """The order a GitOps tool may choose: the DaemonSet (the kustomize line) first. Its agents
    wait for the CRD alive (/healthz 200, so the kubelet restarts nothing) and not ready (/readyz
    503), and the README's `rollout status`, started meanwhile, waits with them; once the CRD is
    applied it returns, and the objects' hooks run on both nodes. (Not ready is the point of the
    wait: a config whose resource is never served, a typo, stops a rollout. So a script that ran
    `rollout status` to its end before applying the CRD would wait for ever, as the README's CRD
    line says.)"""
    readme = ReadmeInstall(real, tmp_path)
    t0 = time.monotonic()
    try:
        steps = [s for s in readme.steps if s[0] not in ("build", "helm", "crd")]
        for kind, comment, command in steps:
            if kind == "kustomize":
                readme.name_the_image_in_the_overlay(comment)
                readme.run(command)
                waiting = wait_until(lambda: (p := pods(real)) and len(p) == NODES
                                     and all(logged(real, pod, "resource not served") for pod in p) and p,
                                     "each node's agent to say it waits for the CRD ('resource not served')", timeout=120)
                for pod in waiting:
                    assert agent_health(real, pod) == (200, 503), pod["metadata"]["name"]
            elif kind == "rollout":
                rollout_started = time.monotonic()
                rollout = readme.start(command)
                time.sleep(5)
                assert rollout.poll() is None, f"`{command}` returned without the CRD: {rollout.communicate()}"
                crd_applied = time.monotonic()
                readme.run(readme.command("crd"))
                readme.rollout_status(rollout, rollout_started)
                ready_after_crd = time.monotonic() - crd_applied
            elif kind == "logs":
                readme.logs_show_hook_succeeded()
            else:
                readme.run(command)
        installed = time.monotonic() - t0
        # Waiting cost no restart: the agents that waited are the ones that became ready.
        for pod in pods(real):
            assert pod["status"]["containerStatuses"][0]["restartCount"] == 0, namespace_story(real, NAMESPACE)
            assert pod["metadata"]["uid"] in {p["metadata"]["uid"] for p in waiting}
    finally:
        t1 = time.monotonic()
        readme.uninstall("kustomize")
    print(json.dumps({"readme_install": "crd after the daemonset", "case_seconds": round(time.monotonic() - t0, 1),
                      "install_seconds": round(installed, 1),
                      "rollout_status_after_crd_seconds": round(ready_after_crd, 1),
                      "uninstall_seconds": round(time.monotonic() - t1, 1), "steps": readme.seconds}))


def test_restricted_overlay_runs_on_every_node_as_the_non_root_user(real, tmp_path):
    kubectl("apply", "-f", str(REPO / "config" / "examples" / "widget-crd.yaml"), kubeconfig=real.kubeconfig)
    kubectl("wait", "--for=condition=Established", "crd/widgets.example.com", kubeconfig=real.kubeconfig)
    real.kube.request("POST", "/api/v1/namespaces", {"metadata": {"name": WIDGET_NS}})
    install(real, tmp_path, "restricted")
    running = wait_rolled_out(real)
    assert sorted(p["spec"]["nodeName"] for p in running) == [f"node-{i}" for i in range(1, NODES + 1)]

    create_widget(real, "w1", 1)
    for i in range(1, NODES + 1):
        node = f"node-{i}"
        # NODE_NAME reaches the agent process through the downward API.
        pid = wait_until(lambda: agent_on(real, node), f"the agent process on {node}")
        assert environ(pid)["NODE_NAME"] == node
        # runc enforced the securityContext: user 65532, no capabilities, no privilege gain,
        # seccomp (RuntimeDefault), a read-only root filesystem.
        status = dict(line.split(":\t", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
        assert status["Uid"].split()[:2] == ["65532", "65532"] and status["Gid"].split()[0] == "65532"
        assert (status["CapEff"].strip(), status["CapBnd"].strip()) == ("0" * 16, "0" * 16), status
        assert (status["NoNewPrivs"].strip(), status["Seccomp"].strip()) == ("1", "2"), status
        root = next(line.split() for line in Path(f"/proc/{pid}/mountinfo").read_text().splitlines()
                    if line.split()[4] == "/")
        assert "ro" in root[5].split(","), root
        # The example hook's file, in the host directory behind the hostPath.
        f = wait_until(lambda: widget_file(real, node, "w1").exists() and widget_file(real, node, "w1"),
                       f"the hook's file for w1 on {node}")
        assert json.loads(f.read_text())["spec"] == {"size": 1}
        # The init container handed the hostPath directory to the agent's user, mode 0700.
        state_dir = real.host_path(node, "/var/lib/nodehook").stat()
        assert (state_dir.st_mode & 0o777, state_dir.st_uid) == (0o700, 65532)
        state = real.host_path(node, "/var/lib/nodehook/state.db")
        st = state.stat()
        assert (st.st_mode & 0o777, st.st_uid) == (0o600, 65532), f"{state}: {oct(st.st_mode)} uid {st.st_uid}"


def test_metrics_are_scraped_through_the_pod_proxy(real):
    for pod in pods(real):
        name = pod["metadata"]["name"]
        path = f"/api/v1/namespaces/{NAMESPACE}/pods/{name}:8090/proxy/metrics"
        text = kubectl("get", "--raw", path, kubeconfig=real.kubeconfig)
        assert re.search(r"^nodehook_\w+", text, re.M), text[:500]
        # The shipped node-bound rules are in force for this agent's pod-bound token: its dry run of
        # an Event in another node's name is refused (docs/security.md). Applied together with the
        # agents, they may load a moment after an agent's first check, which then asks again in a minute.
        wait_until(lambda: re.search(r"^nodehook_node_bound 1$",
                                     kubectl("get", "--raw", path, kubeconfig=real.kubeconfig), re.M),
                   f"{name}: nodehook_node_bound 1", timeout=150)


def test_kubectl_nodehook_reads_the_real_pods(real, tmp_path):
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "kubectl-nodehook").symlink_to(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook"))
    env = dict(os.environ, PATH=f"{plugins}:{os.environ['PATH']}", KUBECONFIG=real.kubeconfig)

    def view():
        out = subprocess.run([str(_binary("NODEHOOK_KUBECTL", REPO / "build" / "cache" / "kubectl")), "nodehook"],
                             capture_output=True, text=True, env=env, timeout=120)
        rows = [line.split() for line in out.stdout.splitlines()]
        return out if out.returncode == 0 and [f"{WIDGET_NS}/w1", "widgets.example.com/v1", "ok", "ok"] in rows else None

    # Each agent's snapshot follows its state file within a housekeeping tick.
    out = wait_until(view, "kubectl nodehook to show w1 handled on both nodes")
    header = out.stdout.splitlines()[0].split()
    assert header[:2] == ["OBJECT", "RESOURCE"] and sorted(header[2:]) == ["node-1", "node-2"], out.stdout


def test_a_hostile_pod_on_one_node_with_the_agents_token_is_refused_every_write_for_the_other(real, tmp_path):
    """Pods on node-1 and node-2 under the agents' own ServiceAccount (and a second one, for a
    cluster-singleton config), each token projected by its real kubelet: node-1's tries every write
    for node-2 or the cluster, before and after the node-bound rules `nodehook rbac` prints for a
    finalizer, rollout and singleton config are in force; node-2's does its own work
    (test_node_bound.attack_table prints the table)."""
    from test_node_bound import (AGENT_OPTIONS, BROAD_RULES, Actor, apply_policies, attack_table, matrix_targets,
                                 print_matrix, rbac_output, widgets_config)
    from attack_matrix import run as run_matrix
    from kube import Widgets
    ns = "hostile"
    admin = real.kube
    admin.request("POST", "/api/v1/namespaces", {"metadata": {"name": ns}})
    admin.request("POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", {"metadata": {"name": "nodehook-solo"}})
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "hostile-broad"},
            "rules": BROAD_RULES}
    admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "metadata": {"name": "hostile-broad"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "hostile-broad"},
        "subjects": [{"kind": "ServiceAccount", "name": a, "namespace": NAMESPACE} for a in ("nodehook", "nodehook-solo")]})
    actors = {}
    for account in ("nodehook", "nodehook-solo"):
        for short, node in (("a", "node-1"), ("b", "node-2")):
            name = f"hostile-{account}-{node}"
            # The agents' image, its token projected by the kubelet of `node`; the test reads it from the log.
            admin.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                "spec": {"nodeName": node, "serviceAccountName": account, "restartPolicy": "Never",
                         "containers": [{"name": "c", "image": real.image, "imagePullPolicy": "Never",
                                         "command": ["/bin/sh", "-c",
                                                     "cat /var/run/secrets/kubernetes.io/serviceaccount/token; "
                                                     "echo; sleep 3600"]}]}})
            log = wait_until(lambda: kubectl("logs", "-n", NAMESPACE, name, kubeconfig=real.kubeconfig,
                                             check=False).stdout.strip(), f"the token in {name}'s log", timeout=120)
            actor = copy.copy(Actor.__new__(Actor))
            actor.node = node
            actor.kube = copy.copy(admin)
            actor.kube.token = log.splitlines()[0]
            actors[f"{'agent' if account == 'nodehook' else 'solo'}@{short}"] = actor
    # Tokens that name no node (a TokenRequest without a pod), of each account.
    for account, key in (("nodehook", "agent@none"), ("nodehook-solo", "solo@none")):
        actors[key] = Actor.__new__(Actor)
        actors[key].node = None
        actors[key].kube = copy.copy(admin)
        actors[key].kube.token = admin.request(
            "POST", f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/{account}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
             "spec": {"expirationSeconds": 3600}})["status"]["token"]
    applied, docs = [], {}

    def apply():
        for account, options, name in (("nodehook", AGENT_OPTIONS, "hostile"),
                                        ("nodehook-solo", {"singleton": True}, "hostile-solo")):
            config = widgets_config(ns, **options)
            config["tuning"]["lease_namespace"] = ns
            docs[name] = rbac_output(config, tmp_path, name, NAMESPACE, account)
            apply_policies(docs[name], tmp_path, name, real.kubeconfig)
            applied.append(tmp_path / f"{name}-policies.yaml")
    try:
        # The agents of the DaemonSet handle these widgets too (node-2's finalizer comes on them).
        fleet = {"ns": ns, "nodes": {"a": "node-1", "b": "node-2"}, "actors": actors, "admin": admin,
                 "finalizer_other": "node-9",
                 "widgets": Widgets(admin, ns), "apply": apply}
        attack_table(fleet,
                     # The install's own rules (deploy/base/node-bound-policy.yaml) already refuse these.
                     refused_before=("post an Event as node B", "post an Event about node B's Node"))
        # The matrix generated from the rules, with the real kubelets' tokens, labels and conditions.
        table = run_matrix(matrix_targets(fleet, docs["hostile"], docs["hostile-solo"]), admin)
        print_matrix(table)
        wrong = [r for r in table if r[4] != r[5]]
        assert not wrong, "\n".join(" | ".join(r) for r in wrong)
    finally:
        # The real agents run other configs in later tests: these rules must not outlive this one.
        for path in applied:
            kubectl("delete", "-f", str(path), "--ignore-not-found", kubeconfig=real.kubeconfig)
        for pod in [f"hostile-{a}-{n}" for a in ("nodehook", "nodehook-solo") for n in ("node-1", "node-2")]:
            kubectl("delete", "pod", "-n", NAMESPACE, pod, "--grace-period=0", "--ignore-not-found", "--wait=false",
                    kubeconfig=real.kubeconfig)
        # Later tests' agents watch every widget: none of these, or their finalizers, may remain.
        for w in admin.request("GET", f"/apis/example.com/v1/namespaces/{ns}/widgets")["items"]:
            path = f"/apis/example.com/v1/namespaces/{ns}/widgets/{w['metadata']['name']}"
            admin.request("PATCH", path, {"metadata": {"finalizers": None}}, "application/merge-patch+json")
            try:
                admin.request("DELETE", path)
            except ApiError as e:
                if e.status != 404:
                    raise
        admin.request("DELETE", f"/api/v1/namespaces/{ns}")
        for path in ("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/hostile-broad",
                     "/apis/rbac.authorization.k8s.io/v1/clusterroles/hostile-broad",
                     f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts/nodehook-solo"):
            admin.request("DELETE", path)


def test_a_killed_agent_is_restarted_by_the_kubelet_and_runs_nothing_twice(real):
    node = "node-1"
    pod = next(p for p in pods(real) if p["spec"].get("nodeName") == node)
    name = pod["metadata"]["name"]
    restarts = pod["status"]["containerStatuses"][0]["restartCount"]
    os.kill(agent_on(real, node), signal.SIGKILL)
    create_widget(real, "w-while-down", 2)  # handled once the agent is back

    def restarted():
        p = real.kube.request("GET", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}")
        return ready(p) and p["status"]["containerStatuses"][0]["restartCount"] == restarts + 1
    wait_until(restarted, f"the kubelet to restart the agent on {node} and the pod to be Ready", timeout=120)
    # The hook writes its file before it exits, and the agent logs its success after: wait for the log.
    def handled():
        text = pod_log(real, name)
        return hook_runs(text, f"{WIDGET_NS}/w-while-down") and text
    log = wait_until(handled, "the change made while it was down to be handled")
    assert widget_file(real, node, "w-while-down").exists()
    assert hook_runs(log, f"{WIDGET_NS}/w-while-down") == [("create", f"{WIDGET_NS}/w-while-down")], log
    assert hook_runs(log, f"{WIDGET_NS}/w1") == [], f"w1 was handled before the crash, ran again:\n{log}"


def test_a_namespace_enforcing_restricted_rejects_the_pod_as_the_readme_says(real, tmp_path):
    ns = "psa-restricted"
    real.kube.request("POST", "/api/v1/namespaces", {"metadata": {
        "name": ns, "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}})
    install(real, tmp_path, "restricted", namespace=ns)

    def rejection():
        events = real.kube.request("GET", f"/api/v1/namespaces/{ns}/events")["items"]
        return next((e["message"] for e in events if e["reason"] == "FailedCreate"), None)
    message = wait_until(rejection, "the DaemonSet controller's FailedCreate event")
    assert 'violates PodSecurity "restricted:latest"' in message and "hostPath" in message, message
    assert pods(real, ns) == []
    install_doc = (REPO / "docs" / "install.md").read_text()
    # The troubleshooting table names what the user sees: the event's reason and message.
    row = next(line for line in install_doc.splitlines() if line.startswith("|") and "PodSecurity" in line)
    assert "FailedCreate" in row and 'violates PodSecurity "restricted:latest"' in row, row
    kubectl("delete", "namespace", ns, "--wait=false", kubeconfig=real.kubeconfig)


def test_host_overlay_rolls_out_one_node_at_a_time_and_its_hook_acts_on_the_node_through_nsenter(real, tmp_path):
    before = {p["metadata"]["name"] for p in pods(real)}
    install(real, tmp_path, "host")
    # maxUnavailable 10% of 2 nodes rounds up to 1: at least one agent stays Ready throughout.
    assert watch_rollout(real, before) >= NODES - 1
    wait_rolled_out(real)

    create_widget(real, "w-host", 3)
    for i in range(1, NODES + 1):
        node = f"node-{i}"
        # /run/nodehook-widgets of the node's own mount namespace: nsenter -t 1 reached the node.
        f = real.host_path(node, f"/run/nodehook-widgets/{WIDGET_NS}_w-host.json")
        wait_until(f.exists, f"the host hook's file on {node}")
        assert json.loads(f.read_text())["spec"] == {"size": 3}
        pod = next(p["metadata"]["name"] for p in pods(real) if p["spec"].get("nodeName") == node)
        log = pod_log(real, pod)
        # The new pods found w1 handled in the node's state file: no create ran again.
        assert hook_runs(log, f"{WIDGET_NS}/w1") == [], log


def test_a_rollout_lets_a_running_slow_hook_finish_and_runs_no_hook_twice(real, tmp_path):
    config = json.loads((DEPLOY / "base" / "config.json").read_text())
    install(real, tmp_path, "restricted", config=config, hook=SLOW_HOOK)
    wait_rolled_out(real)
    create_widget(real, "slow-1", 5)
    runs = {f"node-{i}": widget_file(real, f"node-{i}", "slow-1").with_suffix(".runs") for i in range(1, NODES + 1)}
    for node, f in runs.items():
        wait_until(lambda: f.exists() and "create started" in f.read_text(), f"the slow hook to start on {node}")

    # A config change, applied while the hooks run: the DaemonSet rolls out (maxSurge 0).
    before = {p["metadata"]["name"] for p in pods(real)}
    config["tuning"]["workers"] = 2
    install(real, tmp_path, "restricted", config=config, hook=SLOW_HOOK)
    # The first pod to go is told to stop (SIGTERM) while its hook still runs.
    first = wait_until(lambda: next((p for p in pods(real) if p["metadata"].get("deletionTimestamp")), None),
                       "the rollout to delete a pod")
    assert "finished" not in runs[first["spec"]["nodeName"]].read_text(), "the hook ended before the rollout"
    # maxUnavailable 10% of 2 nodes rounds up to 1: at least one agent stays Ready throughout.
    assert watch_rollout(real, before) >= NODES - 1
    wait_rolled_out(real)
    for node, f in runs.items():
        # The old pod's agent let its hook finish within the grace period, and the new one, finding
        # the change handled in the node's state file, did not run it again.
        assert f.read_text().splitlines() == ["create started", "create finished"], f"{node}: {f.read_text()}"


# The node lifecycle controller's and the kubelet's own taints: a pod that tolerates them lands on
# a node that is busy or briefly not ready, as a DaemonSet's pods do; it does not tolerate a hook's.
SYSTEM_KEYS = [f"node.kubernetes.io/{k}" for k in ("not-ready", "unreachable", "disk-pressure", "memory-pressure",
                                                  "pid-pressure", "network-unavailable")]
SYSTEM_TAINTS = [{"key": k, "operator": "Exists"} for k in SYSTEM_KEYS]


def pause_pod(real, name, node_selector=None):
    """A pod of the nodes' sandbox image (already on every node), as Pod Security "restricted" wants it."""
    image = subprocess.run([str(REPO / "test" / "image" / "build-image.sh"), "pause"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[-1].split()[0].split("=", 1)[1]
    spec = {"containers": [{"name": "pause", "image": image, "imagePullPolicy": "Never",
                            "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True,
                                                "runAsUser": 65534, "capabilities": {"drop": ["ALL"]},
                                                "seccompProfile": {"type": "RuntimeDefault"}}}],
            "terminationGracePeriodSeconds": 0, "tolerations": SYSTEM_TAINTS}
    if node_selector:
        spec["nodeSelector"] = node_selector
    real.kube.request("POST", f"/api/v1/namespaces/{WIDGET_NS}/pods",
                      {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec})


def test_a_hooks_taint_keeps_the_scheduler_off_its_node_until_the_delete_hook(real, tmp_path):
    """Issue 29 on real kubelets and the real scheduler: the hook of a widget labels both nodes and
    taints node-1 (node_outputs.prefixes); a pod pinned to node-1 stays Pending on the untolerated
    taint while another lands on node-2; deleting the widget takes the taint and the labels off after
    the delete hook, and the pinned pod is scheduled."""
    config = json.loads((DEPLOY / "base" / "config.json").read_text())
    config["resources"][0]["node_outputs"] = {"prefixes": ["widgets.example.com/"]}
    install(real, tmp_path, "restricted", config=config, hook=NODE_OUTPUT_HOOK)
    wait_rolled_out(real)
    create_widget(real, "tainter", 1)
    key = "widgets.example.com/tainter"

    def node(name):
        return real.kube.request("GET", f"/api/v1/nodes/{name}")

    def taints(name):
        return [t["key"] for t in node(name)["spec"].get("taints", []) if t["key"] not in SYSTEM_KEYS]
    pinned, free = "pinned-to-node-1", "free-to-go"
    try:
        for name in ("node-1", "node-2"):
            wait_until(lambda: node(name)["metadata"]["labels"].get(key) == "done", f"the hook's label on {name}")
        wait_until(lambda: key in taints("node-1"), "the hook's taint on node-1")
        # Besides the system taints the pods tolerate, the hook's is the only one: the scheduler's
        # "untolerated taint" below is it.
        assert taints("node-1") == [key] and taints("node-2") == [], (node("node-1")["spec"], node("node-2")["spec"])

        pause_pod(real, pinned, {"kubernetes.io/hostname": "node-1"})
        pause_pod(real, free)

        def unschedulable():
            conditions = real.kube.request("GET", f"/api/v1/namespaces/{WIDGET_NS}/pods/{pinned}")["status"].get(
                "conditions", [])
            return next((c for c in conditions if c["type"] == "PodScheduled" and c["status"] == "False"), None)
        why = wait_until(unschedulable, "the scheduler to keep the pinned pod off node-1")
        assert "had untolerated taint" in why["message"], why
        placed = wait_until(lambda: real.kube.request("GET", f"/api/v1/namespaces/{WIDGET_NS}/pods/{free}")[
            "spec"].get("nodeName"), "the free pod to be scheduled")
        assert placed == "node-2", (placed, node("node-2")["spec"])

        real.kube.request("DELETE", f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets/tainter")
        wait_until(lambda: key not in taints("node-1"), "the taint off node-1 after the delete hook")
        for name in ("node-1", "node-2"):
            wait_until(lambda: key not in node(name)["metadata"].get("labels", {}), f"the label off {name}")
        wait_until(lambda: real.kube.request("GET", f"/api/v1/namespaces/{WIDGET_NS}/pods/{pinned}")["spec"].get(
            "nodeName") == "node-1", "the pinned pod scheduled on node-1 once the taint is gone")
        # Only its own: the node controller's taints and the kubelet's labels are as they were.
        assert node("node-1")["metadata"]["labels"]["kubernetes.io/hostname"] == "node-1"
    finally:
        # Whatever happened, the next tests find the nodes untainted.
        for path in (f"/api/v1/namespaces/{WIDGET_NS}/pods/{pinned}", f"/api/v1/namespaces/{WIDGET_NS}/pods/{free}",
                     f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets/tainter"):
            try:
                real.kube.request("DELETE", path)
            except ApiError:
                pass
        wait_until(lambda: key not in taints("node-1"), "the hook's taint off node-1")
        # The overlay's own config and hook again: the next tests' widgets publish nothing.
        install(real, tmp_path, "restricted")
        wait_rolled_out(real)


# --- A rollout's node steps (issue 28) on the real kubelets, scheduler and disruption controller:
# a Deployment's pods evicted through the Eviction API under their PodDisruptionBudget, the
# replacements scheduled on the other node while this one is cordoned.

def steps_config(**steps):
    config = json.loads((DEPLOY / "base" / "config.json").read_text())
    config["resources"][0]["rollout"] = {"max_nodes": 1, "failure_after_retries": 1, "slot_lease_seconds": 30, **steps}
    return config


# What many operators and CNI components tolerate: the cordon itself.
CORDON_TOLERATION = {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}


def web_deployment(real, name, replicas, min_available, tolerate_cordon=False):
    """`replicas` pause pods spread over the nodes, and a budget keeping `min_available` of them.
    With `tolerate_cordon`, the pods tolerate the cordon and must stay spread (maxSkew 1,
    DoNotSchedule): an evicted pod's replacement comes back to its cordoned node."""
    image = subprocess.run([str(REPO / "test" / "image" / "build-image.sh"), "pause"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[-1].split()[0].split("=", 1)[1]
    labels = {"app": name}
    container = {"name": "pause", "image": image, "imagePullPolicy": "Never",
                 "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 65534,
                                     "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}}
    real.kube.request("POST", f"/apis/apps/v1/namespaces/{WIDGET_NS}/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": labels},
                 "template": {"metadata": {"labels": labels},
                              "spec": {"containers": [container], "terminationGracePeriodSeconds": 0,
                                       "tolerations": SYSTEM_TAINTS + ([CORDON_TOLERATION] if tolerate_cordon else []),
                                       "topologySpreadConstraints": [{
                                           "maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                           "whenUnsatisfiable": "DoNotSchedule" if tolerate_cordon else "ScheduleAnyway",
                                           "labelSelector": {"matchLabels": labels}}]}}}})
    real.kube.request("POST", f"/apis/policy/v1/namespaces/{WIDGET_NS}/poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": name},
        "spec": {"minAvailable": min_available, "selector": {"matchLabels": labels}}})

    def spread():
        items = real.kube.request("GET", f"/api/v1/namespaces/{WIDGET_NS}/pods?labelSelector=app%3D{name}")["items"]
        nodes = {p["spec"].get("nodeName") for p in items if ready(p)}
        return len([p for p in items if ready(p)]) == replicas and len(nodes) == NODES
    wait_until(spread, f"the {name} pods Ready on both nodes", timeout=120)


def web_pods(real, name):
    items = real.kube.request("GET", f"/api/v1/namespaces/{WIDGET_NS}/pods?labelSelector=app%3D{name}")["items"]
    return [(p["spec"].get("nodeName"), p["metadata"]["name"], ready(p), bool(p["metadata"].get("deletionTimestamp")))
            for p in items]


def remove_web(real, name):
    for path in (f"/apis/apps/v1/namespaces/{WIDGET_NS}/deployments/{name}",
                 f"/apis/policy/v1/namespaces/{WIDGET_NS}/poddisruptionbudgets/{name}"):
        try:
            real.kube.request("DELETE", path)
        except ApiError:
            pass
    wait_until(lambda: not web_pods(real, name), f"the {name} pods gone")


def unschedulable(real, node):
    return bool(real.kube.request("GET", f"/api/v1/nodes/{node}")["spec"].get("unschedulable"))


def cordon_marks(real, node):
    notes = real.kube.request("GET", f"/api/v1/nodes/{node}")["metadata"].get("annotations") or {}
    return [k for k in notes if k.startswith("nodehook.io/cordoned-")]


def uncordon_all(real):
    for i in range(1, NODES + 1):
        kubectl("uncordon", f"node-{i}", kubeconfig=real.kubeconfig)


def back_to_the_overlay(real, tmp_path):
    """What the next tests expect after a node-step test: no reboot asked, every node
    schedulable, the restricted overlay's own config and hook."""
    for i in range(1, NODES + 1):
        real.host_path(f"node-{i}", "/var/lib/nodehook-widgets/reboot-requested").unlink(missing_ok=True)
    uncordon_all(real)
    install(real, tmp_path, "restricted")
    wait_rolled_out(real)


def current_agent_pod(real, node):
    """The name of `node`'s current agent pod: the one not being deleted, while a replaced one
    still terminates there (its log is the old agent's); else the terminating one; else None."""
    here = sorted((bool(p["metadata"].get("deletionTimestamp")), p["metadata"]["name"])
                  for p in pods(real) if p["spec"].get("nodeName") == node)
    return here[0][1] if here else None


def agent_events(real, node, event):
    """`event` lines of the current agent container on `node`; none while its kubelet is away."""
    pod = current_agent_pod(real, node)
    if pod is None:
        return []
    logs = kubectl("-n", NAMESPACE, "logs", pod, "-c", "nodehook", kubeconfig=real.kubeconfig, check=False)
    if logs.returncode != 0:
        return []
    return [f for f in map(parse_log_line, logs.stdout.splitlines()) if f.get("event") == event]


def nodes_that_logged(real, event):
    """The nodes whose current agent logged `event`."""
    return [f"node-{i}" for i in range(1, NODES + 1) if agent_events(real, f"node-{i}", event)]


def test_a_drain_moves_a_deployments_pods_one_at_a_time_under_its_budget_and_uncordons(real, tmp_path):
    """Each node in turn: cordoned, its web pods evicted (the budget allows one at a time; the
    scheduler puts each replacement on the other node), the hook run once, uncordoned."""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 180}))
    wait_rolled_out(real)
    web_deployment(real, "web", 3, 2)
    try:
        create_widget(real, "drained", 1)
        for i in range(1, NODES + 1):
            wait_until(widget_file(real, f"node-{i}", "drained").exists, f"the hook's file on node-{i}", timeout=240)
        for i in range(1, NODES + 1):
            node = f"node-{i}"
            wait_until(lambda: agent_events(real, node, "rollout node done"), f"{node} done", timeout=120)
            assert not unschedulable(real, node) and not cordon_marks(real, node), node
            drained = agent_events(real, node, "node drained")
            taken = agent_events(real, node, "rollout slot taken")
            assert len(drained) == 1 and taken, (drained, taken)
            slot_to_drained = (parse_time(drained[0]["ts"]) - parse_time(taken[0]["ts"]))
            print(f"{node}: drained in {slot_to_drained:.1f} s after the slot, {drained[0]['evictions']} Eviction calls "
                  f"({len(agent_events(real, node, 'node drain blocked'))} pods refused at least once)")
            assert len(hook_runs(pod_log(real, next(p["metadata"]["name"] for p in pods(real)
                                                    if p["spec"].get("nodeName") == node)), f"{WIDGET_NS}/drained")) == 1
        # The budget held: at least two web pods Ready throughout is the API server's to enforce;
        # here, all three are back and Ready.
        wait_until(lambda: len([p for p in web_pods(real, "web") if p[2] and not p[3]]) == 3, "three web pods Ready")
    finally:
        remove_web(real, "web")
        uncordon_all(real)


def parse_time(ts):
    from datetime import datetime
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def widget_events(real, name, reason):
    items = real.kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{WIDGET_NS}/events")["items"]
    return [e for e in items if e.get("reason") == reason and e.get("regarding", {}).get("name") == name]


def test_a_budget_that_never_allows_fails_the_node_across_a_kill_and_someone_elses_cordon_is_kept(real, tmp_path):
    """node-2 was cordoned by someone else. The budget allows no eviction: the first node to drain
    times out (counted across a SIGKILL of its agent: the restart adds one wait at most), fails, stays
    cordoned, and the rollout halts. Then the budget is gone and the object changes: the new state
    drains both nodes, uncordons the one it cordoned, and leaves node-2 cordoned."""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 40}))
    wait_rolled_out(real)
    web_deployment(real, "db", 2, 2)
    kubectl("cordon", "node-2", kubeconfig=real.kubeconfig)
    try:
        create_widget(real, "blocked", 1)
        blocked = wait_until(lambda: nodes_that_logged(real, "node drain blocked"), "a drain blocked by the budget",
                             timeout=120)
        first = blocked[0]
        # Kill point: the agent SIGKILLed in the drain; the kubelet restarts it, and it goes on
        # draining (not cordoning again) with the time its drain had left.
        pid = agent_on(real, first)
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: agent_on(real, first) not in (None, pid), f"the agent on {first} restarted", timeout=120)
        failed = wait_until(lambda: agent_events(real, first, "node step failed"), f"{first} failing its drain",
                            timeout=120)
        assert failed[0]["error"].startswith("drain timed out after 40.0s"), failed
        assert not agent_events(real, first, "node cordoned"), "cordoned again after the restart"
        assert unschedulable(real, first)  # kept cordoned for a person (on_failure: keep_cordoned)
        other = "node-2" if first == "node-1" else "node-1"
        wait_until(lambda: widget_events(real, "blocked", "RolloutHalted"), "the rollout halted", timeout=60)
        assert not widget_file(real, first, "blocked").exists() and not widget_file(real, other, "blocked").exists()
        # The fix: no budget, and a new state of the object.
        real.kube.request("DELETE", f"/apis/policy/v1/namespaces/{WIDGET_NS}/poddisruptionbudgets/db")
        real.kube.request("PATCH", f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets/blocked",
                          {"spec": {"size": 2}}, "application/merge-patch+json")
        for i in range(1, NODES + 1):
            wait_until(lambda: widget_file(real, f"node-{i}", "blocked").exists(), f"the hook on node-{i}", timeout=240)
            wait_until(lambda: agent_events(real, f"node-{i}", "rollout node done"), f"node-{i} done", timeout=120)
        assert not unschedulable(real, "node-1") and not cordon_marks(real, "node-1")
        assert unschedulable(real, "node-2") and not cordon_marks(real, "node-2"), "someone else's cordon was undone"
    finally:
        remove_web(real, "db")
        back_to_the_overlay(real, tmp_path)


class CordonWatch:
    """Samples every Node's cordon every 0.1 s while the block runs: `most` is the most nodes
    seen cordoned at once (the figure a rollout's max_nodes promises)."""

    def __init__(self, real):
        self.real, self.most, self._stop = real, 0, threading.Event()
        self._thread = threading.Thread(target=self._run)

    def _run(self):
        while not self._stop.wait(0.1):
            cordoned = sum(unschedulable(self.real, f"node-{i}") for i in range(1, NODES + 1))
            self.most = max(self.most, cordoned)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()


def test_a_drain_leaves_the_replacements_that_tolerate_the_cordon_as_kubectl_drain_does(real, tmp_path):
    """Pods that tolerate the cordon (many operators and CNI components do) come back to the
    cordoned node: the drain evicts the pods that were there when it started, waits for those by
    uid, and leaves their replacements running there, as `kubectl drain` does. (Evicting the
    replacements too, the drain would never finish.)"""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 120}))
    wait_rolled_out(real)
    web_deployment(real, "tolerant", 2, 1, tolerate_cordon=True)
    try:
        at_start = {p[1] for p in web_pods(real, "tolerant")}
        replacements = {}
        with CordonWatch(real) as watch:
            create_widget(real, "tolerated", 1)
            for i in range(1, NODES + 1):
                node = f"node-{i}"
                wait_until(lambda: agent_events(real, node, "rollout node done"), f"{node} done", timeout=240)
                (drained,) = agent_events(real, node, "node drained")
                # The pod there at the start is gone; its replacement came back and was left running.
                here = [p[1] for p in web_pods(real, "tolerant") if p[0] == node and not p[3]]
                assert len(here) == 1 and here[0] not in at_start, (node, web_pods(real, "tolerant"))
                replacements[node] = here[0]
                assert not unschedulable(real, node) and not cordon_marks(real, node), node
                print(f"{node}: drained with {drained['evictions']} Eviction calls")
        assert watch.most == 1, f"{watch.most} nodes cordoned at once; max_nodes is 1"
        # Never evicted afterwards either: the same replacements, Ready.
        wait_until(lambda: sorted(p[1] for p in web_pods(real, "tolerant") if p[2] and not p[3]) ==
                   sorted(replacements.values()), "the replacements Ready where they came back")
    finally:
        remove_web(real, "tolerant")
        back_to_the_overlay(real, tmp_path)


def rollout_story(real):
    """For a failure message: each node's current agent's rollout and node-step log lines."""
    lines = []
    for i in range(1, NODES + 1):
        pod = current_agent_pod(real, f"node-{i}")
        logs = kubectl("-n", NAMESPACE, "logs", pod, "-c", "nodehook", kubeconfig=real.kubeconfig,
                       check=False).stdout if pod else ""
        lines += [f"node-{i} {line}" for line in logs.splitlines()
                  if re.search(r'event="?(rollout|node |coordinator)', line)]
    return "\n".join(lines)


def slow_start(real, node):
    """A DaemonSet update of the agents whose new pods take a minute to start (an init container
    standing for a slow image pull), rolled out as many operators do, node by node (OnDelete):
    `node`'s agent pod is deleted, and its agent is away for longer than a slot lease."""
    ds = real.kube.request("GET", f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/nodehook")
    agent = next(c for c in ds["spec"]["template"]["spec"]["containers"] if c["name"] == "nodehook")
    init = {"name": "slow-start", "image": agent["image"], "imagePullPolicy": "Never", "command": ["sleep", "60"],
            "securityContext": agent.get("securityContext", {})}
    real.kube.request("PATCH", f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/nodehook",
                      {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None},
                                "template": {"spec": {"initContainers": [init]}}}},
                      "application/strategic-merge-patch+json")
    old = next(p["metadata"]["name"] for p in pods(real) if p["spec"].get("nodeName") == node)
    real.kube.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{old}")
    return old


def no_slow_start(real):
    """slow_start undone: its init container goes (an apply of the overlay would keep it, as it
    was never applied); the overlay's apply brings the update strategy back."""
    real.kube.request("PATCH", f"/apis/apps/v1/namespaces/{NAMESPACE}/daemonsets/nodehook",
                      {"spec": {"template": {"spec": {"initContainers": [{"name": "slow-start", "$patch": "delete"}]}}}},
                      "application/strategic-merge-patch+json")


def test_the_agents_own_daemonset_updated_mid_drain_resumes_the_drain_and_cordons_no_second_node(real, tmp_path):
    """The budget holds the first node's drain; then the agents' DaemonSet is updated there, and the
    new agent takes a minute to start, longer than the drain's timeout (45 s) and the slot lease (30 s).
    The node stays cordoned and counts against max_nodes meanwhile, so the other node is not
    cordoned; the new agent resumes the drain (no second cordon) with the time the drain had left,
    not failed for the time it was away; once the budget goes, the rollout goes on."""
    install(real, tmp_path, "restricted", config=steps_config(drain={"timeout_seconds": 45}))
    wait_rolled_out(real)
    web_deployment(real, "db", 2, 2)
    try:
        with CordonWatch(real) as watch:
            create_widget(real, "updated", 1)
            first = wait_until(lambda: nodes_that_logged(real, "node drain blocked"), "a drain blocked by the budget",
                               timeout=120)[0]
            t0 = time.monotonic()
            old_pod = slow_start(real, first)
            wait_until(lambda: any(p["spec"].get("nodeName") == first and p["metadata"]["name"] != old_pod
                                   for p in pods(real)), f"the new agent pod on {first}", timeout=180)
            try:
                resumed = wait_until(lambda: agent_events(real, first, "node drain blocked"),
                                     f"the new agent on {first} resuming the drain", timeout=180)
            except pytest.fail.Exception as e:
                pytest.fail(f"{e}\n{rollout_story(real)}")
            away = time.monotonic() - t0
            assert not agent_events(real, first, "node step failed"), "failed for the time the agent was away"
            assert not agent_events(real, first, "node cordoned"), "cordoned again"
            assert unschedulable(real, first) and cordon_marks(real, first)
            real.kube.request("DELETE", f"/apis/policy/v1/namespaces/{WIDGET_NS}/poddisruptionbudgets/db")
            try:
                wait_until(lambda: agent_events(real, first, "node drained"), f"{first} drained", timeout=60)
            except pytest.fail.Exception as e:
                pytest.fail(f"{e}\n{rollout_story(real)}\n{web_pods(real, 'db')}")
            moved = time.monotonic() - t0
            for i in range(1, NODES + 1):
                wait_until(lambda: agent_events(real, f"node-{i}", "rollout node done"), f"node-{i} done",
                           timeout=240)
                assert widget_file(real, f"node-{i}", "updated").exists()
        assert watch.most == 1, f"{watch.most} nodes cordoned at once; max_nodes is 1"
        print(json.dumps({"agent_away_seconds": round(away, 1), "drain_resumed_at": resumed[0]["ts"],
                          "update_to_drained_seconds": round(moved, 1), "most_cordoned": watch.most}))
    finally:
        remove_web(real, "db")
        no_slow_start(real)
        back_to_the_overlay(real, tmp_path)


REBOOT_HOOK = Path(__file__).resolve().parent / "hooks" / "reboot-asking-hook"
# The agent's reboot command here: it asks the test, which reboots the node through real-node.sh.
REBOOT_ASK = ["/bin/sh", "-c", "echo \"$NODE_NAME\" >/host/var/lib/nodehook-widgets/reboot-requested"]


def reboot_node(real, node):
    """What a reboot does to a node: its kubelet, containerd and pods go; real-node.sh starts it
    again with /run emptied and a new boot ID. Returns once the node's PID 1 is a new one."""
    old = real.node_pid(node)
    (real.node_dir(node) / "reboot").write_text("")
    os.kill(old, signal.SIGTERM)
    wait_until(lambda: (real.node_dir(node) / "pid").exists() and real.node_pid(node) != old and
               not (real.node_dir(node) / "reboot").exists(), f"{node} started again", timeout=120)
    return (real.node_dir(node) / "boot_id").read_text().strip()


def test_a_reboot_the_hook_asks_for_is_proven_by_the_new_boot_id_and_the_rollout_goes_on(real, tmp_path):
    """Each node in turn: cordoned, its hook asks for a reboot, the node goes down (kubelet,
    containerd, pods) and comes back on a new boot ID; the agent that starts there proves the
    reboot (its boot ID and the kubelet's agree), uncordons, and the other node follows. The hook
    ran once per node; a restart of the agent without a reboot changes nothing."""
    config = steps_config(cordon=True, reboot={"argv": REBOOT_ASK, "timeout_seconds": 300})
    install(real, tmp_path, "restricted", config=config, hook=REBOOT_HOOK)
    wait_rolled_out(real)
    requested = real.host_path("node-1", "/var/lib/nodehook-widgets/reboot-requested")
    try:
        create_widget(real, "rebooted", 1)
        for _ in range(NODES):
            def asked():
                for i in range(1, NODES + 1):
                    f = real.host_path(f"node-{i}", "/var/lib/nodehook-widgets/reboot-requested")
                    if f.exists():
                        return f"node-{i}", f
                return None
            node, requested = wait_until(asked, "a node asking for its reboot", timeout=240)
            before = (real.node_dir(node) / "boot_id").read_text().strip()
            assert unschedulable(real, node) and cordon_marks(real, node)
            slot = next(l for l in real.kube.request("GET", "/apis/coordination.k8s.io/v1/namespaces/nodehook/leases")[
                "items"] if (l["spec"].get("holderIdentity") == node
                             and (l["metadata"].get("labels") or {}).get("nodehook.io/rollout-kind") == "slot"))
            assert slot["metadata"]["annotations"]["nodehook.io/rollout-phase"] == "rebooting"
            assert slot["spec"]["leaseDurationSeconds"] >= 300
            # A restart of the agent alone (same boot ID) is no reboot.
            os.kill(agent_on(real, node), signal.SIGKILL)
            wait_until(lambda: agent_on(real, node) is not None, f"the agent on {node} restarted", timeout=120)
            requested.unlink()
            after = reboot_node(real, node)
            assert after != before
            t0 = time.monotonic()
            done = wait_until(lambda: agent_events(real, node, "rollout node done"), f"{node} done after its reboot",
                              timeout=240)
            proven = agent_events(real, node, "node rebooted")[0]
            started = agent_events(real, node, "orphan reaper started")[0]  # the agent's first line
            print(f"{node}: boot {before[:8]} -> {after[:8]}; the agent proved the reboot "
                  f"{parse_time(proven['ts']) - parse_time(started['ts']):.1f} s after it started, done "
                  f"{parse_time(done[0]['ts']) - parse_time(started['ts']):.1f} s after; "
                  f"{time.monotonic() - t0:.1f} s from the node's start to done, by the test's clock")
            assert proven["boot_id"] == after and proven["node_boot_id"] == after, proven
            assert not unschedulable(real, node) and not cordon_marks(real, node)
            runs = real.host_path(node, f"/var/lib/nodehook-widgets/{WIDGET_NS}_rebooted.runs").read_text().splitlines()
            assert runs == [f"create ran on boot {before}"], runs
    finally:
        back_to_the_overlay(real, tmp_path)


def test_a_reboot_that_never_happens_fails_the_node_and_halts_the_rollout(real, tmp_path):
    """The hook asks for a reboot, the reboot command runs, and the node never reboots: its agent
    sees the same boot ID, and at the reboot's timeout the node fails the state, stays cordoned
    (on_failure: keep_cordoned) and the rollout halts; no other node starts."""
    config = steps_config(cordon=True, reboot={"argv": REBOOT_ASK, "timeout_seconds": 20})
    install(real, tmp_path, "restricted", config=config, hook=REBOOT_HOOK)
    wait_rolled_out(real)
    try:
        create_widget(real, "unrebooted", 1)
        failed = wait_until(lambda: nodes_that_logged(real, "node step failed"), "a node failing its reboot",
                            timeout=120)
        first = failed[0]
        line = agent_events(real, first, "node step failed")[0]
        assert line["error"].startswith("no reboot within 20.0s: the boot ID is still "), line
        assert unschedulable(real, first) and cordon_marks(real, first)
        wait_until(lambda: widget_events(real, "unrebooted", "RolloutHalted"), "the rollout halted", timeout=60)
        other = "node-2" if first == "node-1" else "node-1"
        assert not unschedulable(real, other)
        assert not real.host_path(other, f"/var/lib/nodehook-widgets/{WIDGET_NS}_unrebooted.runs").exists()
    finally:
        back_to_the_overlay(real, tmp_path)


HELM_RELEASE = HELM_NS = "nodehook-helm"  # the chart names its objects after the release
HELM_PORT = 8190
# What the chart creates, by API path (namespaced ones in HELM_NS), to check that uninstall leaves none.
CHART_KINDS = {"pods": "/api/v1/namespaces/{ns}/pods", "configmaps": "/api/v1/namespaces/{ns}/configmaps",
               "serviceaccounts": "/api/v1/namespaces/{ns}/serviceaccounts",
               "services": "/api/v1/namespaces/{ns}/services",
               "daemonsets": "/apis/apps/v1/namespaces/{ns}/daemonsets", "jobs": "/apis/batch/v1/namespaces/{ns}/jobs",
               "networkpolicies": "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
               "roles": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
               "rolebindings": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
               "clusterroles": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               "clusterrolebindings": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"}


def helm_values(real, workers, tmp_path, mode="finalizer", port=None, state_dir="/var/lib/nodehook-helm",
                plural="widgets"):
    """The chart's values on these nodes, beside the kustomize install the other tests keep: the
    image the nodes have, the host network as the real-node component sets it, and ports, a state
    directory and a widgets directory of its own (docs/install.md, "Helm or kustomize"). The
    chart's widgets resource in `mode` (finalizer or singleton), so that its agents put their
    finalizers back while they run, with the RBAC `nodehook rbac` derives for it (as the
    chart's values say: rbac.generated)."""
    repository, tag = real.image.rsplit(":", 1)
    port = port or HELM_PORT
    resources = yaml.safe_load((CHART / "values.yaml").read_text())["config"]["resources"]
    for r in resources:
        r[mode] = True
        r["plural"] = plural
    config = {"state_file": f"{state_dir}/state.db", "resources": resources,
              "tuning": {"workers": workers, "health_address": f":{port}",
                         "admin_address": f"127.0.0.1:{port + 1}"}}
    rbac = tmp_path / "helm-rbac-config.json"
    rbac.write_text(json.dumps(dict(config, api={"in_cluster": True})))
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    generated = subprocess.run([str(binary), "rbac", "--config", str(rbac)], capture_output=True, text=True,
                               check=True).stdout
    return {"image": {"repository": repository, "tag": tag, "pullPolicy": "Never"}, "rbac": {"generated": generated},
            "hostNetwork": True, "healthPort": port, "stateDir": state_dir,
            "hostMounts": [{"name": "widgets", "hostPath": "/var/lib/nodehook-helm-widgets",
                            "mountPath": "/host/var/lib/nodehook-widgets"}],
            "config": config}


def namespace_story(real, namespace):
    """What a failure message needs to tell a slow pod from a failing one: each pod's phase and
    container states, then the namespace's Events in time order."""
    lines = []
    for pod in real.kube.request("GET", f"/api/v1/namespaces/{namespace}/pods")["items"]:
        states = [(c["name"], c.get("restartCount"), c.get("state"))
                  for c in (pod["status"].get("initContainerStatuses") or []) +
                  (pod["status"].get("containerStatuses") or [])]
        deleting = " (deleting)" if pod["metadata"].get("deletionTimestamp") else ""
        lines.append(f"pod {pod['metadata']['name']} on {pod['spec'].get('nodeName')}: {pod['status'].get('phase')}"
                     f"{deleting} {states}")
    events = real.kube.request("GET", f"/api/v1/namespaces/{namespace}/events")["items"]
    for e in sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or ""):
        lines.append(f"event {e.get('lastTimestamp') or e.get('eventTime')} {e['involvedObject']['kind']}/"
                     f"{e['involvedObject']['name']} {e.get('reason')}: {e.get('message')}")
    return "\n".join(lines)


def uninstall_while_changing(real, release, namespace, names, base=f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"):
    """`helm uninstall` while the objects `names` (widgets unless `base` says otherwise) change
    every 0.2 s (each change would make a running agent put its finalizer back); its seconds."""
    uninstalling = threading.Event()

    def keep_changing():
        for size in itertools.count(100):
            if uninstalling.wait(0.2):
                return
            for name in names:
                real.kube.request("PATCH", f"{base}/{name}", {"spec": {"size": size}}, "application/merge-patch+json")
    changer = threading.Thread(target=keep_changing)
    changer.start()
    t0 = time.monotonic()
    try:
        helm("uninstall", release, "--namespace", namespace, "--kubeconfig", real.kubeconfig)
    except subprocess.TimeoutExpired:
        pytest.fail(f"helm uninstall did not return within 120 s; {namespace_story(real, namespace)}")
    finally:
        uninstalling.set()
        changer.join()
    return time.monotonic() - t0


def nodehook_finalizers_held(real):
    """Widget name -> finalizers, for every widget that still carries a nodehook.io/ one."""
    items = real.kube.request("GET", f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets")["items"]
    return {w["metadata"]["name"]: w["metadata"].get("finalizers") for w in items
            if any(f.startswith("nodehook.io/") for f in w["metadata"].get("finalizers") or [])}


def chart_objects(real):
    """(kind, name) of every object labelled as the release's, plus helm's release records."""
    found = set()
    for kind, path in CHART_KINDS.items():
        selector = f"?labelSelector=app.kubernetes.io/instance%3D{HELM_RELEASE}"
        items = real.kube.request("GET", path.format(ns=HELM_NS) + selector)
        found |= {(kind, o["metadata"]["name"]) for o in items["items"]}
    secrets = real.kube.request("GET", f"/api/v1/namespaces/{HELM_NS}/secrets?labelSelector=owner%3Dhelm")
    return found | {("secrets", o["metadata"]["name"]) for o in secrets["items"]}


def test_the_helm_chart_installs_upgrades_and_uninstalls_beside_the_kustomize_install(real, tmp_path):
    binary = Path(os.environ.get("NODEHOOK_HELM", REPO / "build" / "cache" / "helm"))
    if not binary.exists():
        pytest.skip(f"{binary} not built (test/cluster/build.sh helm)")
    kustomized = {p["metadata"]["name"]: p["status"]["containerStatuses"][0]["restartCount"] for p in pods(real)}
    values = tmp_path / "values.json"

    def run_helm(command, *args, workers):
        values.write_text(json.dumps(helm_values(real, workers, tmp_path)))
        helm(command, HELM_RELEASE, str(CHART), "--namespace", HELM_NS, "--kubeconfig", real.kubeconfig,
             "-f", str(values), *args)

    def creates(pod):
        return [o for h, o in hook_runs(pod_log(real, pod["metadata"]["name"], namespace=HELM_NS)) if h == "create"]

    run_helm("install", "--create-namespace", workers=4)
    first = wait_rolled_out(real, namespace=HELM_NS, daemonset=HELM_RELEASE)
    assert sorted(p["spec"]["nodeName"] for p in first) == [f"node-{i}" for i in range(1, NODES + 1)]
    # A finalizer no agent removes (no resource is in finalizer mode): the uninstall Job must.
    create_widget(real, "w-helm", 7, finalizers=["nodehook.io/helm-test"])
    for pod in first:
        node = pod["spec"]["nodeName"]
        f = real.host_path(node, f"/var/lib/nodehook-helm-widgets/{WIDGET_NS}_w-helm.json")
        wait_until(f.exists, f"the chart's hook's file for w-helm on {node}")
        assert json.loads(f.read_text())["spec"] == {"size": 7}
        assert real.host_path(node, "/var/lib/nodehook-helm/state.db").exists()
    # Every widget (those of the earlier tests too) created once by each of the chart's agents.
    widgets = {f"{w['metadata']['namespace']}/{w['metadata']['name']}"
               for w in real.kube.request("GET", "/apis/example.com/v1/widgets")["items"]}
    for pod in first:
        done = wait_until(lambda: (c := creates(pod)) and set(c) >= widgets and c,
                          f"{pod['metadata']['name']} to create every widget")
        assert sorted(done) == sorted(widgets), done

    # A changed config value: a new checksum, so the DaemonSet rolls out.
    def checksum():
        ds = real.kube.request("GET", f"/apis/apps/v1/namespaces/{HELM_NS}/daemonsets/{HELM_RELEASE}")
        return ds["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    before, old_checksum = {p["metadata"]["name"] for p in first}, checksum()
    run_helm("upgrade", workers=2)
    assert checksum() != old_checksum
    config = real.kube.request("GET", f"/api/v1/namespaces/{HELM_NS}/configmaps/{HELM_RELEASE}-config")
    assert json.loads(config["data"]["config.json"])["tuning"]["workers"] == 2
    assert watch_rollout(real, before, namespace=HELM_NS) >= NODES - 1  # maxUnavailable 10% of 2 = 1
    second = wait_rolled_out(real, namespace=HELM_NS, daemonset=HELM_RELEASE)
    # The new agents found every widget handled in the node's state file: the only create they
    # run is for a widget made after the upgrade.
    create_widget(real, "w-helm-upgraded", 8)
    for pod in second:
        runs = wait_until(lambda: (c := creates(pod)) and f"{WIDGET_NS}/w-helm-upgraded" in c and c,
                          f"{pod['metadata']['name']} to create w-helm-upgraded")
        assert runs == [f"{WIDGET_NS}/w-helm-upgraded"], runs

    installed = chart_objects(real)
    assert {k for k, _ in installed} >= {"daemonsets", "pods", "configmaps", "serviceaccounts", "clusterroles",
                                         "clusterrolebindings", "networkpolicies", "secrets"}, installed
    # Uninstall while the agents run and the widgets keep changing: each change would make a
    # running agent put its finalizer back; the Job stops the agents before it releases.
    base = f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"
    uninstall_seconds = uninstall_while_changing(real, HELM_RELEASE, HELM_NS, ["w-helm", "w-helm-upgraded"])
    # The pre-delete Job ran to completion (helm waits for it, then deletes it: its Events stay).
    def job_events():
        events = real.kube.request("GET", f"/api/v1/namespaces/{HELM_NS}/events")["items"]
        return {e["reason"] for e in events if e["involvedObject"]["kind"] == "Job"
                and e["involvedObject"]["name"] == f"{HELM_RELEASE}-release-finalizers"}
    wait_until(lambda: job_events() >= {"SuccessfulCreate", "Completed"}, "the release-finalizers Job's Events")
    held = nodehook_finalizers_held(real)
    assert held == {}, f"nodehook.io/ finalizers left after the uninstall: {held}"
    # Nothing of the chart is left once the garbage collector has taken the pods.
    wait_until(lambda: not chart_objects(real), f"the release's objects to be gone (were {sorted(installed)})")
    # The kustomize install beside it was not disturbed: the same pods, not restarted, Ready.
    assert {p["metadata"]["name"]: p["status"]["containerStatuses"][0]["restartCount"]
            for p in pods(real) if ready(p)} == kustomized
    t1 = time.monotonic()
    for name in ("w-helm", "w-helm-upgraded"):
        real.kube.request("DELETE", f"{base}/{name}")
    wait_until(lambda: widget_gone(real, "w-helm") and widget_gone(real, "w-helm-upgraded"),
               "w-helm and w-helm-upgraded, their finalizers released, to be deleted", timeout=30)
    print(json.dumps({"helm_uninstall_seconds": round(uninstall_seconds, 1),
                      "objects_gone_after_delete_seconds": round(time.monotonic() - t1, 2)}))
    kubectl("delete", "namespace", HELM_NS, "--wait=false", kubeconfig=real.kubeconfig)


def test_helm_uninstall_leaves_no_singleton_finalizer_while_the_leader_runs(real, tmp_path):
    """The singleton leader claims `nodehook.io/singleton` on every handled object that lacks it,
    within milliseconds: released while it runs, the finalizer came straight back."""
    release = "nodehook-single"
    values = tmp_path / "values.json"
    values.write_text(json.dumps(helm_values(real, 2, tmp_path, mode="singleton", port=HELM_PORT + 2,
                                             state_dir="/var/lib/nodehook-single")))
    helm("install", release, str(CHART), "--namespace", release, "--create-namespace", "--kubeconfig",
         real.kubeconfig, "-f", str(values))
    wait_rolled_out(real, namespace=release, daemonset=release)
    base = f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"
    create_widget(real, "w-single", 9)
    names = [w["metadata"]["name"] for w in real.kube.request("GET", base)["items"]]
    wait_until(lambda: all("nodehook.io/singleton" in (w["metadata"].get("finalizers") or [])
                           for w in real.kube.request("GET", base)["items"]),
               f"the leader's finalizer on every widget ({len(names)})", timeout=120)

    uninstall_seconds = uninstall_while_changing(real, release, release, ["w-single"])
    held = nodehook_finalizers_held(real)
    assert held == {}, f"nodehook.io/ finalizers left after the uninstall: {held}"
    t1 = time.monotonic()
    real.kube.request("DELETE", f"{base}/w-single")
    wait_until(lambda: widget_gone(real, "w-single"), "w-single, its finalizer released, to be deleted", timeout=30)
    print(json.dumps({"singleton_widgets": len(names), "helm_uninstall_seconds": round(uninstall_seconds, 1),
                      "deleted_after_seconds": round(time.monotonic() - t1, 2)}))
    kubectl("delete", "namespace", release, "--wait=false", kubeconfig=real.kubeconfig)


def test_after_helm_uninstall_with_the_agents_running_the_objects_namespace_and_crd_delete_at_once(real, tmp_path):
    """Issue 25's figure: from `helm uninstall` (agents running in finalizer mode, objects
    changing) to a deleted namespace of objects and a deleted CRD. A CRD and a namespace of the
    test's own (gizmos), so the other tests keep the widgets."""
    release, objects_ns, crd = "nodehook-gizmo", "gizmo-objects", "gizmos.example.com"
    manifest = yaml.safe_load((REPO / "config" / "examples" / "widget-crd.yaml").read_text())
    manifest["metadata"]["name"] = crd
    manifest["spec"]["names"] = {"kind": "Gizmo", "listKind": "GizmoList", "plural": "gizmos", "singular": "gizmo"}
    crd_file = tmp_path / "gizmo-crd.json"
    crd_file.write_text(json.dumps(manifest))
    kubectl("apply", "-f", str(crd_file), kubeconfig=real.kubeconfig)
    kubectl("wait", "--for=condition=Established", f"crd/{crd}", kubeconfig=real.kubeconfig)
    real.kube.request("POST", "/api/v1/namespaces",
                      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": objects_ns}})
    base = f"/apis/example.com/v1/namespaces/{objects_ns}/gizmos"
    names = [f"g{i}" for i in range(3)]
    for i, name in enumerate(names):
        real.kube.request("POST", base, {"apiVersion": "example.com/v1", "kind": "Gizmo",
                                         "metadata": {"name": name}, "spec": {"size": i}})
    values = tmp_path / "values.json"
    values.write_text(json.dumps(helm_values(real, 2, tmp_path, port=HELM_PORT + 4, state_dir="/var/lib/nodehook-gizmo",
                                             plural="gizmos")))
    helm("install", release, str(CHART), "--namespace", release, "--create-namespace", "--kubeconfig",
         real.kubeconfig, "-f", str(values))
    wait_rolled_out(real, namespace=release, daemonset=release)
    every_node = {f"nodehook.io/node-{i}" for i in range(1, NODES + 1)}
    wait_until(lambda: all(every_node <= set(g["metadata"].get("finalizers") or [])
                           for g in real.kube.request("GET", base)["items"]),
               "every node's finalizer on every gizmo", timeout=120)

    t0 = time.monotonic()
    uninstall_seconds = uninstall_while_changing(real, release, release, names, base=base)
    kubectl("delete", "namespace", objects_ns, "--wait=false", kubeconfig=real.kubeconfig)
    kubectl("delete", "crd", crd, "--wait=false", kubeconfig=real.kubeconfig)

    def gone(path):
        try:
            real.kube.request("GET", path)
            return False
        except ApiError as e:
            if e.status != 404:
                raise
            return True
    wait_until(lambda: gone(f"/api/v1/namespaces/{objects_ns}")
               and gone(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"),
               f"namespace {objects_ns} and crd {crd} to be deleted after the uninstall", timeout=30)
    print(json.dumps({"helm_uninstall_seconds": round(uninstall_seconds, 1),
                      "uninstall_to_namespace_and_crd_gone_seconds": round(time.monotonic() - t0, 1)}))
    kubectl("delete", "namespace", release, "--wait=false", kubeconfig=real.kubeconfig)


TOKEN_SECONDS = 600  # the shortest service account token the API server issues
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"


def jwt_claims(token):
    payload = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))


@pytest.mark.skipif(os.environ.get("NODEHOOK_LONG_TESTS") != "1",
                    reason=f"long mode: the shortest token lives {TOKEN_SECONDS} s, so this takes about 11 minutes; "
                           "set NODEHOOK_LONG_TESTS=1")
def test_the_agent_keeps_working_after_the_kubelet_rotates_its_token_and_the_first_one_expires(real, tmp_path):
    # The pod's token as the default one, but with the shortest lifetime (the default 3607 s ones
    # are extended to a year by the API server, so they would never expire in a test).
    patch = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "nodehook"}, "spec": {"template": {
        "spec": {"automountServiceAccountToken": False,
                 "containers": [{"name": "nodehook", "volumeMounts": [
                     {"name": "short-token", "mountPath": SA_DIR, "readOnly": True}]}],
                 "volumes": [{"name": "short-token", "projected": {"sources": [
                     {"serviceAccountToken": {"path": "token", "expirationSeconds": TOKEN_SECONDS}},
                     {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                     {"downwardAPI": {"items": [{"path": "namespace",
                                                 "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}}]}}}}
    install(real, tmp_path, "restricted", patch=patch)
    pod = next(p for p in wait_rolled_out(real) if p["spec"]["nodeName"] == "node-1")
    # The kubelet's tmpfs for the volume exists only in the node's mount namespace: look through
    # the node's PID 1.
    token_file = Path(f"/proc/{real.node_pid('node-1')}/root/var/lib/kubelet/pods/{pod['metadata']['uid']}"
                      "/volumes/kubernetes.io~projected/short-token/token")
    first = token_file.read_text()
    expires = jwt_claims(first)["exp"]
    assert expires - jwt_claims(first)["iat"] == TOKEN_SECONDS
    # The kubelet writes a new token at 80% of the lifetime; then the first one expires.
    wait_until(lambda: token_file.read_text() != first, "the kubelet to rotate the token", timeout=TOKEN_SECONDS)
    wait_until(lambda: time.time() > expires + 5, "the first token to expire", timeout=TOKEN_SECONDS)
    create_widget(real, "w-rotated", 6)
    wait_until(lambda: widget_file(real, "node-1", "w-rotated").exists(), "w-rotated handled with the new token")
    log = pod_log(real, pod["metadata"]["name"])
    assert not re.findall(r"^.*\b401\b.*$", log, re.M), log


def steward_pods(real):
    return real.kube.request(
        "GET", f"/api/v1/namespaces/{NAMESPACE}/pods?labelSelector=app.kubernetes.io/name%3Dnodehook-steward")["items"]


def steward_log(real):
    """Every steward pod's log, joined (a pod that is gone has none)."""
    out = []
    for pod in steward_pods(real):
        result = kubectl("-n", NAMESPACE, "logs", pod["metadata"]["name"], "-c", "steward", kubeconfig=real.kubeconfig,
                         check=False)
        out.append(result.stdout if result.returncode == 0 else "")
    return "\n".join(out)


def node_ready(real, node):
    conditions = real.kube.request("GET", f"/api/v1/nodes/{node}")["status"].get("conditions") or []
    return next((c["status"] for c in conditions if c["type"] == "Ready"), None)


def test_helm_uninstall_with_a_node_cut_off_releases_without_waiting_for_its_agent_pod(real, tmp_path):
    """node-2 is cut off the network (its kubelet and agent cannot reach the API server), so its
    agent pod, deleted with the DaemonSet, stays terminating: no kubelet confirms its end. The
    uninstall's Job stops waiting for it once its grace period (10 s here) and 30 s more are over
    and its Node is not Ready (docs/install.md), and releases every finalizer. When node-2 comes
    back, its kubelet stops that agent, which puts no finalizer back."""
    release = "nodehook-cutoff"
    values = helm_values(real, 2, tmp_path, port=HELM_PORT + 6, state_dir="/var/lib/nodehook-cutoff")
    values["terminationGracePeriodSeconds"] = 10
    (tmp_path / "values.json").write_text(json.dumps(values))
    helm("install", release, str(CHART), "--namespace", release, "--create-namespace", "--kubeconfig",
         real.kubeconfig, "-f", str(tmp_path / "values.json"))
    wait_rolled_out(real, namespace=release, daemonset=release)
    base = f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"
    create_widget(real, "w-cutoff", 3)
    every_node = {f"nodehook.io/node-{i}" for i in range(1, NODES + 1)}
    wait_until(lambda: every_node <= set(real.kube.request("GET", f"{base}/w-cutoff")["metadata"].get("finalizers")
                                         or []), "both nodes' finalizers on w-cutoff", timeout=120)
    link = f"{real.prefix}-2"  # node-2's end of the bridge
    subprocess.run(["ip", "link", "set", link, "down"], check=True)
    try:
        wait_until(lambda: node_ready(real, "node-2") == "Unknown", "node-2 Ready Unknown (its kubelet silent)",
                   timeout=120)
        t0 = time.monotonic()
        helm("uninstall", release, "--namespace", release, "--kubeconfig", real.kubeconfig, timeout=300)
        uninstall_seconds = time.monotonic() - t0
        # Released while node-2's agent pod is still terminating: not waited for.
        stuck = [p for p in pods(real, release) if p["spec"]["nodeName"] == "node-2"]
        assert stuck and stuck[0]["metadata"].get("deletionTimestamp"), pods(real, release)
        assert nodehook_finalizers_held(real) == {}
    finally:
        subprocess.run(["ip", "link", "set", link, "up"], check=True)
    wait_until(lambda: node_ready(real, "node-2") == "True", "node-2 Ready again", timeout=120)
    wait_until(lambda: not pods(real, release), "node-2's kubelet to stop the deleted agent pod", timeout=120)
    real.kube.request("DELETE", f"{base}/w-cutoff")
    wait_until(lambda: widget_gone(real, "w-cutoff"), "w-cutoff deleted: no finalizer came back", timeout=30)
    print(json.dumps({"helm_uninstall_with_a_node_cut_off_seconds": round(uninstall_seconds, 1)}))
    kubectl("delete", "namespace", release, "--wait=false", kubeconfig=real.kubeconfig)
    # The kustomize install's agent on node-2 is back at work too.
    wait_rolled_out(real)


def test_a_lost_node_of_confined_agents_has_its_finalizer_removed_by_the_steward(real, tmp_path):
    """Last: it stops node-2 for good. deploy/overlays/steward as shipped: its config puts widgets in
    finalizer mode with tuning.cross_node_writes "steward", the node-bound rules refuse each agent
    any finalizer but its own, and the steward Deployment removes the lost node's."""
    before = {p["metadata"]["name"] for p in pods(real)}
    install(real, tmp_path, "steward")  # a config change: the DaemonSet rolls out
    try:
        wait_until(lambda: not {p["metadata"]["name"] for p in pods(real)} & before, "the config's rollout")
    except pytest.fail.Exception as e:
        pytest.fail(f"{e}; {namespace_story(real, NAMESPACE)}")
    running = wait_rolled_out(real)
    # The kubelets' readiness probes pass once each steward's watches are listed (its /readyz).
    wait_until(lambda: len([p for p in steward_pods(real) if ready(p)]) == 2, "both steward replicas Ready",
               timeout=180)
    for pod in running:
        wait_until(lambda: any(parse_log_line(line).get("event") == "node isolation checked"
                               and parse_log_line(line).get("result") == "protected"
                               for line in pod_log(real, pod["metadata"]["name"]).splitlines()),
                   f"{pod['metadata']['name']} to find itself confined to its node")
        # Finalizer mode adds the node's finalizer to what was handled before, runs no hook again.
        assert hook_runs(pod_log(real, pod["metadata"]["name"]), f"{WIDGET_NS}/w1") == []

    base = f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"
    create_widget(real, "w-fin", 4)
    wanted = sorted(f"nodehook.io/node-{i}" for i in range(1, NODES + 1))
    wait_until(lambda: sorted(real.kube.request("GET", f"{base}/w-fin")["metadata"].get("finalizers", [])) == wanted,
               "both nodes' finalizers on w-fin")
    # The overlay's config keeps each widget's Ready condition: the steward writes it once both
    # nodes' records say they handled w-fin, and kubectl wait returns.
    waited = kubectl("-n", WIDGET_NS, "wait", "--for=condition=Ready", "widget/w-fin", "--timeout=120s",
                     kubeconfig=real.kubeconfig)
    assert "condition met" in waited, waited
    (ready_condition,) = [c for c in real.kube.request("GET", f"{base}/w-fin")["status"]["conditions"]
                          if c["type"] == "Ready"]
    assert ready_condition["message"] == f"{NODES}/{NODES} nodes" and ready_condition["observedGeneration"] == 1
    assert [p for p in map(parse_log_line, steward_log(real).splitlines()) if p.get("event") == "ready writer started"]

    # node-2 is lost: its kubelet, containerd, agent (and any steward replica on it) stop, and its
    # Node is deleted.
    lost = real.node_pid("node-2")
    os.kill(lost, signal.SIGTERM)
    wait_until(lambda: not Path(f"/proc/{lost}").exists(), "node-2 to stop", timeout=60)
    real.kube.request("DELETE", "/api/v1/nodes/node-2")

    real.kube.request("DELETE", f"{base}/w-fin")
    # A steward replica that was on node-2 is replaced on node-1 once the pod GC removes it.
    wait_until(lambda: widget_gone(real, "w-fin"),
               "w-fin to be deleted: node-1 removes its own finalizer, the steward the lost node's", timeout=240)
    assert not widget_file(real, "node-1", "w-fin").exists(), "node-1's delete hook did not run"
    swept = [parse_log_line(line) for line in steward_log(real).splitlines()
             if parse_log_line(line).get("event") == "departed node's finalizer removed"]
    assert any(f.get("finalizer") == "nodehook.io/node-2" for f in swept), steward_log(real)
    # Nothing the agents or the steward wrote was refused.
    for pod in pods(real):
        if pod["spec"].get("nodeName") == "node-1":
            assert refused_lines(pod_log(real, pod["metadata"]["name"])) == []
    assert refused_lines(steward_log(real)) == []
