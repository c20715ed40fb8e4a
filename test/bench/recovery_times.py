#!/usr/bin/env python3
"""Recovery times of one agent against the real API server, from the agent's own log timestamps.

(a) restart: the server is stopped (SIGTERM) and started again with the same --dir; a widget is
    changed the moment it prints `ready`. Measured: ready -> the agent starts that change's hook,
    and how it got there (410 "resource version expired" -> "listed" -> hook).
(b) stall: the agent talks to the server through a loopback TCP proxy (in this script) that can
    freeze the connections it carries: bytes stop, both sockets stay open. A ticker patches a
    widget's status twice a second, so the watch is busy up to the freeze. The watch connection
    is frozen, a widget is changed at once, and new connections still pass. Measured: freeze ->
    "watch stalled" (stall_seconds 5) -> the agent starts the change's hook.
(c) 410: kube-apiserver answers a watch from a resourceVersion it no longer has with an in-stream
    ERROR 410 "too old resource version". A restart makes that happen every time (the new watch
    cache starts at a newer revision), so (a) measures 410 -> "listed" -> hook as well. This part
    tries to get one without a restart: the proxy freezes every connection, old and new, while a
    writer patches a widget as fast as it can (and a widget is changed once), in the hope that the
    watch cache drops the agent's resourceVersion. Measured after the thaw: whether the agent got
    a 410 and relisted or resumed its watch, and thaw -> the change's hook. (It has not worked so
    far: 17,049 writes in 100 s did not push the agent's resourceVersion out of the cache; the
    figure is then the recovery from a 100 s unreachable server.)

usage: test/bench/recovery_times.py [--repeat 3] [--stall-seconds 5] [--expire-freeze-seconds 100] [--json FILE]
Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER like the e2e tests (or the default build paths).
"""

import argparse
import json
import re
import select
import socket
import sys
import tempfile
import threading
import time
import types
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
for extra in (E2E, Path(__file__).resolve().parent):
    if str(extra) not in sys.path:
        sys.path.insert(0, str(extra))

from conftest import Agent, Cluster, wait_until  # noqa: E402
from kube import Widgets, create_namespace  # noqa: E402
from reconnect_spread import log_time, summary  # noqa: E402

NAMESPACE = "recovery"


class Pipe(threading.Thread):
    """Copies bytes both ways between two sockets while `flowing` is set; when it is cleared the
    sockets stay open and nothing moves (a stalled path, not a closed one)."""

    def __init__(self, client, upstream, flowing):
        super().__init__(daemon=True)
        self.client, self.upstream, self.flowing = client, upstream, flowing
        self.peer = {client: upstream, upstream: client}

    def run(self):
        try:
            while True:
                if not self.flowing.wait(0.1):
                    continue
                readable, _, _ = select.select(list(self.peer), [], [], 0.1)
                for sock in readable:
                    if not self.flowing.is_set():
                        break
                    data = sock.recv(65536)
                    if not data:
                        return
                    self.peer[sock].sendall(data)
        except OSError:
            return
        finally:
            self.client.close()
            self.upstream.close()


class FreezableProxy:
    """A loopback TCP proxy to 127.0.0.1:`upstream_port`. `freeze()` stalls the connections open
    now; with `new_too` it also stalls every connection accepted until `thaw()`."""

    def __init__(self, upstream_port):
        self.upstream_port = upstream_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.pipes = []
        self.hold_new = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                client, _ = self.listener.accept()
                upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
            except OSError:
                continue
            with self.lock:
                flowing = threading.Event()
                if not self.hold_new:
                    flowing.set()
                pipe = Pipe(client, upstream, flowing)
                self.pipes = [p for p in self.pipes if p.is_alive()] + [pipe]
            pipe.start()

    def freeze(self, new_too=False):
        with self.lock:
            self.hold_new = new_too
            for pipe in self.pipes:
                pipe.flowing.clear()

    def thaw(self):
        with self.lock:
            self.hold_new = False
            for pipe in self.pipes:
                pipe.flowing.set()


def proxied_kubeconfig(cluster, proxy, path):
    """A copy of the cluster's kubeconfig whose server is the proxy (same certificate: 127.0.0.1)."""
    text = Path(cluster.kubeconfig).read_text()
    path.write_text(re.sub(r"(server:\s*https://127\.0\.0\.1:)\d+", rf"\g<1>{proxy.port}", text))
    return types.SimpleNamespace(kubeconfig=str(path))


def first_event(agent, event, since, **fields):
    """Timestamp of the agent's first `event` at or after `since` whose fields match, or None."""
    for e in agent.log_events(event):
        if log_time(e) >= since and all(e.get(k) == v for k, v in fields.items()):
            return log_time(e)
    return None


def wait_for_hook(agent, name, since, timeout=180):
    return wait_until(lambda: first_event(agent, "hook started", since, object=f"{NAMESPACE}/{name}"),
                      f"{agent.node} to start the hook of {name} (log: {agent.log_path})", timeout=timeout)


def since(t0, t):
    return None if t is None or t0 is None else round(t - t0, 3)


def measure_restart(cluster, widgets, agent, round_no):
    stop_signal = time.time()
    cluster.stop()
    cluster.start()
    ready = cluster.ready_at
    widgets.patch_spec("target", {"round": f"restart-{round_no}"})
    hook = wait_for_hook(agent, "target", ready)
    return {"outage_seconds": round(ready - stop_signal, 2),
            "expired_after_ready": since(ready, first_event(agent, "resource version expired", stop_signal)),
            "listed_after_ready": since(ready, first_event(agent, "listed", stop_signal)),
            "relisted_after_410": since(first_event(agent, "resource version expired", stop_signal),
                                        first_event(agent, "listed", stop_signal)),
            "hook_after_ready": since(ready, hook)}


def measure_stall(proxy, widgets, agent, round_no):
    frozen = time.time()
    proxy.freeze()
    widgets.patch_spec("target", {"round": f"stall-{round_no}"})
    hook = wait_for_hook(agent, "target", frozen)
    proxy.thaw()
    return {"stalled_after_freeze": since(frozen, first_event(agent, "watch stalled", frozen)),
            "hook_after_freeze": since(frozen, hook)}


def measure_expiry(proxy, widgets, agent, freeze_seconds):
    frozen = time.time()
    proxy.freeze(new_too=True)
    widgets.patch_spec("target", {"round": "expire"})
    writes = 0
    while time.time() - frozen < freeze_seconds:  # churn until the watch cache forgot our RV
        widgets.patch_status("churn", {"n": writes})
        writes += 1
    thawed = time.time()
    proxy.thaw()
    hook = wait_for_hook(agent, "target", frozen)
    expired = first_event(agent, "resource version expired", frozen)
    return {"freeze_seconds": round(thawed - frozen, 1), "writes_during_freeze": writes,
            "got_410": expired is not None,
            "watch_failed_during_freeze": sum(frozen <= log_time(e) <= thawed for e in agent.log_events("watch failed")),
            "expired_after_thaw": since(thawed, expired),
            "listed_after_thaw": since(thawed, first_event(agent, "listed", frozen)),
            "hook_after_thaw": since(thawed, hook)}


class Ticker(threading.Thread):
    """Patches a widget's status every `period` seconds (an event on the watch, no hook)."""

    def __init__(self, widgets, period=0.5):
        super().__init__(daemon=True)
        self.widgets, self.period, self.stopped = widgets, period, threading.Event()

    def run(self):
        n = 0
        while not self.stopped.wait(self.period):
            n += 1
            self.widgets.patch_status("ticker", {"tick": n})


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="rounds of (a) and of (b)")
    parser.add_argument("--stall-seconds", type=int, default=5)
    parser.add_argument("--expire-freeze-seconds", type=float, default=100, help="(c); 0 skips it")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="nodehook-recovery-"))
    (work / "cluster").mkdir()
    cluster = Cluster(work / "cluster")
    proxy = FreezableProxy(int((cluster.dir / "port").read_text().strip()))  # test/cluster/README.md
    results = {"restart": [], "stall": [], "expire": None}
    agents = []
    ticker = None
    try:
        create_namespace(cluster.kube, NAMESPACE)
        widgets = Widgets(cluster.kube, NAMESPACE)
        for name in ("target", "ticker", "churn"):
            widgets.create(name, {"round": "initial"})

        def start_agent(node, via, **tuning):
            agent = Agent(node, work / node, via, NAMESPACE, ("create", "update", "delete"), tuning,
                          hook=Path("/bin/true"))
            agents.append(agent.start())
            wait_for_hook(agent, "target", 0)
            return agent

        direct = start_agent("node-restart", cluster)
        for i in range(args.repeat):
            results["restart"].append(measure_restart(cluster, widgets, direct, i))
            print("restart", results["restart"][-1], flush=True)
        direct.stop()

        via_proxy = proxied_kubeconfig(cluster, proxy, work / "proxied-kubeconfig")
        stalling = start_agent("node-stall", via_proxy, stall_seconds=args.stall_seconds)
        ticker = Ticker(widgets)
        ticker.start()
        for i in range(args.repeat):
            time.sleep(2)  # let the ticker's events flow again after the previous round
            results["stall"].append(measure_stall(proxy, widgets, stalling, i))
            print("stall", results["stall"][-1], flush=True)
        ticker.stopped.set()
        stalling.stop()

        if args.expire_freeze_seconds > 0:
            expiring = start_agent("node-expire", via_proxy, stall_seconds=args.stall_seconds)
            results["expire"] = measure_expiry(proxy, widgets, expiring, args.expire_freeze_seconds)
            print("expire", results["expire"], flush=True)

        for name, key in (("restart", "hook_after_ready"), ("stall", "hook_after_freeze")):
            values = [r[key] for r in results[name] if r[key] is not None]
            results[f"{name}_summary"] = summary(values)
            print(f"{name}: {key} " + " ".join(f"{k}={v:.2f}s" for k, v in summary(values).items()))
        if args.json:
            args.json.write_text(json.dumps(results, indent=2))
        print(f"logs: {work}")
    finally:
        if ticker:
            ticker.stopped.set()
        proxy.thaw()
        for agent in agents:
            agent.stop()
        cluster.stop()


if __name__ == "__main__":
    main()
