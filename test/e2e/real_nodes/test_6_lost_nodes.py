"""Last in the package, nodes gone for a while and for good: the kubelet rotating the agent's
token (long mode), node-2 cut off the network during a Helm uninstall, and node-2 lost, its
finalizer removed by the steward (it stops node-2 for good, so it runs last)."""

import base64
import json
import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import parse_log_line, wait_until
from deploy_tools import kubectl
from test_helm_chart import CHART, helm
from test_rbac import refused_lines

from .cluster_tools import (HELM_PORT, NAMESPACE, NEEDS_ROOT, NODES, WIDGET_NS, create_widget, helm_values,
                            hook_runs, install, namespace_story, nodehook_finalizers_held, pod_log, pods, ready,
                            wait_rolled_out, widget_file, widget_gone)

pytestmark = NEEDS_ROOT


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
