"""End-to-end: handler semantics against the real API server: multi-step deletion with per-node
finalizers, durable raw event hooks, departed nodes' finalizers, node targeting."""

from conftest import wait_until
from kube import create_node, set_node_labels

FINALIZER_MODE = {"finalizer": True}


def test_multi_step_deletion_holds_the_finalizer_until_the_hook_is_done(make_agent, widgets):
    node = make_agent("node-a", resource_options=FINALIZER_MODE, in_progress_delay_seconds=1).start()
    node.report_progress("w1", "delete", times=2)
    widgets.create("w1", {"size": 1})
    node.wait_for("w1", "create")
    assert widgets.get("w1")["metadata"]["finalizers"] == ["nodehook.io/node-a"]

    widgets.delete("w1")
    node.wait_for("w1", "delete", count=2, result="progress")
    still_there = widgets.get("w1")  # in progress is not done: the finalizer holds the object
    assert still_there["metadata"]["finalizers"] == ["nodehook.io/node-a"]
    assert "deletionTimestamp" in still_there["metadata"]
    node.wait_for("w1", "delete", result="ok")
    wait_until(lambda: not widgets.exists("w1"), "w1 to be gone once the finalizer is removed")
    assert [r["result"] for r in node.records("w1", "delete")] == ["progress", "progress", "ok"]
    in_progress_lines = [e for e in node.log_events("hook in progress") if e.get("object", "").endswith("/w1")]
    assert in_progress_lines and all(e["level"] == "info" for e in in_progress_lines)


def test_a_failing_event_hook_is_retried_across_a_restart(make_agent, widgets):
    node = make_agent("node-a", reasons=("event",))
    node.fail_hook("w1", "event", times=2)
    node.start()
    widgets.create("w1", {"size": 1})
    node.wait_for("w1", "event:ADDED", result="failed")
    node.stop()
    node.start()
    node.wait_for("w1", "event:ADDED", result="ok")
    runs = node.records("w1", "event:ADDED")
    assert runs[0]["retry"] == 0 and runs[0]["result"] == "failed"
    assert runs[1]["retry"] == 1, "the stored event kept its retry count across the restart"
    widgets.delete("w1")
    node.wait_for("w1", "event:DELETED", result="ok")


def test_the_finalizer_of_a_node_that_left_the_cluster_is_cleaned_up(make_agent, widgets):
    node = make_agent("node-a", resource_options=FINALIZER_MODE).start()
    widgets.create("w1", {"size": 1})
    node.wait_for("w1", "create")
    # An agent on a node that no longer exists once put its finalizer here.
    widgets.set_finalizers("w1", ["nodehook.io/node-a", "nodehook.io/node-that-left"])
    widgets.delete("w1")
    node.wait_for("w1", "delete")
    wait_until(lambda: not widgets.exists("w1"), "w1 to be deleted once both finalizers are gone")


def test_node_targeting_with_two_agents_whose_nodes_carry_different_labels(make_agent, widgets, cluster):
    east, west = f"{widgets.namespace}-east", f"{widgets.namespace}-west"
    create_node(cluster.kube, east, {"zone": "east"})
    create_node(cluster.kube, west, {"zone": "west"})
    targeting = {"node_selector_path": "spec.nodeSelector"}
    a = make_agent(east, resource_options=targeting).start()
    b = make_agent(west, resource_options=targeting).start()

    widgets.create("east-only", {"nodeSelector": {"zone": "east"}})
    widgets.create("everywhere", {"size": 1})
    a.wait_for("east-only", "create")
    for agent in (a, b):
        agent.wait_for("everywhere", "create")
    b.settle(widgets)
    assert b.records("east-only") == []

    set_node_labels(cluster.kube, west, {"zone": "east"})  # node b joins the zone
    b.wait_for("east-only", "create")
    set_node_labels(cluster.kube, east, {"zone": "north"})  # node a leaves it: handled as deleted there
    a.wait_for("east-only", "delete")
    a.settle(widgets)
    assert [r["reason"] for r in a.records("east-only")] == ["create", "delete"]
    assert [r["reason"] for r in a.records("everywhere")] == ["create"]


def test_a_permanent_failure_posts_one_warning_event_with_the_node_as_reporting_instance(make_agent, widgets):
    node = make_agent("node-a", retry_limit=2)
    node.fail_hook("w1", "create", times=99)
    node.start()
    created = widgets.create("w1", {"size": 1})
    node.wait_for("w1", "create", count=2, result="failed")

    def events_about_w1():
        listed = widgets.kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{widgets.namespace}/events")
        # HandlerFailing (its first failure) may come too; HandlerFailed is the permanent failure.
        return [e for e in listed["items"] if e["regarding"]["name"] == "w1" and e["reason"] == "HandlerFailed"]

    events = wait_until(events_about_w1, "a HandlerFailed Event about w1")
    assert len(events) == 1
    event = events[0]
    assert event["type"] == "Warning"
    assert event["reportingInstance"] == "node-a"
    assert event["regarding"]["uid"] == created["metadata"]["uid"]
    assert event["action"] == "create"
    assert [r["result"] for r in node.records("w1")] == ["failed", "failed"]  # given up: no third run
