"""End-to-end: every list strategy (tuning.list_strategy) against the real API server, and
server-side sharding with a {node} label selector."""

import pytest

NODE_LABEL = "example.com/node"


@pytest.mark.parametrize("strategy", ["paginated", "watch_cache", "streaming"])
def test_each_list_strategy_notices_an_object_deleted_while_the_agent_was_down(make_agent, widgets, strategy):
    agent = make_agent("node-a", list_strategy=strategy).start()
    widgets.create("kept", {"size": 1})
    widgets.create("doomed", {"size": 1})
    agent.wait_for("kept", "create")
    agent.wait_for("doomed", "create")
    assert agent.stop() == 0
    widgets.delete("doomed")
    widgets.create("born", {"size": 1})
    agent.start()
    agent.wait_for("doomed", "delete")
    agent.wait_for("born", "create")
    agent.settle(widgets)
    assert [r["reason"] for r in agent.records("kept")] == ["create"]
    assert [r["reason"] for r in agent.records("doomed")] == ["create", "delete"]
    listed = agent.log_events("listed")
    assert listed and all(e["strategy"] == strategy for e in listed), listed
    # A server that refused streaming would have meant paginated lists, and said so.
    assert not agent.log_events("streaming list refused")


def test_an_agent_without_the_knob_reads_its_lists_as_streams(make_agent, widgets):
    """The default is a streaming list; one that fails (a loaded server's watch cache that does
    not catch up in time) is followed by a paginated list and says so, never a backoff first."""
    widgets.create("present", {"size": 1})
    agent = make_agent("node-a").start()
    agent.wait_for("present", "create")
    events = [e for e in agent.log_events() if e.get("event") in ("listed", "streaming list failed", "list failed")]
    assert events, "the agent logged no list"
    if events[0]["event"] == "listed":
        assert events[0]["strategy"] == "streaming", events
    else:
        assert events[0]["event"] == "streaming list failed" and events[0]["next"] == "paginated list now", events
    assert not agent.log_events("streaming list refused")


def test_a_node_selector_template_shards_objects_between_agents(make_agent, widgets):
    shard = {"label_selector": NODE_LABEL + " in ({node},all)"}
    node_a = make_agent("node-a", resource_options=shard).start()
    node_b = make_agent("node-b", resource_options=shard).start()
    widgets.create("for-a", {"size": 1}, labels={NODE_LABEL: "node-a"})
    widgets.create("for-b", {"size": 1}, labels={NODE_LABEL: "node-b"})
    widgets.create("for-all", {"size": 1}, labels={NODE_LABEL: "all"})
    widgets.create("for-nobody", {"size": 1})
    for agent in (node_a, node_b):
        agent.wait_for("for-all", "create")
        # A labelled sentinel both see: once it ran, everything created before it was listed or
        # watched, so what did not run was never sent to this agent.
        sentinel = f"sentinel-{agent.node}"
        widgets.create(sentinel, {"size": 1}, labels={NODE_LABEL: agent.node})
        agent.wait_for(sentinel, "create")
    assert {r["name"] for r in node_a.records()} == {"for-a", "for-all", "sentinel-node-a"}
    assert {r["name"] for r in node_b.records()} == {"for-b", "for-all", "sentinel-node-b"}

    # Relabelled to the other node: it leaves node-a's watch (a delete there), joins node-b's.
    widgets.patch_labels("for-a", {NODE_LABEL: "node-b"})
    node_a.wait_for("for-a", "delete")
    node_b.wait_for("for-a", "create")
