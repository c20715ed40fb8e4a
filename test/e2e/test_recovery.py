"""End-to-end recovery: agents against a real API server that is stopped and started again with
the same data (same --dir: same port, certificates, token and etcd contents), and the health
endpoints around such outages.

The tests in this module stop and start the API server, so they get their own server (the module
`cluster` fixture below overrides the session one) and never disturb other modules."""

import contextlib
import time
import urllib.error
import urllib.request

import pytest

from conftest import Cluster, wait_until


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("recovery-cluster"))
    yield c
    c.stop()


@contextlib.contextmanager
def api_server_down(cluster):
    """The API server is stopped inside the block and started again (same data) when it ends,
    also when the block fails, so later tests find it running."""
    cluster.stop()
    try:
        yield
    finally:
        cluster.start()


def stays(predicate, seconds):
    """True if `predicate` holds at every poll for `seconds`. The wait is the point here: the test
    has to let time pass to show that something does NOT happen."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not predicate():
            return False
        time.sleep(0.2)
    return True


def reasons(agent, name):
    return [r["reason"] for r in agent.records(name) if r["result"] == "ok"]


def test_api_server_restart_loses_no_final_state_and_needs_no_agent_restart(make_agent, widgets, cluster):
    nodes = [make_agent("node-a").start(), make_agent("node-b").start()]
    for name in ("steady", "pre-upd", "pre-del", "post-upd", "post-del"):
        widgets.create(name, {"size": 1})
    for agent in nodes:
        for name in ("steady", "pre-upd", "pre-del", "post-upd", "post-del"):
            agent.wait_for(name, "create")
    pids = [agent.proc.pid for agent in nodes]

    # Changed right before the stop: the agents may or may not see these events before the server
    # goes away; either way the final states must be handled, once.
    widgets.patch_spec("pre-upd", {"size": 2})
    widgets.create("pre-new", {"size": 1})
    widgets.delete("pre-del")
    with api_server_down(cluster):
        pass  # nothing can change while the server is down
    # ...and right after it is back, before the agents have necessarily reconnected.
    widgets.patch_spec("post-upd", {"size": 2})
    widgets.create("post-new", {"size": 1})
    widgets.delete("post-del")

    expected = {"steady": ["create"], "pre-upd": ["create", "update"], "pre-new": ["create"],
                "pre-del": ["create", "delete"], "post-upd": ["create", "update"],
                "post-new": ["create"], "post-del": ["create", "delete"]}
    for agent in nodes:
        for name, runs in expected.items():
            agent.wait_for(name, runs[-1])
        agent.settle(widgets)
        assert {name: reasons(agent, name) for name in expected} == expected, agent.log_path
        assert [r for r in agent.records() if r["result"] != "ok"] == []
    assert [agent.proc.pid for agent in nodes] == pids
    assert all(agent.proc.poll() is None and agent.starts == 1 for agent in nodes)
    for agent in nodes:
        wait_until(lambda: agent.http_status("/healthz") == 200, f"/healthz 200 on {agent.node}")
        wait_until(lambda: agent.http_status("/readyz") == 200, f"/readyz 200 on {agent.node}")


def test_readyz_fails_until_the_first_list_and_passes_after_it(make_agent, widgets, cluster):
    widgets.create("early", {"size": 1})
    agent = make_agent("node-a")
    with api_server_down(cluster):
        agent.start()
        wait_until(lambda: agent.log_events("list failed"), f"a failed list in {agent.log_path}")
        assert agent.http_status("/readyz") == 503
        # Not listed yet, but not silent for longer than health_stale_seconds (150 s) either.
        assert agent.http_status("/healthz") == 200
    wait_until(lambda: agent.http_status("/readyz") == 200, "/readyz 200 after the first list")
    assert agent.http_status("/healthz") == 200
    agent.wait_for("early", "create")


def test_healthz_stays_ok_on_a_quiet_cluster_whose_watches_end_cleanly(make_agent, widgets):
    # What keeps a quiet watch alive against the real API server (kube-apiserver 1.36, measured):
    # it sends a BOOKMARK only ~2 s before the watch's timeoutSeconds, or about once a minute but
    # only after the resource changed since the watch began; on a quiet resource it sends nothing
    # and ends the watch cleanly at timeoutSeconds. Here watches last 3-5 s (below stall_seconds),
    # so the agent just rewatches after each clean end: silent longer than health_stale_seconds,
    # yet nothing fails.
    widgets.create("quiet", {"size": 1})
    agent = make_agent("node-a", watch_timeout_seconds=3, stall_seconds=8, health_stale_seconds=3,
                       log_level="debug").start()
    agent.wait_for("quiet", "create")
    assert stays(lambda: agent.http_status("/healthz") == 200, seconds=15)
    assert len(agent.log_events("watch ended")) >= 2, agent.log_path
    assert agent.log_events("watch failed") == [] and agent.log_events("watch stalled") == []


def test_healthz_stays_ok_on_a_quiet_cluster_when_the_stall_detector_reopens_the_watch(make_agent, widgets):
    # stall_seconds below the watch's timeoutSeconds on a quiet resource (the server sends no
    # bookmark then, see above): the agent cuts the silent watch every 2 s and reopens it, each
    # time successfully. Nothing is failing, so /healthz must stay 200. (Until d6b1cfb each such
    # reopen counted as a failed reconnect: 503 after 3 s here, and with the defaults, stall 90 s
    # below watch timeout 300 s, 503 at ~150 s unless a bookmark happened to come first.)
    widgets.create("quiet", {"size": 1})
    agent = make_agent("node-a", stall_seconds=2, health_stale_seconds=3).start()
    agent.wait_for("quiet", "create")
    assert stays(lambda: agent.http_status("/healthz") == 200, seconds=12)
    assert len(agent.log_events("watch stalled")) >= 3, agent.log_path  # the stall detector did cut it


def test_healthz_fails_while_the_server_is_down_longer_than_the_bound_and_recovers(make_agent, widgets, cluster):
    widgets.create("w1", {"size": 1})
    agent = make_agent("node-a", health_stale_seconds=3).start()
    agent.wait_for("w1", "create")
    wait_until(lambda: agent.http_status("/readyz") == 200, "/readyz 200")
    assert agent.http_status("/healthz") == 200
    pid = agent.proc.pid
    with api_server_down(cluster):
        wait_until(lambda: agent.http_status("/healthz") == 503, "/healthz 503 while the server is down")
        assert agent.http_status("/readyz") == 200  # once listed, ready stays ready
    widgets.patch_spec("w1", {"size": 2})
    agent.wait_for("w1", "update")
    wait_until(lambda: agent.http_status("/healthz") == 200, "/healthz 200 after the server is back")
    assert agent.proc.pid == pid and agent.proc.poll() is None


def http_body(agent, path):
    try:
        with urllib.request.urlopen(agent.health_url(path), timeout=5) as resp:
            return resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()


def test_an_agent_started_before_its_crd_stays_alive_and_gets_ready_once_the_crd_is_applied(make_agent, widgets, cluster):
    """GitOps tools apply a CRD and its agents in no fixed order: a 404 on the list is the server's
    answer, so liveness holds (the kubelet would otherwise restart the agent again and again) and
    readiness, a log line and a gauge say what is missing."""
    kube = cluster.kube
    group, plural = f"late-{time.monotonic_ns()}.example.com", "sprockets"
    # Lists are retried at most a second apart, well inside the 3-s liveness bound (by default 30 s
    # inside 150 s).
    agent = make_agent("node-a", health_stale_seconds=3, reconnect_max_ms=1000,
                       resource_options={"group": group, "plural": plural}).start()
    wait_until(lambda: agent.log_events("list failed"), f"a failed list in {agent.log_path}")
    # Longer than health_stale_seconds, every list answered 404: alive, not ready.
    assert stays(lambda: agent.http_status("/healthz") == 200, seconds=8)
    assert agent.http_status("/readyz") == 503
    assert "is the CRD installed" in http_body(agent, "/readyz")
    resource = f'resource="{plural}.{group}/v1"'
    assert f"nodehook_watch_resource_served{{{resource}}} 0" in http_body(agent, "/metrics")
    assert len(agent.log_events("resource not served")) == 1  # once, not at every retry

    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": f"{plural}.{group}"},
           "spec": {"group": group, "scope": "Namespaced",
                    "names": {"kind": "Sprocket", "listKind": "SprocketList", "plural": plural, "singular": "sprocket"},
                    "versions": [{"name": "v1", "served": True, "storage": True,
                                  "schema": {"openAPIV3Schema": {"type": "object",
                                                                 "x-kubernetes-preserve-unknown-fields": True}}}]}}
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{plural}.{group}"
    kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    try:
        wait_until(lambda: agent.http_status("/readyz") == 200, "/readyz 200 once the CRD is served")
        assert agent.log_events("resource served")
        assert f"nodehook_watch_resource_served{{{resource}}} 1" in http_body(agent, "/metrics")
        kube.request("POST", f"/apis/{group}/v1/namespaces/{widgets.namespace}/{plural}",
                     {"apiVersion": f"{group}/v1", "kind": "Sprocket", "metadata": {"name": "s1"}})
        agent.wait_for("s1", "create")
    finally:
        kube.request("DELETE", path)
