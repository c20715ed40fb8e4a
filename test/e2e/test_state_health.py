"""End-to-end, against the real API server: trouble with the node's state file is visible and
named (issue 21). The state lives on a small ext4 file system of its own (a loop-mounted 16 MB
image, made and removed by the test; needs root), which the test fills up:

- while the agent runs: failed writes are counted by operation, /readyz fails naming the file and
  "no space left on ..." (/healthz stays up), one Warning Event StateWritesFailing goes to this
  node's Node and one Normal StateWritesRecovered once space is back, and the retry cadence
  backs off instead of a fixed 5 s;
- before a start: refused with "no space left on ...", the same after a clean stop and a kill;
- a deleted state file is logged at warn, counted, and posted as StateFileMissing;
- a damaged file moved aside posts StateRecovered, naming where it went, not HandlerFailed.

The continue-token fallback (a 410 on a continued page) is tested against the fault-injecting
fake server (test/agent/kube/transport/fault_modes_test.cc): the test API server compacts etcd only every
5 minutes, so its continue tokens cannot be made to expire within a test."""

import contextlib
import errno
import itertools
import os
import re
import sqlite3
import subprocess
import urllib.error
import urllib.parse
import urllib.request

import pytest

from conftest import wait_until

_nodes = itertools.count(1)


def unique_node(kind):
    """Events go to the Node by name in namespace default, shared by the whole session."""
    return f"{kind}-{os.getpid()}-{next(_nodes)}"


@contextlib.contextmanager
def small_disk(tmp_path, megabytes=16):
    """A fresh ext4 file system (no blocks reserved for root) mounted on tmp_path/disk."""
    if os.geteuid() != 0:
        pytest.skip("mounting a loop file system needs root")
    image, mount_point = tmp_path / "disk.img", tmp_path / "disk"
    mount_point.mkdir()
    subprocess.run(["truncate", "-s", f"{megabytes}M", str(image)], check=True)
    subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", str(image)], check=True)
    subprocess.run(["mount", "-o", "loop", str(image), str(mount_point)], check=True)
    try:
        yield mount_point
    finally:
        if subprocess.run(["umount", str(mount_point)]).returncode != 0:
            subprocess.run(["umount", "-l", str(mount_point)], check=True)
        image.unlink()


def fill(directory):
    """Writes directory/filler until the file system refuses more; returns its path."""
    filler = directory / "filler"
    chunk = b"f" * (1 << 16)
    with open(filler, "wb", buffering=0) as f:
        try:
            while True:
                f.write(chunk)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    with open(filler, "ab", buffering=0) as f:  # the last few blocks
        try:
            while True:
                f.write(b"f" * 512)
        except OSError as e:
            assert e.errno == errno.ENOSPC, e
    return filler


def get(url):
    """(status, body) of a GET on a local endpoint."""
    try:
        with urllib.request.urlopen(url, timeout=5) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def metric_lines(agent, prefix):
    _, body = get(agent.health_url("/metrics"))
    return [line for line in body.splitlines() if line.startswith(prefix)]


def node_events(kube, node):
    """events.k8s.io/v1 Events about the Node `node` (posted to namespace default)."""
    selector = urllib.parse.quote(f"regarding.name={node}")
    listed = kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector={selector}")
    return [e for e in listed["items"] if e["regarding"].get("kind") == "Node"]


def events_with(kube, node, reason):
    return [e for e in node_events(kube, node) if e["reason"] == reason]


def store_agent(make_agent, node, state_dir, **tuning):
    state_dir.mkdir(exist_ok=True)
    return make_agent(node, state_file=str(state_dir / "state.db"), **tuning)


def retry_delays(agent, name):
    """The delays the agent chose after each failed state write for object `name`, in seconds."""
    delays = []
    for line in agent.log_events("state store write failed"):
        if line.get("object", "").endswith("/" + name):
            delays.append(float(re.search(r"in ([0-9.]+)s", line["next"]).group(1)))
    return delays


def test_a_disk_that_fills_up_while_running_shows_in_readiness_metrics_and_node_events(
        make_agent, widgets, cluster, tmp_path):
    node = unique_node("full")
    with small_disk(tmp_path) as disk:
        # A short hold, so the recovered Event follows within the test's wait.
        agent = store_agent(make_agent, node, disk / "state", retry_max_seconds=60, state_event_hold_seconds=5)
        try:
            agent.start()
            agent.settle(widgets)
            assert get(agent.health_url("/readyz"))[0] == 200
            filler = fill(disk)
            # Big objects, so the state file and its WAL must grow.
            blob = "x" * (300 * 1024)
            for i in range(12):
                widgets.create(f"big-{i}", {"blob": blob})
            wait_until(lambda: get(agent.health_url("/readyz"))[0] == 503, "/readyz 503 while writes fail")

            status, body = get(agent.health_url("/readyz"))
            state_file = str(disk / "state" / "state.db")
            assert body.startswith(f"not ready: state file {state_file}: writes failing for "), body
            assert f"no space left on {disk / 'state'} (" in body, body
            assert get(agent.health_url("/healthz"))[0] == 200  # a restart would not free the disk
            failures = wait_until(lambda: [l for l in metric_lines(agent, "nodehook_state_write_failures_total")
                                           if 'operation="RecordHandled"' in l], "a failed RecordHandled counted")
            assert f'nodehook_state_write_failing{{state_file="{state_file}"}} 1' in metric_lines(
                agent, "nodehook_state_write_failing")
            warning = wait_until(lambda: events_with(cluster.kube, node, "StateWritesFailing"),
                                 "a StateWritesFailing Event on the Node")
            assert warning[0]["type"] == "Warning" and warning[0]["reportingInstance"] == node
            assert f"state file {state_file} does not take writes" in warning[0]["note"]
            assert "no space left on" in warning[0]["note"]

            # The cadence backs off: each retry of one object waits at least as long as the last,
            # and by the third failure longer than the first (5 s).
            delays = wait_until(lambda: (d := retry_delays(agent, "big-0")) and len(d) >= 3 and d,
                                "three failed writes for big-0", timeout=90)
            assert delays == sorted(delays) and delays[-1] > delays[0], delays
            print("\nreadyz while full:", status, body, sep="\n")
            print("metrics while full:", *failures, *metric_lines(agent, "nodehook_state_write_failing"), sep="\n")

            filler.unlink()
            wait_until(lambda: get(agent.health_url("/readyz"))[0] == 200, "/readyz 200 once space is back",
                       timeout=120)
            for i in range(12):
                agent.wait_for(f"big-{i}", "create", count=1)
            recovered = wait_until(lambda: events_with(cluster.kube, node, "StateWritesRecovered"),
                                   "a StateWritesRecovered Event on the Node")
            assert recovered[0]["type"] == "Normal"
            assert f'nodehook_state_write_failing{{state_file="{state_file}"}} 0' in metric_lines(
                agent, "nodehook_state_write_failing")
            # Once when writes started failing, once when they worked again: not once per write.
            assert len(events_with(cluster.kube, node, "StateWritesFailing")) == 1
            assert len(recovered) == 1
            print("events:", *[f'{e["type"]} {e["reason"]}: {e["note"]}' for e in node_events(cluster.kube, node)],
                  sep="\n")
            print("metrics after:", *metric_lines(agent, "nodehook_state_write"), sep="\n")
        finally:
            agent.stop()


def test_a_start_on_a_full_disk_is_refused_alike_after_a_clean_stop_and_after_a_kill(make_agent, widgets, tmp_path):
    with small_disk(tmp_path) as disk:
        agent = store_agent(make_agent, unique_node("start"), disk / "state")
        refusals = []
        try:
            for stop in ("clean", "kill"):
                agent.start()
                agent.settle(widgets)
                if stop == "clean":
                    assert agent.stop() == 0
                else:
                    agent.kill()
                filler = fill(disk)
                agent.start()
                assert agent.proc.wait(timeout=60) == 1
                agent.proc = None
                refused = [line["error"] for line in agent.log_events("cannot open the state file")]
                assert len(refused) == 1, agent.log_path
                refusals.append(refused[0])
                filler.unlink()
            pattern = re.compile(rf"unavailable: no space left on {re.escape(str(disk / 'state'))} \(\d+ bytes free\); "
                                 r"the agent needs 1048576 bytes free to start")
            assert all(pattern.fullmatch(r) for r in refusals), refusals
            agent.start()  # space is back: it starts and keeps its state
            agent.settle(widgets)
        finally:
            agent.stop()


def stopped_after_one_create(make_agent, widgets, kind):
    """An agent on a node of its own that handled w1 and stopped: (node name, agent)."""
    node = unique_node(kind)
    agent = make_agent(node)
    agent.start()
    widgets.create("w1", {"size": 1})
    agent.wait_for("w1", "create")
    agent.stop()
    return node, agent


def test_a_deleted_state_file_is_logged_counted_and_posted_on_the_node(make_agent, widgets, cluster):
    node, agent = stopped_after_one_create(make_agent, widgets, "gone")
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(f"{agent.state_file}{suffix}")

    agent.start()
    agent.wait_for("w1", "create", count=2)  # every create runs again: said, not silent
    gone = agent.log_events("state file is gone; starting with an empty state: every create hook runs again")
    assert len(gone) == 1 and gone[0]["level"] == "warn", agent.log_path
    assert gone[0]["state_file"] == str(agent.state_file)
    assert "nodehook_state_file_missing_total 1" in metric_lines(agent, "nodehook_state_file_missing_total")
    event = wait_until(lambda: events_with(cluster.kube, node, "StateFileMissing"), "a StateFileMissing Event")
    assert event[0]["type"] == "Warning"
    assert event[0]["note"].startswith(f"state file {agent.state_file} is gone")
    agent.stop()

    agent.start()  # a start with the state file in place says nothing of the kind
    agent.settle(widgets)
    assert agent.log_events("state file is gone; starting with an empty state: every create hook runs again") == []


def test_a_damaged_state_file_posts_state_recovered_naming_where_it_went(make_agent, widgets, cluster):
    node, agent = stopped_after_one_create(make_agent, widgets, "damaged")
    agent.state_file.write_bytes(b"this is not a SQLite database" * 100)

    agent.start()
    # (Not settle(): a sentinel created now would be adopted with everything in the first list.)
    wait_until(lambda: agent.log_events("adoption finished"), f"adoption after the recovery ({agent.log_path})")
    assert len(agent.records("w1", "create")) == 1  # adopted, not created again
    event = wait_until(lambda: events_with(cluster.kube, node, "StateRecovered"), "a StateRecovered Event")
    moved = agent.log_events("state file is damaged; moved it aside and starting with an empty state")[0]["moved_to"]
    assert event[0]["type"] == "Warning"
    assert f"moved to {moved} " in event[0]["note"], event[0]["note"]
    assert os.path.exists(moved)
    assert events_with(cluster.kube, node, "HandlerFailed") == []


def object_events(kube, namespace, name):
    selector = urllib.parse.quote(f"regarding.name={name}")
    listed = kube.request("GET", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events?fieldSelector={selector}")
    return listed["items"]


def test_one_unreadable_record_is_quarantined_on_its_own_and_the_node_stays_ready(make_agent, widgets, cluster):
    """One row of the state file edited into something the agent never writes (issue 25, item 5):
    that object is set aside (no hook, no retry every few seconds), said once in the log and as
    an Event on the object, counted by a gauge; the other objects are handled and the node stays
    ready. `nodehook state forget` would clear it."""
    node = unique_node("corrupt")
    agent = make_agent(node)
    agent.start()
    for name in ("w1", "w2"):
        widgets.create(name, {"size": 1})
        agent.wait_for(name, "create")
    agent.stop()
    uid = widgets.get("w1")["metadata"]["uid"]
    with contextlib.closing(sqlite3.connect(agent.state_file)) as db:
        assert db.execute("UPDATE objects SET last_object = 'garbage' WHERE uid = ?", (uid,)).rowcount == 1
        db.commit()

    agent.start()
    widgets.patch_spec("w1", {"size": 2})
    widgets.patch_spec("w2", {"size": 2})
    agent.wait_for("w2", "update")
    agent.settle(widgets)
    assert agent.records("w1", "update") == []
    line = wait_until(lambda: agent.log_events("state record quarantined"), "the quarantine's log line")
    assert len(line) == 1 and line[0]["uid"] == uid
    assert "last_object is not a JSON object" in line[0]["error"]
    assert get(agent.health_url("/readyz"))[0] == 200
    assert "nodehook_state_records_quarantined 1" in metric_lines(agent, "nodehook_state_records_quarantined")
    assert 'nodehook_state_read_failing{state_file="' in "".join(metric_lines(agent, "nodehook_state_read_failing"))
    assert all(l.endswith(" 0") for l in metric_lines(agent, "nodehook_state_read_failing"))
    events = wait_until(lambda: [e for e in object_events(cluster.kube, widgets.namespace, "w1")
                                 if e["reason"] == "ObjectQuarantined"], "an ObjectQuarantined Event on w1")
    assert len(events) == 1 and events[0]["type"] == "Warning"
    assert f"nodehook state forget {uid}" in events[0]["note"]
    # Changed again: still set aside, not said again, not retried on a timer.
    widgets.patch_spec("w1", {"size": 3})
    agent.settle(widgets)
    assert agent.records("w1", "update") == []
    assert len(agent.log_events("state record quarantined")) == 1
    assert [e for e in agent.log_events("state store read failed")] == []
    # The row is kept for a person to look at.
    with contextlib.closing(sqlite3.connect(agent.state_file)) as db:
        assert db.execute("SELECT last_object FROM objects WHERE uid = ?", (uid,)).fetchone() == ("garbage",)
    agent.stop()
