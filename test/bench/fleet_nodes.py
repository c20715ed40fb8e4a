"""The simulated nodes: one `nodehook run` process per node, each with its own node name, state
directory, hook scratch directory and health port on 127.0.0.1, all against one API server.

An agent keeps its health port across restarts so the driver can poll it without reading logs.
Its CPU seconds are summed over its lives: sampled from /proc while it runs and once more
right before each stop. Not thread-safe per agent: the driver touches one agent from one
thread at a time (the rollout gives each restart to one pool thread)."""

import json
import os
import signal
import socket
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor

from fleet_probe import cpu_seconds, http_get, memory_kib, parse_prometheus, sum_samples

NODE_LABEL = "fleet.nodehook.io/node"
# Below the usual ephemeral range (32768-60999), so ports other tests pick with :0 rarely collide.
PORT_BASE = 21000


def free_ports(count, start=PORT_BASE):
    """`count` loopback ports that nothing listens on now."""
    ports, port = [], start
    while len(ports) < count:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                ports.append(port)
            except OSError:
                pass
        port += 1
    return ports


class FleetAgent:
    def __init__(self, node, directory, port, kubeconfig, binary, hooks, sharded, strategy, log_level,
                 resource_options=None, tuning=None):
        self.node, self.dir, self.port, self.binary = node, directory, port, binary
        self.strategy = strategy
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "state").mkdir(mode=0o700, exist_ok=True)  # as the agent wants its state dir
        resource = {"group": "example.com", "version": "v1", "plural": "widgets", "namespace": "",
                    "hooks": {r: {"argv": ["/bin/true"], "timeout_seconds": 30} for r in hooks},
                    **(resource_options or {})}
        if sharded:
            # A binary without selector templates gets what `{node}` expands to: the same requests.
            resource["label_selector"] = f"{NODE_LABEL}={'{node}' if sharded == 'template' else node}"
        config = {"node_name": node, "state_file": str(directory / "state" / "state.db"),
                  "api": {"kubeconfig": kubeconfig}, "resources": [resource],
                  "tuning": {"health_address": f"127.0.0.1:{port}", "admin_address": "",
                             "hook_work_dir": str(directory / "scratch"), "log_level": log_level,
                             **(tuning or {})}}
        self.config_file = directory / "config.json"
        self.config_file.write_text(json.dumps(config, indent=2))
        self.proc = None
        self.lives = 0
        self.cpu_done = 0.0  # CPU seconds of lives that ended
        self.requests_done = {}  # API requests by verb of lives that ended
        self.started_at = 0.0
        self.stopping = False  # between SIGTERM and the wait's end: exited on purpose

    def start(self):
        self.lives += 1
        env = dict(os.environ, NODEHOOK_LIST_STRATEGY=self.strategy)
        log = open(self.dir / f"agent-{self.lives}.log", "wb")
        self.proc = subprocess.Popen([str(self.binary), "run", "--config", str(self.config_file)],
                                     env=env, stdout=subprocess.DEVNULL, stderr=log)
        log.close()
        self.started_at = time.time()
        return self

    def stop(self):
        """SIGTERM, wait; the life's CPU is sampled just before. Returns the exit code."""
        if not self.proc:
            return None
        self.stopping = True
        try:
            if self.proc.poll() is None:
                self.cpu_done += cpu_seconds(self.proc.pid) or 0.0
                self.requests_done = self.requests_by_verb()
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(timeout=60)
            code, self.proc = self.proc.returncode, None
        finally:
            self.stopping = False
        return code

    def restart(self):
        self.stop()
        return self.start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def cpu_total(self):
        return self.cpu_done + ((cpu_seconds(self.proc.pid) or 0.0) if self.alive() else 0.0)

    def rss_kib(self, field="VmRSS"):
        return (memory_kib(self.proc.pid, field) or 0) if self.alive() else 0

    def ready(self):
        return http_get(self.port, "/readyz", timeout=2.0)[0] == 200

    def metrics(self):
        status, body = http_get(self.port, "/metrics", timeout=5.0)
        return parse_prometheus(body) if status == 200 else {}

    def requests_by_verb(self):
        """{verb: API requests} over all lives, from nodehook_api_requests_total."""
        now = sum_samples(self.metrics(), "nodehook_api_requests_total", by="verb") if self.alive() else {}
        return {v: self.requests_done.get(v, 0.0) + now.get(v, 0.0) for v in {*self.requests_done, *now}}

    def last_log_lines(self, count=5):
        path = self.dir / f"agent-{self.lives}.log"
        return path.read_text(errors="replace").splitlines()[-count:] if path.exists() else []


class Fleet:
    """All agents, with the few operations the scenarios need done on every one in parallel."""

    def __init__(self, count, work, kubeconfig, binary, hooks, sharded, strategy, log_level,
                 resource_options=None, tuning=None):
        ports = free_ports(count)
        self.agents = [FleetAgent(f"node-{i:03d}", work / f"node-{i:03d}", ports[i], kubeconfig, binary,
                                  hooks, sharded, strategy, log_level, resource_options, tuning)
                       for i in range(count)]
        self.pool = ThreadPoolExecutor(8)

    def each(self, fn):
        return list(self.pool.map(fn, self.agents))

    def start(self):
        for agent in self.agents:
            agent.start()

    def stop(self):
        self.each(lambda a: a.stop())
        self.pool.shutdown()

    def dead(self):
        return [a for a in self.agents if not a.stopping and a.proc is not None and a.proc.poll() is not None]

    def wait(self, predicate, what, timeout, interval=0.5):
        """Polls `predicate(agent)` on the agents not yet done; {node: time.time() when it held}.
        Raises naming the agents that never got there (and any that exited, with their last log)."""
        t0, done = time.time(), {}
        while True:
            pending = [a for a in self.agents if a.node not in done]
            for agent, ok in zip(pending, self.pool.map(predicate, pending)):
                if ok:
                    done[agent.node] = time.time()
            if len(done) == len(self.agents):
                return done
            dead = self.dead()
            if dead or time.time() - t0 > timeout:
                late = [a.node for a in self.agents if a.node not in done]
                detail = "; ".join(f"{a.node} exited {a.proc.returncode}: {' | '.join(a.last_log_lines(3))}"
                                   for a in dead[:3])
                raise RuntimeError(f"{len(late)} agent(s) never {what} (first: {late[:5]}) {detail}")
            time.sleep(interval)

    def counter(self, name, **match):
        """Per agent {node: sum of the agent's samples of `name` matching `match`}."""
        return dict(zip((a.node for a in self.agents),
                        self.each(lambda a: sum_samples(a.metrics(), name, **match))))

    def requests_by_verb(self):
        """{verb: requests summed over agents and their lives}."""
        totals = {}
        for per_agent in self.each(lambda a: a.requests_by_verb()):
            for verb, value in per_agent.items():
                totals[verb] = totals.get(verb, 0.0) + value
        return totals

    def cpu_total(self):
        return sum(a.cpu_total() for a in self.agents)

    def rss_total_kib(self):
        return sum(self.each(lambda a: a.rss_kib()))

