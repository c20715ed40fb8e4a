"""Drives the demo (test/demo.sh): without an action, walks through create, update and delete and
shows what each node's hook recorded; with an action, makes one change to a demo widget.

usage: demo_steps.py KUBECONFIG DEMO_DIR [patch NAME SPEC_JSON | create NAME SPEC_JSON | delete NAME]
"""

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "e2e"))
from kube import Kube, Widgets  # noqa: E402

NODES = ("node-a", "node-b")


def wait_for_line(demo, line, timeout=60):
    deadline = time.monotonic() + timeout
    pending = set(NODES)
    while pending and time.monotonic() < deadline:
        for node in list(pending):
            log = demo / f"{node}.log"
            if log.exists() and f"{line.split()[0]} {node} {line.split()[1]}" in log.read_text():
                pending.discard(node)
        time.sleep(0.1)
    for node in NODES:
        state = "missing!" if node in pending else "done"
        print(f"   {node}: {line.split()[0]} {line.split()[1]} {state}")


def walkthrough(widgets, demo):
    print("\n== the agents create-handle the example widgets alpha and beta")
    for name in ("alpha", "beta"):
        wait_for_line(demo, f"create demo/{name}")
    print("\n== a status-only change: nothing runs")
    widgets.patch_status("alpha", {"phase": "Shiny"})
    print("\n== changing alpha's spec: each node runs the update hook")
    widgets.patch_spec("alpha", {"size": 2})
    wait_for_line(demo, "update demo/alpha")
    print("\n== creating gamma")
    widgets.create("gamma", {"size": 5})
    wait_for_line(demo, "create demo/gamma")
    print("\n== deleting beta: each node runs the delete hook")
    widgets.delete("beta")
    wait_for_line(demo, "delete demo/beta")


def main():
    kubeconfig, demo = sys.argv[1], Path(sys.argv[2])
    widgets = Widgets(Kube(kubeconfig), "demo")
    action = sys.argv[3:]
    if not action:
        walkthrough(widgets, demo)
    elif action[0] == "patch" and len(action) == 3:
        widgets.patch_spec(action[1], json.loads(action[2]))
    elif action[0] == "create" and len(action) == 3:
        widgets.create(action[1], json.loads(action[2]))
    elif action[0] == "delete" and len(action) == 2:
        widgets.delete(action[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
