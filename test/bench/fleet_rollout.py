#!/usr/bin/env python3
"""Fleet rollout cost (issue 24, item 3): N agents with a rollout policy against ONE API server.

Per fleet size: starts the API server (test/cluster) and N agents (test/bench/fleet_nodes.py),
each with `rollout: {max_nodes: "10%", canary_nodes: 1}` and a --hook-seconds hook on create;
waits until every node Lease is there; then creates --objects widgets (each is one gated change
for every node) and waits until every node Lease says done for every object. Reported per gated
change per node (so flat figures mean the API server's work grows linearly with N):
  - the Lease watch events the API server sent, and their bytes (apiserver_watch_events_sizes);
  - the Lease writes it served (creates and updates, apiserver_request_total), and the Lease
    reads (GET: mostly the candidates of the coordinator's election, which poll its Lease);
  - its CPU seconds (etcd included: same process), and the same net of what the idle fleet costs it
    (measured for --idle seconds before the objects are created: watches, bookmarks, the
    coordinator's renewals, the election's reads), which is what the rollout itself adds;
and the time from the first create to the last node done, and the API server's busiest 5 s
(its CPU over any 5-s window of the run, in cores, and when that window began), beside the idle
fleet's busiest 5 s (sampled every half second of the idle period). The benchmark itself reads nothing from the API
server while the rollout runs: each hook appends a line to a file, and only once every hook has
run does it list the node Leases to see every result.

  test/bench/fleet_rollout.py                    # 50, 100 and 300 agents, 20 objects, 1-s hook
  test/bench/fleet_rollout.py --agents 50 --objects 4
  test/bench/fleet_rollout.py --smoke            # 5 agents, 2 objects: fails only when broken

Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER (or the default build paths). Exit 1 when a run never
completes; the figures never fail a run."""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from fleet_apiserver import ApiServer
from fleet_nodes import Fleet
from fleet_probe import parse_prometheus, sum_samples
from fleet_report import REPO

LEASE_NS = "nodehook-fleet"
OBJECT_NS = "default"


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", default="50,100,300", help="fleet sizes, comma-separated")
    p.add_argument("--objects", type=int, default=20, help="widgets created: gated changes per node")
    p.add_argument("--hook-seconds", type=float, default=1.0)
    p.add_argument("--grants-per-second", type=float, default=0,
                   help="the rollout's max_grants_per_second (default: the agent's). N agents with "
                        "N/5000 of the default emulate 5,000 nodes' load shape at N/5000 of its size")
    p.add_argument("--idle", type=float, default=15.0, help="seconds the idle fleet's cost is measured")
    return fleet_args(p, argv, {"agents": "5", "objects": 2, "idle": 2.0}, "5 agents, 2 objects",
                      3600.0, "seconds a rollout may take")


def fleet_args(p, argv, smoke, smoke_help, timeout, timeout_help):
    """The options the fleet benches end with (--smoke, --timeout, --keep, --json), then `p`'s parse
    of `argv`: --smoke sets the options in `smoke`, and args.sizes is --agents as numbers."""
    p.add_argument("--smoke", action="store_true", help=smoke_help)
    p.add_argument("--timeout", type=float, default=timeout, help=timeout_help)
    p.add_argument("--keep", action="store_true", help="keep the work directory (logs, state files)")
    p.add_argument("--json", type=Path, help="also write every figure here")
    args = p.parse_args(argv)
    if args.smoke:
        for option, value in smoke.items():
            setattr(args, option, value)
    args.sizes = [int(n) for n in args.agents.split(",")]
    return args


def binary():
    return Path(os.environ.get("NODEHOOK_BIN", REPO / "build" / "agent" / "app" / "nodehook"))


def lease_counters(server):
    """Cumulative: Lease watch events sent and their bytes, Lease writes, the server's CPU."""
    samples = parse_prometheus(server.writer.request("GET", "/metrics", raw=True))
    writes = sum_samples(samples, "apiserver_request_total", by="verb", resource="leases")
    return {"events": sum_samples(samples, "apiserver_watch_events_sizes_count", resource="leases"),
            "bytes": sum_samples(samples, "apiserver_watch_events_sizes_sum", resource="leases"),
            "writes": sum(v for verb, v in writes.items() if verb in ("POST", "PUT", "PATCH")),
            "reads": writes.get("GET", 0),
            "cpu": server.cpu_total()}


def node_leases(server):
    listed = server.writer.request("GET", f"/apis/coordination.k8s.io/v1/namespaces/{LEASE_NS}/leases"
                                          "?labelSelector=nodehook.io/rollout-kind%3Dnode")
    return listed.get("items", [])


def done_count(server, uids):
    """How many (node, object) pairs are done, by the node Leases."""
    done = 0
    for lease in node_leases(server):
        results = json.loads(lease["metadata"].get("annotations", {}).get("nodehook.io/rollout-results", "{}"))
        for uid in uids:
            entry = results.get(uid)
            if isinstance(entry, str) and entry.startswith("done "):
                done += 1
            elif isinstance(entry, dict) and entry.get("result") == "done":
                done += 1
    return done


def hooks_done(marker):
    try:
        return marker.read_text().count("\n")
    except FileNotFoundError:
        return 0


def busiest(samples, window=5.0):
    """The most CPU the API server used in any `window` seconds, in cores, and when that window
    began (seconds after the first sample), from (time, cpu) samples."""
    best, at = 0.0, 0.0
    for i, (t0, c0) in enumerate(samples):
        for t1, c1 in samples[i + 1:]:
            if t1 - t0 >= window:
                if (c1 - c0) / (t1 - t0) > best:
                    best, at = (c1 - c0) / (t1 - t0), t0 - samples[0][0]
                break
    return best, at


def wait(predicate, what, timeout, interval=1.0):
    t0 = time.time()
    while not predicate():
        if time.time() - t0 > timeout:
            raise RuntimeError(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def one_size(args, n, work):
    (work / "apiserver").mkdir(parents=True)
    server = ApiServer(work / "apiserver")
    fleet = None
    try:
        server.writer.request("POST", "/api/v1/namespaces",
                              {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": LEASE_NS}})
        marker = work / "hooks-done"
        hook = {"argv": ["/bin/sh", "-c", f"sleep {args.hook_seconds}; echo done >> {marker}"],
                "timeout_seconds": 120}
        rollout = {"max_nodes": "10%", "canary_nodes": 1}
        if args.grants_per_second:
            rollout["max_grants_per_second"] = args.grants_per_second
        fleet = Fleet(n, work / "nodes", server.kubeconfig, binary(), (), False, "paginated", "warn",
                      resource_options={"hooks": {"create": hook}, "rollout": rollout},
                      tuning={"lease_namespace": LEASE_NS})
        fleet.start()
        fleet.wait(lambda a: a.ready(), "got ready", 600)
        wait(lambda: len(node_leases(server)) == n, f"{n} node Leases", 600)
        idle_samples = [(time.time(), server.cpu_total())]
        while time.time() - idle_samples[0][0] < args.idle:
            time.sleep(0.5)
            idle_samples.append((time.time(), server.cpu_total()))
        idle_cores = (idle_samples[-1][1] - idle_samples[0][1]) / (idle_samples[-1][0] - idle_samples[0][0])
        before = lease_counters(server)
        t0 = time.time()
        uids = []
        for i in range(args.objects):
            created = server.writer.request("POST", server.writer.widgets(OBJECT_NS),
                                            {"apiVersion": "example.com/v1", "kind": "Widget",
                                             "metadata": {"name": f"roll-{i}"}, "spec": {"size": i}})
            uids.append(created["metadata"]["uid"])
        samples = [(t0, before["cpu"])]

        def all_hooks_ran():
            samples.append((time.time(), server.cpu_total()))  # from /proc: no API request
            return hooks_done(marker) >= n * len(uids)
        wait(all_hooks_ran, "every hook run", args.timeout, interval=0.5)
        wait(lambda: done_count(server, uids) == n * len(uids), "every node done with every object", 120)
        took = time.time() - t0
        after = lease_counters(server)
        changes = n * len(uids)
        figures = {k: (after[k] - before[k]) / changes for k in after}
        figures["net cpu"] = (after["cpu"] - before["cpu"] - idle_cores * took) / changes
        figures.update({"agents": n, "objects": len(uids), "seconds": took, "idle cores": idle_cores,
                        "total events": after["events"] - before["events"]})
        figures["busiest 5 s cores"], figures["busiest 5 s at"] = busiest(samples)
        figures["idle busiest 5 s cores"] = busiest(idle_samples)[0]
        # The API server's CPU over the run (seconds after the first create, cores since the
        # sample before): where a busiest window came from.
        figures["cpu series"] = [(round(t1 - t0, 2), round((c1 - c0) / (t1 - ta), 3))
                                 for (ta, c0), (t1, c1) in zip(samples, samples[1:])]
        return figures
    finally:
        if fleet:
            fleet.stop()
        server.stop()


def main(argv):
    args = parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="nodehook-fleet-rollout-"))
    rows = []
    try:
        for n in args.sizes:
            print(f"fleet_rollout: {n} agents, {args.objects} objects ...", flush=True)
            figures = one_size(args, n, root / f"n{n}")
            rows.append(figures)
            print("  " + json.dumps({k: v for k, v in figures.items() if k != "cpu series"}), flush=True)
    except RuntimeError as e:
        print(f"fleet_rollout: {e} (work directory {root})", file=sys.stderr)
        return 1
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)
    print("\n| agents | objects | Lease watch events | watch KiB | Lease writes | Lease reads | API-server CPU ms | "
          "net of the idle fleet | time to complete | busiest 5 s | idle fleet (busiest 5 s) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in rows:
        print(f"| {r['agents']} | {r['objects']} | {r['events']:.1f} | {r['bytes'] / 1024:.1f} | {r['writes']:.2f} | "
              f"{r['reads']:.2f} | {r['cpu'] * 1000:.1f} | {r['net cpu'] * 1000:.1f} | {r['seconds']:.0f} s | "
              f"{r['busiest 5 s cores']:.2f} cores at {r['busiest 5 s at']:.0f} s | {r['idle cores']:.2f} ({r['idle busiest 5 s cores']:.2f}) cores |")
    print("(per gated change per node)")
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
