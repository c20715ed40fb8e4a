"""Fixtures for the end-to-end tests: one real API server per test session (built from the
upstream k8s.io modules, see test/cluster) and nodehook agents acting as separate nodes, each with
its own state file."""

import itertools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from kube import Kube, Widgets, create_namespace

REPO = Path(__file__).resolve().parents[2]
CRD = REPO / "config" / "examples" / "widget-crd.yaml"
RECORD_HOOK = Path(__file__).resolve().parent / "hooks" / "record-hook"
SLOW_RECORD_HOOK = Path(__file__).resolve().parent / "hooks" / "slow-record-hook"
WAIT_SECONDS = 60


def wait_until(predicate, what, timeout=WAIT_SECONDS):
    """Polls `predicate` until it returns a truthy value; fails the test with `what` on timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def _binary(env_name, default):
    path = Path(os.environ.get(env_name, default))
    if not path.exists():
        pytest.exit(f"{path} does not exist: build first (test/run-tests.sh does) or set {env_name}", 2)
    return path


class Cluster:
    def __init__(self, directory, extra_apply=()):
        self.dir = directory
        self.extra_apply = [str(f) for f in extra_apply]
        self.log = open(directory / "cluster.log", "wb")
        self.start()
        self.kube = Kube(self.kubeconfig)

    def start(self):
        """Starts the API server, or starts it again after `stop`: the same --dir keeps its port,
        certificates, token and data, so kubeconfigs and clients stay valid. Sets `ready_at`
        (time.time() when it printed its ready line)."""
        binary = _binary("NODEHOOK_TESTCLUSTER", REPO / "build" / "cache" / "nodehook-testcluster")
        applies = [arg for f in [str(CRD), *self.extra_apply] for arg in ("--apply", f)]
        self.proc = subprocess.Popen([str(binary), "--dir", str(self.dir), *applies],
                                     stdout=subprocess.PIPE, stderr=self.log)
        self.kubeconfig = self._wait_ready()
        self.ready_at = time.time()

    def _wait_ready(self):
        deadline = time.monotonic() + 180
        buffered = b""
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.proc.stdout], [], [], 1.0)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    break
                buffered += chunk
                for line in buffered.decode().splitlines():
                    if line.startswith("ready "):
                        fields = dict(f.split("=", 1) for f in line.split()[1:])
                        return fields["kubeconfig"]
        self.stop()
        pytest.exit(f"the test API server did not become ready; see {self.dir / 'cluster.log'}", 2)

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"))
    yield c
    c.stop()


_namespace_ids = itertools.count(1)


@pytest.fixture
def widgets(cluster):
    """Widgets in a fresh namespace, so tests never see each other's objects."""
    namespace = f"e2e-{os.getpid()}-{next(_namespace_ids)}"
    create_namespace(cluster.kube, namespace)
    return Widgets(cluster.kube, namespace)


_LOGFMT_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S*)')


def parse_log_line(line):
    """One logfmt line of the agent as a dict; quoted values are unquoted, and the timestamp
    (the ts key) is also under "time"."""
    fields = {}
    for key, value in _LOGFMT_FIELD.findall(line):
        fields[key] = json.loads(value) if value.startswith('"') else value
    fields["time"] = fields.get("ts", "")
    return fields


class Agent:
    """One nodehook process acting as node `node`, watching the test's namespace.

    `hook` replaces record-hook for every reason, `env` adds to the agent's environment (hooks
    inherit it), and `state_file` points the agent at another agent's file (two agents on one
    node). `launcher` is put before the agent's command line, e.g. to run it in a namespace."""

    launcher = ()

    def __init__(self, node, directory, cluster, namespace, reasons, tuning, hook=RECORD_HOOK, env=None,
                 state_file=None, resource_options=None):
        self.node = node
        self.dir = directory
        self.dir.mkdir(parents=True, exist_ok=True)
        self.record_file = directory / "records.txt"
        self.control_dir = directory / "control"
        self.control_dir.mkdir(exist_ok=True)
        self.config_file = directory / "config.json"
        self.state_file = Path(state_file) if state_file else directory / "state.db"
        self.env = dict(env or {})
        hooks = {r: {"argv": [str(hook)], "timeout_seconds": 20} for r in reasons}
        config = {
            "node_name": node,
            "state_file": str(self.state_file),
            "api": {"kubeconfig": cluster.kubeconfig},
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets",
                           "namespace": namespace, "hooks": hooks, **(resource_options or {})}],
            # One worker keeps the queue strictly first-in, first-out, which `settle` relies on.
            "tuning": {"workers": 1, "retry_base_seconds": 1, "retry_max_seconds": 2,
                       "health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0", **tuning},
        }
        self.config_file.write_text(json.dumps(config, indent=2))
        self.proc = None
        self.starts = 0

    @property
    def hook_work_dir(self):
        """Where the agent puts hook scratch directories by default (docs/configuration.md,
        tuning.hook_work_dir): /dev/shm/nodehook-<FNV-1a 64 of the absolute state file path, 16 hex
        digits>."""
        digest = 14695981039346656037
        for byte in str(self.state_file.absolute()).encode():
            digest = ((digest ^ byte) * 1099511628211) % 2**64
        return Path("/dev/shm") / f"nodehook-{digest:016x}"

    def start(self):
        env = dict(os.environ, E2E_RECORD_FILE=str(self.record_file), E2E_CONTROL_DIR=str(self.control_dir),
                   **self.env)
        self.starts += 1
        self.log_path = self.dir / f"agent-{self.starts}.log"
        binary = _binary("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook")
        self.proc = subprocess.Popen([*self.launcher, str(binary), "run", "--config", str(self.config_file)],
                                     env=env, stdout=subprocess.DEVNULL, stderr=open(self.log_path, "wb"))
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=30)
        code = self.proc.returncode if self.proc else 0
        self.proc = None
        return code

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)
        self.proc = None

    def log_events(self, event=None):
        """The current run's log lines as dicts (see parse_log_line), optionally one event only."""
        lines = self.log_path.read_text(errors="replace").splitlines() if self.log_path.exists() else []
        parsed = [parse_log_line(line) for line in lines]
        return [p for p in parsed if event is None or p.get("event") == event]

    def health_url(self, path="/readyz"):
        """The URL of a health endpoint of the current run (health_address 127.0.0.1:0)."""
        listening = wait_until(lambda: self.log_events("health endpoints listening"),
                               f"health endpoints of {self.node} (log: {self.log_path})")
        return f"http://127.0.0.1:{listening[0]['port']}{path}"

    def http_status(self, path="/readyz"):
        """The HTTP status of a health endpoint, e.g. 200 or 503."""
        try:
            with urllib.request.urlopen(self.health_url(path), timeout=5) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code

    def fail_hook(self, name, reason, times):
        """Makes the hook fail for object `name` and `reason` until its retry count reaches `times`."""
        (self.control_dir / f"fail-{name}-{reason}").write_text(str(times))

    def report_progress(self, name, reason, times):
        """Makes the hook report "in progress" (exit 100) for its first `times` runs."""
        (self.control_dir / f"progress-{name}-{reason}").write_text(str(times))

    def write_result(self, name, reason, result):
        """Makes the hook write `result` (a dict) to its result file for object `name` and `reason`."""
        (self.control_dir / f"result-{name}-{reason}").write_text(json.dumps(result))

    def records(self, name=None, reason=None):
        """Hook runs so far, as dicts; optionally only those for one object name and reason."""
        if not self.record_file.exists():
            return []
        runs = []
        for line in self.record_file.read_text().splitlines():
            r_reason, r_node, r_key, r_uid, r_retry, r_result = line.split()
            run = {"reason": r_reason, "node": r_node, "name": r_key.split("/", 1)[1], "uid": r_uid,
                   "retry": int(r_retry), "result": r_result}
            if (name is None or run["name"] == name) and (reason is None or run["reason"] == reason):
                runs.append(run)
        return runs

    def wait_for(self, name, reason, count=1, result="ok"):
        return wait_until(
            lambda: len([r for r in self.records(name, reason) if r["result"] == result]) >= count,
            f"{count} {result} {reason} run(s) of {name} on {self.node} (log: {self.log_path})")

    _sentinels = itertools.count(1)

    def settle(self, widgets):
        """Returns once this agent has worked through everything queued before now: with one
        worker the queue is FIFO, so once a fresh sentinel object's create hook ran, every
        earlier change has been handled."""
        name = f"sentinel-{self.node}-{next(self._sentinels)}"
        widgets.create(name, {"sentinel": True})
        self.wait_for(name, "create")


def stop_faulted(agents, proxies=()):
    """Stops agents a test may have left faulted: frozen proxies thawed, stopped agents continued."""
    for proxy in proxies:
        proxy.thaw()
    for agent in agents:
        if agent.proc and agent.proc.poll() is None:
            agent.proc.send_signal(signal.SIGCONT)
        agent.stop()


@pytest.fixture
def make_agent(cluster, widgets, tmp_path):
    agents = []

    def make(node, reasons=("create", "update", "delete"), hook=RECORD_HOOK, env=None, state_file=None,
             directory=None, resource_options=None, **tuning):
        agent = Agent(node, tmp_path / (directory or node), cluster, widgets.namespace, reasons, tuning,
                      hook=hook, env=env, state_file=state_file, resource_options=resource_options)
        agents.append(agent)
        return agent

    yield make
    for agent in agents:
        agent.stop()
        shutil.rmtree(agent.hook_work_dir, ignore_errors=True)
