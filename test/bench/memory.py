"""Benchmark: the agent's memory (RSS) against the number of objects it watches (issue 11).

One command, one API server. For 0 (idle), 1,000, 5,000 and 10,000 widgets (created in that
order, so each step adds objects), a fresh agent with a fresh state file and a /bin/true create
hook handles every object, sits idle, and its VmRSS (now), VmHWM (peak) and thread count are read
from /proc, with the CPU it used in the second half of its idle time (ms per second; 10 ms
resolution, so use --idle-seconds 60 or more for that figure). Then that agent stops and a
new one starts on the same state file with the largest count: "restart" is its RSS as soon as it has listed and looked at every object (its queue empty
after the first list), with the peak of that start; "restart+idle" the same after sitting idle.

Writes JSON and CSV (one row per measurement: objects, phase, rss_kib, peak_kib, anon_kib,
file_kib, threads, idle_cpu_ms_per_s) for plots of memory against object count, and prints a table. RSS is
anonymous memory (the agent's data and allocator) plus resident pages of mapped files (the
binary and its shared libraries); the JSON also holds the largest mappings of each sample.

With --failing the hook is /bin/false with `max_retries: 1`: every object's create handler
fails once and gives up, so the agent also holds a failing handler's progress for each object
(what /v1/objects and the node condition report), the memory of a node where a hook is broken.

usage: python3 test/bench/memory.py [--counts 0,1000,5000,10000] [--idle-seconds 10] [--failing]
                                    [--out build/bench/memory] [--label NAME] [--tuning JSON]
Needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER (as test/run-tests.sh sets them) or the default paths.
"""

import argparse
import concurrent.futures
import csv
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "test" / "e2e"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cluster import stop_agent, widget_cluster  # noqa: E402
from idle_rss import proc_status  # noqa: E402
from kube import Kube, Widgets, create_namespace  # noqa: E402

DEADLINE_SECONDS = 900


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metric(port, name):
    """The sum of a metric's samples on the agent's /metrics, or None before it answers."""
    try:
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    except OSError:
        return None
    total = None
    for line in text.splitlines():
        if line.startswith(name + " ") or line.startswith(name + "{"):
            total = (total or 0.0) + float(line.rsplit(" ", 1)[1])
    return total


class Agent:
    def __init__(self, nodehook, work, kubeconfig, state_dir, tuning, failing):
        self.port = free_port()
        hook = {"argv": ["/bin/false"], "max_retries": 1} if failing else {"argv": ["/bin/true"]}
        config = {
            "node_name": "bench-node", "state_file": str(state_dir / "state.db"),
            "api": {"kubeconfig": kubeconfig},
            "resources": [{"group": "example.com", "version": "v1", "plural": "widgets",
                           "hooks": {"create": hook}}],
            "tuning": {"health_address": f"127.0.0.1:{self.port}", "admin_address": "", **tuning},
        }
        state_dir.mkdir(parents=True, exist_ok=True)
        config_path = state_dir / "config.json"
        config_path.write_text(json.dumps(config))
        self.log_path = state_dir / f"agent-{time.monotonic_ns()}.log"
        self.proc = subprocess.Popen([nodehook, "run", "--config", str(config_path)],
                                     stderr=open(self.log_path, "wb"))

    def wait(self, predicate, what):
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not predicate():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                sys.exit(f"agent: {what} did not happen; see {self.log_path}")
            time.sleep(0.2)  # polling the agent's log and metrics, with a deadline

    def log_count(self, text):
        return self.log_path.read_text().count(text)

    def settled(self, objects):
        """Every object was queued after the list, and nothing is queued or running any more."""
        if (metric(self.port, "nodehook_queue_adds_total") or 0) < objects:
            return False
        depth = metric(self.port, "nodehook_queue_depth")
        running = metric(self.port, "nodehook_queue_work_in_progress")
        return depth == 0 and running == 0

    def cpu_seconds(self):
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime

    def sample_idle(self, objects, phase, seconds):
        """A sample after sitting idle for `seconds`, with the CPU it used in their second half (ms
        per s; the first half still holds the tail of the work, e.g. the first /v1/objects read)."""
        time.sleep(seconds / 2)  # measuring idle memory and CPU: the agent must sit idle for a while
        before = self.cpu_seconds()
        time.sleep(seconds / 2)  # as above
        row = self.sample(objects, phase)
        row["idle_cpu_ms_per_s"] = round((self.cpu_seconds() - before) * 1000 / (seconds / 2), 2)
        return row

    def sample(self, objects, phase):
        status = proc_status(self.proc.pid)
        kib = lambda key: int(status[key].split()[0])  # noqa: E731
        return {"objects": objects, "phase": phase, "rss_kib": kib("VmRSS"), "peak_kib": kib("VmHWM"),
                "anon_kib": kib("RssAnon"), "file_kib": kib("RssFile"), "threads": int(status["Threads"]),
                "mappings": resident_by_mapping(self.proc.pid)}


def resident_by_mapping(pid, top=8):
    """KiB resident per mapped file (and "[anon]", "[heap]", "[stack]"), the largest first."""
    resident, name = {}, "[anon]"
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        fields = line.split()
        if "-" in fields[0] and ":" not in fields[0]:  # a mapping's header: range perms offset dev inode [path]
            name = Path(fields[5]).name if len(fields) > 5 and fields[5].startswith("/") else \
                (fields[5] if len(fields) > 5 else "[anon]")
        elif fields[0] == "Rss:":
            resident[name] = resident.get(name, 0) + int(fields[1])
    return dict(sorted(resident.items(), key=lambda kv: -kv[1])[:top])


def create_widgets(widgets, start, end):
    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda i: widgets.create(f"w{i:05d}", {"size": i, "payload": "x" * 200}), range(start, end)))


def run(args, nodehook, work, kubeconfig):
    kube = Kube(kubeconfig)
    create_namespace(kube, "bench")
    widgets = Widgets(kube, "bench")
    rows, created, agent = [], 0, None
    try:
        for count in args.counts:
            create_widgets(widgets, created, count)
            created = count
            stop_agent(agent and agent.proc)
            agent = Agent(nodehook, work, kubeconfig, work / f"state-{count}", args.tuning, args.failing)
            done = 'event="hook failed permanently"' if args.failing else 'event="hook succeeded"'
            agent.wait(lambda: agent.log_count(done) >= count and agent.settled(count), f"handling {count} creates")
            rows.append(agent.sample_idle(count, "idle", args.idle_seconds))
            print(rows[-1], flush=True)
        stop_agent(agent.proc)
        agent = Agent(nodehook, work, kubeconfig, work / f"state-{created}", args.tuning, args.failing)
        agent.wait(lambda: agent.settled(created), "the first list after a restart")
        rows.append(agent.sample(created, "restart"))
        print(rows[-1], flush=True)
        rows.append(agent.sample_idle(created, "restart+idle", args.idle_seconds))
        print(rows[-1], flush=True)
    finally:
        stop_agent(agent and agent.proc)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--counts", default="0,1000,5000,10000",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--idle-seconds", type=float, default=10.0)
    parser.add_argument("--failing", action="store_true",
                        help="a hook that fails once and gives up: each object keeps a failing handler")
    parser.add_argument("--out", default=str(REPO / "build" / "bench" / "memory"),
                        help="writes OUT.json and OUT.csv")
    parser.add_argument("--label", default="nodehook", help="names this run in the output (e.g. before/after)")
    parser.add_argument("--tuning", default="{}", type=json.loads,
                        help='tuning knobs for the agent as JSON, e.g. \'{"list_strategy": "streaming"}\'')
    args = parser.parse_args()
    nodehook = os.environ.get("NODEHOOK_BIN", str(REPO / "build/agent/app/nodehook"))
    with widget_cluster() as (work, kubeconfig):
        rows = run(args, nodehook, work, kubeconfig)
    for row in rows:
        row["label"] = args.label
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json").write_text(json.dumps({"label": args.label, "binary": nodehook, "rows": rows}, indent=1))
    with open(f"{out}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=["label", "objects", "phase", "rss_kib", "peak_kib", "anon_kib",
                                               "file_kib", "threads", "idle_cpu_ms_per_s"], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    print(f"\n{'objects':>8} {'phase':<13} {'RSS MiB':>8} {'peak MiB':>9} {'anon MiB':>9} {'file MiB':>9} "
          f"{'threads':>8} {'idle CPU ms/s':>14}")
    for r in rows:
        idle_cpu = f"{r['idle_cpu_ms_per_s']:.2f}" if "idle_cpu_ms_per_s" in r else "-"
        print(f"{r['objects']:>8} {r['phase']:<13} {r['rss_kib'] / 1024:>8.1f} {r['peak_kib'] / 1024:>9.1f} "
              f"{r['anon_kib'] / 1024:>9.1f} {r['file_kib'] / 1024:>9.1f} {r['threads']:>8} {idle_cpu:>14}")
    print(f"wrote {out}.json and {out}.csv")


if __name__ == "__main__":
    main()
