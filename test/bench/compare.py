"""nodehook vs kopf 1.45.2 on the same API server, in the same run, on the same work (issue 11).

Starts one local API server with the Widget CRD and runs, one system after the other, two
nodehook nodes and two kopf nodes (see compare_systems.py) through the same phases
(compare_phases.py): backlog drains, change rates, memory against object count, a restart.
Writes results.json and the report (compare_report.py): in full mode the "nodehook vs kopf"
section of docs/benchmarks.md and its plots under docs/img/; with --smoke tiny counts, and the
report goes to a temporary directory. Fails when a system did not handle every change or the
report is missing; never on timing.

Run it through test/bench/compare.sh, which makes the venv with kopf and matplotlib."""

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "e2e"))
from bench_cluster import widget_cluster  # noqa: E402
from compare_client import Api  # noqa: E402
from compare_fleet import BenchError, Fleet  # noqa: E402
from compare_phases import backlog_drains, change_rates, idle_memory_and_restart  # noqa: E402
from compare_report import latency_plot, memory_plot, replace_section, section  # noqa: E402
from compare_systems import HOOK, KopfNode, NodehookNode  # noqa: E402

FULL = {"drain": 3000, "levels": [1000, 2000, 5000, 10000], "rates": [20, 100, 200], "rate_seconds": 10}
SMOKE = {"drain": 50, "levels": [20, 50], "rates": [20, 50], "rate_seconds": 1}
NODES = ("node-a", "node-b")


def machine():
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    mem_kib = int(next(line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines()
                       if line.startswith("MemTotal")))
    return {"nproc": os.cpu_count(), "cpu": cpu, "ram_gib": mem_kib / 2**20, "kernel": platform.release(),
            "load_before": os.getloadavg()[0]}


def versions(api, nodehook_bin):
    def git(*args):
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True).stdout.strip()
    dirty = " (with uncommitted changes)" if git("status", "--porcelain", "--", "agent", "storage") else ""
    go_mod = (REPO / "test/cluster/go.mod").read_text()
    module = next((line.split()[1] for line in go_mod.splitlines() if line.strip().startswith("k8s.io/kubernetes v")), "?")
    return {"nodehook": f"{git('rev-parse', '--short', 'HEAD')}{dirty} (`{nodehook_bin}`)", "kopf": version("kopf"),
            "python": platform.python_version(), "kubernetes": f"{api.server_version()} ({module})"}


STARTED = time.monotonic()


def _say(text):
    print(f"[{time.monotonic() - STARTED:6.1f}s] {text}", flush=True)


def run_system(api, work, kubeconfig, system, make_node, params):
    def fleet(namespace):
        return Fleet(system, [make_node(n, work / namespace / n, kubeconfig, namespace) for n in NODES])
    result = {}
    drains = fleet(f"{system}-drain")
    try:
        _say(f"{system}: backlog drains of {params['drain']} objects")
        result["drain"] = backlog_drains(api, drains, drains.nodes[0].namespace, params["drain"])
        _say(f"{system}: change rates {params['rates']}/s")
        result["rates"] = change_rates(api, drains, drains.nodes[0].namespace, params["rates"],
                                       params["rate_seconds"], params["drain"])
    finally:
        drains.stop()
    memory = fleet(f"{system}-memory")
    try:
        _say(f"{system}: memory at {[0, *params['levels']]} objects, then a restart")
        result["memory"] = idle_memory_and_restart(api, memory, memory.nodes[0].namespace, params["levels"])
    finally:
        memory.stop()
    _say(f"{system}: done")
    return result


def spawn_ceiling(program, runs):
    """Hook runs per second one core can start and wait for (test/bench/spawn_ceiling.cc): the best
    of three loops of the benchmark's hook; None when the program was not built."""
    if not program.is_file():
        _say(f"spawn ceiling: {program} not built, not measured")
        return None
    best = 0.0
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, BENCH_RECORD_FILE=str(Path(tmp) / "record"), NODEHOOK_REASON="create",
                   NODEHOOK_NAME="ceiling")
        for _ in range(3):
            out = subprocess.run([str(program), "--runs", str(runs), str(HOOK)], env=env, check=True,
                                 capture_output=True, text=True).stdout
            best = max(best, float(dict(f.split("=") for f in out.split())["per_second"]))
    _say(f"spawn ceiling: {best:.0f} hook runs/s on one core")
    return best


def measure(args, out):
    """Runs both systems through every phase on one fresh API server; returns the results."""
    nodehook = Path(os.environ.get("NODEHOOK_BIN", REPO / "build/agent/app/nodehook"))
    kopf = Path(sys.executable).parent / "kopf"
    params = dict(SMOKE if args.smoke else FULL)
    for key in ("drain", "levels", "rates", "rate_seconds"):
        if getattr(args, key) is not None:
            params[key] = getattr(args, key)
    started = time.monotonic()
    with widget_cluster() as (work, kubeconfig):
        api = Api(kubeconfig)
        results = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
                   "command": " ".join(["test/bench/compare.sh", *sys.argv[1:]]),
                   "machine": machine(), "versions": versions(api, nodehook), "params": params, "systems": {}}
        results["spawn_ceiling"] = spawn_ceiling(Path(os.environ.get("NODEHOOK_SPAWN_CEILING", "")),
                                                 200 if args.smoke else 2000)
        makers = {"nodehook": lambda *a: NodehookNode(*a, binary=nodehook), "kopf": lambda *a: KopfNode(*a, kopf=kopf)}
        try:
            for system, make_node in makers.items():
                results["systems"][system] = run_system(api, work, kubeconfig, system, make_node, params)
        except BenchError as e:
            sys.exit(f"compare: {e} (work directory: {work})")
    shutil.rmtree(work, ignore_errors=True)  # kept above when a system failed, for its logs
    results["machine"]["load_after"] = os.getloadavg()[0]
    results["minutes"] = (time.monotonic() - started) / 60
    (out / "results.json").write_text(json.dumps(results, indent=1))
    return results


def load_results(path):
    """results.json as measure() returned it (JSON made the rates' keys strings)."""
    results = json.loads(Path(path).read_text())
    for system in results["systems"].values():
        system["rates"] = {int(rate): r for rate, r in system["rates"].items()}
    return results


def write_report(results, report_dir):
    """The plots under report_dir/img and the section in report_dir/benchmarks.md; the section text."""
    (report_dir / "img").mkdir(parents=True, exist_ok=True)
    latency_plot(results, report_dir / "img/kopf-compare-latency.svg")
    memory_plot(results, report_dir / "img/kopf-compare-memory.svg")
    text = section(results, "img/kopf-compare-latency.svg", "img/kopf-compare-memory.svg")
    error = replace_section(report_dir / "benchmarks.md", text)
    if error:
        sys.exit(f"compare: {error}")
    for f in ("benchmarks.md", "img/kopf-compare-latency.svg", "img/kopf-compare-memory.svg"):
        if not (report_dir / f).stat().st_size:
            sys.exit(f"compare: {report_dir / f} is empty")
    return text


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny counts; report into a temporary directory")
    parser.add_argument("--out", type=Path, help="where results.json (and, with --smoke, the report) go")
    parser.add_argument("--docs", type=Path, default=REPO / "docs", help="full mode: where benchmarks.md is")
    numbers = lambda text: [int(n) for n in text.split(",")]  # noqa: E731
    parser.add_argument("--drain", type=int, help=f"backlog objects (full: {FULL['drain']})")
    parser.add_argument("--levels", type=numbers, help=f"object counts for memory, comma-separated (full: {FULL['levels']})")
    parser.add_argument("--rates", type=numbers, help=f"changes/s, comma-separated (full: {FULL['rates']})")
    parser.add_argument("--rate-seconds", type=int, help=f"seconds per rate (full: {FULL['rate_seconds']})")
    parser.add_argument("--from-results", type=Path, metavar="RESULTS_JSON",
                        help="measure nothing: write the report again from an earlier run's results.json")
    args = parser.parse_args()
    out = args.out or (Path(tempfile.mkdtemp(prefix="nodehook-compare-")) if args.smoke else REPO / "build/bench-compare")
    out.mkdir(parents=True, exist_ok=True)
    results = load_results(args.from_results) if args.from_results else measure(args, out)
    report_dir = out if args.smoke else args.docs
    if args.smoke:  # the smoke rewrites a copy of the real file, so the section splice is checked too
        shutil.copyfile(args.docs / "benchmarks.md", report_dir / "benchmarks.md")
    print(write_report(results, report_dir))
    print(f"compare: report in {report_dir / 'benchmarks.md'}, results in {out / 'results.json'} "
          f"({results['minutes']:.1f} min)")


if __name__ == "__main__":
    main()
