"""A rollout's node steps (issue 28) on the real kubelets, scheduler and disruption controller:
a Deployment's pods evicted through the Eviction API under their PodDisruptionBudget, the
replacements scheduled on the other node while this one is cordoned, and reboots the hook asks
for. What test_4_node_steps.py needs besides the cluster's tools."""

import json
import os
import re
import signal
import threading

from conftest import parse_log_line, wait_until
from deploy_tools import DEPLOY, kubectl
from kube import ApiError

from .cluster_tools import (HOOKS, NAMESPACE, NODES, SYSTEM_TAINTS, WIDGET_NS, install, pause_container, pods,
                            ready, wait_rolled_out)


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
    labels = {"app": name}
    container = pause_container()
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

def parse_time(ts):
    from datetime import datetime
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


def widget_events(real, name, reason):
    items = real.kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{WIDGET_NS}/events")["items"]
    return [e for e in items if e.get("reason") == reason and e.get("regarding", {}).get("name") == name]


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

REBOOT_HOOK = HOOKS / "reboot-asking-hook"
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
