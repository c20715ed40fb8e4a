"""Uninstall in finalizer mode: once the agents are gone, `kubectl nodehook release-finalizers`
(run through kubectl, with the nodehook binary on PATH as kubectl-nodehook) releases every nodehook.io/ finalizer,
and then the objects, their namespace and their CRD can all be deleted. Uses a CRD of its own so
that deleting it does not touch the widgets other tests use. The timings are printed (run with
-s to see them); they are figures for docs/install.md, not assertions."""

import json
import os
import subprocess
import time

import pytest

from conftest import REPO, _binary, wait_until
from deploy_tools import kubectl_binary
from kube import ApiError, create_namespace, create_node, set_node_ready

GROUP, PLURAL = "uninstall.example.com", "gadgets"
CRD_NAME = f"{PLURAL}.{GROUP}"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": CRD_NAME},
    "spec": {"group": GROUP, "scope": "Namespaced",
             "names": {"kind": "Gadget", "listKind": "GadgetList", "plural": PLURAL, "singular": "gadget"},
             "versions": [{"name": "v1", "served": True, "storage": True,
                           "schema": {"openAPIV3Schema": {"type": "object",
                                                          "x-kubernetes-preserve-unknown-fields": True}}}]},
}
OBJECTS = 20


def missing(kube, path):
    try:
        kube.request("GET", path)
        return False
    except ApiError as e:
        if e.status == 404:
            return True
        raise


@pytest.fixture
def gadget_crd(cluster):
    kube = cluster.kube
    kube.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)
    path = f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{CRD_NAME}"
    # Until the API server's controller has looked at the new CRD, status.conditions is null.
    wait_until(lambda: any(c["type"] == "Established" and c["status"] == "True"
                           for c in (kube.request("GET", path).get("status") or {}).get("conditions") or []),
               "the gadget CRD to be established")
    yield path
    if not missing(kube, path):
        kube.request("DELETE", path)
    # Its objects go first, then the CRD: the next test creates it again only once it is gone.
    wait_until(lambda: missing(kube, path), "the gadget CRD to be gone")


def plugin_dir(tmp_path):
    """A directory with the nodehook binary as kubectl-nodehook, for PATH."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "kubectl-nodehook").symlink_to(_binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook"))
    return plugins


def release(cluster, plugins, config_file, *extra):
    """`kubectl nodehook release-finalizers`, with the plugin installed as the README says."""
    env = dict(os.environ, PATH=f"{plugins}:{os.environ.get('PATH', '')}", KUBECONFIG=cluster.kubeconfig)
    return subprocess.run([str(kubectl_binary()), "nodehook", "release-finalizers", "--config", str(config_file),
                           *extra], capture_output=True, text=True, timeout=120, env=env)


def stand_down_setup(kube, tmp_path, prefix, finalizer=False):
    """A namespace with a config for its gadgets and a DaemonSet `agents` (no controller runs here:
    it gets no pods of its own). Returns (namespace, config file, a function that adds a pod the
    DaemonSet controls, given its name and extra pod spec)."""
    namespace = f"{prefix}-{time.monotonic_ns()}"
    create_namespace(kube, namespace)
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"state_file": str(tmp_path / "state.db"), "api": {"in_cluster": True},
                                  "resources": [{"group": GROUP, "version": "v1", "plural": PLURAL,
                                                 "namespace": namespace, "finalizer": finalizer,
                                                 "hooks": {"delete": {"argv": ["/nowhere/hook"]}}}]}))
    labels = {"app.kubernetes.io/name": "nodehook"}
    container = {"name": "nodehook", "image": "nodehook:test"}
    ds = kube.request("POST", f"/apis/apps/v1/namespaces/{namespace}/daemonsets", {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agents"},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [container]}}}})

    def add_pod(name, **spec):
        kube.request("POST", f"/api/v1/namespaces/{namespace}/pods", {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "labels": labels, "ownerReferences": [
                {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agents", "uid": ds["metadata"]["uid"],
                 "controller": True}]}, "spec": {"containers": [container], **spec}})
    return namespace, config, add_pod


def test_release_finalizers_lets_objects_namespace_and_crd_go_after_the_agents_are_gone(
        cluster, make_agent, gadget_crd, tmp_path):
    kube = cluster.kube
    plugins = plugin_dir(tmp_path)
    namespace = f"uninstall-{time.monotonic_ns()}"
    create_namespace(kube, namespace)
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/{PLURAL}"
    options = {"finalizer": True, "group": GROUP, "plural": PLURAL, "namespace": namespace}
    nodes = [f"{namespace}-n{i}" for i in range(2)]
    for node in nodes:  # finalizer mode judges departed nodes by their Node objects
        create_node(kube, node, {})
    agents = [make_agent(node, resource_options=options).start() for node in nodes]
    names = [f"g{i}" for i in range(OBJECTS)]
    for name in names:
        kube.request("POST", base, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget", "metadata": {"name": name}})
    for agent in agents:
        for name in names:
            agent.wait_for(name, "create")
    ours = sorted(f"nodehook.io/{a.node}" for a in agents)
    wait_until(lambda: all(sorted(kube.request("GET", f"{base}/{n}")["metadata"].get("finalizers", [])) == ours
                           for n in names), "both agents' finalizers on every gadget")
    # Another controller's finalizer stays.
    kube.request("PATCH", f"{base}/g0", {"metadata": {"finalizers": [*ours, "example.com/keep"]}},
                 "application/merge-patch+json")

    # Uninstall: the agents go. A deletion now is stuck: nobody will remove their finalizers.
    for agent in agents:
        agent.stop()
    kube.request("DELETE", f"{base}/g1")
    stuck = kube.request("GET", f"{base}/g1")["metadata"]
    assert "deletionTimestamp" in stuck and sorted(stuck["finalizers"]) == ours

    refused = release(cluster, plugins, agents[0].config_file)
    assert refused.returncode == 2
    assert "No delete hook runs" in refused.stderr and "--yes" in refused.stderr
    assert not missing(kube, f"{base}/g1")  # nothing was changed

    t0 = time.monotonic()
    done = release(cluster, plugins, agents[0].config_file, "--yes")
    release_seconds = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    assert "No delete hook runs" in done.stdout
    assert f"released {2 * OBJECTS} finalizers from {OBJECTS} of {OBJECTS} objects" in done.stdout
    assert kube.request("GET", f"{base}/g0")["metadata"]["finalizers"] == ["example.com/keep"]
    kube.request("PATCH", f"{base}/g0", {"metadata": {"finalizers": []}}, "application/merge-patch+json")

    t1 = time.monotonic()
    wait_until(lambda: missing(kube, f"{base}/g1"), "the stuck gadget to go once released", timeout=30)
    for name in names:
        if not missing(kube, f"{base}/{name}"):
            kube.request("DELETE", f"{base}/{name}")
    wait_until(lambda: kube.request("GET", base)["items"] == [], "every gadget to be gone", timeout=30)
    objects_seconds = time.monotonic() - t1

    # The namespace: the test server has no controller-manager, so the test does the namespace
    # controller's last step itself (it finds the namespace empty, then finalizes it).
    t2 = time.monotonic()
    kube.request("DELETE", f"/api/v1/namespaces/{namespace}")
    ns = kube.request("GET", f"/api/v1/namespaces/{namespace}")
    assert kube.request("GET", base)["items"] == []
    ns["spec"]["finalizers"] = []
    kube.request("PUT", f"/api/v1/namespaces/{namespace}/finalize", ns)
    wait_until(lambda: missing(kube, f"/api/v1/namespaces/{namespace}"), "the namespace to be gone", timeout=30)
    namespace_seconds = time.monotonic() - t2

    # The CRD: the API server's own cleanup deletes its remaining objects first; none is left to block it.
    t3 = time.monotonic()
    kube.request("DELETE", gadget_crd)
    wait_until(lambda: missing(kube, gadget_crd), "the CRD to be gone", timeout=60)
    crd_seconds = time.monotonic() - t3
    for node in nodes:
        kube.request("DELETE", f"/api/v1/nodes/{node}")
    print(json.dumps({"objects": OBJECTS, "agents": len(agents), "release_seconds": round(release_seconds, 2),
                      "objects_gone_seconds": round(objects_seconds, 2),
                      "namespace_gone_seconds": round(namespace_seconds, 2),
                      "crd_gone_seconds": round(crd_seconds, 2)}))


def test_release_refuses_while_agent_pods_run_and_stop_agents_waits_until_they_are_gone(cluster, gadget_crd, tmp_path):
    """Running agents put finalizers back as they are removed: without --stop-agents the release
    refuses while a DaemonSet's agent pod exists; with it, the DaemonSet is deleted and nothing is
    released until its pods are gone. (No controller runs here: the test deletes the pod, as the
    garbage collector would.)"""
    kube = cluster.kube
    plugins = plugin_dir(tmp_path)
    namespace, config, add_pod = stand_down_setup(kube, tmp_path, "stand-down")
    pods = f"/api/v1/namespaces/{namespace}/pods"
    add_pod("agents-x1")
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/{PLURAL}"
    kube.request("POST", base, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget",
                                "metadata": {"name": "g", "finalizers": ["nodehook.io/singleton"]}})

    refused = release(cluster, plugins, config, "--yes")
    assert refused.returncode == 2, refused.stderr
    assert f"  {namespace}/agents-x1 on no node yet (DaemonSet {namespace}/agents)" in refused.stderr, refused.stderr
    assert "--stop-agents" in refused.stderr and "Nothing was released." in refused.stderr
    assert kube.request("GET", f"{base}/g")["metadata"]["finalizers"] == ["nodehook.io/singleton"]

    env = dict(os.environ, PATH=f"{plugins}:{os.environ.get('PATH', '')}", KUBECONFIG=cluster.kubeconfig)
    stopping = subprocess.Popen([str(kubectl_binary()), "nodehook", "release-finalizers", "--config", str(config),
                                 "--yes", "--stop-agents", f"{namespace}/agents"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        wait_until(lambda: missing(kube, f"/apis/apps/v1/namespaces/{namespace}/daemonsets/agents"),
                   "the agents' DaemonSet to be deleted")
        assert stopping.poll() is None, stopping.communicate()
        assert kube.request("GET", f"{base}/g")["metadata"]["finalizers"] == ["nodehook.io/singleton"], \
            "released while an agent pod was still there"
        kube.request("DELETE", f"{pods}/agents-x1")
        out, err = stopping.communicate(timeout=60)
    finally:
        if stopping.poll() is None:
            stopping.kill()
    assert stopping.returncode == 0, err
    assert f"deleted DaemonSet {namespace}/agents\nwaiting for 1 agent pod to stop: {namespace}/agents-x1" in out, out
    assert "released 1 finalizer from 1 of 1 objects" in out, out
    assert kube.request("GET", f"{base}/g")["metadata"].get("finalizers", []) == []
    kube.request("DELETE", f"{base}/g")


def test_stop_agents_does_not_wait_for_an_agent_pod_stuck_on_a_dead_node(cluster, gadget_crd, tmp_path):
    """An agent pod on a node whose kubelet is gone never finishes terminating: the release stops
    waiting for it once its grace period and a margin (30 s, dead_node_pods.h) are over, and
    releases; a terminating pod on a live node is waited for. (No kubelet runs here: a deleted pod
    bound to a node stays terminating until the test deletes it with gracePeriodSeconds=0.)"""
    kube = cluster.kube
    plugins = plugin_dir(tmp_path)
    namespace, config, add_pod = stand_down_setup(kube, tmp_path, "dead-node", finalizer=True)
    dead, live = f"{namespace}-dead", f"{namespace}-live"
    create_node(kube, dead, {})
    set_node_ready(kube, dead, "Unknown")  # its kubelet stopped reporting
    create_node(kube, live, {})
    set_node_ready(kube, live, "True")
    pods = f"/api/v1/namespaces/{namespace}/pods"
    for node in (dead, live):
        add_pod(f"agents-{node}", nodeName=node, automountServiceAccountToken=False, terminationGracePeriodSeconds=1)
        # What the garbage collector does once the DaemonSet is deleted: the pod terminates, and
        # without a kubelet to confirm its end it stays.
        kube.request("DELETE", f"{pods}/agents-{node}")
    assert kube.request("GET", f"{pods}/agents-{dead}")["metadata"]["deletionTimestamp"]
    base = f"/apis/{GROUP}/v1/namespaces/{namespace}/{PLURAL}"
    kube.request("POST", base, {"apiVersion": f"{GROUP}/v1", "kind": "Gadget",
                                "metadata": {"name": "g", "finalizers": [f"nodehook.io/{dead}"]}})

    env = dict(os.environ, PATH=f"{plugins}:{os.environ.get('PATH', '')}", KUBECONFIG=cluster.kubeconfig)
    out_file = tmp_path / "release.out"  # a file, read while the command runs
    with open(out_file, "w") as out:
        stopping = subprocess.Popen([str(kubectl_binary()), "nodehook", "release-finalizers", "--config", str(config),
                                     "--yes", "--stop-agents", f"{namespace}/agents"],
                                    stdout=out, stderr=subprocess.PIPE, text=True, env=env)
    dead_pod = f"{namespace}/agents-{dead} on {dead} (terminating)"
    try:
        wait_until(lambda: f"not waiting for {dead_pod}: its Node is not Ready" in out_file.read_text(),
                   "the release to stop waiting for the dead node's pod", timeout=90)
        # The live node's pod is still waited for: nothing is released while it is there.
        assert stopping.poll() is None, (out_file.read_text(), stopping.communicate())
        assert kube.request("GET", f"{base}/g")["metadata"]["finalizers"] == [f"nodehook.io/{dead}"]
        kube.request("DELETE", f"{pods}/agents-{live}?gracePeriodSeconds=0")  # its kubelet confirmed it
        _, err = stopping.communicate(timeout=60)
    finally:
        if stopping.poll() is None:
            stopping.kill()
    out = out_file.read_text()
    assert stopping.returncode == 0, err
    assert f"no agent pod of DaemonSet {namespace}/agents is left to wait for (not waited for: {dead_pod})" in out, out
    assert "released 1 finalizer from 1 of 1 objects" in out, out
    assert 'event="agent pod not waited for"' in err and f"pod={namespace}/agents-{dead}" in err, err
    kube.request("DELETE", f"{base}/g")
    kube.request("DELETE", f"{pods}/agents-{dead}?gracePeriodSeconds=0")
    for node in (dead, live):
        kube.request("DELETE", f"/api/v1/nodes/{node}")
