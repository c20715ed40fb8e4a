"""The Helm chart beside the kustomize install the other files keep: install, upgrade and
uninstall (its pre-delete Job releases every finalizer while the agents run and the objects
change), in finalizer and singleton mode, and the objects' namespace and CRD deleted at once after."""

import itertools
import json
import os
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from conftest import REPO, wait_until
from deploy_tools import kubectl
from kube import ApiError
from test_helm_chart import CHART, helm

from .cluster_tools import (HELM_PORT, NEEDS_ROOT, NODES, WIDGET_NS, create_widget, helm_values, hook_runs,
                            namespace_story, nodehook_finalizers_held, pod_log, pods, ready, wait_rolled_out,
                            watch_rollout, widget_gone)

pytestmark = NEEDS_ROOT

HELM_RELEASE = HELM_NS = "nodehook-helm"  # the chart names its objects after the release
# What the chart creates, by API path (namespaced ones in HELM_NS), to check that uninstall leaves none.
CHART_KINDS = {"pods": "/api/v1/namespaces/{ns}/pods", "configmaps": "/api/v1/namespaces/{ns}/configmaps",
               "serviceaccounts": "/api/v1/namespaces/{ns}/serviceaccounts",
               "services": "/api/v1/namespaces/{ns}/services",
               "daemonsets": "/apis/apps/v1/namespaces/{ns}/daemonsets", "jobs": "/apis/batch/v1/namespaces/{ns}/jobs",
               "networkpolicies": "/apis/networking.k8s.io/v1/namespaces/{ns}/networkpolicies",
               "roles": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/roles",
               "rolebindings": "/apis/rbac.authorization.k8s.io/v1/namespaces/{ns}/rolebindings",
               "clusterroles": "/apis/rbac.authorization.k8s.io/v1/clusterroles",
               "clusterrolebindings": "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"}


def uninstall_while_changing(real, release, namespace, names, base=f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"):
    """`helm uninstall` while the objects `names` (widgets unless `base` says otherwise) change
    every 0.2 s (each change would make a running agent put its finalizer back); its seconds."""
    uninstalling = threading.Event()

    def keep_changing():
        for size in itertools.count(100):
            if uninstalling.wait(0.2):
                return
            for name in names:
                real.kube.request("PATCH", f"{base}/{name}", {"spec": {"size": size}}, "application/merge-patch+json")
    changer = threading.Thread(target=keep_changing)
    changer.start()
    t0 = time.monotonic()
    try:
        helm("uninstall", release, "--namespace", namespace, "--kubeconfig", real.kubeconfig)
    except subprocess.TimeoutExpired:
        pytest.fail(f"helm uninstall did not return within 120 s; {namespace_story(real, namespace)}")
    finally:
        uninstalling.set()
        changer.join()
    return time.monotonic() - t0


def chart_objects(real):
    """(kind, name) of every object labelled as the release's, plus helm's release records."""
    found = set()
    for kind, path in CHART_KINDS.items():
        selector = f"?labelSelector=app.kubernetes.io/instance%3D{HELM_RELEASE}"
        items = real.kube.request("GET", path.format(ns=HELM_NS) + selector)
        found |= {(kind, o["metadata"]["name"]) for o in items["items"]}
    secrets = real.kube.request("GET", f"/api/v1/namespaces/{HELM_NS}/secrets?labelSelector=owner%3Dhelm")
    return found | {("secrets", o["metadata"]["name"]) for o in secrets["items"]}


def test_the_helm_chart_installs_upgrades_and_uninstalls_beside_the_kustomize_install(real, tmp_path):
    binary = Path(os.environ.get("NODEHOOK_HELM", REPO / "build" / "cache" / "helm"))
    if not binary.exists():
        pytest.skip(f"{binary} not built (test/cluster/build.sh helm)")
    kustomized = {p["metadata"]["name"]: p["status"]["containerStatuses"][0]["restartCount"] for p in pods(real)}
    values = tmp_path / "values.json"

    def run_helm(command, *args, workers):
        values.write_text(json.dumps(helm_values(real, workers, tmp_path)))
        helm(command, HELM_RELEASE, str(CHART), "--namespace", HELM_NS, "--kubeconfig", real.kubeconfig,
             "-f", str(values), *args)

    def creates(pod):
        return [o for h, o in hook_runs(pod_log(real, pod["metadata"]["name"], namespace=HELM_NS)) if h == "create"]

    run_helm("install", "--create-namespace", workers=4)
    first = wait_rolled_out(real, namespace=HELM_NS, daemonset=HELM_RELEASE)
    assert sorted(p["spec"]["nodeName"] for p in first) == [f"node-{i}" for i in range(1, NODES + 1)]
    # A finalizer no agent removes (no resource is in finalizer mode): the uninstall Job must.
    create_widget(real, "w-helm", 7, finalizers=["nodehook.io/helm-test"])
    for pod in first:
        node = pod["spec"]["nodeName"]
        f = real.host_path(node, f"/var/lib/nodehook-helm-widgets/{WIDGET_NS}_w-helm.json")
        wait_until(f.exists, f"the chart's hook's file for w-helm on {node}")
        assert json.loads(f.read_text())["spec"] == {"size": 7}
        assert real.host_path(node, "/var/lib/nodehook-helm/state.db").exists()
    # Every widget (those of the earlier tests too) created once by each of the chart's agents.
    widgets = {f"{w['metadata']['namespace']}/{w['metadata']['name']}"
               for w in real.kube.request("GET", "/apis/example.com/v1/widgets")["items"]}
    for pod in first:
        done = wait_until(lambda: (c := creates(pod)) and set(c) >= widgets and c,
                          f"{pod['metadata']['name']} to create every widget")
        assert sorted(done) == sorted(widgets), done

    # A changed config value: a new checksum, so the DaemonSet rolls out.
    def checksum():
        ds = real.kube.request("GET", f"/apis/apps/v1/namespaces/{HELM_NS}/daemonsets/{HELM_RELEASE}")
        return ds["spec"]["template"]["metadata"]["annotations"]["checksum/config"]
    before, old_checksum = {p["metadata"]["name"] for p in first}, checksum()
    run_helm("upgrade", workers=2)
    assert checksum() != old_checksum
    config = real.kube.request("GET", f"/api/v1/namespaces/{HELM_NS}/configmaps/{HELM_RELEASE}-config")
    assert json.loads(config["data"]["config.json"])["tuning"]["workers"] == 2
    assert watch_rollout(real, before, namespace=HELM_NS) >= NODES - 1  # maxUnavailable 10% of 2 = 1
    second = wait_rolled_out(real, namespace=HELM_NS, daemonset=HELM_RELEASE)
    # The new agents found every widget handled in the node's state file: the only create they
    # run is for a widget made after the upgrade.
    create_widget(real, "w-helm-upgraded", 8)
    for pod in second:
        runs = wait_until(lambda: (c := creates(pod)) and f"{WIDGET_NS}/w-helm-upgraded" in c and c,
                          f"{pod['metadata']['name']} to create w-helm-upgraded")
        assert runs == [f"{WIDGET_NS}/w-helm-upgraded"], runs

    installed = chart_objects(real)
    assert {k for k, _ in installed} >= {"daemonsets", "pods", "configmaps", "serviceaccounts", "clusterroles",
                                         "clusterrolebindings", "networkpolicies", "secrets"}, installed
    # Uninstall while the agents run and the widgets keep changing: each change would make a
    # running agent put its finalizer back; the Job stops the agents before it releases.
    base = f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"
    uninstall_seconds = uninstall_while_changing(real, HELM_RELEASE, HELM_NS, ["w-helm", "w-helm-upgraded"])
    # The pre-delete Job ran to completion (helm waits for it, then deletes it: its Events stay).
    def job_events():
        events = real.kube.request("GET", f"/api/v1/namespaces/{HELM_NS}/events")["items"]
        return {e["reason"] for e in events if e["involvedObject"]["kind"] == "Job"
                and e["involvedObject"]["name"] == f"{HELM_RELEASE}-release-finalizers"}
    wait_until(lambda: job_events() >= {"SuccessfulCreate", "Completed"}, "the release-finalizers Job's Events")
    held = nodehook_finalizers_held(real)
    assert held == {}, f"nodehook.io/ finalizers left after the uninstall: {held}"
    # Nothing of the chart is left once the garbage collector has taken the pods.
    wait_until(lambda: not chart_objects(real), f"the release's objects to be gone (were {sorted(installed)})")
    # The kustomize install beside it was not disturbed: the same pods, not restarted, Ready.
    assert {p["metadata"]["name"]: p["status"]["containerStatuses"][0]["restartCount"]
            for p in pods(real) if ready(p)} == kustomized
    t1 = time.monotonic()
    for name in ("w-helm", "w-helm-upgraded"):
        real.kube.request("DELETE", f"{base}/{name}")
    wait_until(lambda: widget_gone(real, "w-helm") and widget_gone(real, "w-helm-upgraded"),
               "w-helm and w-helm-upgraded, their finalizers released, to be deleted", timeout=30)
    print(json.dumps({"helm_uninstall_seconds": round(uninstall_seconds, 1),
                      "objects_gone_after_delete_seconds": round(time.monotonic() - t1, 2)}))
    kubectl("delete", "namespace", HELM_NS, "--wait=false", kubeconfig=real.kubeconfig)


def test_helm_uninstall_leaves_no_singleton_finalizer_while_the_leader_runs(real, tmp_path):
    """The singleton leader claims `nodehook.io/singleton` on every handled object that lacks it,
    within milliseconds: released while it runs, the finalizer came straight back."""
    release = "nodehook-single"
    values = tmp_path / "values.json"
    values.write_text(json.dumps(helm_values(real, 2, tmp_path, mode="singleton", port=HELM_PORT + 2,
                                             state_dir="/var/lib/nodehook-single")))
    helm("install", release, str(CHART), "--namespace", release, "--create-namespace", "--kubeconfig",
         real.kubeconfig, "-f", str(values))
    wait_rolled_out(real, namespace=release, daemonset=release)
    base = f"/apis/example.com/v1/namespaces/{WIDGET_NS}/widgets"
    create_widget(real, "w-single", 9)
    names = [w["metadata"]["name"] for w in real.kube.request("GET", base)["items"]]
    wait_until(lambda: all("nodehook.io/singleton" in (w["metadata"].get("finalizers") or [])
                           for w in real.kube.request("GET", base)["items"]),
               f"the leader's finalizer on every widget ({len(names)})", timeout=120)

    uninstall_seconds = uninstall_while_changing(real, release, release, ["w-single"])
    held = nodehook_finalizers_held(real)
    assert held == {}, f"nodehook.io/ finalizers left after the uninstall: {held}"
    t1 = time.monotonic()
    real.kube.request("DELETE", f"{base}/w-single")
    wait_until(lambda: widget_gone(real, "w-single"), "w-single, its finalizer released, to be deleted", timeout=30)
    print(json.dumps({"singleton_widgets": len(names), "helm_uninstall_seconds": round(uninstall_seconds, 1),
                      "deleted_after_seconds": round(time.monotonic() - t1, 2)}))
    kubectl("delete", "namespace", release, "--wait=false", kubeconfig=real.kubeconfig)


def test_after_helm_uninstall_with_the_agents_running_the_objects_namespace_and_crd_delete_at_once(real, tmp_path):
    """Issue 25's figure: from `helm uninstall` (agents running in finalizer mode, objects
    changing) to a deleted namespace of objects and a deleted CRD. A CRD and a namespace of the
    test's own (gizmos), so the other tests keep the widgets."""
    release, objects_ns, crd = "nodehook-gizmo", "gizmo-objects", "gizmos.example.com"
    manifest = yaml.safe_load((REPO / "config" / "examples" / "widget-crd.yaml").read_text())
    manifest["metadata"]["name"] = crd
    manifest["spec"]["names"] = {"kind": "Gizmo", "listKind": "GizmoList", "plural": "gizmos", "singular": "gizmo"}
    crd_file = tmp_path / "gizmo-crd.json"
    crd_file.write_text(json.dumps(manifest))
    kubectl("apply", "-f", str(crd_file), kubeconfig=real.kubeconfig)
    kubectl("wait", "--for=condition=Established", f"crd/{crd}", kubeconfig=real.kubeconfig)
    real.kube.request("POST", "/api/v1/namespaces",
                      {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": objects_ns}})
    base = f"/apis/example.com/v1/namespaces/{objects_ns}/gizmos"
    names = [f"g{i}" for i in range(3)]
    for i, name in enumerate(names):
        real.kube.request("POST", base, {"apiVersion": "example.com/v1", "kind": "Gizmo",
                                         "metadata": {"name": name}, "spec": {"size": i}})
    values = tmp_path / "values.json"
    values.write_text(json.dumps(helm_values(real, 2, tmp_path, port=HELM_PORT + 4, state_dir="/var/lib/nodehook-gizmo",
                                             plural="gizmos")))
    helm("install", release, str(CHART), "--namespace", release, "--create-namespace", "--kubeconfig",
         real.kubeconfig, "-f", str(values))
    wait_rolled_out(real, namespace=release, daemonset=release)
    every_node = {f"nodehook.io/node-{i}" for i in range(1, NODES + 1)}
    wait_until(lambda: all(every_node <= set(g["metadata"].get("finalizers") or [])
                           for g in real.kube.request("GET", base)["items"]),
               "every node's finalizer on every gizmo", timeout=120)

    t0 = time.monotonic()
    uninstall_seconds = uninstall_while_changing(real, release, release, names, base=base)
    kubectl("delete", "namespace", objects_ns, "--wait=false", kubeconfig=real.kubeconfig)
    kubectl("delete", "crd", crd, "--wait=false", kubeconfig=real.kubeconfig)

    def gone(path):
        try:
            real.kube.request("GET", path)
            return False
        except ApiError as e:
            if e.status != 404:
                raise
            return True
    wait_until(lambda: gone(f"/api/v1/namespaces/{objects_ns}")
               and gone(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd}"),
               f"namespace {objects_ns} and crd {crd} to be deleted after the uninstall", timeout=30)
    print(json.dumps({"helm_uninstall_seconds": round(uninstall_seconds, 1),
                      "uninstall_to_namespace_and_crd_gone_seconds": round(time.monotonic() - t0, 1)}))
    kubectl("delete", "namespace", release, "--wait=false", kubeconfig=real.kubeconfig)
