#!/usr/bin/env python3
"""Crash loop: the proof that SIGKILL at any moment loses no work and repeats no finished work.

One agent runs against the real API server while a writer keeps changing widgets (spec updates,
creates, deletes; every change carries a value never used before, spec.crashv) and a slow hook
(test/e2e/hooks/slow-record-hook) records each run's start, end and the value it saw. The agent
is SIGKILLed after a random (seeded) delay and started again, over and over. Then the writer
stops, the agent runs once more until it has settled, and `check` judges the records:

- the state file passes PRAGMA integrity_check;
- every live widget's last hook run saw its final value, and the stored diffbase holds it;
- every deleted widget whose create/update was stored got a delete run afterwards, and no row;
- no change whose hook run the agent had stored (logged "hook succeeded") ran again. A run the
  agent had not stored when it was killed may run again (at-least-once): an "in-flight repeat".
  The hook runs in its own process group, so it outlives a SIGKILLed agent and usually still
  writes its "done" line; "in flight" therefore means "not stored by the agent", read from the
  agent's own log.

Used by test/e2e/test_crash_safety.py (200 kills) and run by hand as the long benchmark:

    test/bench/crash_loop.py --kills 10000 [--seed N] [--objects 8] [--json FILE]

(needs NODEHOOK_BIN and NODEHOOK_TESTCLUSTER like the e2e tests; starts its own API server).
"""

import argparse
import json
import os
import random
import sqlite3
import sys
import tempfile
import threading
import time
import types
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

E2E = Path(__file__).resolve().parents[1] / "e2e"
if str(E2E) not in sys.path:
    sys.path.insert(0, str(E2E))

from conftest import SLOW_RECORD_HOOK, Agent, Cluster, parse_log_line, wait_until  # noqa: E402
from kube import Widgets, create_namespace  # noqa: E402

SENTINEL_PREFIX = "sentinel-"


class Writer(threading.Thread):
    """Keeps about `objects` widgets changing until stopped: mostly spec updates, some deletes
    and creates. Owns `live` (name -> uid, value), `deleted` (uid -> name) and `values`
    (uid -> every value it had); read them only after stop()."""

    def __init__(self, widgets, objects, rng, pause=(0.01, 0.05)):
        super().__init__(daemon=True)
        self.widgets, self.objects, self.rng, self.pause = widgets, objects, rng, pause
        self.live, self.deleted, self.values = {}, {}, defaultdict(set)
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
        self.values[created["metadata"]["uid"]].add(str(value))
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
            self.values[self.live[name]["uid"]].add(str(value))
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


@dataclass
class Run:
    """One hook run, from slow-record-hook's lines; `order` and `done_line` are line numbers
    in the run log, so they order starts and ends in time."""
    order: int
    reason: str
    uid: str
    value: str
    life: int
    hook_pid: int
    name: str
    done_line: int = None
    stored: bool = False        # the agent logged "hook succeeded" for it

    @property
    def done(self):
        return self.done_line is not None

    @property
    def change(self):
        return (self.uid, self.reason, self.value)


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
    """Starts the agent and SIGKILLs it after a random delay, `kills` times. Returns the lives."""
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
            lives.append(life)
            kill_log.write(f"life {number} pid {life.pid} delay_ms {life.delay * 1000:.0f} "
                           f"exited_by_itself {life.exited_by_itself}\n")
            if progress and number % progress == 0:
                print(f"crash loop: {number}/{kills} kills", file=sys.stderr, flush=True)
    return lives


def final_life(agent, widgets, number):
    """Starts the agent once more with one worker, lets it settle, waits for stray hooks and
    stops it with SIGTERM. Returns the Life (killed=False) and the exit code."""
    agent.env.update(E2E_AGENT_LIFE=str(number), NODEHOOK_WORKERS="1")
    agent.start()
    life = Life(number, agent.proc.pid, agent.log_path)
    # The sentinel must come after the relist's work in the FIFO queue: a sentinel created before
    # the list would be queued ahead of the tombstones found missing from it.
    wait_until(lambda: agent.log_events("listed"), f"the final agent to list (log: {agent.log_path})")
    agent.settle(widgets)
    wait_until(lambda: not unfinished_hooks(run_log_of(agent), since_life=number - 1),
               "hooks of the last killed agent to finish", timeout=60)
    return life, agent.stop()


def read_runs(run_log):
    """Every hook run in start order; a "done" line closes the open start of the same hook."""
    runs, open_runs = [], {}
    if not run_log.exists():
        return runs
    for number, line in enumerate(run_log.read_text().splitlines()):
        kind, reason, uid, value, life, _agent_pid, hook_pid, _retry, key = line.split()
        ident = (life, hook_pid, reason, uid)
        if kind == "start":
            run = Run(number, reason, uid, value, int(life) if life != "-" else 0, int(hook_pid),
                      key.split("/", 1)[1])
            runs.append(run)
            open_runs[ident] = run
        elif ident in open_runs:
            open_runs.pop(ident).done_line = number
    return runs


def unfinished_hooks(run_log, since_life):
    """Runs of lives >= since_life without a "done" line whose process still exists (older
    lives' hooks ended long ago, and their pids may belong to someone else by now)."""
    def alive(pid):
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
    return [r for r in read_runs(run_log) if r.life >= since_life and not r.done and alive(r.hook_pid)]


class AnalysisError(AssertionError):
    pass


def mark_stored(runs, lives):
    """Sets Run.stored from each life's log. Within one life the runs of one object are
    sequential, so the k-th "hook started" line for a uid is its k-th run (a kill between the
    log line and the spawn can only drop the last one)."""
    by_life = defaultdict(lambda: defaultdict(list))
    for run in runs:
        by_life[run.life][run.uid].append(run)
    for life in lives:
        runs_of_life = by_life[life.number]
        started = defaultdict(int)
        for line in life.log_path.read_text(errors="replace").splitlines():
            event = parse_log_line(line)
            name = event.get("event")
            if name not in ("hook started", "hook succeeded"):
                continue
            uid = event.get("uid")
            mine = runs_of_life[uid]
            if name == "hook started":
                started[uid] += 1
                if started[uid] <= len(mine) and mine[started[uid] - 1].reason != event.get("handler"):
                    raise AnalysisError(f"life {life.number}: run {started[uid]} of {uid} is "
                                        f"{mine[started[uid] - 1].reason}, the log says {event.get('handler')}")
            else:
                if started[uid] == 0 or started[uid] > len(mine):
                    raise AnalysisError(f"life {life.number}: hook succeeded for {uid} without a recorded run")
                mine[started[uid] - 1].stored = True
        for uid, uid_runs in runs_of_life.items():
            if len(uid_runs) > started[uid]:
                raise AnalysisError(f"life {life.number}: {len(uid_runs)} runs of {uid} but "
                                    f"{started[uid]} 'hook started' lines")


def stored_values(state_file, node):
    """uid -> spec.crashv of the stored diffbase, for this node."""
    with sqlite3.connect(f"file:{state_file}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT uid, essence FROM objects WHERE node = ?", (node,)).fetchall()
    return {uid: str(json.loads(essence).get("spec", {}).get("crashv")) for uid, essence in rows}


def pending_handlers(state_file, node):
    """(uid, handler, last_outcome) of every progress row left for this node."""
    with sqlite3.connect(f"file:{state_file}?mode=ro", uri=True) as db:
        return db.execute("SELECT uid, handler, last_outcome FROM handlers WHERE node = ?", (node,)).fetchall()


def integrity(state_file):
    with sqlite3.connect(f"file:{state_file}?mode=ro", uri=True) as db:
        return [row[0] for row in db.execute("PRAGMA integrity_check")]


@dataclass
class Verdict:
    figures: dict
    problems: list = field(default_factory=list)


def check(agent, writer, lives):
    """Judges a finished crash loop (agent stopped). Returns the figures and every problem."""
    runs = read_runs(run_log_of(agent))
    mark_stored(runs, lives)
    runs = [r for r in runs if not r.name.startswith(SENTINEL_PREFIX)]
    problems = []

    checked = integrity(agent.state_file)
    if checked != ["ok"]:
        problems.append(f"integrity_check: {checked[:5]}")

    # No change whose run was stored runs again; unstored runs (in flight at a kill) may.
    duplicates, inflight_repeats, seen = [], 0, defaultdict(list)
    for run in runs:
        earlier = seen[run.change]
        if any(e.stored for e in earlier):
            duplicates.append(run)
        elif earlier:
            inflight_repeats += 1
        earlier.append(run)
    for run in duplicates[:10]:
        problems.append(f"duplicate: {run.reason} of {run.name} ({run.uid}) value {run.value} ran again in "
                        f"life {run.life} after a stored run")

    by_uid = defaultdict(list)
    for run in runs:
        by_uid[run.uid].append(run)
    stored = stored_values(agent.state_file, agent.node)
    for name, obj in writer.live.items():
        mine = by_uid.get(obj["uid"], [])
        last = mine[-1] if mine else None
        final = str(obj["value"])
        if not last or last.reason not in ("create", "update") or last.value != final or not last.stored:
            problems.append(f"{name}: final value {final} not handled; last run: {last}")
        if stored.get(obj["uid"]) != final:
            problems.append(f"{name}: stored diffbase has {stored.get(obj['uid'])}, final value is {final}")

    # A SIGKILL while the agent writes the object to the hook's stdin leaves the hook (which
    # outlives the agent) with a cut-off object: no value, or a value the object never had.
    truncated_inputs = sum(1 for r in runs if r.value not in writer.values.get(r.uid, ()))

    missed_deletes_after_inflight = 0
    for uid, name in writer.deleted.items():
        mine = by_uid.get(uid, [])
        handled = [r for r in mine if r.reason in ("create", "update") and r.stored]
        deletes = [r for r in mine if r.reason == "delete" and r.stored]
        if handled and not any(d.order > handled[-1].order for d in deletes):
            problems.append(f"{name} ({uid}): deleted, but no delete run after its last stored "
                            f"{handled[-1].reason} (value {handled[-1].value})")
        elif not handled and not deletes and mine:
            # Its create ran but was not stored when the agent was killed; the agent stores a
            # hook's start (with the object) first, so the delete must still come.
            missed_deletes_after_inflight += 1
            problems.append(f"{name} ({uid}): deleted after a create that ran at a kill, but no delete run")
        if uid in stored:
            problems.append(f"{name} ({uid}): deleted, but the state file still has its diffbase")

    figures = {
        "kills": sum(1 for life in lives if life.killed),
        "agent_exits_before_kill": sum(1 for life in lives if life.exited_by_itself is not None),
        "changes": writer.changes, **{f"{k}s": v for k, v in writer.counts.items()},
        "hook_runs": len(runs),
        "stored_runs": sum(1 for r in runs if r.stored),
        "unstored_runs_at_kills": sum(1 for r in runs if not r.stored),
        "duplicates": len(duplicates),
        "inflight_repeats": inflight_repeats,
        "overlapping_runs_across_kills": count_overlaps(runs),
        "deleted_after_unstored_create_without_delete": missed_deletes_after_inflight,
        "runs_given_a_cut_off_object": truncated_inputs,
        "live_objects": len(writer.live),
        "deleted_objects": len(writer.deleted),
        "integrity_check": " ".join(checked[:1]),
    }
    for uid, handler, outcome in pending_handlers(agent.state_file, agent.node)[:10]:
        problems.append(f"{uid}: {handler} left in the state file ({outcome}) after the agent settled")
    if figures["agent_exits_before_kill"]:
        problems.append(f"{figures['agent_exits_before_kill']} agent(s) exited before the kill; see kills.txt")
    return Verdict(figures, problems)


def count_overlaps(runs):
    """Runs of an object that started while an earlier run of it (an orphan of a killed agent)
    had not written its "done" line yet."""
    overlaps, by_uid = 0, defaultdict(list)
    for run in runs:
        earlier = by_uid[run.uid]
        if any(e.done_line is None or e.done_line > run.order for e in earlier):
            overlaps += 1
        earlier.append(run)
    return overlaps


def save_for_analysis(agent, writer, lives):
    """What `check` needs besides the agent's files, so a finished loop can be judged again."""
    (agent.dir / "loop.json").write_text(json.dumps({
        "live": writer.live, "deleted": writer.deleted, "counts": writer.counts,
        "values": {uid: sorted(v) for uid, v in writer.values.items()},
        "lives": [{**life.__dict__, "log_path": str(life.log_path)} for life in lives]}))


def analyze(directory, node="node-crash"):
    """Judges a finished loop again from its directory (the agent's dir with loop.json)."""
    saved = json.loads((directory / "loop.json").read_text())
    writer = types.SimpleNamespace(live=saved["live"], deleted=saved["deleted"], counts=saved["counts"],
                                   values={uid: set(v) for uid, v in saved["values"].items()},
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
