"""Logs a shipper can parse. docs/logs.md lists every event the agent logs, with its keys, and
this test keeps that list equal to what the sources log (log_events.py scans them). With
--log-format json every line of a run, from the very first, is one JSON object whose numbers and
booleans are JSON numbers and booleans."""

import json
import re

from conftest import REPO, wait_until
from log_events import scan

DOC = REPO / "docs" / "logs.md"


def documented():
    """{event: set of keys} from the table in docs/logs.md."""
    events = {}
    for line in DOC.read_text().splitlines():
        m = re.match(r"\|\s*`([^`]+)`\s*\|([^|]*)\|", line)
        if m:
            keys = {k.strip() for k in m.group(2).split(",") if k.strip() and k.strip() != "-"}
            events[m.group(1)] = keys
    return events


def test_docs_list_every_logged_event_and_nothing_else():
    in_code, in_docs = set(scan()), set(documented())
    assert sorted(in_code - in_docs) == [], "logged but not in docs/logs.md"
    assert sorted(in_docs - in_code) == [], "in docs/logs.md but not logged (renamed or removed?)"


def test_docs_list_exactly_the_keys_each_event_logs():
    code, docs = scan(), documented()
    wrong = {name: {"code": sorted(e["keys"]), "docs": sorted(docs.get(name, set()))}
             for name, e in code.items() if e["keys"] != docs.get(name)}
    assert wrong == {}


def test_the_scanner_finds_events_built_at_run_time():
    events = scan()
    # a ternary of literals, a variable assigned in the function, a parameter, a concatenation
    for name in ("finalizer removed", "finalizer not removed", "hook asked to retry later", "queue: batched",
                 "<name> listening"):
        assert name in events
    assert {"object", "uid", "handler", "retries", "next"} <= events["hook failed"]["keys"]


def test_json_logs_are_json_from_the_first_line_with_typed_numbers(make_agent, widgets):
    agent = make_agent("node-json", log_format="json").start()
    widgets.create("w1", {"size": 1})
    agent.wait_for("w1", "create")
    wait_until(lambda: any('"hook succeeded"' in l for l in agent.log_path.read_text().splitlines()),
               "the hook's success line")
    agent.stop()
    lines = agent.log_path.read_text().splitlines()
    parsed = [json.loads(line) for line in lines]  # fails on any line that is not JSON
    assert parsed[0]["event"] == "orphan reaper started"
    started = next(p for p in parsed if p["event"] == "agent started")
    assert started["resources"] == 1 and started["workers"] == 1
    # The agent runs on jemalloc (agent/base/heap.h); a sanitizer build is the only one on glibc's.
    assert started["allocator"] == "jemalloc"
    chosen = next(p for p in parsed if p["event"] == "hook work directory chosen")
    assert isinstance(chosen["in_memory"], bool)
    listening = next(p for p in parsed if p["event"] == "health endpoints listening")
    assert isinstance(listening["port"], int) and listening["port"] > 0
