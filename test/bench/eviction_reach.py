#!/usr/bin/env python3
"""What a stolen drain token can evict on other nodes, and how fast (docs/security.md, "Evictions").

An Eviction names a pod, not its node, and no admission rule can read the pod it names, so the
right a rollout's `drain` needs (`create` on pods/eviction) reaches every pod of the cluster. On
the local API server: node A's pod-bound token (with only that right), `--pods` pods bound to node
B without a budget, and as many under a PodDisruptionBudget that allows no disruption. The token
evicts them all, from `--clients` connections at once. Prints how many went, how many the budgets
kept, and the evictions per second: the bound of the gap, short of removing the right (no `drain`).

usage: test/bench/eviction_reach.py [--pods 200] [--clients 4]
"""

import argparse
import copy
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from bench_cluster import widget_namespace  # noqa: E402
from kube import ApiError  # noqa: E402

NS = "bench"


def pod(name, node, labels=None):
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"nodeName": node, "automountServiceAccountToken": False,
                     "containers": [{"name": "c", "image": "x"}]}}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=200)
    parser.add_argument("--clients", type=int, default=4)
    args = parser.parse_args()
    with widget_namespace(NS) as (_, kubeconfig, admin):
        for node in ("node-a", "node-b"):
            admin.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node}})
        admin.request("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "agent"}})
        admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterroles", {
            "metadata": {"name": "bench-drain"},
            "rules": [{"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]}]})
        admin.request("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
            "metadata": {"name": "bench-drain"},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "bench-drain"},
            "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": NS}]})
        own = admin.request("POST", f"/api/v1/namespaces/{NS}/pods", dict(pod("agent-a", "node-a"), spec=dict(
            pod("agent-a", "node-a")["spec"], serviceAccountName="agent")))
        token = admin.request("POST", f"/api/v1/namespaces/{NS}/serviceaccounts/agent/token", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {
                "expirationSeconds": 3600, "boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "agent-a",
                                                              "uid": own["metadata"]["uid"]}}})
        admin.request("POST", f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets", {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "kept"},
            "spec": {"maxUnavailable": 0, "selector": {"matchLabels": {"app": "kept"}}}})
        names = [f"free-{i}" for i in range(args.pods)] + [f"kept-{i}" for i in range(args.pods)]
        for name in names:
            admin.request("POST", f"/api/v1/namespaces/{NS}/pods",
                          pod(name, "node-b", {"app": "kept"} if name.startswith("kept") else {}))
            # Running and Ready, as node B's kubelet would say (a Pending pod ignores every budget).
            admin.request("PATCH", f"/api/v1/namespaces/{NS}/pods/{name}/status", {"status": {
                "phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
                "application/merge-patch+json")
        outcomes = {}
        lock = threading.Lock()

        def evict(share):
            client = copy.copy(admin)
            client.token = token["status"]["token"]
            for name in share:
                try:
                    client.request("POST", f"/api/v1/namespaces/{NS}/pods/{name}/eviction", {
                        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": name, "namespace": NS}})
                    result = "evicted"
                except ApiError as e:
                    result = f"HTTP {e.status}"
                with lock:
                    outcomes[name] = result
        threads = [threading.Thread(target=evict, args=(names[i::args.clients],)) for i in range(args.clients)]
        start = time.perf_counter()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        seconds = time.perf_counter() - start
        free = [outcomes[n] for n in names if n.startswith("free")]
        kept = [outcomes[n] for n in names if n.startswith("kept")]
        print(f"node A's drain token against {len(names)} pods on node B, {args.clients} clients, {seconds:.2f} s")
        print(f"  without a budget: {free.count('evicted')}/{len(free)} evicted")
        print(f"  under a budget allowing none: {kept.count('evicted')}/{len(kept)} evicted "
              f"(refused: {sorted(set(r for r in kept if r != 'evicted'))})")
        print(f"  Eviction calls per second: {len(names) / seconds:.0f}; "
              f"pods evicted per second: {free.count('evicted') / seconds:.0f}")


if __name__ == "__main__":
    main()
