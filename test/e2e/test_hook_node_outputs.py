"""What hooks publish for their own node ("node" in the result file: labels, annotations,
conditions, taints; node_outputs.prefixes, docs/configuration.md), against the real API server:
kept on the agent's own Node while the object lives, taken off after its delete hook or when the
resource leaves the config, written only when they change (a restart writes nothing), and never
touching what others put on the Node. Keys outside the prefixes are refused with a log line and
an Event."""

import json

from conftest import wait_until
from kube import create_agent_pod
from test_failure_events import core_events
from test_node_outputs import node  # noqa: F401 (fixture)

PREFIX = "widgets.example.com/"
OUTPUTS = {"prefixes": [PREFIX]}
THEIR_TAINT = {"key": "example.org/maintenance", "value": "planned", "effect": "NoSchedule"}
PUBLISHED = {"node": {
    "labels": {PREFIX + "w1": "ready"},
    "annotations": {PREFIX + "w1-note": "kernel 6.1 in place"},
    "conditions": [{"type": PREFIX + "KernelCurrent", "status": "True", "reason": "Updated", "message": "6.1"}],
    "taints": [{"key": PREFIX + "maintenance", "effect": "NoSchedule"}],
}}


def get_node(cluster, name):
    return cluster.kube.request("GET", f"/api/v1/nodes/{name}")


def ours(cluster, name):
    """The node's labels, annotations, conditions and taints under PREFIX."""
    n = get_node(cluster, name)
    return {
        "labels": {k: v for k, v in n["metadata"].get("labels", {}).items() if k.startswith(PREFIX)},
        "annotations": {k: v for k, v in n["metadata"].get("annotations", {}).items() if k.startswith(PREFIX)},
        "conditions": {c["type"]: c["status"] for c in n["status"].get("conditions", []) if c["type"].startswith(PREFIX)},
        "taints": [t["key"] for t in n["spec"].get("taints", []) if t["key"].startswith(PREFIX)],
    }


def others_as_before(cluster, name):
    n = get_node(cluster, name)
    assert n["metadata"]["labels"]["team"] == "storage"
    assert THEIR_TAINT in [{k: t[k] for k in ("key", "value", "effect") if k in t} for t in n["spec"]["taints"]]
    assert any(c["type"] == "Ready" for c in n["status"]["conditions"])


def someone_else_labels_and_taints(cluster, name):
    cluster.kube.request("PATCH", f"/api/v1/nodes/{name}",
                         {"metadata": {"labels": {"team": "storage"}}, "spec": {"taints": [THEIR_TAINT]}},
                         content_type="application/merge-patch+json")


def test_hook_outputs_are_kept_on_the_node_and_removed_after_the_delete_hook(cluster, widgets, make_agent, node):
    someone_else_labels_and_taints(cluster, node)
    agent = make_agent(node, resource_options={"node_outputs": OUTPUTS})
    agent.write_result("w1", "create", PUBLISHED)
    agent.start()
    widgets.create("w1", {"size": 1})
    expected = {"labels": {PREFIX + "w1": "ready"}, "annotations": {PREFIX + "w1-note": "kernel 6.1 in place"},
                "conditions": {PREFIX + "KernelCurrent": "True"}, "taints": [PREFIX + "maintenance"]}
    wait_until(lambda: ours(cluster, node) == expected, "the published outputs on the Node")
    others_as_before(cluster, node)
    managers = {(f["manager"], f.get("subresource", "")) for f in get_node(cluster, node)["metadata"]["managedFields"]}
    assert ("nodehook-widgets.example.com", "") in managers
    assert ("nodehook-widgets.example.com", "status") in managers

    # An update that publishes only labels replaces the labels and keeps the rest.
    agent.write_result("w1", "update", {"node": {"labels": {PREFIX + "w1": "updated"}}})
    widgets.patch_spec("w1", {"size": 2})
    expected["labels"] = {PREFIX + "w1": "updated"}
    wait_until(lambda: ours(cluster, node) == expected, "the new label, the rest kept")

    # A restart with nothing changed finds them all, and writes nothing.
    version = get_node(cluster, node)["metadata"]["resourceVersion"]
    agent.stop()
    agent.start()
    kept = wait_until(lambda: agent.log_events("node outputs kept"), "the restarted agent to find them unchanged")
    assert (kept[0]["labels"], kept[0]["annotations"], kept[0]["conditions"], kept[0]["taints"]) == ("1", "1", "1", "1"), kept
    assert agent.log_events("node outputs set") == []
    assert get_node(cluster, node)["metadata"]["resourceVersion"] == version

    # Deleted: after the delete hook the outputs come off, and only they.
    widgets.delete("w1")
    wait_until(lambda: ours(cluster, node) == {"labels": {}, "annotations": {}, "conditions": {}, "taints": []},
               "the outputs gone from the Node")
    assert agent.records("w1", "delete"), "the delete hook ran first"
    others_as_before(cluster, node)


def test_outputs_outside_the_prefixes_are_refused_with_a_log_line_and_an_event(cluster, widgets, make_agent, node):
    agent = make_agent(node, resource_options={"node_outputs": OUTPUTS})
    agent.write_result("w1", "create", {"node": {"labels": {PREFIX + "ok": "1", "kubernetes.io/hostname": "evil"}}})
    agent.start()
    widgets.create("w1", {"size": 1})
    refused = wait_until(lambda: agent.log_events("node outputs refused"), "the refusal logged")
    assert refused[0]["error"] == ('labels["kubernetes.io/hostname"]: "kubernetes.io/hostname" is not under this '
                                   'resource\'s node_outputs.prefixes ("widgets.example.com/")'), refused
    event = wait_until(lambda: [e for e in core_events(widgets, "w1") if e["reason"] == "NodeOutputsRefused"],
                       "the NodeOutputsRefused Event")
    assert event[0]["type"] == "Warning" and "kubernetes.io/hostname" in event[0]["message"], event
    # Refused whole: nothing of it on the Node, and the hook's own outcome stands.
    assert agent.log_events("hook succeeded")
    assert get_node(cluster, node)["metadata"].get("labels", {}).get("kubernetes.io/hostname") != "evil"
    assert ours(cluster, node)["labels"] == {}


def test_a_noexecute_taint_the_agents_own_pod_does_not_tolerate_is_refused_whole(cluster, widgets, make_agent, node):
    """It would evict the agent, and no agent would be left to take it off. The agent reads its own
    pod's tolerations (POD_NAMESPACE, POD_NAME) at start."""
    pod = f"agent-{node}"
    tolerated = {"key": PREFIX + "tolerated", "operator": "Exists", "effect": "NoExecute"}
    create_agent_pod(cluster.kube, widgets.namespace, pod, node, {"app": "nodehook-outputs"}, tolerations=[
        tolerated, {"key": PREFIX + "for-a-while", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}])
    agent = make_agent(node, resource_options={"node_outputs": OUTPUTS},
                       env={"POD_NAMESPACE": widgets.namespace, "POD_NAME": pod})
    agent.write_result("w1", "create", {"node": {"labels": {PREFIX + "w1": "ready"}, "taints": [
        {"key": PREFIX + "for-a-while", "effect": "NoExecute"}]}})
    agent.write_result("w2", "create", {"node": {"taints": [{"key": PREFIX + "tolerated", "effect": "NoExecute"}]}})
    agent.start()
    read = wait_until(lambda: agent.log_events("own tolerations read"), "the agent to read its own pod")
    # The API server adds its own (DefaultTolerationSeconds: not-ready and unreachable, 300 s).
    stored = cluster.kube.request("GET", f"/api/v1/namespaces/{widgets.namespace}/pods/{pod}")["spec"]["tolerations"]
    assert read[0]["pod"] == f"{widgets.namespace}/{pod}" and read[0]["tolerations"] == str(len(stored)), read
    widgets.create("w1", {"size": 1})
    refused = wait_until(lambda: agent.log_events("node outputs refused"), "the refusal logged")
    assert refused[0]["error"].startswith(
        f'taints[0]: "{PREFIX}for-a-while" with effect NoExecute would evict this agent\'s own pod '
        f'{widgets.namespace}/{pod}, which tolerates it for 60 s only (tolerationSeconds)'), refused
    event = wait_until(lambda: [e for e in core_events(widgets, "w1") if e["reason"] == "NodeOutputsRefused"],
                       "the NodeOutputsRefused Event")
    assert f'taints[0]: "{PREFIX}for-a-while"' in event[0]["message"], event  # the Event's note is cut short
    # One it tolerates for good is published.
    widgets.create("w2", {"size": 1})
    wait_until(lambda: ours(cluster, node)["taints"] == [PREFIX + "tolerated"], "the tolerated taint on the Node")
    # Refused whole: w1's label never came.
    assert ours(cluster, node)["labels"] == {}


def test_a_resource_that_leaves_the_config_takes_its_outputs_with_it(cluster, widgets, make_agent, node):
    someone_else_labels_and_taints(cluster, node)
    agent = make_agent(node, resource_options={"node_outputs": OUTPUTS})
    agent.write_result("w1", "create", PUBLISHED)
    agent.start()
    widgets.create("w1", {"size": 1})
    wait_until(lambda: ours(cluster, node)["taints"], "the published outputs on the Node")
    agent.stop()
    config = json.loads(agent.config_file.read_text())
    del config["resources"][0]["node_outputs"]
    agent.config_file.write_text(json.dumps(config))
    agent.start()
    wait_until(lambda: ours(cluster, node) == {"labels": {}, "annotations": {}, "conditions": {}, "taints": []},
               "the outputs gone from the Node")
    others_as_before(cluster, node)
