"""A condition on each object (ready_condition, docs/configuration.md) against the real API
server: two agents as two nodes each keep their results in a record of their own, and one of
them, elected, writes the object's condition: True once every node handled its current state,
False while one fails or has not finished, with observedGeneration; written on transitions only,
so `kubectl wait --for=condition=Ready` works unchanged. A writer that dies is replaced; a
restart writes nothing when nothing changed; a CRD without a status subresource is refused."""

import re
import subprocess

from conftest import wait_until
from deploy_tools import kubectl_binary
from singleton_cluster import LEASE

READY = {"ready_condition": "Ready"}
NODES = ("ready-a", "ready-b")


def condition(widgets, name):
    """The object's Ready condition, or None."""
    w = widgets.get(name)
    found = [c for c in w.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
    return dict(found[0], generation=w["metadata"]["generation"]) if found else None


def ready_now(widgets, name):
    c = condition(widgets, name)
    return c if c and c["status"] == "True" and c["observedGeneration"] == c["generation"] else None


def writes(agents, name):
    """The condition writes of `name` logged by every agent, in order of time."""
    lines = [e for a in agents for e in a.log_events("ready condition set") if e["object"].endswith("/" + name)]
    return sorted(lines, key=lambda e: e["time"])


def start_pair(make_agent, widgets):
    agents = [make_agent(n, resource_options=READY, lease_namespace=widgets.namespace, **LEASE) for n in NODES]
    for a in agents:
        a.start()
    return agents


def kubectl_wait(cluster, widgets, name, timeout="90s"):
    return subprocess.Popen(
        [str(kubectl_binary()), "--kubeconfig", cluster.kubeconfig, "-n", widgets.namespace, "wait",
         "--for=condition=Ready", f"widget/{name}", f"--timeout={timeout}"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_kubectl_wait_returns_once_the_last_node_handled_the_state(cluster, widgets, make_agent):
    a, b = start_pair(make_agent, widgets)
    # node b fails w1's create until told otherwise: the condition says so, naming it.
    b.fail_hook("w1", "create", 1000)
    widgets.create("w1", {"size": 1})
    waiting = kubectl_wait(cluster, widgets, "w1")
    failing = wait_until(lambda: (condition(widgets, "w1") or {}).get("reason") == "Failing" and condition(widgets, "w1"),
                         "the condition False, naming the failing node")
    assert failing["status"] == "False" and failing["observedGeneration"] == 1, failing
    # node a may or may not have finished when b's failure became known: the count is of that moment.
    assert re.match(r"[01]/2 nodes; failing on ready-b: create: ", failing["message"]), failing
    assert waiting.poll() is None, "kubectl wait returned while a node was failing"
    a.wait_for("w1", "create")

    b.fail_hook("w1", "create", 0)
    b.wait_for("w1", "create")
    out, err = waiting.communicate(timeout=90)
    assert waiting.returncode == 0, err
    assert "condition met" in out
    done = ready_now(widgets, "w1")
    assert done and done["reason"] == "AllNodesHandled" and done["message"] == "2/2 nodes", done
    # Transitions only: NoNodes or InProgress, Failing, True; never one per node or per retry.
    assert 2 <= len(writes((a, b), "w1")) <= 4, writes((a, b), "w1")

    # A new state: observedGeneration follows, and kubectl wait waits for it.
    before = len(writes((a, b), "w1"))
    b.report_progress("w1", "update", 2)
    widgets.patch_spec("w1", {"size": 2})
    wait_until(lambda: (condition(widgets, "w1") or {}).get("observedGeneration") == 2, "the new generation observed")
    waiting = kubectl_wait(cluster, widgets, "w1")
    out, err = waiting.communicate(timeout=90)
    assert waiting.returncode == 0, err
    assert [r for r in b.records("w1", "update") if r["result"] == "ok"], "kubectl wait returned before node b finished"
    assert ready_now(widgets, "w1")["observedGeneration"] == 2
    assert 1 <= len(writes((a, b), "w1")) - before <= 2, writes((a, b), "w1")

    # Another controller replaces the conditions (ours dropped): ours comes back, and theirs stays.
    theirs = {"type": "Synced", "status": "True", "reason": "Applied", "lastTransitionTime": "2026-01-01T00:00:00Z"}
    cluster.kube.request("PATCH", f"{widgets.base}/w1/status", {"status": {"conditions": [theirs]}},
                         "application/merge-patch+json")
    wait_until(lambda: ready_now(widgets, "w1"), "the condition written again")
    assert theirs in widgets.get("w1")["status"]["conditions"]


def test_a_restart_writes_nothing_and_a_dead_writer_is_replaced(cluster, widgets, make_agent):
    a, b = start_pair(make_agent, widgets)
    for name in ("w1", "w2"):
        widgets.create(name, {"size": 1})
    wait_until(lambda: ready_now(widgets, "w1") and ready_now(widgets, "w2"), "both objects Ready")
    versions = {n: widgets.get(n)["metadata"]["resourceVersion"] for n in ("w1", "w2")}
    leases = f"/apis/coordination.k8s.io/v1/namespaces/{widgets.namespace}/leases"
    records = {l["metadata"]["name"]: l["metadata"]["resourceVersion"]
               for l in cluster.kube.request("GET", leases + "?labelSelector=nodehook.io/ready")["items"]}
    assert len(records) == 2, records

    # Both agents restart: the new writer finds every condition right and writes none; no record
    # is written either.
    for agent in (a, b):
        agent.stop()
    for agent in (a, b):
        agent.start()
    caught = wait_until(lambda: [e for x in (a, b) for e in x.log_events("ready writer caught up")],
                        "a new writer's first round")
    assert caught[0]["objects"] == "2" and caught[0]["written"] == "0", caught
    for agent in (a, b):
        kept = wait_until(lambda: agent.log_events("ready record kept"), f"{agent.node}'s record found as it was")
        assert kept[0]["objects"] == "2", kept
    assert {n: widgets.get(n)["metadata"]["resourceVersion"] for n in ("w1", "w2")} == versions
    now = {l["metadata"]["name"]: l["metadata"]["resourceVersion"]
           for l in cluster.kube.request("GET", leases + "?labelSelector=nodehook.io/ready")["items"]}
    assert now == records, "a restart wrote a node's record"

    # The writer dies: the other agent takes over and writes the next state's condition.
    writer, other = (a, b) if a.log_events("ready writer started") else (b, a)
    writer.kill()
    widgets.patch_spec("w1", {"size": 2})
    other.wait_for("w1", "update")
    wait_until(lambda: other.log_events("ready writer started"), "the other agent to take over", timeout=60)
    # The dead node's record still counts it: w1 is not Ready until its agent is back.
    wait_until(lambda: (condition(widgets, "w1") or {}).get("observedGeneration") == 2, "the new generation observed")
    assert condition(widgets, "w1")["reason"] == "InProgress", condition(widgets, "w1")
    assert f"waiting for {writer.node}" in condition(widgets, "w1")["message"]
    writer.start()
    wait_until(lambda: ready_now(widgets, "w1"), "w1 Ready once the node is back")


def test_a_crd_without_a_status_subresource_is_refused(cluster, widgets, make_agent):
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Gadget", "listKind": "GadgetList", "plural": "gadgets", "singular": "gadget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                     "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]},
    }
    crds = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    if not [c for c in cluster.kube.request("GET", crds)["items"] if c["metadata"]["name"] == "gadgets.example.com"]:
        cluster.kube.request("POST", crds, crd)
    agent = make_agent("ready-a", resource_options={**READY, "plural": "gadgets"}, lease_namespace=widgets.namespace)
    agent.start()
    assert agent.proc.wait(timeout=60) == 2
    refused = agent.log_events("config refused")
    assert refused, agent.log_path.read_text()
    assert "CustomResourceDefinition gadgets.example.com version v1 has no status subresource" in refused[0]["error"]
