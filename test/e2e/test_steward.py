"""Agents confined to their nodes, with the steward doing the work that crosses nodes
(tuning.cross_node_writes "steward", docs/security.md), on the real API server.

Each agent runs with a pod-bound token of the agents' ServiceAccount for its node, under exactly
the roles and node-bound admission rules `nodehook rbac` prints; the steward (`nodehook steward`)
runs under its own account with the roles and bindings `nodehook rbac --part steward` prints, and
serves probes judged by its watches. Nothing any of them writes is refused, every agent finds
the rules in force, and the cross-node work still happens: a departed node's finalizer comes off,
a rollout's slots are granted, and an expired singleton Lease is freed for another node to take."""

import copy
import json
import os
import signal
import subprocess
import types
import urllib.error
import urllib.request

import pytest
import yaml

from conftest import REPO, Agent, _binary, wait_until
from kube import ApiError
from test_rbac import kubeconfig_with_token, refusals, refused_lines


def rbac_documents(config_file, part, name, namespace, account):
    binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
    out = subprocess.run([str(binary), "rbac", "--config", str(config_file), "--part", part, "--name", name,
                          "--namespace", namespace, "--service-account", account],
                         capture_output=True, text=True, check=True)
    return [d for d in yaml.safe_load_all(out.stdout) if d]


class Confined:
    """Agents on nodes a and b (bound tokens) and a steward, each under what `nodehook rbac` prints."""

    def __init__(self, cluster, widgets, tmp_path, resource_options, tuning=None):
        self.admin, self.ns, self.tmp = cluster.kube, widgets.namespace, tmp_path
        self.cluster = cluster
        suffix = f"{os.getpid()}-{self.ns}"
        self.name = f"st-{suffix}"
        self.nodes = {n: f"st-{n}-{suffix}" for n in ("a", "b")}
        self.created = []  # (path) of cluster-scoped objects to delete
        for node in self.nodes.values():
            self.admin.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
            self.created.append(f"/api/v1/nodes/{node}")
        # The steward's account is the one its printed bindings name: <name>-steward.
        self.steward_account = f"{self.name}-steward"
        for account in ("agent", self.steward_account):
            self.admin.request("POST", f"/api/v1/namespaces/{self.ns}/serviceaccounts", {"metadata": {"name": account}})
        tuning = {"cross_node_writes": "steward", "lease_namespace": self.ns, **(tuning or {})}
        self.agents = {}
        for n, node in self.nodes.items():
            kubeconfig = tmp_path / f"kubeconfig-{n}"
            agent = Agent(node, tmp_path / n, types.SimpleNamespace(kubeconfig=str(kubeconfig)), self.ns,
                          ("create", "update", "delete"), tuning, resource_options=resource_options)
            self.agents[n] = agent
        # The steward reads the agents' config, with its own credentials.
        config = json.loads(self.agents["a"].config_file.read_text())
        self.steward_kubeconfig = tmp_path / "kubeconfig-steward"
        config["api"] = {"kubeconfig": str(self.steward_kubeconfig)}
        self.steward_config = tmp_path / "steward.json"
        self.steward_config.write_text(json.dumps(config))
        self.grant(rbac_documents(self.agents["a"].config_file, "rbac", self.name, self.ns, "agent"), "agent")
        self.apply(rbac_documents(self.agents["a"].config_file, "steward", self.name, self.ns, "agent"))
        policies = rbac_documents(self.agents["a"].config_file, "admission", self.name, self.ns, "agent")
        assert [p["metadata"]["name"] for p in policies if p["kind"] == "ValidatingAdmissionPolicy"], policies
        for p in policies:
            kind = "validatingadmissionpolicies" if p["kind"] == "ValidatingAdmissionPolicy" else \
                "validatingadmissionpolicybindings"
            self.admin.request("POST", f"/apis/admissionregistration.k8s.io/v1/{kind}", p)
            # Left in place (they match only this test's namespace): kube-apiserver 1.36.3 sometimes
            # never loads the parameter of a policy created after another with the same paramKind was
            # deleted (docs/security.md), which would leave a later test's singleton rule off.
        tokens = {n: self.bound_token(node) for n, node in self.nodes.items()}
        for n, token in tokens.items():
            kubeconfig_with_token(cluster.kubeconfig, token, tmp_path / f"kubeconfig-{n}")
        # The API server loads new policies asynchronously: the agents start once they are in force.
        as_a = copy.copy(self.admin)
        as_a.token = tokens["a"]
        wait_until(lambda: self.refused(as_a), "the node-bound rules to be in force")
        token = self.admin.request("POST", f"/api/v1/namespaces/{self.ns}/serviceaccounts/{self.steward_account}/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}})
        kubeconfig_with_token(cluster.kubeconfig, token["status"]["token"], self.steward_kubeconfig)
        self.steward = None

    def refused(self, kube):
        """Whether a dry run of an Event in another node's name is refused by the rules."""
        try:
            kube.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events?dryRun=All", {
                "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"generateName": "probe-"},
                "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "nodehook.io/agent",
                "reportingInstance": "someone-else", "action": "probe", "reason": "Probe", "type": "Normal",
                "regarding": {"apiVersion": "v1", "kind": "Node", "name": self.nodes["b"]}})
            return False
        except ApiError as e:
            return e.status == 403 and "ValidatingAdmissionPolicy" in e.body

    def bound_token(self, node):
        pod = self.admin.request("POST", f"/api/v1/namespaces/{self.ns}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"agent-{node}", "labels": {"nodehook.io/agent": "true"}},
            "spec": {"nodeName": node, "serviceAccountName": "agent", "automountServiceAccountToken": False,
                     "containers": [{"name": "nodehook", "image": "nodehook:test"}]}})
        # Labelled as agent pods: other tests (release-finalizers) would count them as running agents.
        self.created.append(f"/api/v1/namespaces/{self.ns}/pods/{pod['metadata']['name']}?gracePeriodSeconds=0")
        token = self.admin.request("POST", f"/api/v1/namespaces/{self.ns}/serviceaccounts/agent/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"expirationSeconds": 3600, "boundObjectRef": {
                "apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]}}})
        return token["status"]["token"]

    def grant(self, documents, account):
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        for d in documents:
            name = d["metadata"]["name"]
            subjects = [{"kind": "ServiceAccount", "name": account, "namespace": self.ns}]
            if d["kind"] == "ClusterRole":
                self.admin.request("POST", f"{rbac}/clusterroles", d)
                self.admin.request("POST", f"{rbac}/clusterrolebindings", {
                    "metadata": {"name": name}, "subjects": subjects,
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}})
                self.created += [f"{rbac}/clusterrolebindings/{name}", f"{rbac}/clusterroles/{name}"]
            elif d["kind"] == "Role":
                self.admin.request("POST", f"{rbac}/namespaces/{self.ns}/roles", d)
                self.admin.request("POST", f"{rbac}/namespaces/{self.ns}/rolebindings", {
                    "metadata": {"name": name}, "subjects": subjects,
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name}})

    def apply(self, documents):
        """Creates the documents as printed: roles and their bindings (the steward's own)."""
        rbac = "/apis/rbac.authorization.k8s.io/v1"
        kinds = {"ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
                 "Role": f"namespaces/{self.ns}/roles", "RoleBinding": f"namespaces/{self.ns}/rolebindings"}
        for d in documents:
            self.admin.request("POST", f"{rbac}/{kinds[d['kind']]}", d)
            if d["kind"].startswith("Cluster"):
                self.created.append(f"{rbac}/{kinds[d['kind']]}/{d['metadata']['name']}")

    def start_steward(self):
        binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
        self.steward_log = self.tmp / "steward.log"
        self.steward = subprocess.Popen([str(binary), "steward", "--config", str(self.steward_config),
                                         "--identity", "steward-1", "--agents-namespace", self.ns,
                                         "--health-address", "127.0.0.1:0"],
                                        stdout=subprocess.DEVNULL, stderr=open(self.steward_log, "wb"))

    def steward_probe(self, path):
        """(status, body) of GET `path` on the steward's health listener."""
        listening = wait_until(lambda: self.steward_lines("health endpoints listening"), "the steward's probes")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{listening[0]['port']}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def steward_lines(self, event):
        from conftest import parse_log_line
        lines = self.steward_log.read_text(errors="replace").splitlines()
        return [p for p in map(parse_log_line, lines) if p.get("event") == event]

    def start_all(self):
        """Both agents and the steward, once each agent found the rules in force."""
        for agent in self.agents.values():
            agent.start()
        self.start_steward()
        self.in_force()
        return self.agents["a"], self.agents["b"]

    def in_force(self):
        """Each agent's self-check found the rules refusing a write in another node's name."""
        for agent in self.agents.values():
            wait_until(lambda: any(e.get("result") == "protected" for e in agent.log_events("node isolation checked")),
                       f"{agent.node} to find the node-bound rules in force (log: {agent.log_path})")

    def no_refusals(self):
        for agent in self.agents.values():
            if agent.log_path.exists():
                assert refusals(agent) == [], agent.log_path
        # refused_lines reads the error fields only: a uid with 403 in it is no refusal.
        assert refused_lines(self.steward_log.read_text(errors="replace")) == [], self.steward_log

    def close(self):
        for agent in self.agents.values():
            agent.stop()
        if self.steward and self.steward.poll() is None:
            self.steward.send_signal(signal.SIGTERM)
            self.steward.wait(timeout=30)
        for path in reversed(self.created):
            try:
                self.admin.request("DELETE", path)
            except Exception:  # already gone (a Node the test deleted)
                pass


@pytest.fixture
def confined(cluster, widgets, tmp_path):
    made = []

    def make(resource_options, tuning=None):
        made.append(Confined(cluster, widgets, tmp_path, resource_options, tuning))
        return made[-1]
    yield make
    for c in made:
        c.close()


def test_the_steward_removes_a_departed_nodes_finalizer_that_the_agents_may_not(confined, widgets):
    fleet = confined({"finalizer": True})
    a, b = fleet.start_all()
    # Its probes judge its watches as the agents' are: ready once the Nodes, the agent pods and the
    # widgets are listed.
    wait_until(lambda: fleet.steward_probe("/readyz")[0] == 200, "the steward's /readyz")
    status, body = fleet.steward_probe("/readyz")
    assert "nodes" in body and "widgets.example.com/v1" in body and "nodehook.io/agent" in body, body
    assert fleet.steward_probe("/healthz")[0] == 200
    assert "nodehook_build_info" in fleet.steward_probe("/metrics")[1]
    widgets.create("w", {"size": 1})
    a.wait_for("w", "create"), b.wait_for("w", "create")
    wait_until(lambda: len(widgets.get("w")["metadata"].get("finalizers", [])) == 2, "both nodes' finalizers on w")
    # Node b leaves for good: its agent stops and its Node is deleted.
    b.stop()
    fleet.admin.request("DELETE", f"/api/v1/nodes/{fleet.nodes['b']}")
    widgets.delete("w")
    a.wait_for("w", "delete")
    wait_until(lambda: not widgets.exists("w"), "w gone: node a released its finalizer, the steward node b's")
    removed = fleet.steward_lines("departed node's finalizer removed")
    assert [e["finalizer"] for e in removed] == [f"nodehook.io/{fleet.nodes['b']}"]
    assert not a.log_events("departed node's finalizer removed")  # not the agents' work any more
    fleet.no_refusals()


def test_the_steward_grants_rollout_slots_and_both_confined_nodes_run(confined, widgets):
    fleet = confined({"rollout": {"max_nodes": 1, "slot_lease_seconds": 6, "failure_after_retries": 1}})
    a, b = fleet.start_all()
    widgets.create("r", {"size": 1})
    a.wait_for("r", "create"), b.wait_for("r", "create")
    assert fleet.steward_lines("rollout coordinator started")
    assert not a.log_events("rollout coordinator started") and not b.log_events("rollout coordinator started")
    fleet.no_refusals()


def test_the_steward_writes_the_ready_condition_from_the_confined_nodes_records(confined, widgets):
    fleet = confined({"ready_condition": "Ready"})
    a, b = fleet.start_all()
    widgets.create("w", {"size": 1})
    a.wait_for("w", "create"), b.wait_for("w", "create")

    def ready():
        found = [c for c in widgets.get("w").get("status", {}).get("conditions", []) if c["type"] == "Ready"]
        return found and found[0]["status"] == "True" and found[0]

    condition = wait_until(ready, "w Ready from both nodes' records")
    assert condition["message"] == "2/2 nodes" and condition["observedGeneration"] == 1, condition
    assert fleet.steward_lines("ready writer started")
    assert not a.log_events("ready writer started") and not b.log_events("ready writer started")
    # Each node wrote only its own record, under the node-bound rules.
    leases = fleet.admin.request(
        "GET", f"/apis/coordination.k8s.io/v1/namespaces/{fleet.ns}/leases?labelSelector=nodehook.io/ready")["items"]
    assert sorted(l["spec"]["holderIdentity"] for l in leases) == sorted(fleet.nodes.values())
    fleet.no_refusals()


def test_the_steward_frees_an_expired_singleton_lease_for_another_confined_node(confined, widgets):
    fleet = confined({"singleton": True}, {"lease_name": "st-lease", "lease_duration_seconds": 8,
                                           "lease_renew_deadline_seconds": 4, "lease_retry_period_seconds": 1})
    a, b = fleet.agents["a"], fleet.agents["b"]
    a.start()
    wait_until(lambda: a.log_events("leadership acquired"), "node a to lead")
    b.start()
    fleet.start_steward()
    fleet.in_force()
    widgets.create("s1", {"size": 1})
    a.wait_for("s1", "create")
    a.kill()  # it never releases the Lease: only its expiry, judged by the steward, frees it
    wait_until(lambda: b.log_events("leadership acquired"), "node b to lead once the steward freed the Lease",
               timeout=60)
    assert fleet.steward_lines("expired lease freed")
    widgets.create("s2", {"size": 1})
    b.wait_for("s2", "create")
    fleet.no_refusals()
