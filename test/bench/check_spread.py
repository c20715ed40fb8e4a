#!/usr/bin/env python3
"""Check spread: how a fleet's periodic checks (issue 12) are spread over time.

Starts a real API server (test/cluster), OBJECTS widgets, and AGENTS nodehook agents (distinct
node names and state files, one worker, health on 127.0.0.1:0), each with a check hook every
INTERVAL seconds (jitter_percent 10, max_concurrent_checks 1) that records its start time
(test/e2e/hooks/check-record-hook). Once every agent has created every widget, it lets them run
for SECONDS and reports, from the hooks' own records:

- fleet load: checks started per second across all agents (a fleet in step would pile them into
  a few seconds of each interval; spread checks give about AGENTS*OBJECTS/INTERVAL every second);
- per object: how many agents checked it in the same second at most (the API- or node-side
  burst one object's checks could cause);
- per agent and object: the time between two checks (INTERVAL +- jitter).

usage: test/bench/check_spread.py [--agents 20] [--objects 20] [--interval 10] [--seconds 40] [--json FILE]
Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER like the e2e tests (or the default build paths).
Wall-clock figures; on a loaded machine they are upper bounds for the spread's noise.
"""

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))

from bench_cluster import e2e_cluster  # noqa: E402
from conftest import Agent, wait_until  # noqa: E402

NAMESPACE = "checks"
HOOK = E2E / "hooks" / "check-record-hook"


def runs(path, reason):
    if not path.exists():
        return []
    out = []
    for line in path.read_text().splitlines():
        r_reason, node, name, _uid, at = line.split()
        if r_reason == reason:
            out.append((node, name, float(at)))
    return out


def summary(values):
    return {"min": min(values), "median": statistics.median(values), "max": max(values),
            "mean": statistics.mean(values)} if values else {}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents", type=int, default=20)
    parser.add_argument("--objects", type=int, default=20)
    parser.add_argument("--interval", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=40.0)
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()

    names = [f"w{i:02d}" for i in range(args.objects)]
    with e2e_cluster("nodehook-checks-", NAMESPACE, names) as (work, cluster, _, agents):
        hook = {"argv": [str(HOOK)], "timeout_seconds": 20}
        hooks = {reason: dict(hook) for reason in ("create", "update", "delete")}
        hooks["check"] = dict(hook, interval_seconds=args.interval, jitter_percent=10)
        for i in range(args.agents):
            node = f"node-{i:02d}"
            files = work / node / "files"
            files.mkdir(parents=True)
            agents.append(Agent(node, work / node, cluster, NAMESPACE, (), {"max_concurrent_checks": 1}, hook=HOOK,
                                env={"CHECK_RUNS_FILE": str(work / node / "runs.txt"), "NODE_FILE_DIR": str(files)},
                                resource_options={"hooks": hooks}).start())
        for agent in agents:
            wait_until(lambda: len(runs(agent.dir / "runs.txt", "create")) >= args.objects,
                       f"{agent.node} to create every widget (log: {agent.log_path})", timeout=300)
        begin = time.time()
        time.sleep(args.seconds)  # the measurement window: checks run on their own timers meanwhile
        end = time.time()

        checks = [r for agent in agents for r in runs(agent.dir / "runs.txt", "check")]
        # Steady state only: from one interval after `begin` (first checks are at their offsets).
        window = [r for r in checks if begin + args.interval <= r[2] < end]
        per_second = collections.Counter(int(at - begin) for _, _, at in window)
        seconds = range(args.interval, int(end - begin))
        load = [per_second.get(s, 0) for s in seconds]
        same_second = collections.Counter((name, int(at)) for _, name, at in window)
        gaps = []
        by_agent_object = collections.defaultdict(list)
        for node, name, at in checks:
            by_agent_object[(node, name)].append(at)
        for times in by_agent_object.values():
            times.sort()
            gaps += [b - a for a, b in zip(times, times[1:])]
        result = {
            "agents": args.agents, "objects": args.objects, "interval_seconds": args.interval,
            "measured_seconds": len(load), "checks_measured": len(window),
            "expected_per_second": args.agents * args.objects / args.interval,
            "checks_per_second": summary(load),
            "busiest_second_over_mean": (max(load) / statistics.mean(load)) if load and statistics.mean(load) else None,
            "max_agents_checking_one_object_in_one_second": max(same_second.values()) if same_second else 0,
            "seconds_between_checks": summary(gaps),
            "checks_per_second_series": load,
        }
        s = result["checks_per_second"]
        print(f"agents={args.agents} objects={args.objects} interval={args.interval}s measured={len(load)}s "
              f"checks={len(window)} expected/s={result['expected_per_second']:.1f}")
        print(f"checks started per second: min={s['min']} median={s['median']} mean={s['mean']:.1f} max={s['max']} "
              f"(busiest/mean {result['busiest_second_over_mean']:.2f})")
        print(f"most agents checking one object in the same second: "
              f"{result['max_agents_checking_one_object_in_one_second']} of {args.agents}")
        g = result["seconds_between_checks"]
        print(f"seconds between two checks of an object on a node: min={g['min']:.2f} median={g['median']:.2f} "
              f"max={g['max']:.2f}")
        print("per second: " + " ".join(str(n) for n in load))
        if args.json:
            args.json.write_text(json.dumps(result, indent=2))
        print(f"logs: {work}")


if __name__ == "__main__":
    main()
