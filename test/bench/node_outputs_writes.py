#!/usr/bin/env python3
"""API writes of node outputs (docs/fleet-cost.md, "Node outputs"): six agents, each acting as its
own Node, keep the NodeCondition WidgetsReady ("node_outputs": {"condition": ...}) for the widgets
on the local API server, and their hooks publish node outputs ("prefixes"): every widget's hook
the label widgets.example.com/<name>=done, and w0's also widgets.example.com/w0-size=<its size>.
Counts each agent's writes to its Node per phase, from its log: condition writes ("node condition
set" and "removed") and hook outputs writes ("node outputs set"), which are its only writes to it:
  start      50 widgets exist; the agents start and catch up (Unknown, then True; 51 labels)
  updates    20 widgets (not w0) changed one after another, each handled at once, outputs unchanged
  changed    w0 changed: its hook publishes another size label on every node
  failure    one widget's update fails on every node (False), then is fixed (True)
  restart    every agent restarts with nothing changed
Between phases it waits until every Node shows the expected verdict, then `--settle` seconds more,
so a write that comes late (an Unknown held back for unknown_after) is counted in its phase.

usage: NODEHOOK_BIN=build/agent/app/nodehook test/bench/node_outputs_writes.py [--agents 6] [--settle 12]
"""

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from bench_cluster import LoggedAgent, executable, stop_agent, wait, widget_namespace  # noqa: E402

NS = "bench"
CONDITION = "WidgetsReady"
HOOK = """#!/bin/sh
cat >/dev/null
[ -e "$BENCH_CONTROL/fail-$NODEHOOK_NAME" ] && { echo "failing on purpose" >&2; exit 1; }
[ "$NODEHOOK_REASON" = delete ] && exit 0
extra=""
if [ "$NODEHOOK_NAME" = w0 ]; then
  size=$(sed -E 's/.*"size": *([0-9]+).*/\\1/' "$NODEHOOK_NEW_FILE")
  extra=", \\"widgets.example.com/w0-size\\": \\"$size\\""
fi
printf '{"node": {"labels": {"widgets.example.com/%s": "done"%s}}}' "$NODEHOOK_NAME" "$extra" >"$NODEHOOK_RESULT_FILE"
"""


class Node(LoggedAgent):
    def __init__(self, work, kubeconfig, name, hook, control):
        super().__init__(work / name, control)
        self.name = name
        self.dir.mkdir()
        hooks = {r: {"argv": [str(hook)], "timeout_seconds": 10} for r in ("create", "update", "delete")}
        self.config.write_text(json.dumps({
            "node_name": name, "state_file": str(self.dir / "state.db"), "api": {"kubeconfig": kubeconfig},
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets", "namespace": NS,
                           "hooks": hooks,
                           "node_outputs": {"condition": CONDITION, "prefixes": ["widgets.example.com/"]}}],
            "tuning": {"workers": 2, "retry_base_seconds": 1, "retry_max_seconds": 2,
                       "health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0"}}))

    def writes(self):
        """(condition writes, hook outputs writes) so far, over every run."""
        return (self.count("node condition set", "node condition removed"), self.count("node outputs set"))

    def kept(self):
        text = self.logs[-1].read_text(errors="replace")
        return 'event="node condition kept"' in text and 'event="node outputs kept"' in text


def Delta(before, after):
    """Per agent, (condition, outputs) writes between two readings."""
    return [(b[0] - a[0], b[1] - a[1]) for a, b in zip(before, after)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--agents", type=int, default=6)
    parser.add_argument("--settle", type=float, default=12, help="seconds after each phase (> unknown_after, 10 s)")
    args = parser.parse_args()
    with widget_namespace(NS) as (work, kubeconfig, admin):
        hook = executable(work / "hook", HOOK)
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

        def labels_are(key, value):
            return all(admin.request("GET", f"/api/v1/nodes/{n.name}")["metadata"].get("labels", {}).get(key) == value
                       for n in nodes)

        def settle(status, what, label=("widgets.example.com/w49", "done")):
            wait(lambda: verdicts() == [status] * len(nodes) and labels_are(*label), what)
            time.sleep(args.settle)  # the measurement window: late writes count in this phase
            return [n.writes() for n in nodes]

        rows = []
        for n in nodes:
            n.start()
        before = settle("True", "every Node True after the start")
        rows.append(("start: catch up on 50 widgets", before))
        for i in range(1, 21):  # not w0, whose hook publishes its size
            admin.request("PATCH", f"{base}/w{i}", {"spec": {"size": 2}}, "application/merge-patch+json")
        updates = settle("True", "every Node True after the updates")
        rows.append(("20 updates, each handled at once", Delta(before, updates)))
        admin.request("PATCH", f"{base}/w0", {"spec": {"size": 7}}, "application/merge-patch+json")
        changed = settle("True", "every Node's w0-size label 7", ("widgets.example.com/w0-size", "7"))
        rows.append(("w0 changed: its size label changes", Delta(updates, changed)))
        updates = changed
        (control / "fail-w49").write_text("")
        admin.request("PATCH", f"{base}/w49", {"spec": {"size": 3}}, "application/merge-patch+json")
        wait(lambda: verdicts() == ["False"] * len(nodes), "every Node False")
        (control / "fail-w49").unlink()
        fixed = settle("True", "every Node True after the fix")
        rows.append(("one update failing, then fixed", Delta(updates, fixed)))
        for n in nodes:
            stop_agent(n.proc)
            n.start()
        wait(lambda: all(n.kept() for n in nodes), "every agent to find its condition unchanged")
        time.sleep(args.settle)
        restarted = [n.writes() for n in nodes]
        rows.append(("restart, nothing changed", Delta(fixed, restarted)))
        for n in nodes:
            stop_agent(n.proc)
        print(f"\nwrites per agent to its Node ({args.agents} agents, {args.settle:.0f} s settle after each phase)")
        print("phase | condition, per agent (min-max) | condition, all | hook outputs, per agent | hook outputs, all")
        for what, counts in rows:
            conditions, outputs = [c for c, _ in counts], [o for _, o in counts]
            print(f"{what} | {min(conditions)}-{max(conditions)} | {sum(conditions)} | "
                  f"{min(outputs)}-{max(outputs)} | {sum(outputs)}")


if __name__ == "__main__":
    main()
