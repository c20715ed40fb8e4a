"""`kubectl nodehook`: the fleet view, asked of every agent through the real API server's pod proxy.

The test cluster has no kubelet, so agent pods are Pod objects whose status the test sets itself
(podIP, phase Running) and whose agents run here. The pod proxy refuses loopback pod IPs: its
"address not allowed" check (kubernetes pkg/registry/core/pod/strategy.go, ResourceLocation) is
`IsGlobalUnicast()`. So the agents run in a network namespace the test makes (pod_network.py),
each listening on a 10.250.N.x address that exists only there; the API server reaches them over
the namespace's veth pair, and they reach the API server's 127.0.0.1 through a relay. Needs root.
"""

import os
import re
import subprocess
from urllib.parse import urlparse

import pytest

from conftest import _binary, REPO, wait_until
from deploy_tools import kubectl_binary
from kube import ApiError
from pod_network import PodNetwork

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="makes a network namespace for the pod addresses: needs root")

NAMESPACE = "nodehook"  # the plugin's defaults match deploy/base
LABELS = {"app.kubernetes.io/name": "nodehook"}
PORT = 8090


@pytest.fixture
def pod_network(cluster):
    """A network namespace with three pod addresses; agents started with its launcher reach the
    API server at the same 127.0.0.1 address and port as outside."""
    network = PodNetwork(addresses=3)
    try:
        network.forward_loopback(int(urlparse(cluster.kube.server).port))
        yield network
    finally:
        network.close()


@pytest.fixture
def agent_pods(cluster):
    """Creates Pod objects as the DaemonSet's would look once running; deletes them afterwards."""
    kube = cluster.kube
    for path, body in (("/api/v1/namespaces", {"metadata": {"name": NAMESPACE}}),
                       (f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts", {"metadata": {"name": "default"}})):
        try:
            kube.request("POST", path, body)
        except ApiError as e:
            if e.status != 409:
                raise
    created = []

    def make(name, node, ip):
        kube.request("POST", f"/api/v1/namespaces/{NAMESPACE}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "labels": LABELS},
            "spec": {"nodeName": node, "automountServiceAccountToken": False,
                     "containers": [{"name": "nodehook", "image": "nodehook:test",
                                     "ports": [{"name": "health", "containerPort": PORT}]}]}})
        created.append(name)
        # What the kubelet would report.
        kube.request("PATCH", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}/status",
                     {"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}},
                     "application/merge-patch+json")

    yield make
    for name in created:
        kube.request("DELETE", f"/api/v1/namespaces/{NAMESPACE}/pods/{name}?gracePeriodSeconds=0")


@pytest.fixture
def kubectl_nodehook(cluster, tmp_path):
    """Runs `kubectl nodehook ARGS` with the plugin installed as docs/fleet.md says: the nodehook
    binary on PATH as kubectl-nodehook. Returns (exit code, stdout, stderr)."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "kubectl-nodehook").symlink_to(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook"))
    env = dict(os.environ, PATH=f"{plugins}:{os.environ.get('PATH', '')}", KUBECONFIG=cluster.kubeconfig)

    def run(*args):
        result = subprocess.run([str(kubectl_binary()), "nodehook", *args], capture_output=True, text=True, env=env,
                                timeout=120)
        return result.returncode, result.stdout, result.stderr

    return run


def table(text):
    """Rows of a printed table as lists of cells (cells never contain spaces, except messages)."""
    notes = ("unreachable:", "(", "confined to its node")
    return [line.split() for line in text.splitlines() if line and not line.startswith(notes)]


def start_two_agents(make_agent, pod_network, agent_pods, silent_pod=False):
    """node-a and node-b as agent pods at the first two pod addresses, started; node-b's create of
    w2 fails, and its next attempt is far away, so what it shows holds still. With `silent_pod`,
    a third pod node-c is scheduled and Running at the third address, where nothing listens."""
    a_ip, b_ip, silent_ip = pod_network.pod_ips
    node_a = make_agent("node-a", health_address=f"{a_ip}:{PORT}")
    node_b = make_agent("node-b", health_address=f"{b_ip}:{PORT}", retry_base_seconds=600, retry_max_seconds=600)
    node_a.launcher = node_b.launcher = pod_network.launcher
    node_b.fail_hook("w2", "create", 1000)
    agent_pods("nodehook-a", "node-a", a_ip)
    agent_pods("nodehook-b", "node-b", b_ip)
    if silent_pod:
        agent_pods("nodehook-c", "node-c", silent_ip)
    node_a.start()
    node_b.start()
    return node_a, node_b


def test_fleet_table_shows_every_node_and_failing_lists_the_failing_handler(
        make_agent, widgets, pod_network, agent_pods, kubectl_nodehook):
    node_a, node_b = start_two_agents(make_agent, pod_network, agent_pods, silent_pod=True)
    widgets.create("w1", {"size": 1})
    widgets.create("w2", {"size": 2})
    node_a.wait_for("w1", "create")
    node_a.wait_for("w2", "create")
    node_b.wait_for("w1", "create")
    node_b.wait_for("w2", "create", result="failed")

    ns = widgets.namespace
    expected = {f"{ns}/w1": ["ok", "ok", "?"], f"{ns}/w2": ["ok", "create:failed(1)", "?"]}

    def fleet_view():
        code, out, err = kubectl_nodehook()
        rows = {row[0]: row[2:] for row in table(out)[1:] if row[0].startswith(f"{ns}/w")}
        return (code, out, err) if rows == expected else None

    # The agents' snapshots follow their state files within a housekeeping tick.
    code, out, err = wait_until(fleet_view, "the fleet table to show both agents' view")
    print(out)
    assert code == 3, err  # one pod did not answer
    assert table(out)[0] == ["OBJECT", "RESOURCE", "node-a", "node-b", "node-c"]
    assert re.search(r"^unreachable: node-c \(pod nodehook-c\): .*HTTP 50[23]", out, re.M), out

    code, out, err = kubectl_nodehook("failing")
    print(out)
    assert code == 3, err
    rows = table(out)
    assert rows[0] == ["NODE", "OBJECT", "RESOURCE", "HANDLER", "OUTCOME", "RETRIES", "NEXT", "ATTEMPT", "MESSAGE"]
    assert [r[:6] for r in rows[1:]] == [["node-b", f"{ns}/w2", "widgets.example.com/v1", "create", "failed", "1"]]
    assert "failing on purpose at retry 0" in out
    assert "unreachable: node-c (pod nodehook-c)" in out
    # Under the table, whether each agent that answered is confined to its node: these run with the
    # admin's token, which no node-bound rule matches (docs/security.md).
    assert "confined to its node (node-bound rules): node-a unprotected, node-b unprotected\n" in out, out


def test_objects_endpoint_off_is_not_served(make_agent, widgets):
    agent = make_agent("node-a", objects_endpoint="off").start()
    widgets.create("w1", {"size": 1})
    agent.wait_for("w1", "create")
    assert agent.http_status("/readyz") == 200
    assert agent.http_status("/v1/objects") == 404
