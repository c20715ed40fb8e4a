"""The restricted overlay installed on both nodes (the install, the widgets namespace and the
widget w1 stay for the later files), what runc and the kubelet make of its pods, its metrics and
`kubectl nodehook`, and a hostile pod with the agents' token refused every write for the other node."""

import copy
import json
import os
import re
import subprocess
from pathlib import Path

from conftest import REPO, _binary, wait_until
from deploy_tools import kubectl
from kube import ApiError

from .cluster_tools import (NAMESPACE, NEEDS_ROOT, NODES, WIDGET_NS, agent_on, create_widget, install, pods,
                            wait_rolled_out, widget_file)

pytestmark = NEEDS_ROOT


def environ(pid):
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


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
