#!/usr/bin/env python3
"""Crash loop: the proof that SIGKILL at any moment loses no work and repeats no finished work.

One agent runs against the real API server while a writer keeps changing widgets (spec updates,
creates, deletes; every change carries a value never used before, spec.crashv) and a slow hook
(test/e2e/hooks/slow-record-hook) records each run's start, end and the values it saw. The agent
is SIGKILLed after a random (seeded) delay and started again, over and over. Then the writer
stops, the agent runs once more until it has settled, and `check` judges the records:

- the state file passes PRAGMA integrity_check;
- every live widget's last hook run saw its final value, was stored, and the diffbase holds it;
- every deleted widget that any hook ran for got a stored delete run as its last run, and no row;
- no change whose hook run was stored ran again, and no two runs of one object overlapped. A run
  not yet stored when the agent was killed may run again (at-least-once): an "in-flight repeat".

What was stored is read from the state file after each life (the agent dead), what ran from the
hook's own records; never from the agent's log (see crash_oracle.py for the exact rules).

Used by test/e2e/test_crash_safety.py (200 kills) and run by hand as the long benchmark:

    test/bench/crash_loop.py --kills 10000 [--seed N] [--objects 8] [--json FILE]

(needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER like the e2e tests; starts its own API server).
"""

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
import types
from dataclasses import dataclass
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))

from conftest import SLOW_RECORD_HOOK, Agent, Cluster, wait_until  # noqa: E402
from kube import Widgets, create_namespace  # noqa: E402

import crash_oracle  # noqa: E402


class Writer(threading.Thread):
    """Keeps about `objects` widgets changing until stopped: mostly spec updates, some deletes
    and creates. Owns `live` (name -> uid, value) and `deleted` (uid -> name); read them only
    after stop()."""

    def __init__(self, widgets, objects, rng, pause=(0.01, 0.05)):
        super().__init__(daemon=True)
        self.widgets, self.objects, self.rng, self.pause = widgets, objects, rng, pause
        self.live, self.deleted = {}, {}
        self.counts = {"create": 0, "update": 0, "delete": 0}
        self.error = None
        self._stop_event = threading.Event()
        self._values = iter(range(1, 1 << 62))
        self._names = iter(range(1, 1 << 62))

    @property
    def changes(self):
        return sum(self.counts.values())

    def create(self):
        name, value = f"obj-{next(self._names)}", next(self._values)
        created = self.widgets.create(name, {"crashv": value})
        self.live[name] = {"uid": created["metadata"]["uid"], "value": value}
        self.counts["create"] += 1

    def step(self):
        roll = self.rng.random()
        if len(self.live) < self.objects and (roll < 0.1 or len(self.live) <= self.objects // 2):
            self.create()
        elif len(self.live) > self.objects // 2 and roll < 0.2:
            name = self.rng.choice(sorted(self.live))
            self.widgets.delete(name)
            self.deleted[self.live.pop(name)["uid"]] = name
            self.counts["delete"] += 1
        else:
            name = self.rng.choice(sorted(self.live))
            value = next(self._values)
            self.widgets.patch_spec(name, {"crashv": value})
            self.live[name]["value"] = value
            self.counts["update"] += 1

    def run(self):
        try:
            while not self._stop_event.is_set():
                self.step()
                self._stop_event.wait(self.rng.uniform(*self.pause))
        except Exception as e:  # surfaced by stop()
            self.error = e

    def stop(self):
        self._stop_event.set()
        self.join(timeout=60)
        if self.error:
            raise self.error


@dataclass
class Life:
    """One start of the agent."""
    number: int
    pid: int
    log_path: Path
    delay: float = 0.0          # seconds between start and SIGKILL
    killed: bool = False
    exited_by_itself: int = None  # exit code if the agent died before the kill (a bug)
    stored: dict = None         # the state file once this life was over (crash_oracle.snapshot)


def run_log_of(agent):
    return agent.dir / "runs.txt"


def make_crash_agent(make, node="node-crash", hook_ms=(20, 100), workers=2):
    """An agent with slow-record-hook for create, update and delete. `make` is conftest's
    make_agent or a function with the same arguments."""
    agent = make(node, hook=SLOW_RECORD_HOOK, workers=workers)
    agent.env.update(E2E_RUN_LOG=str(run_log_of(agent)), E2E_HOOK_MIN_MS=str(hook_ms[0]),
                     E2E_HOOK_MAX_MS=str(hook_ms[1]))
    return agent


def kill_loop(agent, kills, rng, delay=(0.05, 0.5), progress=None):
    """Starts the agent and SIGKILLs it after a random delay, `kills` times, reading the state
    file after each death. Returns the lives."""
    lives = []
    with open(agent.dir / "kills.txt", "a") as kill_log:
        for number in range(1, kills + 1):
            agent.env["E2E_AGENT_LIFE"] = str(number)
            agent.start()
            life = Life(number, agent.proc.pid, agent.log_path, delay=rng.uniform(*delay))
            time.sleep(life.delay)
            life.exited_by_itself = agent.proc.poll()
            agent.kill()
            life.killed = life.exited_by_itself is None
            life.stored = crash_oracle.snapshot(agent.state_file, agent.node)
            lives.append(life)
            kill_log.write(f"life {number} pid {life.pid} delay_ms {life.delay * 1000:.0f} "
                           f"exited_by_itself {life.exited_by_itself}\n")
            if progress and number % progress == 0:
                print(f"crash loop: {number}/{kills} kills", file=sys.stderr, flush=True)
    return lives


def final_life(agent, widgets, number):
    """Starts the agent once more with one worker, lets it settle and stops it with SIGTERM.
    Returns the Life (killed=False, with the state file after the stop) and the exit code."""
    agent.env.update(E2E_AGENT_LIFE=str(number), NODEHOOK_WORKERS="1")
    agent.start()
    life = Life(number, agent.proc.pid, agent.log_path)
    # The sentinel must come after the relist's work in the FIFO queue: a sentinel created before
    # the list would be queued ahead of the tombstones found missing from it.
    wait_until(lambda: agent.log_events("listed"), f"the final agent to list (log: {agent.log_path})")
    agent.settle(widgets)
    exit_code = agent.stop()
    life.stored = crash_oracle.snapshot(agent.state_file, agent.node)
    return life, exit_code


def check(agent, writer, lives):
    """Judges a finished crash loop (agent stopped): see crash_oracle."""
    runs = crash_oracle.read_runs(run_log_of(agent))
    snapshots = {life.number: life.stored for life in lives}
    return crash_oracle.check(agent.state_file, agent.node, runs, snapshots, writer, lives)


def save_for_analysis(agent, writer, lives):
    """What `check` needs besides the agent's files, so a finished loop can be judged again."""
    (agent.dir / "loop.json").write_text(json.dumps({
        "live": writer.live, "deleted": writer.deleted, "counts": writer.counts,
        "lives": [{**life.__dict__, "log_path": str(life.log_path)} for life in lives]}))


def analyze(directory, node="node-crash"):
    """Judges a finished loop again from its directory (the agent's dir with loop.json)."""
    saved = json.loads((directory / "loop.json").read_text())
    writer = types.SimpleNamespace(live=saved["live"], deleted=saved["deleted"], counts=saved["counts"],
                                   changes=sum(saved["counts"].values()))
    lives = [Life(**{**life, "log_path": Path(life["log_path"])}) for life in saved["lives"]]
    agent = types.SimpleNamespace(dir=directory, node=node, state_file=directory / "state.db")
    return check(agent, writer, lives)


def run_crash_loop(agent, widgets, kills, seed, objects=8, delay=(0.05, 0.5), progress=None):
    """The whole proof: writer + kill loop + final settled life + check. Returns the Verdict."""
    rng = random.Random(seed)
    writer = Writer(widgets, objects, random.Random(seed + 1))
    for _ in range(objects):
        writer.create()
    started = time.monotonic()
    writer.start()
    try:
        lives = kill_loop(agent, kills, rng, delay, progress)
    finally:
        writer.stop()
    last, exit_code = final_life(agent, widgets, kills + 1)
    save_for_analysis(agent, writer, lives + [last])
    verdict = check(agent, writer, lives + [last])
    verdict.figures.update(seed=seed, final_exit_code=exit_code, seconds=round(time.monotonic() - started, 1))
    if exit_code != 0:
        verdict.problems.append(f"final agent exited {exit_code} on SIGTERM")
    return verdict


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kills", type=int, default=200)
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--objects", type=int, default=8)
    parser.add_argument("--min-delay-ms", type=int, default=50)
    parser.add_argument("--max-delay-ms", type=int, default=500)
    parser.add_argument("--dir", type=Path, help="work directory (default: a new temporary one)")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    parser.add_argument("--analyze", type=Path, metavar="AGENT_DIR",
                        help="only judge a finished loop again (the agent's directory, with loop.json)")
    args = parser.parse_args()
    if args.analyze:
        verdict = analyze(args.analyze)
        print(json.dumps(verdict.figures, indent=2))
        for problem in verdict.problems:
            print("PROBLEM:", problem, file=sys.stderr)
        return 1 if verdict.problems else 0
    work = args.dir or Path(tempfile.mkdtemp(prefix="crash-loop-"))
    print(f"crash loop: seed {args.seed}, {args.kills} kills, work dir {work}", file=sys.stderr)
    (work / "cluster").mkdir(parents=True, exist_ok=True)
    cluster = Cluster(work / "cluster")
    try:
        namespace = f"crash-{os.getpid()}"
        create_namespace(cluster.kube, namespace)
        widgets = Widgets(cluster.kube, namespace)

        def make(node, reasons=("create", "update", "delete"), hook=None, **tuning):
            return Agent(node, work / node, cluster, namespace, reasons, tuning, hook=hook)
        agent = make_crash_agent(make)
        try:
            verdict = run_crash_loop(agent, widgets, args.kills, args.seed, args.objects,
                                     (args.min_delay_ms / 1000, args.max_delay_ms / 1000),
                                     progress=max(1, args.kills // 20))
        finally:
            agent.kill()
    finally:
        cluster.stop()
    print(json.dumps(verdict.figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(verdict.figures, indent=2) + "\n")
    for problem in verdict.problems:
        print("PROBLEM:", problem, file=sys.stderr)
    return 1 if verdict.problems else 0


if __name__ == "__main__":
    sys.exit(main())
