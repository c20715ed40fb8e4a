"""End-to-end: `--log-level debug` adds the lines that explain what the agent does: every list and
watch request with its response code, every queue decision, and every hook spawn with its argv."""

from conftest import RECORD_HOOK, wait_until


def test_a_debug_level_agent_logs_requests_queue_decisions_and_hook_spawns(make_agent, widgets):
    # Paginated: a list request and its answer are logged at once (a streaming list is a watch,
    # whose answer is logged when the stream ends).
    node = make_agent("node-a", reasons=("create",), log_level="debug", list_strategy="paginated").start()
    uid = widgets.create("w1", {"size": 1})["metadata"]["uid"]
    node.wait_for("w1", "create")
    spawned = wait_until(lambda: [e for e in node.log_events("hook spawned") if e.get("uid") == uid],
                         "a hook spawned line for w1")
    assert spawned[0]["object"] == f"{widgets.namespace}/w1"
    assert spawned[0]["handler"] == "create"
    assert spawned[0]["argv"] == str(RECORD_HOOK)
    assert [e for e in node.log_events("queue: ready now") if e["key"].endswith(uid)]
    assert [e for e in node.log_events("list response") if e["code"] == "200"]
    watches = [e for e in node.log_events("watch request") if "/widgets?watch=1" in e["path"]]
    assert watches and watches[0]["resource"] == "widgets.example.com/v1"

    info = make_agent("node-b", reasons=("create",), directory="quiet").start()
    info.wait_for("w1", "create")
    assert not [e for e in info.log_events() if e.get("level") == "debug"]
