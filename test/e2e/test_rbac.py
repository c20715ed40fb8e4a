"""The agent runs with exactly the ClusterRole `nodehook rbac` prints for its config, through a
real ServiceAccount token (TokenRequest) of the test API server, whose authorizer is RBAC. Across
create, update, delete, a permanent failure (Warning Event), success Events, finalizer mode
(its own finalizer and a departed node's, its own pod and the agent pods read through the pods
Role) and node targeting, nothing is refused."""

import os
import re
import types

from conftest import Agent, parse_log_line, wait_until
from deploy_tools import grant, grant_in_namespace, nodehook_rbac_documents, revoke
from kube import create_agent_pod, create_node, delete_pod, set_node_labels


def kubeconfig_with_token(admin_kubeconfig, token, path):
    """The test cluster's kubeconfig with the admin token swapped for `token`."""
    text = open(admin_kubeconfig).read()
    text, swapped = re.subn(r"^(\s*token:\s*).*$", lambda m: m.group(1) + token, text, flags=re.M)
    assert swapped == 1
    path.write_text(text)
    return path


def refusals(agent):
    """Log lines of the agent that report a refused request."""
    return refused_lines(agent.log_path.read_text(errors="replace"))


def refused_lines(log_text):
    """The lines of a log that report a refused request. Only the fields that carry an error are
    searched: a time like 15:33:27.403Z or a uid with 403 in it is no refusal, nor is the self-check's
    dry run that the node-bound rules must refuse."""
    return [line for line in log_text.splitlines()
            if any("403" in value or "orbidden" in value
                   for key, value in parse_log_line(line).items() if key in ("event", "error", "code", "message"))]


def test_the_agent_with_the_derived_role_is_never_refused(cluster, widgets, tmp_path):
    kube = cluster.kube
    node = f"rbac-node-{os.getpid()}"
    create_node(kube, node, {"nodehook-e2e": "rbac"})
    options = {"finalizer": True, "node_selector_path": "spec.nodeSelector", "success_events": True}
    # The agent reads a kubeconfig with the ServiceAccount's token, written once the role exists.
    kubeconfig = tmp_path / "sa-kubeconfig"
    pod = f"agent-{node}"
    create_agent_pod(kube, widgets.namespace, pod, node, {"app": "nodehook-rbac"})
    agent = Agent(node, tmp_path / "agent", types.SimpleNamespace(kubeconfig=str(kubeconfig)), widgets.namespace,
                  ("create", "update", "delete"), {"retry_limit": 1}, resource_options=options,
                  env={"POD_NAMESPACE": widgets.namespace, "POD_NAME": pod})
    role, pods_role = nodehook_rbac_documents(agent.config_file.read_text(), tmp_path)
    assert pods_role["kind"] == "Role"
    assert [(r["resources"], r["verbs"]) for r in pods_role["rules"]] == [(["pods"], ["get", "list", "watch"]),
                                                                          (["daemonsets"], ["get"])]
    verbs = {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in role["rules"]}
    assert verbs == {("example.com", "widgets"): ["get", "list", "watch", "patch"],
                     ("", "nodes"): ["get", "list", "watch"],
                     ("events.k8s.io", "events"): ["create"]}

    name = f"nodehook-rbac-{os.getpid()}"
    token = grant(kube, widgets.namespace, name, role)
    grant_in_namespace(kube, widgets.namespace, name, pods_role)
    kubeconfig_with_token(cluster.kubeconfig, token, kubeconfig)
    try:
        agent.start()
        wait_until(lambda: agent.log_events("agent pods found"), "the agent to read its own pod")
        mine = {"nodehook-e2e": "rbac"}
        widgets.create("targeted", {"size": 1, "nodeSelector": mine})
        widgets.create("elsewhere", {"size": 1, "nodeSelector": {"nodehook-e2e": "other"}})
        agent.wait_for("targeted", "create")
        widgets.patch_spec("targeted", {"size": 2})
        agent.wait_for("targeted", "update")

        # A permanent failure posts a Warning Event (create, and the kind through a list).
        agent.fail_hook("doomed", "create", 10)
        widgets.create("doomed", {"nodeSelector": mine})
        warning = wait_until(lambda: [e for e in events(kube, widgets.namespace)
                                      if e.get("type") == "Warning" and e["regarding"]["name"] == "doomed"],
                             "a Warning Event about doomed")
        assert warning[0]["regarding"].get("kind") == "Widget"  # the kind's lookup was allowed too

        # Finalizer mode: deleting runs the delete hook, then our finalizer and a departed node's go.
        widgets.set_finalizers("targeted", ["nodehook.io/rbac-departed-node", f"nodehook.io/{node}"])
        widgets.delete("targeted")
        agent.wait_for("targeted", "delete")
        wait_until(lambda: not widgets.exists("targeted"), "targeted to be gone (both finalizers removed)")

        # Targeting: the Node's labels change, so "elsewhere" now matches this node.
        set_node_labels(kube, node, {"nodehook-e2e": "other"})
        agent.wait_for("elsewhere", "create")
        wait_until(lambda: any(e.get("type") == "Normal" and e["regarding"]["name"] == "elsewhere"
                               for e in events(kube, widgets.namespace)), "a Normal Event about elsewhere")
        assert agent.records("elsewhere", "create")[0]["result"] == "ok"
        assert refusals(agent) == []
    finally:
        agent.stop()
        revoke(kube, name)
        delete_pod(kube, widgets.namespace, pod)
        kube.request("DELETE", f"/api/v1/nodes/{node}")


def test_a_singleton_agent_with_the_derived_roles_leads_and_is_never_refused(cluster, widgets, tmp_path):
    kube = cluster.kube
    kubeconfig = tmp_path / "sa-kubeconfig"
    tuning = {"lease_namespace": widgets.namespace, "lease_name": "rbac-lease"}
    agent = Agent("rbac-singleton", tmp_path / "agent", types.SimpleNamespace(kubeconfig=str(kubeconfig)),
                  widgets.namespace, ("create", "update", "delete"), tuning, resource_options={"singleton": True})
    cluster_role, lease_role = nodehook_rbac_documents(agent.config_file.read_text(), tmp_path)
    verbs = {(r["apiGroups"][0], r["resources"][0]): r["verbs"] for r in cluster_role["rules"]}
    assert verbs == {("example.com", "widgets"): ["get", "list", "watch", "patch"], ("events.k8s.io", "events"): ["create"]}
    assert lease_role["kind"] == "Role"
    assert [(r["verbs"], r.get("resourceNames")) for r in lease_role["rules"]] == [
        (["create"], None), (["get", "update"], ["rbac-lease"])]

    name = f"nodehook-rbac-singleton-{os.getpid()}"
    token = grant(kube, widgets.namespace, name, cluster_role)
    grant_in_namespace(kube, widgets.namespace, name, lease_role)
    kubeconfig_with_token(cluster.kubeconfig, token, kubeconfig)
    try:
        agent.start()
        widgets.create("once", {"size": 1})
        agent.wait_for("once", "create")
        widgets.patch_spec("once", {"size": 2})
        agent.wait_for("once", "update")
        widgets.delete("once")
        agent.wait_for("once", "delete")
        lease = kube.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{widgets.namespace}/leases/rbac-lease")
        assert lease["spec"]["holderIdentity"] == "rbac-singleton"
        assert refusals(agent) == []
    finally:
        agent.stop()
        revoke(kube, name)


def events(kube, namespace):
    return kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events")["items"]
