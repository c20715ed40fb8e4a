#!/usr/bin/env python3
"""API writes of node outputs (docs/fleet-cost.md, "Node outputs"): six agents, each acting as its
own Node, keep the NodeCondition WidgetsReady ("node_outputs": {"condition": ...}) for the widgets
on the local API server. Counts each agent's condition writes ("node condition set" and "removed"
log lines, which are its only writes to the Node) per phase:
  start      50 widgets exist; the agents start and catch up (Unknown, then True)
  updates    20 widgets changed one after another, each handled at once by every node
  failure    one widget's update fails on every node (False), then is fixed (True)
  restart    every agent restarts with nothing changed
Between phases it waits until every Node shows the expected verdict, then `--settle` seconds more,
so a write that comes late (an Unknown held back for unknown_after) is counted in its phase.

usage: NODEHOOK_BIN=build/agent/app/nodehook test/bench/node_outputs_writes.py [--agents 6] [--settle 12]
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from bench_cluster import REPO, stop_agent, widget_cluster  # noqa: E402
from kube import Kube  # noqa: E402

NS = "bench"
CONDITION = "WidgetsReady"
HOOK = """#!/bin/sh
cat >/dev/null
[ -e "$BENCH_CONTROL/fail-$NODEHOOK_NAME" ] && { echo "failing on purpose" >&2; exit 1; }
exit 0
"""


class Node:
    def __init__(self, work, kubeconfig, name, hook, control):
        self.name, self.dir, self.control = name, work / name, control
        self.dir.mkdir()
        self.config = self.dir / "config.json"
        hooks = {r: {"argv": [str(hook)], "timeout_seconds": 10} for r in ("create", "update", "delete")}
        self.config.write_text(json.dumps({
            "node_name": name, "state_file": str(self.dir / "state.db"), "api": {"kubeconfig": kubeconfig},
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets", "namespace": NS,
                           "hooks": hooks, "node_outputs": {"condition": CONDITION}}],
            "tuning": {"workers": 2, "retry_base_seconds": 1, "retry_max_seconds": 2,
                       "health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0"}}))
        self.proc, self.logs = None, []

    def start(self):
        binary = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))
        log = self.dir / f"agent-{len(self.logs) + 1}.log"
        self.logs.append(log)
        self.proc = subprocess.Popen([binary, "run", "--config", str(self.config)], stdout=subprocess.DEVNULL,
                                     stderr=open(log, "wb"), env=dict(os.environ, BENCH_CONTROL=str(self.control)))

    def writes(self):
        """Condition writes so far, over every run."""
        return sum(1 for log in self.logs for line in log.read_text(errors="replace").splitlines()
                   if 'event="node condition set"' in line or 'event="node condition removed"' in line)

    def kept(self):
        return 'event="node condition kept"' in self.logs[-1].read_text(errors="replace")


def wait(predicate, what, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    sys.exit(f"timed out waiting for {what}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=6)
    parser.add_argument("--settle", type=float, default=12, help="seconds after each phase (> unknown_after, 10 s)")
    args = parser.parse_args()
    with widget_cluster() as (work, kubeconfig):
        admin = Kube(kubeconfig)
        admin.request("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
        hook = work / "hook"
        hook.write_text(HOOK)
        hook.chmod(0o755)
        control = work / "control"
        control.mkdir()
        nodes = [Node(work, kubeconfig, f"node-{i}", hook, control) for i in range(args.agents)]
        for n in nodes:
            admin.request("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": n.name}})
        base = f"/apis/example.com/v1/namespaces/{NS}/widgets"
        for i in range(50):
            admin.request("POST", base, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w{i}"},
                                         "spec": {"size": 1}})

        def verdicts():
            out = []
            for n in nodes:
                conditions = admin.request("GET", f"/api/v1/nodes/{n.name}")["status"].get("conditions", [])
                out.append(next((c["status"] for c in conditions if c["type"] == CONDITION), None))
            return out

        def settle(status, what):
            wait(lambda: verdicts() == [status] * len(nodes), what)
            time.sleep(args.settle)  # the measurement window: late writes count in this phase
            return [n.writes() for n in nodes]

        rows = []
        for n in nodes:
            n.start()
        before = settle("True", "every Node True after the start")
        rows.append(("start: catch up on 50 widgets", before))
        for i in range(20):
            admin.request("PATCH", f"{base}/w{i}", {"spec": {"size": 2}}, "application/merge-patch+json")
        updates = settle("True", "every Node True after the updates")
        rows.append(("20 updates, each handled at once", [b - a for a, b in zip(before, updates)]))
        (control / "fail-w49").write_text("")
        admin.request("PATCH", f"{base}/w49", {"spec": {"size": 3}}, "application/merge-patch+json")
        wait(lambda: verdicts() == ["False"] * len(nodes), "every Node False")
        (control / "fail-w49").unlink()
        fixed = settle("True", "every Node True after the fix")
        rows.append(("one update failing, then fixed", [b - a for a, b in zip(updates, fixed)]))
        for n in nodes:
            stop_agent(n.proc)
            n.start()
        wait(lambda: all(n.kept() for n in nodes), "every agent to find its condition unchanged")
        time.sleep(args.settle)
        restarted = [n.writes() for n in nodes]
        rows.append(("restart, nothing changed", [b - a for a, b in zip(fixed, restarted)]))
        for n in nodes:
            stop_agent(n.proc)
        print(f"\ncondition writes per agent ({args.agents} agents, {args.settle:.0f} s settle after each phase)")
        print("phase | per agent (min-max) | all agents")
        for what, counts in rows:
            print(f"{what} | {min(counts)}-{max(counts)} | {sum(counts)}")


if __name__ == "__main__":
    main()
