"""Benchmark: how often a failing hook runs while a caller floods POST /v1/retry (issue 8, item 4).

Starts the local API server and one agent whose create hook always fails (exit 1, retry backoff
at its defaults), creates one widget, then POSTs /v1/retry?uid=… to the admin listener as fast
as one client can for --seconds, and counts the hook runs in that window and the answers.
Before the fix the issue measured 325 runs in 30 s.

usage: python3 test/bench/retry_flood.py [--seconds 30]
Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER (as test/run-tests.sh sets them) or the default paths.
"""

import argparse
import collections
import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cluster import stop_agent, widget_cluster  # noqa: E402
from kube import Kube, Widgets, create_namespace  # noqa: E402


def wait_for_line(path, needle, proc, seconds=60):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        for line in path.read_text().splitlines():
            if needle in line:
                return line
        time.sleep(0.05)
    sys.exit(f"no {needle!r} in {path}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=30.0)
    seconds = parser.parse_args().seconds
    with widget_cluster() as (work, kubeconfig):
        create_namespace(Kube(kubeconfig), "bench")
        flood(seconds, work, kubeconfig)


def flood(seconds, work, kubeconfig):
    """Runs the agent with a failing hook, floods its admin endpoint and prints what happened."""
    nodehook = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))
    agent = None
    try:
        runs = work / "runs.txt"
        hook = work / "failing-hook"
        hook.write_text(f"#!/bin/sh\ncat >/dev/null\necho run >>{runs}\nexit 1\n")
        hook.chmod(0o755)
        config = {"node_name": "bench-node", "state_file": str(work / "state.db"), "api": {"kubeconfig": kubeconfig},
                  "resources": [{"group": "example.com", "version": "v1", "plural": "widgets", "namespace": "bench",
                                 "hooks": {"create": {"argv": [str(hook)]}}}],
                  "tuning": {"health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0"}}
        (work / "config.json").write_text(json.dumps(config))
        log_path = work / "agent.log"
        agent = subprocess.Popen([nodehook, "run", "--config", str(work / "config.json")], stderr=open(log_path, "wb"))
        admin = wait_for_line(log_path, 'event="admin endpoint listening"', agent)
        port = int(admin.split(" port=")[1].split()[0])
        uid = Widgets(Kube(kubeconfig), "bench").create("flooded", {"size": 1})["metadata"]["uid"]
        wait_for_line(log_path, 'event="hook failed"', agent)

        before = len(runs.read_text().splitlines())
        answers = collections.Counter()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/retry?uid={uid}", method="POST")
            try:
                with urllib.request.urlopen(request, timeout=5) as resp:
                    answers[resp.status] += 1
            except urllib.error.HTTPError as e:
                answers[e.code] += 1
        during = len(runs.read_text().splitlines()) - before
        print(f"{sum(answers.values())} retry requests in {seconds:.0f}s, answers {dict(answers)}: "
              f"the failing hook ran {during} times")
    finally:
        stop_agent(agent)


if __name__ == "__main__":
    main()
