#!/usr/bin/env python3
"""API writes and handover of a ready condition (docs/fleet-cost.md, "Ready condition"): six
agents, each acting as its own Node, keep each widget's Ready condition ("ready_condition") on the
local API server; the agents elect its writer (tuning.cross_node_writes "agents", the default lease
timings: 15 s lease, 2 s retry). Counts, per phase:
  condition writes  every agent's "ready condition set" lines (each a merge patch of the status)
  record writes     the events of the nodes' records (Leases labelled nodehook.io/ready): their
                    creates and updates, from a `kubectl get --watch` of them
Phases:
  start      50 widgets exist; the agents start and catch up
  updates    20 widgets changed one after another
  failure    one widget's update fails on one node (Failing), then is fixed
  restart    every agent restarts with nothing changed
  handover   the writer is stopped (SIGTERM: it releases its Lease), then killed (SIGKILL: its
             Lease expires): the time until another agent holds the Lease, and until its first
             round ("ready writer caught up"), by this script's clock
Between phases it waits until every widget shows what the phase ends with, then `--settle`
seconds more, so late writes count in their phase.

usage: NODEHOOK_BIN=build/agent/app/nodehook test/bench/ready_condition.py [--agents 6] [--settle 6]
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from bench_cluster import REPO, LoggedAgent, executable, stop_agent, wait, widget_namespace  # noqa: E402

NS = "bench"
WIDGETS = 50
HOOK = """#!/bin/sh
cat >/dev/null
[ -e "$BENCH_CONTROL/fail-$NODEHOOK_NAME" ] && { echo "failing on purpose" >&2; exit 1; }
exit 0
"""


class Node(LoggedAgent):
    def __init__(self, work, kubeconfig, name, hook):
        super().__init__(work / name, work / name / "control")
        self.name = name
        self.control.mkdir(parents=True)
        hooks = {r: {"argv": [str(hook)], "timeout_seconds": 10} for r in ("create", "update", "delete")}
        self.config.write_text(json.dumps({
            "node_name": name, "state_file": str(self.dir / "state.db"), "api": {"kubeconfig": kubeconfig},
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets", "namespace": NS,
                           "hooks": hooks, "ready_condition": "Ready"}],
            "tuning": {"workers": 2, "retry_base_seconds": 1, "retry_max_seconds": 2, "lease_namespace": NS,
                       "health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0"}}))

    def latest(self, event):
        """Whether the current run logged `event`."""
        return f'event="{event}"' in self.logs[-1].read_text(errors="replace")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=6)
    parser.add_argument("--settle", type=float, default=6, help="seconds after each phase")
    args = parser.parse_args()
    kubectl = os.environ.get("NODEHOOK_KUBECTL", str(REPO / "build/cache/kubectl"))
    with widget_namespace(NS) as (work, kubeconfig, admin):
        hook = executable(work / "hook", HOOK)
        nodes = [Node(work, kubeconfig, f"node-{i}", hook) for i in range(args.agents)]
        try:
            measure(args, admin, nodes, kubeconfig, kubectl, work)
        finally:  # a timed-out wait exits: the agents must not outlive the API server
            for n in nodes:
                stop_agent(n.proc)


def measure(args, admin, nodes, kubeconfig, kubectl, work):
    """The phases, then the tables."""
    for n in nodes:
        admin.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n.name}})
    base = f"/apis/example.com/v1/namespaces/{NS}/widgets"
    for i in range(WIDGETS):
        admin.request("POST", base, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w{i}"},
                                     "spec": {"size": 1}})
    records_log = work / "records.watch"
    watch = subprocess.Popen([kubectl, "--kubeconfig", kubeconfig, "-n", NS, "get", "leases", "-l",
                              "nodehook.io/ready", "--watch", "-o", "name"],
                             stdout=open(records_log, "w"), stderr=subprocess.DEVNULL)

    def record_writes():
        # One line per event (none exist when the watch starts; none is deleted here).
        return len(records_log.read_text().splitlines())

    def condition_writes():
        return sum(n.count("ready condition set") for n in nodes)

    def conditions():
        out = {}
        for w in admin.request("GET", base)["items"]:
            c = [c for c in w.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
            out[w["metadata"]["name"]] = (c[0]["status"], c[0]["reason"], c[0]["observedGeneration"],
                                          w["metadata"]["generation"]) if c else None
        return out

    def all_ready():
        return all(v and v[0] == "True" and v[2] == v[3] for v in conditions().values())

    rows = []

    def phase(what, done, objects):
        before = (condition_writes(), record_writes())
        done()
        time.sleep(args.settle)
        after = (condition_writes(), record_writes())
        rows.append((what, after[0] - before[0], after[1] - before[1], objects))

    def start():
        for n in nodes:
            n.start()
        wait(all_ready, "every widget Ready")
    phase(f"start: {WIDGETS} widgets, {args.agents} agents", start, WIDGETS)

    def updates():
        for i in range(20):
            admin.request("PATCH", f"{base}/w{i}", {"spec": {"size": 2}}, "application/merge-patch+json")
        wait(all_ready, "every widget Ready at its new generation")
    phase("20 updates", updates, 20)

    def failure():
        (nodes[0].control / "fail-w49").write_text("")
        admin.request("PATCH", f"{base}/w49", {"spec": {"size": 3}}, "application/merge-patch+json")
        wait(lambda: (conditions()["w49"] or ("",))[1:2] == ("Failing",), "w49 Failing")
        (nodes[0].control / "fail-w49").unlink()
        wait(all_ready, "w49 Ready once fixed")
    phase("one update failing on one node, then fixed", failure, 1)

    def restart():
        for n in nodes:
            stop_agent(n.proc)
        for n in nodes:
            n.start()
        wait(lambda: all(n.latest("ready record kept") for n in nodes)
             and any(n.latest("ready writer caught up") for n in nodes), "every record kept, a writer's round")
    phase("restart, nothing changed", restart, WIDGETS)

    lease_path = f"/apis/coordination.k8s.io/v1/namespaces/{NS}/leases"

    def writer():
        leases = admin.request("GET", lease_path)["items"]
        held = [l["spec"].get("holderIdentity", "") for l in leases if l["metadata"]["name"].endswith("-writer")]
        return held[0] if held else ""

    handovers = []
    for how in ("SIGTERM", "SIGKILL"):
        old = writer()
        victim = next(n for n in nodes if n.name == old.split("_")[0])
        caught = sum(n.count("ready writer caught up") for n in nodes)
        t0 = time.monotonic()
        if how == "SIGTERM":
            stop_agent(victim.proc)
        else:
            victim.proc.kill()
            victim.proc.wait()
        t1 = wait(lambda: writer() not in ("", old), "another writer")
        t2 = wait(lambda: sum(n.count("ready writer caught up") for n in nodes) > caught, "its first round")
        handovers.append((how, t1 - t0, t2 - t0, writer()))
        victim.start()
        wait(lambda: victim.latest("ready record kept"), "the victim back")
    watch.terminate()
    for n in nodes:
        stop_agent(n.proc)
    print(f"\nready condition: {args.agents} agents, {WIDGETS} widgets, {args.settle:.0f} s settle after each phase")
    print("phase | condition writes | per object | record writes (all agents) | per agent")
    for what, conditions_written, records_written, objects in rows:
        print(f"{what} | {conditions_written} | {conditions_written / objects:.2f} | {records_written} | "
              f"{records_written / args.agents:.1f}")
    print("\nhandover (default lease 15 s, retry 2 s) | to the new holder | to its first round | new writer")
    for how, took, caught_up, who in handovers:
        print(f"writer stopped by {how} | {took:.1f} s | {caught_up:.1f} s | {who}")


if __name__ == "__main__":
    main()
