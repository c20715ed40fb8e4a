#!/usr/bin/env python3
"""Fleet simulation (issue 11, item 4): N nodehook agents against ONE test API server.

Starts the API server (test/cluster), creates the objects, starts N agents (own node name, state
file, scratch directory and health port on 127.0.0.1 each; loopback only) and runs:
  first start; a DaemonSet rollout (every agent restarts at a random moment within --spread s);
  an API-server restart (same data dir and port); --rate changes/s for --duration s; rest.
Per scenario: the API server's CPU seconds and peak RSS, LIST/WATCH requests per agent (from
apiserver_request_total and from the agents' nodehook_api_requests_total), watch bytes per change
per agent (apiserver_watch_events_sizes), the agents' CPU and RSS, and readiness times.

  test/bench/fleet_sim.py                       # 100 agents, 2,000 objects, 50 changes/s for 300 s
  test/bench/fleet_sim.py --sharded             # objects labelled per node, each agent selects its own
  test/bench/fleet_sim.py --compare-strategies  # rollout + API restart + 60 s of changes per list strategy
  test/bench/fleet_sim.py --smoke               # 5 agents, 100 objects, 10 s of changes: fails only when broken

--write-docs puts the tables into docs/benchmarks.md ("Fleet simulation (issue 11)"), replacing
only this kind of run. Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER (or the default build paths).
Exit 1 when an agent never gets ready or never handles a change; timings never fail a run."""

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import fleet_scenarios as sc
from fleet_apiserver import ApiServer
from fleet_nodes import Fleet
from fleet_report import REPO, run_markdown, write_section

STRATEGIES = ("paginated", "watch_cache", "streaming")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--agents", type=int, default=100)
    p.add_argument("--objects", type=int, default=2000)
    p.add_argument("--spread", type=float, default=60.0, help="rollout: restarts spread over this many seconds")
    p.add_argument("--rate", type=float, default=50.0, help="changes per second")
    p.add_argument("--duration", type=float, default=300.0, help="seconds of changes")
    p.add_argument("--rest", type=float, default=60.0, help="seconds of rest measured at the end (0: none)")
    p.add_argument("--list-strategy", default="streaming", choices=STRATEGIES,
                   help="passed to every agent as NODEHOOK_LIST_STRATEGY")
    p.add_argument("--sharded", action="store_true",
                   help="label each object with one node; each agent selects only its own")
    p.add_argument("--hooks", default="delete", help="reasons with a /bin/true hook (delete is always one)")
    p.add_argument("--compare-strategies", action="store_true",
                   help="per list strategy: first start, rollout, API restart, --duration (default 60 s) of changes")
    p.add_argument("--smoke", action="store_true", help="5 agents, 100 objects, 10 s of changes, 5 s spread")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--timeout", type=float, default=300.0, help="seconds an agent may take to get ready or handle a change")
    p.add_argument("--log-level", default="info")
    p.add_argument("--keep", action="store_true", help="keep the work directory (logs, state files)")
    p.add_argument("--json", type=Path, help="also write every figure here")
    p.add_argument("--write-docs", action="store_true", help="write the tables into docs/benchmarks.md")
    args = p.parse_args(argv)
    if args.smoke:
        args.agents, args.objects, args.spread, args.duration, args.rest = 5, 100, 5.0, 10.0, 0.0
        args.rate = min(args.rate, 20.0)
    elif args.compare_strategies and "--duration" not in " ".join(argv):
        args.duration = 60.0
    return args


def binary():
    path = Path(os.environ.get("NODEHOOK_BIN", REPO / "build/agent/app/nodehook"))
    if not path.exists():
        sys.exit(f"{path} does not exist: build first or set NODEHOOK_BIN")
    return path


def has_list_strategies():
    """Whether this binary has tuning.list_strategy (and, from the same change, `{node}` selectors)."""
    out = subprocess.run([str(binary()), "run", "--help"], capture_output=True, text=True).stdout
    return "--list-strategy" in out


def supports_strategy(strategy):
    """Today's agent lists with pagination and has no knob: only "paginated" means anything."""
    return strategy == "paginated" or has_list_strategies()


def one_run(args, strategy, work, scenarios):
    """Runs the scenarios on a fresh API server and fleet; returns the list of figures."""
    (work / "cluster").mkdir(parents=True)
    server = ApiServer(work / "cluster")
    hooks = sorted({"delete", *filter(None, args.hooks.split(","))})
    sharded = args.sharded and ("template" if has_list_strategies() else "literal")
    fleet = Fleet(args.agents, work, server.kubeconfig, binary(), hooks, sharded, strategy, args.log_level)
    pool = ThreadPoolExecutor(4)
    objects = sc.Objects(server.writer, [a.node for a in fleet.agents], args.objects, args.sharded, pool)
    results = []
    try:
        t0 = time.time()
        objects.create_all(marker_rounds=4)
        print(f"[{strategy}] {args.objects} objects created in {time.time() - t0:.1f}s", flush=True)
        for name in scenarios:
            objects.writer = server.writer  # a restarted server has a new writer
            results.append(run_scenario(name, args, server, fleet, objects))
            print(f"[{strategy}] {json.dumps(results[-1])}", flush=True)
    finally:
        fleet.stop()
        server.stop()
        pool.shutdown()
    return results


def run_scenario(name, args, server, fleet, objects):
    if name == "first":
        return sc.first_start(server, fleet, objects, args.timeout)
    if name == "rollout":
        return sc.rollout(server, fleet, objects, args.spread, args.seed, args.timeout)
    if name == "restart":
        return sc.api_restart(server, fleet, objects, args.timeout)
    if name == "changes":
        return sc.changes(server, fleet, objects, args.rate, args.duration, args.seed, args.timeout)
    return sc.rest(server, fleet, args.rest)


def command_line(argv):
    """The command as the docs show it: without where this run wrote its JSON or kept its logs."""
    shown, skip = [], False
    for a in argv:
        if skip or a == "--keep" or a.startswith("--json="):
            skip = False
            continue
        if a == "--json":
            skip = True
            continue
        shown.append(shlex.quote(a))
    return " ".join(["test/bench/fleet_sim.py", *shown])


def main(argv):
    args = parse_args(argv)
    scenarios = ["first", "rollout", "restart", "changes"] + (["rest"] if args.rest > 0 else [])
    strategies = STRATEGIES if args.compare_strategies else (args.list_strategy,)
    work = Path(tempfile.mkdtemp(prefix="nodehook-fleet-"))
    runs, failed = [], None
    for strategy in strategies:
        if not supports_strategy(strategy):
            print(f"[{strategy}] skipped: this nodehook has no tuning.list_strategy knob", flush=True)
            continue
        try:
            results = one_run(args, strategy, work / strategy, scenarios)
        except RuntimeError as e:  # an agent never ready, or a change never handled
            failed = f"[{strategy}] {e}"
            print(failed, file=sys.stderr, flush=True)
            break
        runs.append({"strategy": strategy, "scenarios": results, "args": vars(args) | {"json": None},
                     "ended": time.time(), "command": command_line(argv)})
    if args.json:
        args.json.write_text(json.dumps(runs, indent=2))
    if args.write_docs and runs and not failed:
        write_docs(args, runs)
    if args.keep or failed:
        print(f"work directory (logs, state files): {work}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def write_docs(args, runs):
    doc = REPO / "docs/benchmarks.md"
    if args.compare_strategies:
        key, title = "strategies", "List strategies compared"
    elif args.smoke:
        key, title = "smoke", "Smoke run"
    else:
        key, title = ("sharded", "Sharded by node label") if args.sharded else ("full", "Every agent watches every object")
    for run in runs:
        run["title"] = f"{title}: `{run['strategy']}`" if args.compare_strategies else title
    markdown = "\n".join(run_markdown(run) for run in runs)
    skipped = [s for s in STRATEGIES if args.compare_strategies and s not in {r["strategy"] for r in runs}]
    if skipped:
        markdown += f"\nNot run (this nodehook has no `tuning.list_strategy` knob yet): {', '.join(skipped)}.\n"
    write_section(doc, key, markdown)
    print(f"wrote {doc}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
