"""Entries of one resource in several namespaces (config `resources`, one per namespace).

The state store keeps an object's progress under its resource's id (widgets.example.com/v1),
which the entries share: each entry must take only its own namespace's records for its own,
above all when its list decides which remembered objects were deleted while the agent was down.
"""

import json

from conftest import wait_until
from kube import Widgets, create_namespace


def two_namespaces(agent, cluster, widgets):
    """Adds a second entry of widgets, in a new namespace, to the agent's config; returns its Widgets."""
    other = Widgets(cluster.kube, widgets.namespace + "-b")
    create_namespace(cluster.kube, other.namespace)
    config = json.loads(agent.config_file.read_text())
    config["resources"].append({**config["resources"][0], "namespace": other.namespace})
    agent.config_file.write_text(json.dumps(config, indent=2))
    return other


def test_a_restart_takes_for_deleted_only_what_left_the_entrys_own_namespace(cluster, widgets, make_agent):
    agent = make_agent("entries-node")
    other = two_namespaces(agent, cluster, widgets)
    agent.start()
    widgets.create("a1", {"size": 1})
    widgets.create("a2", {"size": 1})
    other.create("b1", {"size": 1})
    for name in ("a1", "a2", "b1"):
        agent.wait_for(name, "create")

    agent.stop()
    widgets.delete("a2")  # while the agent is down: its delete hook is owed, and only its
    agent.start()
    agent.wait_for("a2", "delete")
    agent.settle(widgets)
    other.create("b-sentinel", {"size": 1})  # one worker: after this, the second entry's list is handled too
    agent.wait_for("b-sentinel", "create")

    runs = [(r["reason"], r["name"]) for r in agent.records()]
    assert sorted(r for r in runs if not r[1].startswith(("sentinel", "b-sentinel"))) == sorted(
        [("create", "a1"), ("create", "a2"), ("create", "b1"), ("delete", "a2")]), runs
    wait_until(lambda: agent.http_status() == 200, "the agent to be ready")
