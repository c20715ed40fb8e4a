"""What hooks publish for their own node ("node" in the result file: labels, annotations,
conditions, taints; node_outputs.prefixes, docs/configuration.md), against the real API server:
kept on the agent's own Node while the object lives, taken off after its delete hook or when the
resource leaves the config, written only when they change (a restart writes nothing), and never
touching what others put on the Node. Keys outside the prefixes are refused with a log line and
an Event."""

import json

from conftest import wait_until
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
