"""End-to-end: config changes release the finalizers they leave behind (issue 25, item 2), against
the real API server. Each agent records in its state file which finalizers it may hold; after a
config change:
- a resource switched off finalizer mode, or removed from the config, loses that node's own
  finalizer as soon as the node runs the new config, while nodes still on the old config keep
  theirs (a rolling config update never races them);
- a resource switched off singleton mode loses nodehook.io/singleton only once no agent pod runs
  the older pod template (its controller-revision-hash), since an agent on the old config could
  still lead and claim it again.
The test server has no kubelet, so the DaemonSet's pods are Pod objects the test creates and
relabels, as the DaemonSet controller would during a rollout."""

import json

from conftest import wait_until
from kube import create_agent_pod, create_node, delete_pod
from singleton_cluster import LEASE
from test_finalizer_nodes import create_everywhere, delete_node, finalizers
from test_uninstall import GROUP as GADGET_GROUP, PLURAL as GADGET_PLURAL, gadget_crd  # noqa: F401 (fixture)

NO_RESYNC = {"resync_seconds": 0}
POD_LABELS = {"app.kubernetes.io/name": "nodehook-retire"}


def reconfigure(agent, resources):
    """A config change reaches this node: the agent stops, its config's resources are replaced, it
    starts again (as the DaemonSet replaces the pod with one of the new template)."""
    agent.stop()
    config = json.loads(agent.config_file.read_text())
    config["resources"] = resources
    agent.config_file.write_text(json.dumps(config, indent=2))
    agent.start()


def widgets_entry(agent, **options):
    entry = dict(json.loads(agent.config_file.read_text())["resources"][0])
    entry.pop("finalizer", None)
    entry.pop("singleton", None)
    return {**entry, **options}


def test_a_node_releases_its_own_finalizer_when_it_leaves_finalizer_mode_and_the_nodes_on_the_old_config_keep_theirs(
        cluster, widgets, make_agent, gadget_crd, tmp_path):  # noqa: F811
    kube = cluster.kube
    nodes = [f"{widgets.namespace}-r{i}" for i in range(2)]
    for node in nodes:
        create_node(kube, node, {})
    try:
        agents = [make_agent(node, resource_options={"finalizer": True}, **NO_RESYNC).start() for node in nodes]
        names = ["w1", "w2", "w3"]
        create_everywhere(widgets, agents, names)
        both = sorted(f"nodehook.io/{n}" for n in nodes)
        wait_until(lambda: all(sorted(finalizers(widgets, n)) == both for n in names), "both finalizers everywhere")
        first, second = agents
        # Node 1 runs the new config first: widgets without finalizer mode.
        reconfigure(second, [widgets_entry(second)])
        released = wait_until(lambda: second.log_events("retired finalizers released"),
                              f"{second.node} to release its finalizers")
        assert released[0]["finalizer"] == f"nodehook.io/{second.node}"
        assert released[0]["objects"] == "3"
        # Node 0 is still on the old config: its finalizer stays, its delete hook still gates.
        assert all(finalizers(widgets, n) == [f"nodehook.io/{first.node}"] for n in names)
        widgets.delete("w1")
        first.wait_for("w1", "delete")
        wait_until(lambda: not widgets.exists("w1"), "w1 gone once node 0's delete hook ran")

        # Node 0's new config drops widgets altogether (it now serves another resource).
        gadgets = {"group": GADGET_GROUP, "version": "v1", "plural": GADGET_PLURAL, "namespace": widgets.namespace,
                   "hooks": widgets_entry(first)["hooks"], "finalizer": True}
        reconfigure(first, [gadgets])
        wait_until(lambda: first.log_events("retired finalizers released"), f"{first.node} to release its finalizers")
        assert all(finalizers(widgets, n) == [] for n in ["w2", "w3"])
        # Nothing holds their deletion now, and no delete hook ran for them on node 0.
        widgets.delete("w2")
        wait_until(lambda: not widgets.exists("w2"), "w2 gone with no finalizer left")
        assert [r for r in first.records(reason="delete") if r["name"] == "w2"] == []
        # Released is forgotten: the next start looks at nothing.
        first.stop()
        first.start()
        wait_until(lambda: first.log_events("agent started"), f"{first.node} to start again")
        assert first.log_events("finalizers retiring") == []
        for agent in agents:
            assert [e for e in agent.log_events() if e.get("event") == "retired finalizers not released"] == []
    finally:
        for node in nodes:
            delete_node(kube, node)


def test_the_singleton_finalizer_is_released_only_once_no_agent_runs_the_older_pod_template(
        cluster, widgets, make_agent):
    kube, ns = cluster.kube, widgets.namespace
    lease = {**LEASE, "lease_namespace": ns, "lease_name": f"retire-{ns}"}
    nodes = [f"{ns}-s{i}" for i in range(2)]
    pods = {node: f"agent-{node}" for node in nodes}
    for node in nodes:
        create_agent_pod(kube, ns, pods[node], node, {**POD_LABELS, "controller-revision-hash": "old"})
    try:
        agents = [make_agent(node, resource_options={"singleton": True}, env={"POD_NAMESPACE": ns,
                                                                               "POD_NAME": pods[node]},
                             **lease, **NO_RESYNC).start() for node in nodes]
        for name in ("w1", "w2"):
            widgets.create(name, {"size": 1})
        wait_until(lambda: all("nodehook.io/singleton" in finalizers(widgets, n) for n in ("w1", "w2")),
                   "the singleton finalizer on both widgets")
        # The rollout of a config without singleton mode reaches node 1 first.
        new, old = agents[1], agents[0]
        kube.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{pods[new.node]}",
                     {"metadata": {"labels": {"controller-revision-hash": "new"}}}, "application/merge-patch+json")
        reconfigure(new, [widgets_entry(new)])
        waiting = wait_until(lambda: new.log_events("retired finalizers waiting"), f"{new.node} to wait")
        assert pods[old.node] in waiting[0]["reason"]
        # The agent on the old template still serves the singleton: a new widget gets the finalizer.
        widgets.create("w3", {"size": 1})
        wait_until(lambda: "nodehook.io/singleton" in finalizers(widgets, "w3"), "w3's singleton finalizer")
        assert all("nodehook.io/singleton" in finalizers(widgets, n) for n in ("w1", "w2"))

        # The rollout reaches node 0: no agent runs the old template any more.
        kube.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{pods[old.node]}",
                     {"metadata": {"labels": {"controller-revision-hash": "new"}}}, "application/merge-patch+json")
        reconfigure(old, [widgets_entry(old)])
        wait_until(lambda: all("nodehook.io/singleton" not in finalizers(widgets, n) for n in ("w1", "w2", "w3")),
                   "the singleton finalizer released from every widget")
        released = [e for a in agents for e in a.log_events("retired finalizers released")]
        assert released and all(e["finalizer"] == "nodehook.io/singleton" for e in released)
        for name in ("w1", "w2", "w3"):
            widgets.delete(name)
        wait_until(lambda: not any(widgets.exists(n) for n in ("w1", "w2", "w3")), "the widgets gone")
    finally:
        for node in nodes:
            delete_pod(kube, ns, pods[node])


def test_a_node_that_serves_a_resource_in_finalizer_mode_again_puts_its_finalizer_back_without_a_hook(
        cluster, widgets, make_agent):
    """A config rolled back after a retirement (or finalizer mode switched on for a resource
    already handled, or a node whose finalizer was released while its agent was away): each
    handled object gets this node's finalizer again, so its deletion waits for the delete hook."""
    node = f"{widgets.namespace}-back"
    create_node(cluster.kube, node, {})
    try:
        agent = make_agent(node, resource_options={"finalizer": True}, **NO_RESYNC).start()
        create_everywhere(widgets, [agent], ["w1"])
        wait_until(lambda: finalizers(widgets, "w1") == [f"nodehook.io/{node}"], "the finalizer on w1")
        reconfigure(agent, [widgets_entry(agent)])
        wait_until(lambda: finalizers(widgets, "w1") == [], "the finalizer released after the switch")
        reconfigure(agent, [widgets_entry(agent, finalizer=True)])
        wait_until(lambda: finalizers(widgets, "w1") == [f"nodehook.io/{node}"], "the finalizer back on w1")
        assert len(agent.records("w1", "create")) == 1  # no hook ran again
        widgets.delete("w1")
        agent.wait_for("w1", "delete")
        wait_until(lambda: not widgets.exists("w1"), "w1 gone after its delete hook")
    finally:
        delete_node(cluster.kube, node)
