"""End-to-end: two agents acting as nodes node-a and node-b against a real API server."""

import pytest


@pytest.fixture
def nodes(make_agent):
    return make_agent("node-a").start(), make_agent("node-b").start()


def test_create_runs_the_create_hook_exactly_once_on_each_node(nodes, widgets):
    widgets.create("w1", {"size": 1})
    for agent in nodes:
        agent.wait_for("w1", "create")
        agent.settle(widgets)
        runs = agent.records("w1")
        assert [r["reason"] for r in runs] == ["create"]
        assert runs[0]["node"] == agent.node


def test_spec_update_runs_the_update_hook_once_on_each_node(nodes, widgets):
    widgets.create("w1", {"size": 1})
    for agent in nodes:
        agent.wait_for("w1", "create")
    widgets.patch_spec("w1", {"size": 2})
    for agent in nodes:
        agent.wait_for("w1", "update")
        agent.settle(widgets)
        assert [r["reason"] for r in agent.records("w1")] == ["create", "update"]


def test_status_only_change_runs_nothing(nodes, widgets):
    widgets.create("w1", {"size": 1})
    for agent in nodes:
        agent.wait_for("w1", "create")
    widgets.patch_status("w1", {"phase": "Busy"})
    widgets.patch_status("w1", {"phase": "Ready"})
    for agent in nodes:
        agent.settle(widgets)
        assert [r["reason"] for r in agent.records("w1")] == ["create"]


def test_restarted_agent_reruns_nothing(nodes, widgets):
    widgets.create("w1", {"size": 1})
    widgets.create("w2", {"size": 2})
    node_a, _ = nodes
    node_a.wait_for("w1", "create")
    node_a.wait_for("w2", "create")
    assert node_a.stop() == 0
    node_a.start()
    node_a.settle(widgets)
    assert len(node_a.records("w1")) == 1
    assert len(node_a.records("w2")) == 1


def test_changes_made_while_an_agent_is_down_are_handled_after_restart(nodes, widgets):
    widgets.create("changed", {"size": 1})
    widgets.create("doomed", {"size": 1})
    node_a, node_b = nodes
    # node-b too: one that starts late would list after "doomed" is gone and never run its delete.
    for agent in nodes:
        for name in ("changed", "doomed"):
            agent.wait_for(name, "create")
    node_a.stop()
    widgets.patch_spec("changed", {"size": 5})
    widgets.create("born", {"size": 1})
    widgets.delete("doomed")
    node_b.wait_for("doomed", "delete")
    node_a.start()
    node_a.wait_for("changed", "update")
    node_a.wait_for("born", "create")
    node_a.wait_for("doomed", "delete")
    node_a.settle(widgets)
    assert [r["reason"] for r in node_a.records("changed")] == ["create", "update"]
    assert [r["reason"] for r in node_a.records("doomed")] == ["create", "delete"]


def test_delete_runs_the_delete_hook_once_on_each_node(nodes, widgets):
    created = widgets.create("w1", {"size": 1})
    for agent in nodes:
        agent.wait_for("w1", "create")
    widgets.delete("w1")
    for agent in nodes:
        agent.wait_for("w1", "delete")
        agent.settle(widgets)
        runs = agent.records("w1")
        assert [r["reason"] for r in runs] == ["create", "delete"]
        assert runs[1]["uid"] == created["metadata"]["uid"]


def test_failing_hook_is_retried_until_it_succeeds_and_its_retry_count_survives_a_restart(make_agent, widgets):
    node_a = make_agent("node-a")
    node_a.fail_hook("flaky", "create", times=3)
    node_a.start()
    widgets.create("flaky", {"size": 1})
    node_a.wait_for("flaky", "create", count=2, result="failed")
    node_a.stop()
    before = node_a.records("flaky")
    node_a.start()
    node_a.wait_for("flaky", "create", result="ok")
    after = node_a.records("flaky")[len(before):]
    # The count carried over (a reset would start at 0 again) and went on until success.
    assert after[0]["retry"] >= before[-1]["retry"] >= 1
    assert [r["retry"] for r in before + after] == sorted(r["retry"] for r in before + after)
    assert after[-1] == {**after[-1], "retry": 3, "result": "ok"}
