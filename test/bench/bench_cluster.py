"""The local API server for benchmarks, started in a fresh work directory with the Widget CRD.

Needs NODEHOOK_TESTCLUSTER (as test/run-tests.sh sets it) or the default path."""

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def stop_agent(agent):
    """SIGTERM and wait for an agent process that may not have started or may have exited."""
    if agent and agent.poll() is None:
        agent.send_signal(signal.SIGTERM)
        agent.wait(timeout=30)


def wait(predicate, what, timeout=180):
    """Polls `predicate` until it holds, and returns the monotonic time it did; exits the bench
    saying `what` it waited for after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(0.1)
    sys.exit(f"timed out waiting for {what}")


class LoggedAgent:
    """An agent process run from DIRECTORY/config.json, again and again, each run logging to
    DIRECTORY/agent-N.log; `control` is given to its hooks as $BENCH_CONTROL."""

    def __init__(self, directory, control):
        self.dir, self.control = directory, control
        self.config = directory / "config.json"
        self.proc, self.logs = None, []

    def start(self):
        binary = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))
        log = self.dir / f"agent-{len(self.logs) + 1}.log"
        self.logs.append(log)
        self.proc = subprocess.Popen([binary, "run", "--config", str(self.config)], stdout=subprocess.DEVNULL,
                                     stderr=open(log, "wb"), env=dict(os.environ, BENCH_CONTROL=str(self.control)))

    def count(self, *events):
        """How many times any of `events` was logged, over every run."""
        return sum(1 for log in self.logs for line in log.read_text(errors="replace").splitlines()
                   if any(f'event="{e}"' in line for e in events))


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
        (work / "apiserver.pid").write_text(str(cluster.pid))  # for benches that read its CPU time
        yield work, dict(f.split("=", 1) for f in line.split()[1:])["kubeconfig"]
    finally:
        cluster.send_signal(signal.SIGTERM)
        cluster.wait(timeout=60)


@contextlib.contextmanager
def e2e_cluster(prefix, namespace, names):
    """The e2e tests' Cluster (test/e2e/conftest.py) in a fresh work directory (WORK/cluster), with
    `namespace` and a widget of each of `names` (spec size: its index). Yields (work, cluster, its
    kube.Widgets, agents): a list for the caller's conftest.Agent objects, each stopped on exit,
    then the cluster. Needs test/e2e on sys.path."""
    from conftest import Cluster
    from kube import Widgets, create_namespace
    work = Path(tempfile.mkdtemp(prefix=prefix))
    (work / "cluster").mkdir()
    cluster = Cluster(work / "cluster")
    agents = []
    try:
        create_namespace(cluster.kube, namespace)
        widgets = Widgets(cluster.kube, namespace)
        for i, name in enumerate(names):
            widgets.create(name, {"size": i})
        yield work, cluster, widgets, agents
    finally:
        for agent in agents:
            agent.stop()
        cluster.stop()


@contextlib.contextmanager
def widget_namespace(namespace):
    """widget_cluster with `namespace` made: yields (work directory, kubeconfig path, the admin's
    kube.Kube). Needs test/e2e on sys.path, as the benches that use it set."""
    from kube import Kube
    with widget_cluster() as (work, kubeconfig):
        admin = Kube(kubeconfig)
        admin.request("POST", "/api/v1/namespaces", {"metadata": {"name": namespace}})
        yield work, kubeconfig, admin


def executable(path, text):
    """`text` written to `path` as an executable script (a hook, a reboot command); returns `path`."""
    path.write_text(text)
    path.chmod(0o755)
    return path
