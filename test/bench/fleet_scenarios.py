"""The fleet simulation's scenarios, each measured the same way (see `measured`): first start,
a DaemonSet rollout, an API-server restart, a steady stream of changes, and rest.

"Handled" is read from the agents themselves: a marker object deleted after the event of
interest must reach every agent's delete hook (/bin/true; nodehook_hook_runs_total on its
/metrics), so a stream that stalled or an agent that never came back fails the run. No figure
here is an oracle: only agents that never get ready or never handle the marker raise."""

import random
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from fleet_nodes import NODE_LABEL

NAMESPACE = "fleet"
MIB = 1024.0


class Objects:
    """The widgets: `count` plain ones spread over the nodes by label, and marker rounds (one
    marker per round, or one per node and round when sharded, since each agent then sees only
    its own objects)."""

    def __init__(self, writer, nodes, count, sharded, pool):
        self.writer, self.nodes, self.count, self.sharded, self.pool = writer, nodes, count, sharded, pool
        self.base = writer.widgets(NAMESPACE)
        self.rounds = 0

    def body(self, name, node, spec):
        return {"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": name, "labels": {NODE_LABEL: node}}, "spec": spec}

    def create_all(self, marker_rounds):
        self.writer.request("POST", "/api/v1/namespaces",
                            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
        todo = [(f"w{i:05d}", self.nodes[i % len(self.nodes)], {"size": i}) for i in range(self.count)]
        for r in range(marker_rounds):
            todo += [(name, node, {"marker": r}) for name, node in self.markers(r)]
        list(self.pool.map(lambda t: self.writer.request("POST", self.base, self.body(*t)), todo))

    def markers(self, round_):
        if self.sharded:
            return [(f"marker-{round_}-{node}", node) for node in self.nodes]
        return [(f"marker-{round_}", self.nodes[0])]

    def per_agent(self):
        """Plain objects each agent watches (at least; markers come on top)."""
        return self.count // len(self.nodes) if self.sharded else self.count

    def delete_next_marker(self):
        names = [name for name, _ in self.markers(self.rounds)]
        self.rounds += 1
        list(self.pool.map(lambda n: self.writer.request("DELETE", f"{self.base}/{n}"), names))

    def patch(self, index, generation):
        self.writer.request("PATCH", f"{self.base}/w{index:05d}", {"spec": {"size": index, "generation": generation}},
                            "application/merge-patch+json")


def summary(values):
    values = sorted(values)
    if not values:
        return {}
    return {"median": statistics.median(values), "p90": values[int(0.9 * (len(values) - 1))], "max": values[-1]}


def measured(name, server, fleet, body):
    """Runs `body()` and returns its figures with the API server's and the agents' costs."""
    server.open_window()
    rss0, heap0 = server.rss_kib(), server.heap_mib()
    c0, cpu0, acpu0, req0, t0 = server.counters(), server.cpu_total(), fleet.cpu_total(), fleet.requests_by_verb(), time.time()
    extra = body()
    wall = time.time() - t0
    c1, req1 = server.counters(), fleet.requests_by_verb()
    n = len(fleet.agents)
    rss = fleet.each(lambda a: a.rss_kib())
    return {
        "scenario": name, "wall_s": wall,
        "apiserver_cpu_s": server.cpu_total() - cpu0,
        "apiserver_peak_rss_mib": server.window_peak() / MIB,
        "apiserver_rss_start_mib": rss0 / MIB, "apiserver_rss_end_mib": server.rss_kib() / MIB,
        "apiserver_heap_start_mib": heap0, "apiserver_heap_end_mib": server.heap_mib(),
        "server_requests_per_agent": {k.split()[1]: (c1.get(k, 0) - c0.get(k, 0)) / n
                                      for k in c1 if k.startswith("requests ") and k.split()[1] in ("LIST", "WATCH")},
        "list_sources_per_agent": {k.split(" ", 1)[1]: (c1.get(k, 0) - c0.get(k, 0)) / n
                                   for k in c1 if k.startswith("source ")},
        "agent_requests_per_agent": {v: (req1.get(v, 0) - req0.get(v, 0)) / n for v in req1},
        "watch_events": c1.get("watch events", 0) - c0.get("watch events", 0),
        "watch_event_bytes": c1.get("watch event bytes", 0) - c0.get("watch event bytes", 0),
        "agents_cpu_s": fleet.cpu_total() - acpu0,
        "agents_rss_total_mib": sum(rss) / MIB, "agent_rss_max_mib": max(rss) / MIB,
        **extra,
    }


def deletes_done(agent):
    return sum(v for (n, labels), v in agent.metrics().items()
               if n == "nodehook_hook_runs_total" and ("handler", "delete") in labels and ("outcome", "done") in labels)


def marker_reached(fleet, objects, timeout):
    """Deletes the next marker(s); {node: time.time() its delete hook had run}."""
    before = dict(zip((a.node for a in fleet.agents), fleet.each(deletes_done)))
    objects.delete_next_marker()
    return fleet.wait(lambda a: deletes_done(a) > before[a.node], "handled the marker deletion", timeout)


def first_start(server, fleet, objects, timeout):
    def body():
        t0 = time.time()
        fleet.start()
        ready = fleet.wait(lambda a: a.ready(), "became ready", timeout)
        stored = fleet.wait(lambda a: stored_objects(a) >= objects.per_agent(), "stored every object", timeout)
        return {"ready_s": summary([t - t0 for t in ready.values()]),
                "all_ready_s": max(ready.values()) - t0, "all_stored_s": max(stored.values()) - t0}
    return measured("first start", server, fleet, body)


def stored_objects(agent):
    return sum(v for (n, labels), v in agent.metrics().items()
               if n == "nodehook_store_rows" and ("table", "objects") in labels)


def rollout(server, fleet, objects, spread, seed, timeout):
    """Every agent stops (SIGTERM) and starts again at a random moment within `spread` seconds."""
    def body():
        rng = random.Random(seed)
        schedule = sorted((rng.uniform(0, spread), a) for a in fleet.agents)
        t0 = time.time()
        restarts = ThreadPoolExecutor(8)

        def schedule_restarts():
            for offset, agent in schedule:
                time.sleep(max(0.0, t0 + offset - time.time()))  # the rollout's own pacing
                restarts.submit(agent.restart)
        scheduler = threading.Thread(target=schedule_restarts)
        scheduler.start()
        ready = fleet.wait(lambda a: a.started_at >= t0 and a.alive() and a.ready(), "became ready again",
                           spread + timeout)
        scheduler.join()
        restarts.shutdown()
        reached = marker_reached(fleet, objects, timeout)
        return {"ready_after_restart_s": summary([ready[a.node] - a.started_at for a in fleet.agents]),
                "all_ready_s": max(ready.values()) - t0, "marker_after_all_ready_s":
                    summary([t - max(ready.values()) for t in reached.values()])}
    return measured("rollout", server, fleet, body)


def api_restart(server, fleet, objects, timeout):
    """The API server stops and starts again on the same data and port; then a marker is deleted."""
    def body():
        stop_s, start_s = server.restart()
        objects.writer = server.writer
        ready_at = server.cluster.ready_at
        reached = marker_reached(fleet, objects, timeout)
        fleet.wait(lambda a: a.ready(), "ready after the API restart", timeout)
        return {"stop_s": stop_s, "start_s": start_s,
                "marker_after_server_ready_s": summary([t - ready_at for t in reached.values()])}
    return measured("API server restart", server, fleet, body)


def changes(server, fleet, objects, rate, duration, seed, timeout):
    """`rate` spec patches a second for `duration` seconds on random objects, from 8 connections
    (a slow server makes the achieved rate lower; it is reported)."""
    def body():
        rng = random.Random(seed)
        count = int(rate * duration)
        picks = [rng.randrange(objects.count) for _ in range(count)]
        t0 = time.time()

        def send(i):
            time.sleep(max(0.0, t0 + i / rate - time.time()))  # pacing of the write load
            objects.patch(picks[i], i)
        with ThreadPoolExecutor(8) as writers:
            list(writers.map(send, range(count)))
        sent_s = time.time() - t0
        c_end = server.counters()
        reached = marker_reached(fleet, objects, timeout)
        watchers = 1 if objects.sharded else len(fleet.agents)
        return {"changes": count, "achieved_rate": count / sent_s,
                "caught_up_after_writer_s": summary([t - t0 - sent_s for t in reached.values()]),
                "_counters_at_writer_end": c_end, "_watchers_per_change": watchers}
    result = measured(f"{rate:g} changes/s for {duration:g} s", server, fleet, body)
    # The marker's own events are left out: figures per change use the counters at the writer's end.
    c_end = result.pop("_counters_at_writer_end")
    watchers = result.pop("_watchers_per_change")
    events = result["watch_events"] - (server.counters().get("watch events", 0) - c_end.get("watch events", 0))
    size = result["watch_event_bytes"] / result["watch_events"] if result["watch_events"] else 0.0
    result["events_per_change_per_agent"] = events / (result["changes"] * watchers) if result["changes"] else 0.0
    result["bytes_per_change_per_agent"] = size * result["events_per_change_per_agent"]
    return result


def rest(server, fleet, seconds):
    def body():
        time.sleep(seconds)  # the scenario is a quiet period of this length
        return {"seconds": seconds}
    return measured(f"rest for {seconds:g} s", server, fleet, body)
