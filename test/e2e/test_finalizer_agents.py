"""End-to-end: finalizer mode when an agent leaves a node for good while its Node stays (issue 18,
item 3). The test API server has no kubelet, so the DaemonSet's pods are Pod objects the test
creates bound to each node (spec.nodeName) and deletes to make an agent leave. Three agents act
as nodes, each reading its own pod (POD_NAMESPACE, POD_NAME) and watching the others' by labels.

A node whose agent pod has been gone for finalizer_release_after_seconds loses its finalizers on
deleting objects (logged, and a FinalizerReleased Event); a node whose agent is down but whose
pod is still bound (an agent that crash-loops) keeps them."""

import pytest

from conftest import wait_until
from kube import create_agent_pod, create_node, delete_pod, set_node_ready
from test_finalizer_nodes import create_everywhere, delete_node, finalizers, no_finalizer_warnings

FINALIZER_MODE = {"finalizer": True}
RELEASE_AFTER = 3  # seconds; the unit tests cover the default's arithmetic with a fake clock
# The rollout label is left out of the selector, so pods of two revisions are all agents.
LABELS = {"app.kubernetes.io/name": "nodehook-e2e", "controller-revision-hash": "rev1"}


@pytest.fixture
def agent_nodes(cluster, widgets):
    """make(suffix) creates a Node and the agent pod bound to it (as the DaemonSet's would be),
    and returns the node name; everything is deleted afterwards."""
    kube, ns = cluster.kube, widgets.namespace
    nodes = []

    def make(suffix):
        node = f"{ns}-{suffix}"
        create_node(kube, node, {})
        nodes.append(node)
        create_agent_pod(kube, ns, pod_name(node), node, LABELS)
        return node

    yield make
    for node in nodes:
        delete_pod(kube, ns, pod_name(node))
        delete_node(kube, node)


def pod_name(node):
    return f"agent-{node}"


def start_agents(make_agent, agent_nodes, widgets, count):
    agents = []
    for i in range(count):
        node = agent_nodes(f"n{i}")
        agent = make_agent(node, resource_options=FINALIZER_MODE, resync_seconds=0,
                           finalizer_release_after_seconds=RELEASE_AFTER,
                           env={"POD_NAMESPACE": widgets.namespace, "POD_NAME": pod_name(node)})
        agents.append(agent.start())
    for agent in agents:
        found = wait_until(lambda: agent.log_events("agent pods found"), f"{agent.node} to find its agent pods")
        assert found[0]["selector"] == "app.kubernetes.io/name=nodehook-e2e"
    return agents


def released_events(cluster, ns):
    events = cluster.kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{ns}/events")["items"]
    return [e for e in events if e.get("reason") == "FinalizerReleased"]


def test_a_node_whose_agent_pod_left_loses_its_finalizers_while_a_crash_looping_one_keeps_them(
        make_agent, widgets, agent_nodes, cluster):
    agents = start_agents(make_agent, agent_nodes, widgets, 4)
    create_everywhere(widgets, agents, ["w1"])
    left, crashing = agents[2], agents[3]
    # The DaemonSet left `left`'s node (nodeSelector, taint, node handed over): its pod is gone,
    # its Node stays. `crashing`'s agent is down but its pod is still bound, as in a crash loop.
    left.stop()
    delete_pod(cluster.kube, widgets.namespace, pod_name(left.node))
    crashing.stop()

    widgets.delete("w1")
    for agent in agents[:2]:
        agent.wait_for("w1", "delete")
    released = wait_until(lambda: [a for a in agents[:2] if a.log_events("departed agent's finalizer removed")],
                          f"{left.node}'s finalizer to be released")
    line = released[0].log_events("departed agent's finalizer removed")[0]
    assert line["finalizer"] == f"nodehook.io/{left.node}"
    assert "no agent pod bound to its node" in line["reason"]
    # The same sweep looked at the crash-looping node's finalizer, and kept it.
    assert finalizers(widgets, "w1") == [f"nodehook.io/{crashing.node}"]
    cluster.kube.request("GET", f"/api/v1/nodes/{left.node}")  # the Node is still there
    notes = wait_until(lambda: [e["note"] for e in released_events(cluster, widgets.namespace)],
                       "the FinalizerReleased Event")
    assert any(f"nodehook.io/{left.node}" in n and "without its delete hook" in n for n in notes)

    # Now the crash-looping node's pod goes too: after the wait its finalizer comes off and w1 goes.
    delete_pod(cluster.kube, widgets.namespace, pod_name(crashing.node))
    wait_until(lambda: not widgets.exists("w1"), f"w1 to be gone once {crashing.node}'s agent pod left")
    for agent in agents[:2]:
        assert [r["result"] for r in agent.records(reason="delete") if r["name"] == "w1"] == ["ok"]
        assert no_finalizer_warnings(agent) == []


def test_agent_pods_of_two_daemonsets_count_for_each_other_and_a_job_pod_counts_for_none(
        make_agent, widgets, cluster):
    """Two DaemonSets on two node pools (each its own selector labels), all pods labelled
    nodehook.io/agent as the manifests do: each side counts the other side's nodes as served, so a
    deletion pending on a node of either pool keeps its finalizer past the wait. A pod that is no
    agent (the uninstall Job's, with the DaemonSet's labels but not nodehook.io/agent) serves no
    node."""
    ns = widgets.namespace
    pools = {"a0": "pool-a", "a1": "pool-a", "b0": "pool-b", "b1": "pool-b", "left": "pool-a"}
    agents = {}
    for suffix, pool in pools.items():
        node = f"{ns}-{suffix}"
        create_node(cluster.kube, node, {})
        create_agent_pod(cluster.kube, ns, pod_name(node), node,
                         {"app.kubernetes.io/name": pool, "nodehook.io/agent": "node-agent"})
        agents[suffix] = make_agent(node, resource_options=FINALIZER_MODE, resync_seconds=0,
                                    finalizer_release_after_seconds=RELEASE_AFTER,
                                    env={"POD_NAMESPACE": ns, "POD_NAME": pod_name(node)}).start()
    try:
        for agent in agents.values():
            found = wait_until(lambda: agent.log_events("agent pods found"), f"{agent.node} to find its agent pods")
            assert found[0]["selector"] == "nodehook.io/agent"
        create_everywhere(widgets, list(agents.values()), ["w1"])
        # One agent of each pool is down but its pod is bound (a slow restart, a crash loop):
        # the deletion is pending on both pools. `left`'s agent pod is gone, and only a Job pod
        # with pool-a's labels is bound to its node.
        pending = (agents["a1"], agents["b0"])
        running = (agents["a0"], agents["b1"])
        for agent in (*pending, agents["left"]):
            agent.stop()
        left = agents["left"].node
        delete_pod(cluster.kube, ns, pod_name(left))
        create_agent_pod(cluster.kube, ns, f"job-{left}", left, {"app.kubernetes.io/name": "pool-a"})
        widgets.delete("w1")
        for agent in running:
            agent.wait_for("w1", "delete")
        released = wait_until(lambda: [a for a in running if a.log_events("departed agent's finalizer removed")],
                              f"{left}'s finalizer to be released though a Job pod is bound there")
        assert released[0].log_events("departed agent's finalizer removed")[0]["finalizer"] == f"nodehook.io/{left}"
        # The same sweep, past the wait, kept both pools' pending nodes: their agent pods are
        # bound, whichever DaemonSet's they are (each running agent judged the other pool's too).
        assert sorted(finalizers(widgets, "w1")) == sorted(f"nodehook.io/{a.node}" for a in pending)
        for agent in running:
            assert [e for e in agent.log_events("departed agent's finalizer removed")
                    if e["finalizer"] != f"nodehook.io/{left}"] == []
        for agent in pending:
            agent.start()
        wait_until(lambda: not widgets.exists("w1"), "w1 gone once both pools' agents ran their delete hooks")
        for agent in pending:
            assert [r["result"] for r in agent.records(reason="delete") if r["name"] == "w1"] == ["ok"]
    finally:
        for suffix in pools:
            node = f"{ns}-{suffix}"
            for pod in (pod_name(node), f"job-{node}"):
                delete_pod(cluster.kube, ns, pod)
            delete_node(cluster.kube, node)


def test_a_node_notready_for_the_set_time_loses_its_finalizers_though_its_agent_pod_stays_bound(
        make_agent, widgets, agent_nodes, cluster):
    """A node powered off for good keeps its Node and its bound agent pod: only
    finalizer_release_not_ready_seconds releases it. A node whose agent is down but whose Node is
    Ready keeps its finalizer in the same sweep."""
    ns = widgets.namespace
    agents = []
    for i in range(4):
        node = agent_nodes(f"r{i}")
        agents.append(make_agent(node, resource_options=FINALIZER_MODE, resync_seconds=0,
                                 finalizer_release_after_seconds=3600, finalizer_release_not_ready_seconds=3,
                                 env={"POD_NAMESPACE": ns, "POD_NAME": pod_name(node)}).start())
    for agent in agents:
        set_node_ready(cluster.kube, agent.node, "True")
    create_everywhere(widgets, agents, ["w1"])
    off, down = agents[2], agents[3]
    off.stop()
    down.stop()
    set_node_ready(cluster.kube, off.node, "Unknown")  # its kubelet stopped reporting
    widgets.delete("w1")
    for agent in agents[:2]:
        agent.wait_for("w1", "delete")
    released = wait_until(lambda: [a for a in agents[:2] if a.log_events("unready node's finalizer removed")],
                          f"{off.node}'s finalizer to be released")
    line = released[0].log_events("unready node's finalizer removed")[0]
    assert line["finalizer"] == f"nodehook.io/{off.node}"
    assert "has not been Ready for" in line["reason"]
    # The agent that is down on a Ready node keeps its finalizer: its delete hook still gates.
    assert finalizers(widgets, "w1") == [f"nodehook.io/{down.node}"]
    notes = wait_until(lambda: [e["note"] for e in released_events(cluster, ns)], "the FinalizerReleased Event")
    assert any(f"nodehook.io/{off.node}" in n and "not been Ready" in n for n in notes)
    down.start()
    wait_until(lambda: not widgets.exists("w1"), f"w1 gone once {down.node}'s agent ran its delete hook")
