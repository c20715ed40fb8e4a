#!/usr/bin/env python3
"""Benchmark (issue 11): agent CPU per handled change, changes/s, and change -> hook start latency.

One command; writes a Markdown report (--out, default build/bench/throughput.md) and prints it.

  replay   A replaying fake API server (replay_server.py) feeds one real agent N ADDED events,
           then, once all are handled, N MODIFIED events, as fast as the agent reads them.
  cluster  The real test API server: N widgets created before the agent starts (a backlog drained
           through the first list), then N merge patches sent as fast as this driver can, which
           says whether the API server (and a Python writer) can feed 2,000 changes/s.
  latency  The real test API server: patches at a fixed rate (--rates, changes/s) spread over
           idle objects; a hook stamps its start (start_stamp_hook); reports p50/p90/p99 of
           patch sent -> hook started.

CPU is utime+stime of the agent process from /proc/PID/stat, which leaves out its hooks (they
are children, reaped by the agent, and counted in cutime/cstime). It is robust under load;
wall-clock rates and latencies are upper bounds on a busy machine.

usage: test/bench/throughput.py [--objects 5000] [--modes replay,cluster,latency]
                                [--hooks noop,true] [--rates 20,200] [--out FILE]
Needs NODEHOOK_BIN and, for cluster/latency, NODEHOOK_TESTCLUSTER (or the default paths), and
the bench hooks built with the tests (build/test/bench/noop_hook, start_stamp_hook).
"""

import argparse
import concurrent.futures
import datetime
import http.client
import json
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cluster import stop_agent, widget_cluster  # noqa: E402
from kube import Kube, create_namespace  # noqa: E402
from replay_server import ReplayServer, widget  # noqa: E402

TICK_MS = 1000.0 / os.sysconf("SC_CLK_TCK")
WIDGETS = "/apis/example.com/v1/namespaces/bench/widgets"


def agent_cpu_ms(pid):
    """utime + stime of the process itself (children excluded), in ms."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * TICK_MS


class Agent:
    """One `nodehook run` with a config file; counts `hook succeeded` lines in its log."""

    def __init__(self, binary, work, kubeconfig, hook, namespace="", workers=4, env=None):
        self.log_path = work / "agent.log"
        config = {
            "node_name": "bench-node", "state_file": str(work / "state.db"),
            "api": {"kubeconfig": str(kubeconfig)}, "skip_hook_checks": False,
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets", "namespace": namespace,
                           "hooks": {r: {"argv": [hook]} for r in ("create", "update", "delete")}}],
            "tuning": {"workers": workers, "health_address": "127.0.0.1:0", "admin_address": "127.0.0.1:0"},
        }
        (work / "config.json").write_text(json.dumps(config))
        self.proc = subprocess.Popen([binary, "run", "--config", str(work / "config.json")],
                                     env=dict(os.environ, **(env or {})), stdout=subprocess.DEVNULL,
                                     stderr=open(self.log_path, "wb"))
        self._log = open(self.log_path, "rb")
        self._partial = b""
        self.handled = 0
        self.failed = 0

    def poll_log(self):
        data = self._partial + self._log.read()
        lines = data.split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            if b'event="hook succeeded"' in line:
                self.handled += 1
            elif b'event="hook failed' in line:
                self.failed += 1

    def wait_handled(self, count, timeout=900):
        deadline = time.monotonic() + timeout
        while True:
            self.poll_log()
            if self.handled >= count:
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"agent handled {self.handled} of {count} (failed: {self.failed}); see {self.log_path}")
            time.sleep(0.005)

    def cpu_ms(self):
        return agent_cpu_ms(self.proc.pid)

    def stop(self):
        stop_agent(self.proc)


class Phase:
    """Wall time and agent CPU between start() and stop()."""

    def __init__(self, agent, name, changes):
        self.agent, self.name, self.changes = agent, name, changes

    def __enter__(self):
        self.cpu0, self.t0 = self.agent.cpu_ms(), time.monotonic()
        return self

    def __exit__(self, *exc):
        self.seconds = time.monotonic() - self.t0
        self.cpu = self.agent.cpu_ms() - self.cpu0

    def row(self, source, hook, note=""):
        return [source, hook, self.name, f"{self.changes:,}", f"{self.seconds:.2f}",
                f"{self.changes / self.seconds:,.0f}", f"{self.cpu / self.changes:.3f}", note]


# ---- replay ----

def run_replay(args, hook, hook_name):
    rows = []
    server = ReplayServer()
    work = Path(tempfile.mkdtemp(prefix="nodehook-throughput-"))
    (work / "kubeconfig").write_text(server.kubeconfig())
    agent = Agent(args.nodehook, work, work / "kubeconfig", hook, workers=args.workers)
    try:
        deadline = time.monotonic() + 60
        while server.watches == 0:
            if agent.proc.poll() is not None or time.monotonic() > deadline:
                sys.exit(f"agent never watched the replay server; see {agent.log_path}")
            time.sleep(0.01)
        n = args.objects
        uids = [f"00000000-0000-4000-8000-{i:012d}" for i in range(n)]
        with Phase(agent, "create", n) as p:
            server.publish([("ADDED", widget(i, uids[i], 2 + i, 1, i)) for i in range(n)])
            agent.wait_handled(n)
        rows.append(p.row("replay", hook_name))
        with Phase(agent, "update", n) as p:
            server.publish([("MODIFIED", widget(i, uids[i], 2 + n + i, 2, i + 1)) for i in range(n)])
            agent.wait_handled(2 * n)
        rows.append(p.row("replay", hook_name))
        if server.unexpected:
            print(f"note: unexpected requests to the replay server: {server.unexpected[:5]}")
    finally:
        agent.stop()
        server.stop()
    return rows


# ---- the real API server ----

class Writer:
    """Persistent HTTPS connections to the API server, one per thread."""

    def __init__(self, kube):
        self.kube = kube
        self.url = urllib.parse.urlsplit(kube.server)
        self.local = threading.local()

    def request(self, method, path, body, content_type="application/json"):
        conn = getattr(self.local, "conn", None)
        if conn is None:
            conn = self.local.conn = http.client.HTTPSConnection(self.url.hostname, self.url.port,
                                                                 context=self.kube.ssl, timeout=60)
        conn.request(method, path, json.dumps(body), {"Authorization": f"Bearer {self.kube.token}",
                                                      "Content-Type": content_type,
                                                      "Accept": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status >= 300:
            raise RuntimeError(f"{method} {path}: HTTP {resp.status} {data[:200]}")

    def create(self, i):
        body = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": f"w{i:05d}"},
                "spec": {"size": 0, "payload": "x" * 200}}
        self.request("POST", WIDGETS, body)

    def patch(self, i, size):
        self.request("PATCH", f"{WIDGETS}/w{i:05d}", {"spec": {"size": size}}, "application/merge-patch+json")


def parallel(fn, items, threads):
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(fn, items))


def run_cluster(args, hook, hook_name, kubeconfig, work):
    rows = []
    writer = Writer(Kube(kubeconfig))
    n = args.objects
    started = time.monotonic()
    parallel(writer.create, range(n), args.writers)
    created = time.monotonic() - started
    agent = Agent(args.nodehook, work, kubeconfig, hook, namespace="bench", workers=args.workers)
    try:
        t0 = time.monotonic()
        agent.wait_handled(n)
        seconds = time.monotonic() - t0
        cpu = agent.cpu_ms()
        rows.append(["cluster", hook_name, "create (backlog, from agent start)", f"{n:,}", f"{seconds:.2f}",
                     f"{n / seconds:,.0f}", f"{cpu / n:.3f}",
                     f"backlog created at {n / created:,.0f}/s; CPU includes start-up and the list"])
        with Phase(agent, "update (patched while it runs)", n) as p:
            started = time.monotonic()
            parallel(lambda i: writer.patch(i, 1), range(n), args.writers)
            fed = time.monotonic() - started
            agent.wait_handled(2 * n)
        rows.append(p.row("cluster", hook_name, f"fed at {n / fed:,.0f} patches/s by {args.writers} writer threads"))
    finally:
        agent.stop()
    return rows


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run_latency(args, kubeconfig, work):
    rows = []
    writer = Writer(Kube(kubeconfig))
    objects = args.latency_objects
    parallel(writer.create, range(objects), args.writers)
    stamps = work / "stamps.txt"
    hook = str(Path(args.hook_dir) / "start_stamp_hook")
    agent = Agent(args.nodehook, work, kubeconfig, hook, namespace="bench", workers=args.workers,
                  env={"BENCH_STAMP_FILE": str(stamps)})
    try:
        agent.wait_handled(objects)
        handled = objects
        size = 0
        for rate in args.rates:
            size += 1
            count = int(rate * args.latency_seconds)
            sent = [None] * count
            t0 = time.monotonic() + 0.2

            def send(k):
                # Object k % objects, at its slot in the schedule: each object stays idle for
                # objects / rate seconds between its changes.
                delay = t0 + k / rate - time.monotonic()
                if delay > 0:
                    time.sleep(delay)  # pacing the writer to the target rate, not synchronisation
                sent[k] = time.time_ns()
                writer.patch(k % objects, size * 1_000_000 + k)  # a new value: a same-value patch is no change

            started = time.monotonic()
            parallel(send, range(count), args.writers)
            achieved = count / (time.monotonic() - started)
            handled += count
            agent.wait_handled(handled)
            latencies = match_latencies(sent, stamps, objects)
            rows.append([f"{rate}", f"{achieved:,.0f}", f"{count:,}", f"{percentile(latencies, 0.5):.1f}",
                         f"{percentile(latencies, 0.9):.1f}", f"{percentile(latencies, 0.99):.1f}",
                         f"{max(latencies):.1f}"])
    finally:
        agent.stop()
    return rows


def match_latencies(sent, stamps, objects):
    """Each patch's latency: to the first update hook start of its object at or after it was sent."""
    starts = {}
    for line in stamps.read_text().splitlines():
        ns, reason, name = line.split()
        if reason == "update":
            starts.setdefault(name, []).append(int(ns))
    latencies = []
    for k, t in enumerate(sent):
        name = f"w{k % objects:05d}"
        after = [s for s in starts.get(name, []) if s >= t]
        if not after:
            sys.exit(f"no update hook started for {name} after its patch at {t}")
        latencies.append((min(after) - t) / 1e6)
    return latencies


# ---- report ----

def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")), "?")
    return f"{os.cpu_count()} CPUs ({cpu}), Linux {platform.release()}, load average {os.getloadavg()[0]:.1f}"


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(" --- " for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=5000)
    parser.add_argument("--modes", default="replay,cluster,latency")
    parser.add_argument("--hooks", default="noop,true", help="noop (build/test/bench/noop_hook) and/or true (/bin/true)")
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--writers", type=int, default=8, help="writer threads against the API server")
    parser.add_argument("--rates", default="20,200", help="changes/s for the latency mode")
    parser.add_argument("--latency-seconds", type=float, default=15)
    parser.add_argument("--latency-objects", type=int, default=400)
    parser.add_argument("--hook-dir", default=str(REPO / "build/test/bench"))
    parser.add_argument("--out", default=str(REPO / "build/bench/throughput.md"))
    args = parser.parse_args()
    args.nodehook = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))
    args.rates = [int(r) for r in args.rates.split(",") if r]
    modes = args.modes.split(",")
    hooks = {"noop": str(Path(args.hook_dir) / "noop_hook"), "true": "/bin/true"}
    hooks = {name: hooks[name] for name in args.hooks.split(",")}

    report = [f"Run {datetime.datetime.now().isoformat(timespec='seconds')} on {machine()}; agent "
              f"{args.nodehook}; {args.workers} workers; {args.objects:,} objects.", ""]
    rows = []
    for name, hook in hooks.items():
        if "replay" in modes:
            rows += run_replay(args, hook, name)
        if "cluster" in modes:
            with widget_cluster() as (work, kubeconfig):
                create_namespace(Kube(kubeconfig), "bench")
                rows += run_cluster(args, hook, name, kubeconfig, work)
    if rows:
        report += [table(["source", "hook", "phase", "changes", "seconds", "changes/s", "agent CPU ms/change",
                          "note"], rows), ""]
    if "latency" in modes:
        with widget_cluster() as (work, kubeconfig):
            create_namespace(Kube(kubeconfig), "bench")
            lat = run_latency(args, kubeconfig, work)
        report += [f"Change -> hook start (patch sent -> start_stamp_hook's first instruction), "
                   f"{args.latency_seconds:.0f} s per rate over {args.latency_objects} objects:", "",
                   table(["target changes/s", "achieved", "changes", "p50 ms", "p90 ms", "p99 ms", "max ms"], lat), ""]
    report.append(f"Finished at load average {os.getloadavg()[0]:.1f}.")
    text = "\n".join(report) + "\n"
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
