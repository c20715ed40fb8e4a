"""What the real-node test files share: the cluster (real-node.sh's two nodes), the kustomize
install as users make it, the agents' pods and processes, the widgets, and the Helm chart's values
beside that install."""

import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, _binary, parse_log_line, wait_until
from deploy_tools import DEPLOY, kubectl, nodehook_rbac_documents
from kube import ApiError, Kube
from test_helm_chart import CHART

HOOKS = Path(__file__).resolve().parents[1] / "hooks"

NODES = 2
NAMESPACE = "nodehook"
COMPONENT = REPO / "test" / "cluster" / "real-node-component"
WIDGET_NS = "real-nodes"
PROGRAMS = ("containerd", "containerd-shim-runc-v2", "runc", "ctr", "buildah", "debootstrap", "iptables", "cc")

# Every test file of the package: pytestmark = NEEDS_ROOT.
NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="real nodes need root (namespaces, mounts, cgroups)")


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


# The node lifecycle controller's and the kubelet's own taints: a pod that tolerates them lands on
# a node that is busy or briefly not ready, as a DaemonSet's pods do; it does not tolerate a hook's.
SYSTEM_KEYS = [f"node.kubernetes.io/{k}" for k in ("not-ready", "unreachable", "disk-pressure", "memory-pressure",
                                                  "pid-pressure", "network-unavailable")]
SYSTEM_TAINTS = [{"key": k, "operator": "Exists"} for k in SYSTEM_KEYS]

def pause_container():
    """The nodes' sandbox image (already on every node) as a container that Pod Security
    "restricted" accepts."""
    image = subprocess.run([str(REPO / "test" / "image" / "build-image.sh"), "pause"], capture_output=True, text=True,
                           check=True).stdout.splitlines()[-1].split()[0].split("=", 1)[1]
    return {"name": "pause", "image": image, "imagePullPolicy": "Never",
            "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 65534,
                                "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}}}


HELM_PORT = 8190


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


def nodehook_finalizers_held(real):
    """Widget name -> finalizers, for every widget that still carries a nodehook.io/ one."""
    items = real.kube.request("GET", f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets")["items"]
    return {w["metadata"]["name"]: w["metadata"].get("finalizers") for w in items
            if any(f.startswith("nodehook.io/") for f in w["metadata"].get("finalizers") or [])}
