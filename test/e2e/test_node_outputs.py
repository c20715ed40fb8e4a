"""A resource's NodeCondition on the agent's own Node ("node_outputs": {"condition": TYPE},
docs/configuration.md), against the real API server: it follows the objects' states on the node
(True when all are handled, False naming the failing one, and back), is written only when it
changes, a restart with nothing changed writes nothing, and a resource that stops keeping one
takes it off the Node. The kubelet's conditions are never touched."""

import datetime
import itertools
import json
import os

import pytest

from conftest import wait_until

CONDITION = "WidgetsReady"
_ids = itertools.count(1)


@pytest.fixture
def node(cluster):
    """A Node object for the agent to act as, with a condition of the kubelet's already set."""
    name = f"outputs-{os.getpid()}-{next(_ids)}"
    cluster.kube.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}})
    cluster.kube.request("PATCH", f"/api/v1/nodes/{name}/status",
                         {"status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                                     "message": "kubelet is posting ready status"}]}},
                         content_type="application/merge-patch+json")
    yield name
    cluster.kube.request("DELETE", f"/api/v1/nodes/{name}")


def conditions(cluster, node):
    return {c["type"]: c for c in cluster.kube.request("GET", f"/api/v1/nodes/{node}")["status"].get("conditions", [])}


def condition_is(cluster, node, status, message_part=""):
    c = conditions(cluster, node).get(CONDITION)
    return c if c and c["status"] == status and message_part in c.get("message", "") else None


def seconds_between(a, b):
    """Seconds from log line `a` to log line `b` (their ts keys, RFC 3339 with milliseconds)."""
    parse = lambda e: datetime.datetime.strptime(e["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return (parse(b) - parse(a)).total_seconds()


def test_the_condition_follows_the_objects_states_and_is_written_only_when_it_changes(cluster, widgets, make_agent,
                                                                                        node):
    agent = make_agent(node, resource_options={"node_outputs": {"condition": CONDITION}}).start()
    widgets.create("w1", {"size": 1})
    first = wait_until(lambda: condition_is(cluster, node, "True", "is handled on this node"), "the condition True")
    assert first["reason"] == "AllHandled"

    (agent.control_dir / "fail-w2-create").write_text("1000")
    widgets.create("w2", {"size": 2})
    failing = wait_until(lambda: condition_is(cluster, node, "False"), "the condition False while w2 fails")
    assert failing["reason"] == "HooksFailing"
    assert f"{widgets.namespace}/w2 create: exited 1: failing on purpose" in failing["message"], failing
    assert failing["lastTransitionTime"] >= first["lastTransitionTime"]

    (agent.control_dir / "fail-w2-create").unlink()
    wait_until(lambda: condition_is(cluster, node, "True"), "the condition True again")
    # The kubelet's condition is as it was: the agent owns only its own.
    assert conditions(cluster, node)["Ready"]["reason"] == "KubeletReady"
    written = agent.log_events("node condition set")
    # (Unknown while starting,) True, (Unknown while w2 waited for its first run,) False, (Unknown,)
    # True: transitions, never a heartbeat; a message alone changes at most once a minute.
    assert written[-1]["status"] == "True" and "False" in [w["status"] for w in written], written
    for a, b in zip(written, written[1:]):
        if (a["status"], a["reason"]) == (b["status"], b["reason"]):
            assert seconds_between(a, b) >= 60, written
    managers = [f["manager"] for f in cluster.kube.request("GET", f"/api/v1/nodes/{node}")["metadata"]["managedFields"]]
    assert "nodehook-widgets.example.com" in managers

    # A restart with nothing changed finds the condition as it derives it, and writes nothing.
    version = cluster.kube.request("GET", f"/api/v1/nodes/{node}")["metadata"]["resourceVersion"]
    agent.stop()
    agent.start()
    kept = wait_until(lambda: agent.log_events("node condition kept"), "the restarted agent to find it unchanged")
    assert kept[0]["status"] == "True"
    assert agent.log_events("node condition set") == []
    assert cluster.kube.request("GET", f"/api/v1/nodes/{node}")["metadata"]["resourceVersion"] == version


def test_a_resource_that_stops_keeping_its_condition_takes_it_off_the_node(cluster, widgets, make_agent, node):
    agent = make_agent(node, resource_options={"node_outputs": {"condition": CONDITION}}).start()
    widgets.create("w1", {"size": 1})
    wait_until(lambda: condition_is(cluster, node, "True"), "the condition True")
    agent.stop()
    config = json.loads(agent.config_file.read_text())
    del config["resources"][0]["node_outputs"]
    agent.config_file.write_text(json.dumps(config))
    agent.start()
    wait_until(lambda: CONDITION not in conditions(cluster, node), "the condition gone from the Node")
    # Logged after the writes: the Node may show it first.
    removed = wait_until(lambda: agent.log_events("node condition removed"), "the removal logged")
    assert removed[0]["manager"] == "nodehook-widgets.example.com"
    assert "Ready" in conditions(cluster, node)


def test_a_resource_with_only_a_delete_hook_is_handled_once_its_objects_are_remembered(cluster, widgets, make_agent,
                                                                                       node):
    """Without a create hook the node still stores each object (its delete hook will need it): that
    is its handling, and the condition goes True."""
    make_agent(node, reasons=("delete",), resource_options={"node_outputs": {"condition": CONDITION}}).start()
    widgets.create("w1", {"size": 1})
    wait_until(lambda: condition_is(cluster, node, "True"), "the condition True for a delete-only resource")
