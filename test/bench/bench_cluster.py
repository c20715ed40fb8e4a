"""The local API server for benchmarks, started in a fresh work directory with the Widget CRD.

Needs NODEHOOK_TESTCLUSTER (as test/run-tests.sh sets it) or the default path."""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def stop_agent(agent):
    """SIGTERM and wait for an agent process that may not have started or may have exited."""
    if agent and agent.poll() is None:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)


@contextlib.contextmanager
def widget_cluster():
    """Yields (work directory, kubeconfig path); stops the API server on exit."""
    cluster_bin = os.environ.get("NODEHOOK_TESTCLUSTER", str(REPO / "build/cache/nodehook-testcluster"))
    work = Path(tempfile.mkdtemp(prefix="nodehook-bench-"))
    cluster = subprocess.Popen([cluster_bin, "--dir", str(work / "cluster"), "--apply",
                                str(REPO / "config/examples/widget-crd.yaml")],
                               stdout=subprocess.PIPE, stderr=open(work / "cluster.log", "wb"), text=True)
    try:
        line = cluster.stdout.readline()
        if not line.startswith("ready "):
            sys.exit(f"API server failed to start; see {work / 'cluster.log'}")
        yield work, dict(f.split("=", 1) for f in line.split()[1:])["kubeconfig"]
    finally:
        cluster.send_signal(signal.SIGTERM)
        cluster.wait(timeout=60)
