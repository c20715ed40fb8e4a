"""The measurements of test/bench/compare.py, each run on one system's fleet in its own namespace.
Every function returns plain data (numbers and lists) for the report and results.json."""

from compare_client import write_delta

NAME = "w{:05d}"


def _names(first, last):
    return [NAME.format(i) for i in range(first, last)]


def _rss(fleet):
    return [node.usage()[1] for node in fleet.nodes]


def percentiles(values):
    """p50, p99 and max of `values` (nearest rank)."""
    ordered = sorted(values)
    rank = lambda q: ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered))) - 1))]  # noqa: E731
    return {"p50": rank(0.50), "p99": rank(0.99), "max": ordered[-1]}


def _writes(api, before, driver_writes, changes, nodes):
    """The agents' own writes in a phase: all writes minus the driver's, per handled change per node."""
    delta = write_delta(before, api.settled_write_counts())
    if driver_writes:
        delta[("PATCH", "widgets")] = delta.get(("PATCH", "widgets"), 0) - driver_writes
    delta = {f"{verb} {resource}": n for (verb, resource), n in delta.items() if n}
    return {"by_request": delta, "per_change_per_node": sum(delta.values()) / (changes * nodes)}


def idle_memory_and_restart(api, fleet, namespace, levels):
    """RSS with 0 objects (idle), then after each level of objects was created and handled, then a
    restart with the last level handled: time to ready, time until the CPU settles, hook reruns,
    and RSS right after it (and its peak)."""
    api.create_namespace(namespace)
    fleet.start()
    fleet.wait_ready()
    fleet.wait_quiet()
    points = [{"objects": 0, "rss_kib": _rss(fleet)}]
    threads_idle = [node.usage()[3] for node in fleet.nodes]
    created = 0
    for level in levels:
        marks = fleet.marks()
        names = _names(created, level)
        api.create_widgets(namespace, names)
        created = level
        fleet.wait_handled(marks, "create", names)
        fleet.wait_quiet()
        points.append({"objects": level, "rss_kib": _rss(fleet)})
    fleet.stop()
    marks = fleet.marks()
    fleet.start()
    ready = fleet.wait_ready()
    settled = fleet.wait_quiet()
    restart = {"objects": created, "ready_s": ready,
               "settled_s": [settled - node.started_at for node in fleet.nodes],
               "reruns": sum(len(node.records(m)[0]) for node, m in zip(fleet.nodes, marks)),
               "rss_kib": _rss(fleet), "peak_rss_kib": [node.usage()[2] for node in fleet.nodes]}
    fleet.stop()
    return {"points": points, "threads_idle": threads_idle, "restart": restart}


def _drain(api, fleet, reason, names):
    """Starts the fleet on a backlog of `names` and measures how it drains: hooks/s per node from
    its first to its last hook start, CPU per change from its first hook until it settled, and the
    API writes of the whole run."""
    marks = fleet.marks()
    before = api.settled_write_counts()
    fleet.start()
    handled = fleet.wait_handled(marks, reason, names)
    fleet.wait_quiet()
    cpu_end = fleet.cpu()
    rates, cpu_ms = [], []
    for (starts, (cpu_first, seen_first)), cpu in zip(handled, cpu_end):
        times = sorted(starts.values())
        rates.append((len(times) - 1) / (times[-1] - times[0]) if times[-1] > times[0] else float("nan"))
        cpu_ms.append(1000 * (cpu - cpu_first) / max(1, len(names) - seen_first))
    return {"objects": len(names), "hooks_per_s": rates, "cpu_ms_per_change": cpu_ms,
            "writes": _writes(api, before, 0, len(names), len(fleet.nodes))}


def backlog_drains(api, fleet, namespace, count):
    """`count` objects created while the fleet is down, then drained; then all of them updated
    while it is down, and drained again. Leaves the fleet running on the handled objects."""
    api.create_namespace(namespace)
    names = _names(0, count)
    api.create_widgets(namespace, names)
    creates = _drain(api, fleet, "create", names)
    fleet.stop()
    api.paced_patches(namespace, names, seq=1, rate=1e9)
    updates = _drain(api, fleet, "update", names)
    return {"create": creates, "update": updates}


def change_rates(api, fleet, namespace, rates, seconds, objects):
    """At each rate, changes objects (each at most once) for `seconds`; latency = a node's hook start
    minus the time the driver sent the write (so it includes the write's round trip, reported
    apart), pooled over the nodes."""
    results = {}
    for i, rate in enumerate(rates):
        names = _names(0, min(objects, int(rate * seconds)))
        marks = fleet.marks()
        before = api.settled_write_counts()
        cpu_before = fleet.cpu()
        changed, achieved = api.paced_patches(namespace, names, seq=2 + i, rate=rate)
        handled = fleet.wait_handled(marks, "update", names)
        fleet.wait_quiet()
        cpu_ms = [1000 * (c - c0) / len(names) for c, c0 in zip(fleet.cpu(), cpu_before)]
        latencies = [1000 * (start - changed[name][0]) for starts, _ in handled for name, start in starts.items()]
        round_trips = [1000 * (back - sent) for sent, back in changed.values()]
        results[rate] = {"changes": len(names), "achieved_per_s": achieved, "latencies_ms": latencies,
                         "write_round_trip_ms": percentiles(round_trips),
                         **percentiles(latencies), "cpu_ms_per_change": cpu_ms,
                         "writes": _writes(api, before, len(names), len(names), len(fleet.nodes))}

    return results
