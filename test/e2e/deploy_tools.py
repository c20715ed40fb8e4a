"""Helpers for the tests of what users install: the kustomize overlays under deploy/, rendered by
a real kubectl (built from the k8s.io modules by `test/cluster/build.sh kubectl`), and the objects
in them."""

import os
import subprocess
from pathlib import Path

import yaml

from conftest import REPO, _binary
from kube import ApiError

DEPLOY = REPO / "deploy"


def kubectl_binary():
    return _binary("NODEHOOK_KUBECTL", REPO / "build" / "cache" / "kubectl")


def kubectl(*args, kubeconfig=None, stdin=None, check=True):
    """Runs kubectl; returns its stdout. A failure fails the test with kubectl's stderr."""
    env = dict(os.environ)
    if kubeconfig:
        env["KUBECONFIG"] = str(kubeconfig)
    result = subprocess.run([str(kubectl_binary()), *args], input=stdin, capture_output=True, text=True, env=env)
    if check and result.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} exited {result.returncode}: {result.stderr}")
    return result if not check else result.stdout


def render(path):
    """`kubectl kustomize PATH` as a list of objects."""
    return [doc for doc in yaml.safe_load_all(kubectl("kustomize", str(path))) if doc]


def find(objects, kind, name=None):
    matches = [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    assert len(matches) == 1, f"expected one {kind} {name or ''}, found {len(matches)}"
    return matches[0]


def pod_spec(objects):
    return find(objects, "DaemonSet")["spec"]["template"]["spec"]


def configmap_of_volume(objects, volume):
    """The ConfigMap object the DaemonSet mounts as `volume`."""
    name = next(v["configMap"]["name"] for v in pod_spec(objects)["volumes"] if v["name"] == volume)
    return find(objects, "ConfigMap", name)


def shipped_config(objects):
    """The agent's config.json from the ConfigMap the DaemonSet mounts, as text."""
    return configmap_of_volume(objects, "config")["data"]["config.json"]


def nodehook_rbac(config_text, tmp_path):
    """`nodehook rbac --config` for a config given as text, parsed: the ClusterRole."""
    return nodehook_rbac_documents(config_text, tmp_path)[0]


def nodehook_rbac_documents(config_text, tmp_path):
    """Every document `nodehook rbac --config` prints: the ClusterRole, then the Lease Role when the
    config has a singleton resource, then the agent pods Role in finalizer mode."""
    config = tmp_path / "rbac-config.json"
    config.write_text(config_text)
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    out = subprocess.run([str(binary), "rbac", "--config", str(config), "--part", "rbac"], capture_output=True,
                         text=True, check=True)
    return list(yaml.safe_load_all(out.stdout))


def grant_in_namespace(kube, namespace, name, role):
    """Binds the ServiceAccount `name` (made by grant) to `role` (a Role object) in `namespace`."""
    role = dict(role, metadata={"name": name})
    kube.request("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/roles", role)
    kube.request("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]})


def grant(kube, namespace, name, role):
    """A ServiceAccount bound to `role` (a ClusterRole object); returns a token for it."""
    kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                 {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
    role = dict(role, metadata={"name": name})
    kube.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", role)
    kube.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": namespace}]})
    request = kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                           {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                            "spec": {"expirationSeconds": 3600}})
    return request["status"]["token"]


def revoke(kube, name):
    for kind in ("clusterrolebindings", "clusterroles"):
        try:
            kube.request("DELETE", f"/apis/rbac.authorization.k8s.io/v1/{kind}/{name}")
        except ApiError:
            pass
