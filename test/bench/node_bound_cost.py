#!/usr/bin/env python3
"""What the node-bound admission rules cost one guarded write (docs/security.md).

On the local API server, an agent's pod-bound token adds and removes its own finalizer on a widget
(the write finalizer mode makes per object), `--writes` times each, first with no rules, then with
the rules `nodehook rbac` prints for a finalizer-mode config; then posts as many Events in its own
name. Prints the median and p90 latency of each, and the difference: the rules' cost.
Writes are interleaved in rounds (rules off, rules on, ...) so drift of the machine affects both.

usage: NODEHOOK_BIN=build/agent/app/nodehook test/bench/node_bound_cost.py [--writes 100] [--rounds 3]
"""

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from bench_cluster import REPO, widget_namespace  # noqa: E402
from kube import ApiError  # noqa: E402

NS = "bench"
MERGE = "application/merge-patch+json"


def policies(config_path):
    binary = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))
    out = subprocess.run([binary, "rbac", "--config", str(config_path), "--part", "admission", "--namespace", NS,
                          "--service-account", "agent"], capture_output=True, text=True, check=True,
                         env=dict(os.environ, NODE_NAME="any")).stdout
    import yaml  # only here: the bench venv or the system's python3-yaml
    return [d for d in yaml.safe_load_all(out) if d]


def cpu_seconds(pid):
    """The process's user + system CPU time so far (the API server here: etcd and all in one)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def timed(fn):
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--writes", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with widget_namespace(NS) as (work, kubeconfig, admin):
        admin.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}})
        admin.request("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "agent"}})
        admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "metadata": {"name": "bench-agent"},
            "rules": [{"apiGroups": ["example.com"], "resources": ["widgets"], "verbs": ["get", "patch"]},
                      {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["create"]}]})
        admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": "bench-agent"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-agent"},
            "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": NS}]})
        pod = admin.request("POST", f"/api/v1/namespaces/{NS}/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent-a"},
            "spec": {"nodeName": "node-a", "serviceAccountName": "agent", "automountServiceAccountToken": False,
                     "containers": [{"name": "c", "image": "x"}]}})
        token = admin.request("POST", f"/api/v1/namespaces/{NS}/serviceaccounts/agent/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {
                "expirationSeconds": 3600, "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "agent-a",
                                                              "uid": pod["metadata"]["uid"]}}})
        agent = copy.copy(admin)
        agent.token = token["status"]["token"]
        admin.request("POST", f"/apis/example.com/v1/namespaces/{NS}/widgets",
                      {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}})
        config = work / "config.json"
        config.write_text(json.dumps({"state_file": "/x.db", "api": {"in_cluster": True}, "resources": [
            {"group": "example.com", "version": "v1", "plural": "widgets", "finalizer": True,
             "hooks": {"delete": {"argv": ["/bin/true"]}}}], "tuning": {"cross_node_writes": "steward"}}))
        documents = policies(config)
        path = "/apis/admissionregistration.k8s.io/v1/"
        kinds = {"ValidatingAdmissionPolicy": "validatingadmissionpolicies",
                 "ValidatingAdmissionPolicyBinding": "validatingadmissionpolicybindings"}
        widget = f"/apis/example.com/v1/namespaces/{NS}/widgets/w"
        events = "/apis/events.k8s.io/v1/namespaces/default/events"
        serial = [0]

        def finalizer_write():
            agent.request("PATCH", widget, {"metadata": {"finalizers": ["nodehook.io/node-a"]}}, MERGE)
            agent.request("PATCH", widget, {"metadata": {"finalizers": None}}, MERGE)

        def event_write():
            serial[0] += 1
            agent.request("POST", events, {
                "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": f"bench-{serial[0]}"},
                "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "nodehook.io/agent",
                "reportingInstance": "node-a", "action": "bench", "reason": "Bench", "type": "Normal",
                "regarding": {"apiVersion": "v1", "kind": "Node", "name": "node-a"}})

        def refused():
            try:
                agent.request("PATCH", widget + "?dryRun=All", {"metadata": {"finalizers": ["nodehook.io/node-b"]}},
                              MERGE)
                return False
            except ApiError as e:
                return e.status == 403

        samples = {(what, rules): [] for what in ("finalizer", "event") for rules in ("off", "on")}
        apiserver = int((work / "apiserver.pid").read_text())
        cpu = {(what, rules): 0.0 for what in ("finalizer", "event") for rules in ("off", "on")}
        for _ in range(args.rounds):
            for rules in ("off", "on"):
                for d in documents:
                    name = d["metadata"]["name"]
                    if rules == "on":
                        admin.request("POST", path + kinds[d["kind"]], d)
                    else:
                        try:
                            admin.request("DELETE", path + kinds[d["kind"]] + "/" + name)
                        except ApiError:
                            pass
                deadline = time.monotonic() + 60
                while refused() != (rules == "on"):
                    if time.monotonic() > deadline:
                        sys.exit(f"the rules did not turn {rules}")
                    time.sleep(0.05)
                for what, write, per in (("finalizer", finalizer_write, 2), ("event", event_write, 1)):
                    # A finalizer write is two PATCHes (add, remove): half of it is one write.
                    before = cpu_seconds(apiserver)
                    for _ in range(args.writes):
                        samples[(what, rules)].append(timed(write) / per)
                    cpu[(what, rules)] += cpu_seconds(apiserver) - before
        print(f"node-bound rules, one guarded write, {args.writes} x {args.rounds} rounds each (ms)")
        print("write              rules off: median  p90 | rules on: median  p90 | added (median)")
        for what in ("finalizer", "event"):
            off, on = samples[(what, "off")], samples[(what, "on")]
            q = lambda xs: statistics.quantiles(xs, n=10)[-1]  # noqa: E731
            print(f"{what:18} {statistics.median(off):17.2f} {q(off):5.2f} | {statistics.median(on):16.2f} "
                  f"{q(on):5.2f} | {statistics.median(on) - statistics.median(off):+.2f}")
        print("API-server CPU per admitted write (ms): rules off | rules on | added")
        for what, per in (("finalizer", 2), ("event", 1)):
            n = args.writes * args.rounds * per
            off, on = (cpu[(what, r)] * 1000 / n for r in ("off", "on"))
            print(f"{what:18} {off:8.3f} | {on:8.3f} | {on - off:+.3f}")


if __name__ == "__main__":
    main()
