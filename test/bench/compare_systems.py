"""The two systems test/bench/compare.py runs side by side, each as one process per "node":
nodehook (the built binary, its own state file per node) and kopf 1.45.2 (kopf_node.py,
standalone, per-node annotation storage). Both run hooks/timestamp-hook for create and update,
which appends one line per run to the node's record file.

Not thread-safe: the benchmark drives its nodes from one thread."""

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

from bench_cluster import stop_agent

HERE = Path(__file__).resolve().parent
HOOK = HERE / "hooks" / "timestamp-hook"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _proc_fields(pid):
    """(utime+stime seconds, VmRSS KiB, VmHWM KiB, threads) of one process, children excluded."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()
    cpu = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    status = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    kib = lambda key: int(status[key].split()[0])  # noqa: E731
    return cpu, kib("VmRSS"), kib("VmHWM"), int(status["Threads"])


class Node:
    """One agent process acting as node `name`, watching widgets in `namespace`; restartable.
    Subclasses give the command line and the readiness URL."""

    system = ""

    def __init__(self, name, directory, kubeconfig, namespace):
        self.name = name
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self.record_file = self.dir / "records.txt"
        self.record_file.touch()
        self.port = _free_port()
        self.proc = None
        self.started_at = None
        self.starts = 0

    def command(self):
        raise NotImplementedError

    def ready_url(self):
        raise NotImplementedError

    def extra_env(self):
        return {}

    def start(self):
        self.starts += 1
        env = dict(os.environ, BENCH_RECORD_FILE=str(self.record_file), KUBECONFIG=self.kubeconfig,
                   **self.extra_env())
        with open(self.dir / f"{self.system}-{self.starts}.log", "wb") as log:
            self.started_at = time.monotonic()
            self.proc = subprocess.Popen(self.command(), env=env, cwd=HERE, stdout=log, stderr=subprocess.STDOUT)

    def stop(self):
        stop_agent(self.proc)
        self.proc = None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def is_ready(self):
        try:
            with urllib.request.urlopen(self.ready_url(), timeout=2) as resp:
                return resp.status == 200
        except (urllib.error.URLError, ConnectionError, OSError):
            return False

    def usage(self):
        """(CPU seconds, RSS KiB, peak RSS KiB, threads) of the agent process alone."""
        return _proc_fields(self.proc.pid)

    def mark(self):
        """A position in the record file: records(since=mark) gives the runs after it."""
        return self.record_file.stat().st_size

    def records(self, since=0):
        """Hook runs whose lines were complete after `since`, as (reason, object name, start time as
        time.time()), and the position after the last complete line."""
        with open(self.record_file, "rb") as f:
            f.seek(since)
            data = f.read()
        data = data[:data.rfind(b"\n") + 1]
        runs = [(p[0], p[1], float(p[2])) for p in (line.split() for line in data.decode().splitlines())]
        return runs, since + len(data)


class NodehookNode(Node):
    system = "nodehook"

    def __init__(self, name, directory, kubeconfig, namespace, binary):
        super().__init__(name, directory, kubeconfig, namespace)
        hooks = {reason: {"argv": [str(HOOK)]} for reason in ("create", "update")}
        config = {"node_name": name, "state_file": str(self.dir / "state.db"), "api": {"kubeconfig": kubeconfig},
                  "resources": [{"group": "example.com", "version": "v1", "plural": "widgets",
                                 "namespace": namespace, "hooks": hooks}],
                  "tuning": {"health_address": f"127.0.0.1:{self.port}", "admin_address": ""}}
        self.config_file = self.dir / "config.json"
        self.config_file.write_text(json.dumps(config, indent=2))
        self.binary = binary

    def command(self):
        return [str(self.binary), "run", "--config", str(self.config_file)]

    def ready_url(self):
        return f"http://127.0.0.1:{self.port}/readyz"


class KopfNode(Node):
    system = "kopf"

    def __init__(self, name, directory, kubeconfig, namespace, kopf):
        super().__init__(name, directory, kubeconfig, namespace)
        self.kopf = kopf

    def command(self):
        return [str(self.kopf), "run", "--standalone", "--namespace", self.namespace,
                "--liveness", f"{self.ready_url()}", str(HERE / "kopf_node.py")]

    def extra_env(self):
        return {"BENCH_NODE": self.name, "BENCH_HOOK": str(HOOK)}

    def ready_url(self):
        return f"http://127.0.0.1:{self.port}/healthz"
