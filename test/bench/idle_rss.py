"""Benchmark: peak and idle memory of one agent watching N objects (default 1,000).

Starts the local API server, creates N widgets, starts one agent with a hook that does nothing
(/bin/true), waits until the agent has handled every object, lets it sit idle, then reads
VmHWM (peak RSS) and VmRSS from /proc. Prints one result line per figure.

usage: python3 test/bench/idle_rss.py [--objects N] [--idle-seconds S]
Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER (as test/run-tests.sh sets them) or the default paths.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cluster import stop_agent, widget_cluster  # noqa: E402
from kube import Kube, Widgets, create_namespace  # noqa: E402


def proc_status(pid):
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    args = parser.parse_args()
    nodehook = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))

    with widget_cluster() as (work, kubeconfig):
        run(args, nodehook, work, kubeconfig)


def run(args, nodehook, work, kubeconfig):
    agent = None
    try:
        kube = Kube(kubeconfig)
        create_namespace(kube, "bench")
        widgets = Widgets(kube, "bench")
        started = time.monotonic()
        for i in range(args.objects):
            widgets.create(f"w{i:05d}", {"size": i, "payload": "x" * 200})
        print(f"created {args.objects} objects in {time.monotonic() - started:.1f}s")

        config = {
            "node_name": "bench-node", "state_file": str(work / "state.db"),
            "api": {"kubeconfig": kubeconfig},
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets",
                           "hooks": {"create": {"argv": ["/bin/true"]}}}],
        }
        (work / "config.json").write_text(json.dumps(config))
        log_path = work / "agent.log"
        started = time.monotonic()
        agent = subprocess.Popen([nodehook, "run", "--config", str(work / "config.json")],
                                 stderr=open(log_path, "wb"))
        deadline = time.monotonic() + 600
        while log_path.read_text().count('event="hook succeeded"') < args.objects:
            if time.monotonic() > deadline or agent.poll() is not None:
                sys.exit(f"agent did not handle all objects; see {log_path}")
            time.sleep(0.2)
        handled = time.monotonic() - started
        print(f"agent handled {args.objects} creates in {handled:.1f}s "
              f"({args.objects / handled:.0f} hooks/s, /bin/true hook)")
        time.sleep(args.idle_seconds)  # measuring idle memory: the agent must sit idle for a while
        status = proc_status(agent.pid)
        print(f"objects={args.objects} peak_rss(VmHWM)={status['VmHWM']} idle_rss(VmRSS)={status['VmRSS']} "
              f"threads={status['Threads']}")
        print(f"state file: {os.path.getsize(work / 'state.db') / 1024:.0f} KiB (+ WAL "
              f"{os.path.getsize(str(work / 'state.db') + '-wal') / 1024:.0f} KiB)")
    finally:
        stop_agent(agent)


if __name__ == "__main__":
    main()
