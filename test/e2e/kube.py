"""A small Kubernetes REST client for the end-to-end tests: just enough to drive the real API
server (create, patch, delete custom resources and namespaces). Independent of the agent's own
C++ client on purpose, so the two do not share misunderstandings."""

import base64
import json
import re
import ssl
import tempfile
import urllib.error
import urllib.request


class ApiError(Exception):
    def __init__(self, status, body):
        super().__init__(f"HTTP {status}: {body[:300]}")
        self.status = status
        self.body = body


def _kubeconfig_field(text, key):
    match = re.search(rf"^\s*{re.escape(key)}:\s*\"?([^\"\n]+)\"?\s*$", text, re.M)
    return match.group(1).strip() if match else None


class Kube:
    def __init__(self, kubeconfig_path):
        text = open(kubeconfig_path).read()
        self.server = _kubeconfig_field(text, "server")
        self.token = _kubeconfig_field(text, "token")
        ca = base64.b64decode(_kubeconfig_field(text, "certificate-authority-data"))
        self._ca_file = tempfile.NamedTemporaryFile(suffix=".crt")
        self._ca_file.write(ca)
        self._ca_file.flush()
        self.ssl = ssl.create_default_context(cafile=self._ca_file.name)

    def request(self, method, path, body=None, content_type="application/json"):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", f"Bearer {self.token}")
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, context=self.ssl, timeout=30) as resp:
                raw = resp.read()
                return json.loads(raw) if raw else None
        except urllib.error.HTTPError as e:
            raise ApiError(e.code, e.read().decode(errors="replace")) from None


class Widgets:
    """Widgets (example.com/v1) in one namespace."""

    def __init__(self, kube, namespace):
        self.kube = kube
        self.namespace = namespace
        self.base = f"/apis/example.com/v1/namespaces/{namespace}/widgets"

    def create(self, name, spec, labels=None):
        body = {"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": name, "labels": labels or {}}, "spec": spec}
        return self.kube.request("POST", self.base, body)

    def get(self, name):
        return self.kube.request("GET", f"{self.base}/{name}")

    def patch_spec(self, name, spec):
        return self.kube.request("PATCH", f"{self.base}/{name}", {"spec": spec},
                                 "application/merge-patch+json")

    def patch_labels(self, name, labels):
        return self.kube.request("PATCH", f"{self.base}/{name}", {"metadata": {"labels": labels}},
                                 "application/merge-patch+json")

    def patch_status(self, name, status):
        return self.kube.request("PATCH", f"{self.base}/{name}/status", {"status": status},
                                 "application/merge-patch+json")

    def delete(self, name):
        return self.kube.request("DELETE", f"{self.base}/{name}")

    def exists(self, name):
        try:
            self.get(name)
            return True
        except ApiError as e:
            if e.status == 404:
                return False
            raise

    def set_finalizers(self, name, finalizers):
        return self.kube.request("PATCH", f"{self.base}/{name}", {"metadata": {"finalizers": finalizers}},
                                 "application/merge-patch+json")


def create_node(kube, name, labels):
    kube.request("POST", "/api/v1/nodes",
                 {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels}})


def set_node_labels(kube, name, labels):
    kube.request("PATCH", f"/api/v1/nodes/{name}", {"metadata": {"labels": labels}},
                 "application/merge-patch+json")


def set_node_ready(kube, node, status):
    """The node controller's mark (the test server has none): the Node's Ready condition."""
    kube.request("PATCH", f"/api/v1/nodes/{node}/status",
                 {"status": {"conditions": [{"type": "Ready", "status": status, "reason": "e2e"}]}},
                 "application/merge-patch+json")


def create_namespace(kube, name):
    kube.request("POST", "/api/v1/namespaces",
                 {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def create_agent_pod(kube, namespace, name, node, labels, tolerations=None):
    """A Pod object bound to `node`, as one of the DaemonSet's would be (the test server has no
    kubelet to run it), with `tolerations` if given. Creates the namespace's default ServiceAccount
    first if it is missing."""
    try:
        kube.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts", {"metadata": {"name": "default"}})
    except ApiError as e:
        if e.status != 409:
            raise
    kube.request("POST", f"/api/v1/namespaces/{namespace}/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels},
        "spec": {"nodeName": node, "automountServiceAccountToken": False, "tolerations": tolerations or [],
                 "containers": [{"name": "nodehook", "image": "nodehook:test"}]}})


def delete_pod(kube, namespace, name):
    """Deletes the Pod at once (no kubelet to wait for); a Pod already gone is fine."""
    try:
        kube.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}?gracePeriodSeconds=0")
    except ApiError as e:
        if e.status != 404:
            raise
