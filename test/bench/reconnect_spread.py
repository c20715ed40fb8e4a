#!/usr/bin/env python3
"""Reconnect spread: how a fleet of agents comes back after the API server restarts.

Starts a real API server (test/cluster), a few widgets, and a fleet of nodehook agents (default
20: distinct node names and state files, loopback only, health on 127.0.0.1:0, one worker,
/bin/true as every hook, the default reconnect knobs: 0.8 s doubling to 30 s with full jitter).
Once every agent has handled every widget, the server is stopped (SIGTERM) and started again
with the same --dir (same port, certificates, token, etcd data), and a marker widget is created
the moment it is ready. Each agent's log then tells, with its own timestamps:

- when it listed again ("listed" after the stop): the relist delay after the server was ready;
- whether it relisted (a watch answered 410 "resource version expired", or a list after errors)
  or resumed its watch from its resourceVersion (no "listed" line);
- how many "watch failed" / "list failed" lines the outage cost;
- when it started the marker's create hook: the moment the change reached it.

Prints min/median/p90/max of the relist delay, a histogram per 250 ms, and the busiest 250 ms
bucket: jittered reconnects spread over several buckets, synchronized ones pile into one.

usage: test/bench/reconnect_spread.py [--agents 20] [--objects 5] [--down-seconds 0] [--json FILE]
Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER like the e2e tests (or the default build paths).
"""

import argparse
import json
import statistics
import sys
import time
from datetime import datetime
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))

from bench_cluster import e2e_cluster  # noqa: E402
from conftest import Agent, wait_until  # noqa: E402

NAMESPACE = "spread"
BUCKET = 0.25  # seconds per histogram bucket


def log_time(event):
    """Seconds since the epoch of a parsed agent log line ("2026-11-29T17:41:57.458Z", UTC)."""
    return datetime.strptime(event["time"], "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()


def percentile(values, share):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def summary(values):
    return {"min": min(values), "median": statistics.median(values), "p90": percentile(values, 0.9),
            "max": max(values)} if values else {}


def histogram(values, origin=0.0):
    """{bucket start (s): count} per BUCKET seconds, empty buckets between included."""
    counts = {}
    for v in values:
        counts[int((v - origin) // BUCKET)] = counts.get(int((v - origin) // BUCKET), 0) + 1
    if not counts:
        return {}
    return {round(b * BUCKET, 2): counts.get(b, 0) for b in range(min(counts), max(counts) + 1)}


def agent_outcome(agent, stopped_from, ready_at, marker):
    """What one agent's log says about the outage that began at `stopped_from`."""
    after = [e for e in agent.log_events() if log_time(e) >= stopped_from]
    listed = [e for e in after if e.get("event") == "listed"]
    marker_runs = [e for e in after if e.get("event") == "hook started" and e.get("object") == marker]
    return {
        "node": agent.node,
        "path": "relist" if listed else "rewatch",
        "relist_delay": log_time(listed[0]) - ready_at if listed else None,
        "marker_delay": log_time(marker_runs[0]) - ready_at if marker_runs else None,
        "expired": sum(e.get("event") == "resource version expired" for e in after),
        "watch_failed": sum(e.get("event") == "watch failed" for e in after),
        "list_failed": sum(e.get("event") == "list failed" for e in after),
    }


def report(outcomes, timings):
    relist = [o["relist_delay"] for o in outcomes if o["relist_delay"] is not None]
    marker = [o["marker_delay"] for o in outcomes if o["marker_delay"] is not None]
    hist = histogram(relist)
    result = {
        "agents": len(outcomes), **timings,
        "relisted": len(relist), "rewatched": sum(o["path"] == "rewatch" for o in outcomes),
        "expired_410": sum(o["expired"] for o in outcomes),
        "watch_failed": sum(o["watch_failed"] for o in outcomes),
        "list_failed": sum(o["list_failed"] for o in outcomes),
        "relist_delay": summary(relist), "marker_delay": summary(marker),
        "relist_histogram": hist, "busiest_bucket": max(hist.values()) if hist else 0,
        "per_agent": outcomes,
    }
    print(f"agents={result['agents']} stop={timings['stop_seconds']:.2f}s start_to_ready={timings['start_seconds']:.2f}s "
          f"outage(stop signal to ready)={timings['outage_seconds']:.2f}s")
    print(f"relisted={result['relisted']} rewatched={result['rewatched']} 410s={result['expired_410']} "
          f"watch_failed={result['watch_failed']} list_failed={result['list_failed']}")
    for name in ("relist_delay", "marker_delay"):
        s = result[name]
        if s:
            print(f"{name} after ready: min={s['min']:.2f}s median={s['median']:.2f}s p90={s['p90']:.2f}s "
                  f"max={s['max']:.2f}s")
    print(f"relists per {BUCKET * 1000:.0f} ms after ready (busiest bucket {result['busiest_bucket']}/{len(relist)}):")
    for start, count in hist.items():
        print(f"  {start:+7.2f}s  {'#' * count} {count}")
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--objects", type=int, default=5)
    parser.add_argument("--down-seconds", type=float, default=0.0,
                        help="keep the server down this long after it stopped, before starting it again")
    parser.add_argument("--json", type=Path, help="also write the figures (and per-agent outcomes) here")
    args = parser.parse_args()

    names = [f"w{i}" for i in range(args.objects)]
    with e2e_cluster("nodehook-spread-", NAMESPACE, names) as (work, cluster, widgets, agents):
        for i in range(args.agents):
            node = f"node-{i:02d}"
            agents.append(Agent(node, work / node, cluster, NAMESPACE, ("create", "update", "delete"), {},
                                hook=Path("/bin/true")).start())
        for agent in agents:
            wait_until(lambda: len(agent.log_events("hook succeeded")) >= args.objects,
                       f"{agent.node} to handle the first widgets (log: {agent.log_path})", timeout=180)

        stop_signal = time.time()
        cluster.stop()
        stopped = time.time()
        time.sleep(args.down_seconds)  # the outage length is the experiment's parameter
        starting = time.time()
        cluster.start()
        widgets.create("marker", {"size": 0})
        marker = f"{NAMESPACE}/marker"
        for agent in agents:
            wait_until(lambda: any(e.get("object") == marker for e in agent.log_events("hook succeeded")),
                       f"{agent.node} to handle the marker (log: {agent.log_path})", timeout=180)

        timings = {"stop_seconds": stopped - stop_signal, "start_seconds": cluster.ready_at - starting,
                   "outage_seconds": cluster.ready_at - stop_signal}
        outcomes = [agent_outcome(agent, stop_signal, cluster.ready_at, marker) for agent in agents]
        result = report(outcomes, timings)
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
        print(f"logs: {work}")


if __name__ == "__main__":
    main()
