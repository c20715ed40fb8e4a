"""The agents on the kubelets after the install: a killed agent restarted by the kubelet, Pod
Security refusing the pod in a namespace that enforces "restricted", the host overlay and a
config change rolling out node by node, and a hook's taint keeping the scheduler off its node."""

import json
import os
import signal

from conftest import REPO, wait_until
from deploy_tools import DEPLOY, kubectl
from kube import ApiError

from .cluster_tools import (HOOKS, NAMESPACE, NEEDS_ROOT, NODES, SYSTEM_KEYS, SYSTEM_TAINTS, WIDGET_NS, agent_on,
                            create_widget, hook_runs, install, pause_container, pod_log, pods, ready,
                            wait_rolled_out, watch_rollout, widget_file)

pytestmark = NEEDS_ROOT

SLOW_HOOK = HOOKS / "slow-node-file-hook"
NODE_OUTPUT_HOOK = HOOKS / "node-output-hook"


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

def pause_pod(real, name, node_selector=None):
    """A pod of the nodes' sandbox image (already on every node), as Pod Security "restricted" wants it."""
    spec = {"containers": [pause_container()], "terminationGracePeriodSeconds": 0, "tolerations": SYSTEM_TAINTS}
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
