"""End-to-end: finalizer mode while nodes come and go, with five agents acting as nodes (each with
its own Node object) against the real API server. A departed node's finalizer comes off only
after the Node is gone, promptly when the Node is deleted after the objects; a node that joins
keeps its finalizer until its own delete hook is done; and concurrent deletions run every delete
hook exactly once per node."""

import pytest

from conftest import wait_until
from kube import ApiError, create_node

FINALIZER_MODE = {"finalizer": True}
# No periodic relist: only the Node watch can bring a departed node's finalizer to anyone's notice.
NO_RESYNC = {"resync_seconds": 0}


@pytest.fixture
def nodes(cluster, widgets):
    """Creates Node objects named after the test's namespace; deletes them afterwards."""
    created = []

    def make(suffix):
        name = f"{widgets.namespace}-{suffix}"
        create_node(cluster.kube, name, {})
        created.append(name)
        return name

    yield make
    for name in created:
        delete_node(cluster.kube, name)


def delete_node(kube, name):
    try:
        kube.request("DELETE", f"/api/v1/nodes/{name}")
    except ApiError as e:
        if e.status != 404:  # 404: the test deleted it already
            raise


def start_agents(make_agent, nodes, count, **tuning):
    return [make_agent(nodes(f"n{i}"), resource_options=FINALIZER_MODE, **NO_RESYNC, **tuning).start()
            for i in range(count)]


def create_everywhere(widgets, agents, names):
    """Creates the widgets and waits until every agent ran their create hooks (its finalizer is on)."""
    for name in names:
        widgets.create(name, {"size": 1})
    for agent in agents:
        for name in names:
            agent.wait_for(name, "create")


def finalizers(widgets, name):
    return widgets.get(name)["metadata"].get("finalizers", [])


def no_finalizer_warnings(agent):
    return [e for e in agent.log_events() if e.get("level") in ("warn", "error") and "finalizer" in e.get("event", "")]


def test_a_node_deleted_after_the_objects_has_its_finalizer_removed_by_the_others(make_agent, widgets, nodes, cluster):
    agents = start_agents(make_agent, nodes, 5)
    names = [f"w{i}" for i in range(3)]
    create_everywhere(widgets, agents, names)
    leaving = agents[-1]
    leaving.stop()  # the node goes down; its Node object is still there

    for name in names:
        widgets.delete(name)
    for agent in agents[:-1]:
        for name in names:
            agent.wait_for(name, "delete")
    for name in names:  # the stopped node's finalizer holds the objects while its Node exists
        wait_until(lambda: finalizers(widgets, name) == [f"nodehook.io/{leaving.node}"],
                   f"only {leaving.node}'s finalizer left on {name}")
    assert all(widgets.exists(name) for name in names)

    delete_node(cluster.kube, leaving.node)
    for name in names:
        wait_until(lambda: not widgets.exists(name), f"{name} to be gone once {leaving.node}'s Node is deleted")
    removed_by = [a for a in agents[:-1] if a.log_events("departed node's finalizer removed")]
    assert removed_by, "a remaining agent removed the departed node's finalizer"
    for agent in agents[:-1]:
        assert [r["result"] for r in agent.records(reason="delete") if r["name"] in names] == ["ok"] * len(names)
        assert no_finalizer_warnings(agent) == []


def test_a_node_that_joins_keeps_its_finalizer_until_its_own_delete_hook_is_done(make_agent, widgets, nodes):
    agents = start_agents(make_agent, nodes, 4)
    # A deletion first, so every agent has looked at the cluster's nodes before the new one joins.
    create_everywhere(widgets, agents, ["before"])
    widgets.delete("before")
    wait_until(lambda: not widgets.exists("before"), "before to be gone")

    joining = make_agent(nodes("joining"), resource_options=FINALIZER_MODE, in_progress_delay_seconds=1, **NO_RESYNC)
    joining.report_progress("w1", "delete", times=3)
    joining.start()
    create_everywhere(widgets, [*agents, joining], ["w1"])
    widgets.delete("w1")
    for agent in agents:
        agent.wait_for("w1", "delete")
    joining.wait_for("w1", "delete", count=3, result="progress")
    assert finalizers(widgets, "w1") == [f"nodehook.io/{joining.node}"], "the joined node's finalizer was kept"
    joining.wait_for("w1", "delete", result="ok")
    wait_until(lambda: not widgets.exists("w1"), "w1 to be gone once the joined node is done")
    assert [r["result"] for r in joining.records("w1", "delete")] == ["progress", "progress", "progress", "ok"]


def test_concurrent_deletions_run_every_delete_hook_once_per_node(make_agent, widgets, nodes):
    agents = start_agents(make_agent, nodes, 5, workers=2)
    names = [f"w{i:02d}" for i in range(30)]
    create_everywhere(widgets, agents, names)
    for name in names:
        widgets.delete(name)
    for name in names:
        wait_until(lambda: not widgets.exists(name), f"{name} to be gone")
    for agent in agents:
        agent.settle(widgets)  # anything still queued for the deleted objects has run
        runs = {}
        for r in agent.records(reason="delete"):
            runs.setdefault(r["name"], []).append(r["result"])
        assert runs == {name: ["ok"] for name in names}, f"delete hook runs on {agent.node}"
        assert no_finalizer_warnings(agent) == []
