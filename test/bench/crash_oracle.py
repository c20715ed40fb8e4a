"""The crash loop's oracle: judges what the hooks ran against what the state file stored.

Two sources, both exact, never the agent's log (a SIGKILL can fall between a commit and its log
line, so the log's timing cannot say what was stored):

- what ran: test/e2e/hooks/slow-record-hook's own lines (start/overlap, done; the value it was
  given on stdin, and on update the diffbase it was given as old state);
- what was stored: the state file, opened read-only with sqlite3 after each life of the agent,
  once the process is dead (a snapshot per life), and after the final settled life.

A run is *stored* when the state file shows its result while nothing but that run could have put
it there. Within one life the runs of an object are sequential (one object is never handled by
two hooks at once), so:

- create/update with value v: stored iff a later observation in the same life shows diffbase v
  (the old state given to a later update of the object in that life, or the life's final
  snapshot) and no later run of v came before that observation. Values only move forward, so v
  seen later means the last run of v before it stored it;
- delete: stored iff it is the object's last run in its life and the life's snapshot has no row
  of the object left (its handler row was written before the hook started, and only the delete's
  Forget removes it).
"""

import json
import sqlite3
from collections import defaultdict
from dataclasses import dataclass, field

SENTINEL_PREFIX = "sentinel-"
HANDLED = ("create", "update")


@dataclass
class Run:
    """One hook run, from slow-record-hook's lines; `order` and `done_line` are line numbers
    in the run log, so they order starts and ends in time."""
    order: int
    reason: str
    uid: str
    value: str                  # spec.crashv given on stdin; "cut" for a cut-off stdin
    old: str                    # spec.crashv of the old state (on update: the stored diffbase)
    life: int
    hook_pid: int
    name: str
    overlapped: bool = False    # another run of the object still held its lock at the start
    done_line: int = None
    stored: bool = False

    @property
    def done(self):
        return self.done_line is not None

    @property
    def change(self):
        return (self.uid, self.reason, self.value)


def read_runs(run_log):
    """Every hook run in start order; a "done" line closes the open start of the same hook."""
    runs, open_runs = [], {}
    if not run_log.exists():
        return runs
    for number, line in enumerate(run_log.read_text().splitlines()):
        kind, reason, uid, value, old, life, _agent_pid, hook_pid, _retry, key = line.split()
        ident = (life, hook_pid, reason, uid)
        if kind in ("start", "overlap"):
            run = Run(number, reason, uid, value, old, int(life) if life != "-" else 0, int(hook_pid),
                      key.split("/", 1)[1], overlapped=kind == "overlap")
            runs.append(run)
            open_runs[ident] = run
        elif ident in open_runs:
            open_runs.pop(ident).done_line = number
    return runs


def snapshot(state_file, node):
    """What the state file holds for `node`: {"objects": uid -> spec.crashv of the diffbase,
    "handlers": uid -> [handler, ...]}. Read-only; call it only while no agent runs. An agent
    killed before it created the file, or before its first migration committed, stored nothing."""
    objects, handlers = [], []
    if state_file.exists():
        with sqlite3.connect(f"file:{state_file}?mode=ro", uri=True) as db:
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if "objects" in tables:  # created with "handlers" in one transaction
                objects = db.execute("SELECT uid, essence FROM objects WHERE node = ?", (node,)).fetchall()
                handlers = db.execute("SELECT uid, handler FROM handlers WHERE node = ?", (node,)).fetchall()
    rows = {"objects": {uid: str(json.loads(essence).get("spec", {}).get("crashv")) for uid, essence in objects},
            "handlers": defaultdict(list)}
    for uid, handler in handlers:
        rows["handlers"][uid].append(handler)
    rows["handlers"] = dict(rows["handlers"])
    return rows


def pending_handlers(state_file, node):
    """(uid, handler, last_outcome) of every progress row left for this node."""
    with sqlite3.connect(f"file:{state_file}?mode=ro", uri=True) as db:
        return db.execute("SELECT uid, handler, last_outcome FROM handlers WHERE node = ?", (node,)).fetchall()


def integrity(state_file):
    with sqlite3.connect(f"file:{state_file}?mode=ro", uri=True) as db:
        return [row[0] for row in db.execute("PRAGMA integrity_check")]


def mark_stored(runs, snapshots):
    """Sets Run.stored (see the module docstring). `snapshots`: life number -> snapshot()."""
    by_life_uid = defaultdict(list)
    for run in runs:
        by_life_uid[(run.life, run.uid)].append(run)
    for (life, uid), mine in by_life_uid.items():
        at_end = snapshots[life]

        def stored_by(value, before):
            # The diffbase showed `value` before run number `before`: the last create/update
            # with that value stored it (an earlier one with the same value did not, or the
            # later one is a repeat of a stored change, which the duplicate check reports).
            for run in reversed(mine[:before]):
                if run.reason in HANDLED and run.value == value:
                    run.stored = True
                    return

        for i, run in enumerate(mine):
            if run.reason == "update":
                stored_by(run.old, i)
        stored_by(at_end["objects"].get(uid), len(mine))
        last = mine[-1]
        if last.reason == "delete" and uid not in at_end["objects"] and uid not in at_end["handlers"]:
            last.stored = True


@dataclass
class Verdict:
    figures: dict
    problems: list = field(default_factory=list)


def check(state_file, node, runs, snapshots, writer, lives):
    """Judges a finished crash loop (agent stopped). `runs` from read_runs, `snapshots` per life
    (the last one after the final, settled life), `writer` with live/deleted/values/counts/changes.
    Returns the figures and every problem."""
    mark_stored(runs, snapshots)
    runs = [r for r in runs if not r.name.startswith(SENTINEL_PREFIX)]
    final = snapshots[max(snapshots)]
    problems = []

    checked = integrity(state_file)
    if checked != ["ok"]:
        problems.append(f"integrity_check: {checked[:5]}")

    for run in [r for r in runs if r.stored and not r.done][:10]:
        problems.append(f"stored before its hook finished: {run.reason} of {run.name} value {run.value} in life {run.life}")
    for run in [r for r in runs if r.overlapped][:10]:
        problems.append(f"overlap: {run.reason} of {run.name} started in life {run.life} while another run held its lock")

    # No change whose run was stored runs again, and nothing runs after a stored delete;
    # unstored runs (in flight at a kill) may run again.
    duplicates, inflight_repeats, seen, deleted_at = [], 0, defaultdict(list), {}
    for run in runs:
        earlier = seen[run.change]
        if any(e.stored for e in earlier) or run.uid in deleted_at:
            duplicates.append(run)
        elif earlier:
            inflight_repeats += 1
        earlier.append(run)
        if run.reason == "delete" and run.stored:
            deleted_at[run.uid] = run
    for run in duplicates[:10]:
        problems.append(f"duplicate: {run.reason} of {run.name} ({run.uid}) value {run.value} ran again in "
                        f"life {run.life} after a stored run")

    by_uid = defaultdict(list)
    for run in runs:
        by_uid[run.uid].append(run)
    for name, obj in writer.live.items():
        mine = by_uid.get(obj["uid"], [])
        last = mine[-1] if mine else None
        value = str(obj["value"])
        if not last or last.reason not in HANDLED or last.value != value or not last.stored:
            problems.append(f"{name}: final value {value} not handled; last run: {last}")
        if final["objects"].get(obj["uid"]) != value:
            problems.append(f"{name}: stored diffbase has {final['objects'].get(obj['uid'])}, final value is {value}")

    # Every deleted object that any hook ran for gets a stored delete run, as its last run.
    missed_deletes_after_inflight = 0
    for uid, name in writer.deleted.items():
        mine = by_uid.get(uid, [])
        if mine and uid not in deleted_at:
            handled = [r for r in mine if r.reason in HANDLED and r.stored]
            if not handled:
                missed_deletes_after_inflight += 1
            last = handled[-1] if handled else mine[-1]
            problems.append(f"{name} ({uid}): deleted, but no stored delete run after its last "
                            f"{'stored ' if handled else ''}{last.reason} (value {last.value})")
        if uid in final["objects"]:
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
        "overlapping_runs": sum(1 for r in runs if r.overlapped),
        "deleted_after_unstored_create_without_delete": missed_deletes_after_inflight,
        "runs_given_a_cut_off_object": sum(1 for r in runs if r.value == "cut"),
        "live_objects": len(writer.live),
        "deleted_objects": len(writer.deleted),
        "integrity_check": " ".join(checked[:1]),
    }
    for uid, handler, outcome in pending_handlers(state_file, node)[:10]:
        problems.append(f"{uid}: {handler} left in the state file ({outcome}) after the agent settled")
    if figures["agent_exits_before_kill"]:
        problems.append(f"{figures['agent_exits_before_kill']} agent(s) exited before the kill; see kills.txt")
    return Verdict(figures, problems)
