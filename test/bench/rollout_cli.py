#!/usr/bin/env python3
"""How long `kubectl nodehook rollout status|plan` and `kubectl nodehook wait` take against a
fleet of 100 nodes (issue 17), against the real test API server (test/cluster).

  rollout   100 node Leases (the shape agents write: policy, ignored paths, one result for the
            object) and 10 slot Leases (held, renewed now) in namespace nodehook, 100 Node
            objects, one widget. `rollout status` and `rollout plan` with 10 nodes done, 10
            running and 80 waiting; `wait` once all 100 are done (one look: exits 0).
  survey    no rollout policy: 100 agent Pod objects whose podIPs live in a network namespace
            (test/e2e/pod_network.py) where ONE small HTTP server answers every address as a
            simulated agent would (GET /v1/objects?uid=UID listing the widget settled at its
            resourceVersion), reached through the API server's pod proxy, 16 at a time; `wait`
            exits 0 after one round of 100 proxied GETs.
Each figure is the median of 5 runs of the whole command (process start, kubeconfig, every API
request), wall-clock, on this machine. The state digest the Leases carry comes from the command
itself: `rollout resume` writes it to the object's nodehook.io/rollout-resume annotation.
Needs root (the network namespace) and NODEHOOK_BIN / NODEHOOK_TESTCLUSTER (or the build paths).
--write-docs replaces the section "kubectl nodehook rollout and wait (issue 17)" in
docs/benchmarks.md."""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from urllib.parse import urlparse

E2E = Path(__file__).resolve().parents[1] / "e2e"
sys.path.insert(0, str(E2E))

from conftest import REPO, Cluster  # noqa: E402
from kube import ApiError  # noqa: E402
from pod_network import PodNetwork  # noqa: E402

RESOURCE = "widgets.example.com/v1"
AGENTS_NS = "nodehook"
OBJECT_NS = "bench"
PORT = 8090
SECTION = "kubectl nodehook rollout and wait (issue 17)"

# Runs inside the network namespace: every pod address answers as an agent that settled the
# widget at RV (argv: uid, resourceVersion).
FAKE_AGENTS = r'''
import json, sys
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler
uid, rv = sys.argv[1], sys.argv[2]
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        node = "node-%03d" % (int(self.connection.getsockname()[0].rsplit(".", 1)[1]) - 2)
        obj = {"resource": "widgets.example.com/v1", "namespace": "bench", "name": "w1", "uid": uid,
               "handled": True, "handled_at_ms": 1, "handled_at_ms_relative": "", "settled_resource_version": rv,
               "handlers": []}
        body = json.dumps({"node": node, "snapshot_at_ms": 1, "snapshot_age_ms": 0, "messages": "shown",
                           "total": 1, "truncated": False, "objects": [obj]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
ThreadingHTTPServer.daemon_threads = True
ThreadingHTTPServer(("0.0.0.0", %d), H).serve_forever()
'''.replace("%d", str(PORT))


def binary():
    return os.environ.get("NODEHOOK_BIN", str(REPO / "build" / "agent" / "app" / "nodehook"))


def ensure(kube, path, body):
    try:
        kube.request("POST", path, body)
    except ApiError as e:
        if e.status != 409:
            raise


def nodehook(kubeconfig, *args):
    start = time.monotonic()
    result = subprocess.run([binary(), "fleet", "--kubeconfig", kubeconfig, *args], capture_output=True, text=True,
                            timeout=300)
    return time.monotonic() - start, result


def median_of(runs, kubeconfig, *args, expect=0):
    times = []
    for _ in range(runs):
        took, result = nodehook(kubeconfig, *args)
        if result.returncode != expect:
            sys.exit(f"nodehook fleet {' '.join(args)}: exit {result.returncode}, expected {expect}\n"
                     f"{result.stdout}{result.stderr}")
        times.append(took)
    return statistics.median(times), result.stdout


def lease(name, kind, holder, annotations, duration=3600):
    now = time.strftime("%Y-%m-%dT%H:%M:%S.000000Z", time.gmtime())
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
            "metadata": {"name": name, "labels": {"nodehook.io/rollout": "bench", "nodehook.io/rollout-kind": kind},
                         "annotations": {"nodehook.io/rollout-resource": RESOURCE, **annotations}},
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": duration, "renewTime": now}}


def rollout_figures(kube, kubeconfig, nodes, runs):
    obj = kube.request("POST", f"/apis/example.com/v1/namespaces/{OBJECT_NS}/widgets",
                       {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
                        "spec": {"size": 1}})
    uid = obj["metadata"]["uid"]
    policy = json.dumps({"max_nodes": 10, "canary_nodes": 1, "soak_seconds": 0, "verify": False,
                         "max_failed_nodes": 2, "failure_after_retries": 3, "hold_label": "nodehook.io/rollout-hold",
                         "windows": [], "ignored_paths": []})
    names = [f"node-{i:03d}" for i in range(nodes)]
    for n in names:
        ensure(kube, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n}})
        kube.request("POST", f"/apis/coordination.k8s.io/v1/namespaces/{AGENTS_NS}/leases",
                     lease(f"bench-node-{n}", "node", n, {"nodehook.io/rollout-policy": policy,
                                                            "nodehook.io/rollout-results": "{}"}))
    spec = ["widgets.example.com/w1", "-n", OBJECT_NS]
    # The digest of the widget's state, as the agents compute it: resume writes it on the object.
    took, result = nodehook(kubeconfig, "rollout", "resume", *spec)
    assert result.returncode == 0, result.stdout + result.stderr
    digest = kube.request("GET", f"/apis/example.com/v1/namespaces/{OBJECT_NS}/widgets/w1")[
        "metadata"]["annotations"]["nodehook.io/rollout-resume"]

    def result_of(n):
        return json.dumps({uid: {"state": digest, "result": "done", "at_ms": 1, "message": "exited 0"}})

    for i, n in enumerate(names[:10]):
        kube.request("PATCH", f"/apis/coordination.k8s.io/v1/namespaces/{AGENTS_NS}/leases/bench-node-{n}",
                     {"metadata": {"annotations": {"nodehook.io/rollout-results": result_of(n)}}},
                     "application/merge-patch+json")
    for i, n in enumerate(names[10:20]):
        kube.request("POST", f"/apis/coordination.k8s.io/v1/namespaces/{AGENTS_NS}/leases",
                     lease(f"bench-slot-{i}", "slot", n, {"nodehook.io/rollout-slot": str(i),
                                                         "nodehook.io/rollout-object": uid,
                                                         "nodehook.io/rollout-state": digest,
                                                         "nodehook.io/rollout-phase": "running"}))
    figures = {}
    figures["status"], out = median_of(runs, kubeconfig, "rollout", "status", *spec)
    print(out.splitlines()[0], out.splitlines()[1], f"({len(out.splitlines())} lines)", sep="\n")
    figures["plan"], _ = median_of(runs, kubeconfig, "rollout", "plan", *spec)
    median_of(1, kubeconfig, "wait", *spec, "--timeout", "2s", expect=4)  # 90 nodes not done: a timeout
    for n in names[10:]:
        kube.request("PATCH", f"/apis/coordination.k8s.io/v1/namespaces/{AGENTS_NS}/leases/bench-node-{n}",
                     {"metadata": {"annotations": {"nodehook.io/rollout-results": result_of(n)}}},
                     "application/merge-patch+json")
    figures["wait"], out = median_of(runs, kubeconfig, "wait", *spec, "--timeout", "30s")
    print(out.strip())
    # Leave no policy behind for the survey part.
    for n in names:
        kube.request("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{AGENTS_NS}/leases/bench-node-{n}")
    for i in range(10):
        kube.request("DELETE", f"/apis/coordination.k8s.io/v1/namespaces/{AGENTS_NS}/leases/bench-slot-{i}")
    return figures, uid


def survey_figures(kube, kubeconfig, cluster_port, nodes, uid, runs):
    network = PodNetwork(addresses=nodes)
    server = None
    try:
        obj = kube.request("GET", f"/apis/example.com/v1/namespaces/{OBJECT_NS}/widgets/w1")
        rv = obj["metadata"]["resourceVersion"]
        server = subprocess.Popen([*network.launcher, sys.executable, "-c", FAKE_AGENTS, uid, rv])
        for i, ip in enumerate(network.pod_ips):
            name = f"nodehook-{i:03d}"
            kube.request("POST", f"/api/v1/namespaces/{AGENTS_NS}/pods", {
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "labels": {"app.kubernetes.io/name": "nodehook"}},
                "spec": {"nodeName": f"node-{i:03d}", "automountServiceAccountToken": False,
                         "containers": [{"name": "nodehook", "image": "nodehook:bench"}]}})
            kube.request("PATCH", f"/api/v1/namespaces/{AGENTS_NS}/pods/{name}/status",
                         {"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]}},
                         "application/merge-patch+json")
        figures = {}
        figures["survey_wait"], out = median_of(runs, kubeconfig, "wait", "widgets.example.com/w1", "-n", OBJECT_NS,
                                                "--timeout", "60s")
        print(out.strip())
        figures["fleet_table"], _ = median_of(runs, kubeconfig)
        return figures
    finally:
        if server:
            server.kill()
            server.wait()
        network.close()


def write_docs(text):
    path = REPO / "docs" / "benchmarks.md"
    doc = path.read_text()
    start = doc.find(f"## {SECTION}")
    if start >= 0:
        end = doc.find("\n## ", start + 1)
        doc = doc[:start] + text + (doc[end + 1:] if end >= 0 else "")
    else:
        doc = doc.rstrip("\n") + "\n\n" + text
    path.write_text(doc)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--nodes", type=int, default=100)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--write-docs", action="store_true")
    args = p.parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("needs root: the survey part makes a network namespace for the pod addresses")
    with tempfile.TemporaryDirectory(prefix="nodehook-rollout-cli-") as work:
        cluster = Cluster(Path(work))
        try:
            kube = cluster.kube
            for path, body in (("/api/v1/namespaces", {"metadata": {"name": AGENTS_NS}}),
                               ("/api/v1/namespaces", {"metadata": {"name": OBJECT_NS}}),
                               (f"/api/v1/namespaces/{AGENTS_NS}/serviceaccounts", {"metadata": {"name": "default"}})):
                ensure(kube, path, body)
            rollout, uid = rollout_figures(kube, cluster.kubeconfig, args.nodes, args.runs)
            survey = survey_figures(kube, cluster.kubeconfig, int(urlparse(kube.server).port), args.nodes, uid,
                                    args.runs)
        finally:
            cluster.stop()
    n = args.nodes
    rows = [
        (f"`rollout status` (10 done, 10 running, {n - 20} waiting)", rollout["status"]),
        ("`rollout plan` (same board)", rollout["plan"]),
        ("`wait`, rollout policy, all done (one look at the Leases)", rollout["wait"]),
        (f"`wait`, no policy, all settled (one survey round, {n} proxied GETs)", survey["survey_wait"]),
        (f"`kubectl nodehook` fleet table (same {n} simulated agents)", survey["fleet_table"]),
    ]
    table = f"| command, against {n} nodes | median of {args.runs} (s) |\n|---|---:|\n" + "".join(
        f"| {what} | {took:.3f} |\n" for what, took in rows)
    print(table)
    if args.write_docs:
        write_docs(f"## {SECTION}\n\nMeasured by `test/bench/rollout_cli.py` ({time.strftime('%Y-%m-%d')}, this "
                   "2-core machine, the test API server on loopback). Each figure is the wall-clock time of the whole "
                   "command (process start, kubeconfig, every API request), median of 5 runs. What it reads: "
                   "`rollout status|plan` and the policy `wait` list the rollout Leases (100 node Leases + 10 slot "
                   "Leases), GET the object and list the 100 Nodes; the no-policy `wait` lists the 100 agent pods, "
                   "GETs the object and asks each simulated agent `GET /v1/objects?uid=UID` through the API "
                   "server's pod proxy, 16 at a time (one HTTP server in a network namespace answers for all 100 "
                   "pod addresses, so the figure is the CLI and the API server's proxy, not 100 real agents). "
                   "The fleet table asks the same 100 agents once: the no-policy `wait` costs what one survey "
                   "round costs. Run again: `test/bench/rollout_cli.py --write-docs` (root; about 3 minutes).\n\n"
                   + table)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
