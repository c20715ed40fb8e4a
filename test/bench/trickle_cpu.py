#!/usr/bin/env python3
"""The agent's CPU per change at a steady rate with many objects handled, for one or more agent
binaries side by side in one run (issue 43).

compare.py's backlog drains batch their work; a node that sees a change now and then also pays
what it does per wake-up and per housekeeping tick, spread over fewer changes. For each binary
in turn (interleaved, --runs times), on one local API server with the Widget CRD: two nodehook
nodes in a fresh namespace with --objects widgets created and handled; their idle CPU over
--idle-seconds; then --rate changes/s for --seconds (each object changed at most once, as
compare.py's rate phase), with the CPU from the first change until both agents are quiet again,
per change. The hook is compare.py's (test/bench/hooks/timestamp-hook); the hook's own CPU is not
counted (the agent process's utime+stime from /proc).

  test/bench/trickle_cpu.py --bin build/agent/app/nodehook --bin /tmp/nodehook-before \\
      [--objects 3000] [--rate 100] [--seconds 10] [--runs 3] [--idle-seconds 10] [--perf DIR]

--perf DIR records both agents of each run with `perf record -g` through the rate phase into
DIR/<binary name>-<run>.data (read it with `perf report -i FILE --no-children`).

Each run also says where the CPU per change went by thread (the agent names its threads:
nh-watch-0, nh-worker-N, nh-housekeeping...; cpprest's I/O threads and the main thread keep the
process's name), from /proc/<pid>/task before and after the rate phase, summed over both nodes.

Prints a Markdown table: a row per binary and run, and the medians. Fails when an agent did not
handle every change; never on timing."""

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "e2e"))
from bench_cluster import widget_cluster  # noqa: E402
from compare_client import Api  # noqa: E402
from compare_fleet import BenchError, Fleet  # noqa: E402
from compare_phases import NAME, change_rates  # noqa: E402
from compare_systems import NodehookNode  # noqa: E402

NODES = ("node-a", "node-b")
TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def thread_cpu(pids):
    """CPU seconds by thread name (a number at its end dropped: nh-worker-2 is nh-worker), summed
    over the processes `pids`; threads that exited meanwhile are missing."""
    totals = {}
    for pid in pids:
        for task in Path(f"/proc/{pid}/task").iterdir():
            try:
                name = (task / "comm").read_text().strip()
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue  # it exited between the listing and the read
            name = name.rstrip("0123456789").rstrip("-") or name
            totals[name] = totals.get(name, 0.0) + (int(fields[11]) + int(fields[12])) / TICKS_PER_SECOND
    return totals


@contextlib.contextmanager
def perf_record(fleet, output):
    """`perf record -g` of the fleet's agents while the block runs; nothing when `output` is None."""
    if output is None:
        yield
        return
    pids = ",".join(str(node.proc.pid) for node in fleet.nodes)
    perf = subprocess.Popen(["perf", "record", "-q", "-F", "999", "-g", "-o", str(output), "-p", pids],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield
    finally:
        perf.send_signal(2)  # SIGINT: perf writes its file and exits
        perf.wait(timeout=60)


def one_run(api, work, kubeconfig, binary, namespace, args, perf_output=None):
    """Idle CPU ms/s and CPU ms per change at the rate, each the mean of the two nodes."""
    fleet = Fleet("nodehook", [NodehookNode(n, work / namespace / n, kubeconfig, namespace, binary=binary)
                               for n in NODES])
    api.create_namespace(namespace)
    names = [NAME.format(i) for i in range(args.objects)]
    try:
        marks = fleet.marks()
        fleet.start()
        fleet.wait_ready()
        api.create_widgets(namespace, names)
        fleet.wait_handled(marks, "create", names)
        fleet.wait_quiet()
        idle_before, idle_started = fleet.cpu(), time.monotonic()
        time.sleep(args.idle_seconds)  # a measuring window, not a wait for something to happen
        idle_ms_per_s = [1000 * (c - c0) / (time.monotonic() - idle_started)
                         for c, c0 in zip(fleet.cpu(), idle_before)]
        pids = [node.proc.pid for node in fleet.nodes]
        threads_before = thread_cpu(pids)
        with perf_record(fleet, perf_output):
            rates = change_rates(api, fleet, namespace, [args.rate], args.seconds, args.objects)[args.rate]
        threads_after = thread_cpu(pids)
    finally:
        fleet.stop()
    # Per change on one node: both nodes handled every change.
    per_change = len(NODES) * rates["changes"]
    by_thread = {name: round(1000 * (cpu - threads_before.get(name, 0.0)) / per_change, 3)
                 for name, cpu in sorted(threads_after.items())}
    return {"idle_ms_per_s": statistics.mean(idle_ms_per_s), "cpu_ms_per_change": statistics.mean(rates["cpu_ms_per_change"]),
            "changes": rates["changes"], "achieved_per_s": rates["achieved_per_s"], "p99_ms": rates["p99"],
            "threads_ms_per_change": {k: v for k, v in by_thread.items() if v > 0}}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", action="append", type=Path, required=True, help="an agent binary (repeat)")
    parser.add_argument("--objects", type=int, default=3000)
    parser.add_argument("--rate", type=int, default=100, help="changes/s")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=10)
    parser.add_argument("--perf", type=Path, help="record the agents with perf through each rate phase into this directory")
    args = parser.parse_args()
    for binary in args.bin:
        if not binary.is_file():
            sys.exit(f"trickle_cpu: {binary} is not a file: build it first")
    rows = []
    with widget_cluster() as (work, kubeconfig):
        api = Api(kubeconfig)
        try:
            for run in range(args.runs):
                for index, binary in enumerate(args.bin):
                    perf_output = args.perf / f"{binary.name}-{run + 1}.data" if args.perf else None
                    if args.perf:
                        args.perf.mkdir(parents=True, exist_ok=True)
                    result = one_run(api, work, kubeconfig, binary, f"trickle-{run}-{index}", args, perf_output)
                    rows.append((binary, run, result))
                    print(f"trickle_cpu: {binary} run {run + 1}: {result}", flush=True)
        except BenchError as e:
            sys.exit(f"trickle_cpu: {e} (work directory: {work})")
    print(f"\n{args.objects} objects handled, {args.rate} changes/s for {args.seconds} s, two nodes "
          f"(means of the two); load average after: {open('/proc/loadavg').read().split()[0]}\n")
    print("| binary | run | idle CPU, ms/s | CPU per change at the rate, ms | changes (achieved/s) | change → hook p99, ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for binary, run, r in rows:
        print(f"| `{binary}` | {run + 1} | {r['idle_ms_per_s']:.2f} | {r['cpu_ms_per_change']:.3f} | "
              f"{r['changes']} ({r['achieved_per_s']:.0f}) | {r['p99_ms']:.0f} |")
    for binary in args.bin:
        mine = [r for b, _, r in rows if b == binary]
        print(f"| `{binary}` | median | {statistics.median(r['idle_ms_per_s'] for r in mine):.2f} | "
              f"{statistics.median(r['cpu_ms_per_change'] for r in mine):.3f} | | |")
    names = sorted({name for _, _, r in rows for name in r["threads_ms_per_change"]})
    print("\nCPU per change by thread, ms (medians over the runs; /proc's clock ticks are 10 ms, so "
          "a thread below 0.01 shows as 0):\n")
    print("| thread | " + " | ".join(f"`{b.name}`" for b in args.bin) + " |")
    print("| --- |" + " ---: |" * len(args.bin))
    for name in names:
        cells = [statistics.median(r["threads_ms_per_change"].get(name, 0.0) for b, _, r in rows if b == binary)
                 for binary in args.bin]
        print(f"| {name} | " + " | ".join(f"{c:.3f}" for c in cells) + " |")


if __name__ == "__main__":
    main()
