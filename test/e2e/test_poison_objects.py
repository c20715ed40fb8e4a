"""End-to-end: one bad object never blocks a node (issue 8, item 1). A widget nested as deep as
the API server allows, one just below that, and one larger than the agents accept are each
quarantined on their own, with a Warning Event, while every other widget keeps flowing."""

import re
import urllib.request

import pytest

from conftest import wait_until
from kube import ApiError
from raw_json import json_depth, nested_spec, raw_request, widget_bytes

MAX_OBJECT_BYTES = 300_000  # above the deep widgets (about 210 kB each), below "huge"


def create_raw(widgets, name, spec_bytes):
    return raw_request(widgets.kube, "POST", widgets.base, widget_bytes(name, spec_bytes))


def quarantine_events(widgets, name):
    listed = widgets.kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{widgets.namespace}/events")
    return [e for e in listed["items"] if e["regarding"]["name"] == name and e["reason"] == "ObjectQuarantined"]


def metrics(agent):
    with urllib.request.urlopen(agent.health_url("/metrics"), timeout=5) as resp:
        return resp.read().decode()


@pytest.fixture
def poison_names(widgets):
    """Names of poison widgets, deleted after the test. Left in the session's API server, a widget
    10,000 levels deep fails every list of widgets that holds it (the server cannot encode the
    list), and a server restarted later (test_rollout) spends over a minute before it serves
    widgets again."""
    names = []
    yield names
    for name in names:
        try:
            widgets.delete(name)
        except ApiError as e:
            if e.status != 404:
                raise


def test_poison_widgets_are_quarantined_and_every_other_widget_keeps_flowing(make_agent, widgets, poison_names):
    agents = [make_agent(node, max_object_bytes=MAX_OBJECT_BYTES).start() for node in ("node-a", "node-b")]
    # The server adds managedFields, whose fieldsV1 mirror the spec four levels further down: a
    # request 9,996 levels deep (the deepest it accepts) is served 10,000 levels deep.
    poison = {"deep-10000": nested_spec(9996), "deep-9999": nested_spec(9995),
              "huge": b'{"blob":"' + b"x" * (2 * MAX_OBJECT_BYTES) + b'"}'}
    poison_names.extend(poison)
    for name, spec in poison.items():
        create_raw(widgets, name, spec)
    assert json_depth(raw_request(widgets.kube, "GET", f"{widgets.base}/deep-10000")) == 10000
    assert json_depth(raw_request(widgets.kube, "GET", f"{widgets.base}/deep-9999")) == 9999
    widgets.create("after-1", {"size": 1})
    widgets.create("after-2", {"size": 2})
    for agent in agents:
        agent.wait_for("after-1", "create")
        agent.wait_for("after-2", "create")
        assert not [r for r in agent.records() if r["name"] in poison]

    for name in poison:
        events = wait_until(lambda: len({e["reportingInstance"] for e in quarantine_events(widgets, name)}) == 2
                            and quarantine_events(widgets, name), f"Warning Events about {name} from both nodes")
        assert all(e["type"] == "Warning" for e in events)
    assert "too deep" not in quarantine_events(widgets, "huge")[0]["note"]
    assert "max_object_depth" in quarantine_events(widgets, "deep-10000")[0]["note"]
    text = metrics(agents[0])
    assert re.search(r'nodehook_objects_quarantined\{resource="widgets.example.com/v1"\} 3\b', text), text
    assert re.search(r'nodehook_objects_quarantined_total\{reason="too_deep",resource="widgets.example.com/v1"\} 2\b',
                     text), text

    # A restart lists the poison widgets again: the agent still becomes ready.
    node_a = agents[0]
    assert node_a.stop() == 0
    node_a.start()
    wait_until(lambda: node_a.http_status("/readyz") == 200, "node-a ready after a restart among poison widgets")
    widgets.create("after-restart", {"size": 3})
    node_a.wait_for("after-restart", "create")

    # Deleting a poison widget stalls nothing.
    widgets.delete("deep-10000")
    widgets.create("after-delete", {"size": 4})
    for agent in agents:
        agent.wait_for("after-delete", "create")
        assert not [r for r in agent.records() if r["name"] in poison]
        assert len(agent.records("after-1")) == 1


def test_a_handled_widget_that_turns_bad_keeps_its_delete_and_a_fixed_one_is_handled_again(make_agent, widgets):
    agents = [make_agent(node).start() for node in ("node-a", "node-b")]
    widgets.create("turns-bad", {"size": 1})
    for agent in agents:
        agent.wait_for("turns-bad", "create")
    # The merge patch makes it 5000 levels deep: beyond the default max_object_depth of 1000.
    raw_request(widgets.kube, "PATCH", f"{widgets.base}/turns-bad", b'{"spec":' + nested_spec(5000) + b"}",
                "application/merge-patch+json")
    create_raw(widgets, "fixed-later", nested_spec(5000))
    for agent in agents:
        agent.settle(widgets)
        assert [r["reason"] for r in agent.records("turns-bad")] == ["create"]  # no update for a bad state
        assert agent.records("fixed-later") == []

    # Good again: handled as usual.
    raw_request(widgets.kube, "PATCH", f"{widgets.base}/fixed-later", b'{"spec":{"x":null,"size":1}}',
                "application/merge-patch+json")
    # Deleted while bad: the delete hook still runs, with the last handled state.
    widgets.delete("turns-bad")
    for agent in agents:
        agent.wait_for("fixed-later", "create")
        agent.wait_for("turns-bad", "delete")
