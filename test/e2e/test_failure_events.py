"""End-to-end, against the real API server: a failing handler is visible from kubectl with the
default retry settings (a Warning Event when it starts failing, a bounded number however often it
fails, a Normal Event when it recovers), and an explicit retry, through POST /v1/retry or
`nodehook state retry`, revives a permanent failure for exactly one more run."""

import subprocess
import urllib.parse

from conftest import REPO, _binary, wait_until
from test_admin_endpoint import admin_url, post


def core_events(widgets, name):
    """What `kubectl get events --field-selector involvedObject.name=NAME` lists (core v1)."""
    selector = urllib.parse.quote(f"involvedObject.name={name}")
    listed = widgets.kube.request("GET", f"/api/v1/namespaces/{widgets.namespace}/events?fieldSelector={selector}")
    return listed["items"]


def new_events(widgets, name):
    """The same Events through events.k8s.io/v1, selected by regarding.name."""
    selector = urllib.parse.quote(f"regarding.name={name}")
    listed = widgets.kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{widgets.namespace}/events"
                                         f"?fieldSelector={selector}")
    return listed["items"]


def state_cli(agent, *args):
    """`nodehook state ARGS` on the agent's file, naming neither node nor config: the file holds one node."""
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    done = subprocess.run([str(binary), "state", *args, "--state-file", str(agent.state_file)],
                          capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_hook_failing_again_and_again_posts_one_warning_and_a_normal_event_when_it_recovers(make_agent, widgets):
    node = make_agent("node-a", retry_base_seconds=1, retry_max_seconds=1)  # retry_limit: the default, never
    node.fail_hook("w1", "create", 9)
    node.start()
    uid = widgets.create("w1", {"size": 1})["metadata"]["uid"]
    node.wait_for("w1", "create", result="ok")
    assert len(node.records("w1", "create")) == 10  # 9 failures, then success

    def recovered():
        return [e for e in core_events(widgets, "w1") if e["reason"] == "HandlerRecovered"]

    wait_until(recovered, "a HandlerRecovered Event about w1")
    events = core_events(widgets, "w1")
    warnings = [e for e in events if e["type"] == "Warning"]
    # Failures 1, 2, 4 and 8 are candidates; all but the first fall within the 5-minute interval.
    assert [e["reason"] for e in warnings] == ["HandlerFailing"]
    warning = warnings[0]
    assert warning["involvedObject"]["uid"] == uid
    assert warning["reportingInstance"] == "node-a"
    assert warning["action"] == "create"
    assert warning["message"].startswith("create hook failing on node node-a (attempt 1,")
    assert warning["message"].endswith("exited 1: failing on purpose at retry 0")
    normal = recovered()
    assert len(normal) == 1 and normal[0]["type"] == "Normal"
    assert normal[0]["message"] == "create hook succeeded on node node-a after 9 failed attempts"
    assert len(events) == 2
    assert sorted(e["reason"] for e in new_events(widgets, "w1")) == ["HandlerFailing", "HandlerRecovered"]


def test_an_explicit_retry_revives_a_permanent_failure_for_one_more_run(make_agent, widgets):
    node = make_agent("node-a", retry_limit=1)
    node.fail_hook("w2", "create", 2)  # fails at retries 0 and 1, succeeds at 2
    node.start()
    uid = widgets.create("w2", {"size": 1})["metadata"]["uid"]
    node.wait_for("w2", "create", result="failed")
    wait_until(lambda: "permanent_failure" in state_cli(node, "show", f"{widgets.namespace}/w2"),
               "the create of w2 to fail permanently")
    shown = state_cli(node, "show", f"{widgets.namespace}/w2")
    assert "next attempt:  none (gave up" in shown, shown

    # Through the admin endpoint: accepted, runs once more, fails, and gives up again.
    status, body = post(admin_url(node, f"/v1/retry?uid={uid}"))
    assert status == 202, body
    node.wait_for("w2", "create", count=2, result="failed")
    node.settle(widgets)
    wait_until(lambda: "permanent_failure" in state_cli(node, "show", uid), "w2 to give up again")
    assert [r["retry"] for r in node.records("w2", "create")] == [0, 1]

    # Through the CLI, by namespace/name: it says exactly that, and this time the hook succeeds.
    said = state_cli(node, "retry", f"{widgets.namespace}/w2")
    assert f"handler create of {widgets.namespace}/w2 ({uid}) had given up after 2 failed attempts; " \
           "it runs once more now" in said, said
    node.wait_for("w2", "create", result="ok")
    assert [(r["retry"], r["result"]) for r in node.records("w2", "create")] == [(0, "failed"), (1, "failed"), (2, "ok")]
    reasons = [e["reason"] for e in core_events(widgets, "w2")]
    assert "HandlerFailed" in reasons
