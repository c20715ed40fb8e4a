#!/usr/bin/env python3
"""A rollout's node steps (docs/rollouts.md, "Node steps") on the local API server: one agent as
one Node, a widget whose rollout drains the node and reboots it when the hook asks. The server has
no kubelet or controllers, so this measures the agent's own part; the bench plays the kubelet
(pods are deleted at once: grace period 0), the disruption controller (it writes the budget's
status) and the reboot (a new boot ID in the agent's boot ID file and on the Node, and the agent
started again). Per run:
  drain     N running, ready pods on the node, no budget: from the slot taken to "node drained",
            and Eviction calls per pod
  budget    the same N pods under a budget that allows one eviction at a time: the bench allows
            the next as soon as the evicted pod is gone (a replacement ready at once elsewhere);
            Eviction calls per pod, refusals (429) included
  reboot    from the agent's start on the new boot ID to "node rebooted", and to "rollout node
            done" (verify and uncordon)
  uninstall after the runs, with the agent stopped: M Nodes cordoned under the rollout's mark
            (work in progress), `nodehook fleet release-finalizers --yes` gives them back: its
            wall time, and the Nodes uncordoned
The times are of the agent's log lines (its own clock). A real kubelet's pod termination and a
real scheduler add their own time: test/e2e/real_nodes/test_4_node_steps.py prints those on real nodes.

usage: NODEHOOK_BIN=build/agent/app/nodehook test/bench/node_steps.py [--pods 20] [--runs 3] [--nodes 100]
"""

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from bench_cluster import LoggedAgent, executable, stop_agent, wait, widget_namespace  # noqa: E402

NS = "bench"
HOOK = """#!/bin/sh
cat >/dev/null
[ -e "$BENCH_CONTROL/reboot-$NODEHOOK_NAME" ] && printf '{"reboot": true}' >"$NODEHOOK_RESULT_FILE"
exit 0
"""


def log_time(line):
    ts = line.split(" ", 1)[0].split("=", 1)[1]
    return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp()


class Node(LoggedAgent):
    def __init__(self, work, kubeconfig, name, hook, reboot_command):
        super().__init__(work / name, work / name / "control")
        self.name = name
        self.control.mkdir(parents=True)
        self.boot_file = self.dir / "boot_id"
        self.boot_file.write_text("boot-1\n")
        hooks = {r: {"argv": [str(hook)], "timeout_seconds": 10} for r in ("create", "update")}
        rollout = {"max_nodes": 1, "failure_after_retries": 1, "slot_lease_seconds": 6,
                   "drain": {"timeout_seconds": 600},
                   "reboot": {"argv": [str(reboot_command)], "timeout_seconds": 600}}
        self.config.write_text(json.dumps({
            "node_name": name, "state_file": str(self.dir / "state.db"), "api": {"kubeconfig": kubeconfig},
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets", "namespace": NS,
                           "hooks": hooks, "rollout": rollout}],
            "tuning": {"workers": 2, "lease_namespace": NS, "boot_id_file": str(self.boot_file),
                       "health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0"}}))

    def lines(self, event):
        """The current run's lines of `event`."""
        return [line for line in self.logs[-1].read_text(errors="replace").splitlines() if f'event="{event}"' in line]


def field(line, key):
    for part in line.split(" "):
        if part.startswith(key + "="):
            return part.split("=", 1)[1].strip('"')
    return ""


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--pods", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=100)
    args = parser.parse_args()
    with widget_namespace(NS) as (work, kubeconfig, admin):
        admin.request("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "default"}})
        hook = executable(work / "hook", HOOK)
        reboot = executable(work / "reboot", "#!/bin/sh\nexit 0\n")
        node = Node(work, kubeconfig, "node-0", hook, reboot)
        admin.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": node.name}})
        set_boot_id(admin, node.name, "boot-1")
        try:
            node.start()
            rows = []
            for run in range(args.runs):
                rows.append(drain(admin, node, args.pods, f"d{run}", budget=False))
                rows.append(drain(admin, node, args.pods, f"b{run}", budget=True))
            reboots = [reboot_once(admin, node, f"r{run}", f"boot-{run + 2}") for run in range(args.runs)]
        finally:
            stop_agent(node.proc)
        uninstall = [release_cordons(admin, node, kubeconfig, args.nodes, run) for run in range(args.runs)]
    print(f"| phase ({args.pods} pods) | slot to drained | Eviction calls | per pod |")
    print("| --- | ---: | ---: | ---: |")
    for what, seconds, calls in rows:
        print(f"| {what} | {seconds:.2f} s | {calls} | {calls / args.pods:.2f} |")
    print()
    print("| reboot | start to `node rebooted` | start to `rollout node done` |")
    print("| --- | ---: | ---: |")
    for name, proven, done in reboots:
        print(f"| {name} | {proven:.2f} s | {done:.2f} s |")
    print()
    print(f"| uninstall ({args.nodes} cordoned Nodes) | release-finalizers wall time | uncordoned |")
    print("| --- | ---: | ---: |")
    for run, (seconds, uncordoned) in enumerate(uninstall):
        print(f"| run {run + 1} | {seconds:.2f} s | {uncordoned} |")


def set_boot_id(admin, node, boot_id):
    admin.request("PATCH", f"/api/v1/nodes/{node}/status", {"status": {"nodeInfo": {"bootID": boot_id}}},
                  "application/merge-patch+json")


def pods_left(admin, app):
    return len(admin.request("GET", f"/api/v1/namespaces/{NS}/pods?labelSelector=app%3D{app}")["items"])


def drain(admin, node, count, name, budget):
    app = f"app-{name}"
    for i in range(count):
        admin.request("POST", f"/api/v1/namespaces/{NS}/pods", {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-{i}", "labels": {"app": app},
                         "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": app,
                                              "uid": "0000-bench", "controller": True}]},
            # No kubelet confirms a graceful deletion here: the pods' own grace period of 0 lets the
            # API server delete them at once.
            "spec": {"nodeName": node.name, "automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "example:bench"}]}})
        admin.request("PATCH", f"/api/v1/namespaces/{NS}/pods/{name}-{i}/status",
                      {"status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}},
                      "application/merge-patch+json")
    pdb = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/{app}"
    if budget:
        admin.request("POST", f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets", {
            "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": app},
            "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": app}}}})
    allowed_at = None

    def controller():
        # One eviction allowed at a time: the next once the last evicted pod is gone.
        nonlocal allowed_at
        if not budget:
            return
        left = pods_left(admin, app)
        status = admin.request("GET", pdb).get("status", {})
        if status.get("disruptionsAllowed", 0) == 0 and (allowed_at is None or left < allowed_at):
            admin.request("PATCH", pdb + "/status",
                          {"status": {"observedGeneration": 1, "disruptionsAllowed": 1, "currentHealthy": count,
                                      "desiredHealthy": 1, "expectedPods": count}}, "application/merge-patch+json")
            allowed_at = left
    controller()
    done_before = len(node.lines("node drained"))
    admin.request("POST", f"/apis/example.com/v1/namespaces/{NS}/widgets",
                  {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 1}})
    wait(lambda: controller() or len(node.lines("node drained")) > done_before, f"{name} drained", timeout=600)
    wait(lambda: any(name in line for line in node.lines("rollout node done")), f"{name} done")
    drained = node.lines("node drained")[-1]
    taken = [line for line in node.lines("rollout slot taken") if f"/{name} " in line][-1]
    return (f"{'budget, one at a time' if budget else 'no budget'} ({name})", log_time(drained) - log_time(taken),
            int(field(drained, "evictions")))


def reboot_once(admin, node, name, boot_id):
    (node.control / f"reboot-{name}").write_text("")
    admin.request("POST", f"/apis/example.com/v1/namespaces/{NS}/widgets",
                  {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": {"size": 1}})
    wait(lambda: any(name in line for line in node.lines("node reboot started")), f"{name} rebooting")
    # The reboot: the agent goes, the node comes back with a new boot ID, the kubelet reports it.
    node.proc.kill()
    node.proc.wait()
    node.boot_file.write_text(boot_id + "\n")
    set_boot_id(admin, node.name, boot_id)
    node.start()
    wait(lambda: node.lines("rollout node done"), f"{name} done after the reboot")
    started = log_time(node.lines("orphan reaper started")[0])
    return name, log_time(node.lines("node rebooted")[0]) - started, log_time(node.lines("rollout node done")[0]) - started


def rollout_id(resource_id):
    """RolloutIdOf (rollout_leases.h): 10 hex digits of the FNV-1a 64 hash of the entry's id."""
    h = 1469598103934665603
    for c in resource_id.encode():
        h = ((h ^ c) * 1099511628211) % (1 << 64)
    return f"{h:016x}"[:10]


def release_cordons(admin, node, kubeconfig, count, run):
    mark = f"nodehook.io/cordoned-{rollout_id(f'widgets.example.com/v1 in {NS}')}.0123456789ab"
    for i in range(count):
        name = f"cordoned-{run}-{i}"
        admin.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {
            "name": name, "annotations": {mark: json.dumps({"object": f"{NS}/w", "uid": "u", "state": "s"})}},
            "spec": {"unschedulable": True}})
    binary = os.environ.get("NODEHOOK_BIN", str(Path(__file__).resolve().parents[2] / "build/agent/app/nodehook"))
    started = time.monotonic()
    done = subprocess.run([binary, "fleet", "release-finalizers", "--config", str(node.config), "--yes",
                           "--kubeconfig", str(kubeconfig)], capture_output=True, text=True, timeout=600)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        raise SystemExit(f"release-finalizers failed: {done.stderr}")
    nodes = admin.request("GET", "/api/v1/nodes")["items"]
    left = [n["metadata"]["name"] for n in nodes if n.get("spec", {}).get("unschedulable")]
    if left:
        raise SystemExit(f"still cordoned after the uninstall: {left[:5]}")
    return seconds, done.stdout.count(": uncordoned (")


if __name__ == "__main__":
    main()
