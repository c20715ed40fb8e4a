"""End-to-end metrics: an agent against the real API server is driven through real flows (hooks
that succeed, fail, ask to retry later, report progress, time out and fail permanently; relists;
an API outage) and its /metrics is parsed with the reference Prometheus text parser
(prometheus_client) after each, checking that every family moves as the flow says.

The outage test stops and starts the API server, so this module gets its own server (the module
`cluster` fixture overrides the session one), as test_recovery.py does."""

import json
import re
import urllib.request
from pathlib import Path

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from conftest import Cluster, wait_until
from test_recovery import api_server_down

REPO = Path(__file__).resolve().parents[2]
METRICS_HOOK = Path(__file__).resolve().parent / "hooks" / "metrics-hook"
RESOURCE = "widgets.example.com/v1"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("metrics-cluster"))
    yield c
    c.stop()


class Scrape:
    """One parsed /metrics answer: families by name, and every sample."""

    def __init__(self, text):
        self.text = text
        self.families = {f.name: f for f in text_string_to_metric_families(text)}
        self.samples = [s for f in self.families.values() for s in f.samples]

    def value(self, name, **labels):
        """The sample `name` whose labels include `labels`; 0 when there is none."""
        found = [s.value for s in self.samples if s.name == name and labels.items() <= s.labels.items()]
        assert len(found) <= 1, f"{name}{labels} matches {len(found)} samples"
        return found[0] if found else 0

    def total(self, name, **labels):
        """The sum of every sample `name` whose labels include `labels`."""
        return sum(s.value for s in self.samples if s.name == name and labels.items() <= s.labels.items())


def scrape(agent):
    with urllib.request.urlopen(agent.health_url("/metrics"), timeout=5) as resp:
        assert resp.headers["Content-Type"].startswith("text/plain")
        return Scrape(resp.read().decode())


def eventually(agent, check, what):
    """Scrapes until `check(scrape)` holds; returns that scrape."""
    last = {}

    def attempt():
        last["scrape"] = scrape(agent)
        return check(last["scrape"])

    wait_until(attempt, f"{what} (log: {agent.log_path})")
    return last["scrape"]


def metrics_agent(make_agent, node, hook_timeout_seconds=1, **tuning):
    """An agent running metrics-hook for create/update/delete, with a short hook timeout."""
    agent = make_agent(node, hook=METRICS_HOOK, **tuning)
    config = json.loads(agent.config_file.read_text())
    for hook in config["resources"][0]["hooks"].values():
        hook["timeout_seconds"] = hook_timeout_seconds
    agent.config_file.write_text(json.dumps(config))
    return agent


def test_hook_runs_are_counted_by_outcome_and_pending_handlers_are_gauged(make_agent, widgets):
    agent = metrics_agent(make_agent, "node-a", retry_limit=2).start()
    before = eventually(agent, lambda s: s.families.get("nodehook_hook_runs"), "hook families at zero")
    for outcome in ("done", "retry_later", "in_progress", "failed", "timeout", "permanent"):
        assert before.value("nodehook_hook_runs_total", resource=RESOURCE, handler="create", outcome=outcome) == 0
    assert before.families["nodehook_hook_duration_seconds"].type == "histogram"

    for name in ("ok-1", "fail-1", "later-1", "progress-1", "slow-1"):
        widgets.create(name, {"size": 1})

    def runs(s, outcome):
        return s.value("nodehook_hook_runs_total", resource=RESOURCE, handler="create", outcome=outcome)

    # ok-1 done; progress-1 in progress then done; later-1 asks to come back in an hour; fail-1 and
    # slow-1 fail (or time out) once, then give up: retry_limit is 2.
    after = eventually(agent, lambda s: runs(s, "done") >= 2 and runs(s, "in_progress") >= 1 and
                       runs(s, "retry_later") >= 1 and runs(s, "failed") >= 1 and runs(s, "timeout") >= 1 and
                       runs(s, "permanent") >= 2, "every outcome counted")
    assert runs(after, "done") == 2 and runs(after, "in_progress") == 1 and runs(after, "retry_later") == 1
    assert runs(after, "failed") == 1 and runs(after, "timeout") == 1 and runs(after, "permanent") == 2
    hist = after.value("nodehook_hook_duration_seconds_count", resource=RESOURCE, handler="create")
    assert hist == 8  # one observation per run
    # The timed-out run took at least its 1 s timeout.
    assert after.value("nodehook_hook_duration_seconds_sum", resource=RESOURCE, handler="create") >= 1

    # later-1 waits an hour: pending; fail-1 and slow-1 gave up: permanent. Refreshed from the
    # store by the housekeeping thread, so this may take a moment.
    gauged = eventually(agent, lambda s: s.value("nodehook_handlers_failed_permanently", resource=RESOURCE) == 2 and
                        s.value("nodehook_handlers_pending_retry", resource=RESOURCE) == 1, "handler gauges")
    assert gauged.value("nodehook_oldest_pending_retry_seconds") > 0
    assert gauged.value("nodehook_objects_cached", resource=RESOURCE) == 5
    assert gauged.value("nodehook_store_rows", table="objects") == 2  # ok-1, progress-1
    assert gauged.value("nodehook_store_rows", table="handlers") == 3
    assert gauged.value("nodehook_store_file_bytes") > 0
    assert gauged.families["nodehook_store_commit_duration_seconds"].type == "histogram"
    assert gauged.value("nodehook_store_commit_duration_seconds_count") > 0
    # The queue took every change to a worker.
    assert gauged.value("nodehook_queue_latency_seconds_count") >= 5



def test_watch_relists_and_restarts_are_counted(make_agent, widgets):
    widgets.create("ok-w", {"size": 1})
    # Paginated lists, so each relist is a list request (a streaming relist is a watch).
    agent = metrics_agent(make_agent, "node-a", resync_seconds=3, watch_timeout_seconds=60,
                          list_strategy="paginated").start()
    first = eventually(agent, lambda s: s.value("nodehook_watch_state", resource=RESOURCE, state="watching") == 1,
                       "watching")
    assert first.value("nodehook_watch_state", resource=RESOURCE, state="empty") == 0
    assert first.value("nodehook_watch_relists_total", resource=RESOURCE) == 0
    assert first.value("nodehook_api_requests_total", verb="list", resource=RESOURCE, code="200") >= 1
    # The periodic resync ends each watch when it is due (a clean end: "timeout") and relists.
    # The watch after the second relist is counted once the server answered it, a moment after the
    # relist is: both are waited for, not the first alone.
    later = eventually(agent, lambda s: s.value("nodehook_watch_relists_total", resource=RESOURCE) >= 2 and
                       s.value("nodehook_api_requests_total", verb="watch", resource=RESOURCE, code="200") >= 3,
                       "two relists by the periodic resync, and the watch after them")
    assert later.value("nodehook_watch_restarts_total", resource=RESOURCE, cause="timeout") >= 2
    assert later.value("nodehook_watch_restarts_total", resource=RESOURCE, cause="error") == 0
    assert later.value("nodehook_api_requests_total", verb="list", resource=RESOURCE, code="200") >= 3
    assert later.value("nodehook_api_requests_total", verb="watch", resource=RESOURCE, code="200") >= 3
    assert later.value("nodehook_watch_seconds_since_activity", resource=RESOURCE) >= 0


def test_an_api_outage_shows_as_failed_requests_watch_errors_and_growing_silence(make_agent, widgets, cluster):
    widgets.create("ok-o", {"size": 1})
    agent = metrics_agent(make_agent, "node-a", reconnect_max_ms=1000).start()
    # A watch is recorded when its headers arrive, not when its stream ends: the one open now
    # is already counted.
    healthy = eventually(agent, lambda s: s.value("nodehook_watch_state", resource=RESOURCE, state="watching") == 1
                         and s.value("nodehook_api_requests_total", verb="watch", resource=RESOURCE, code="200") == 1,
                         "the open watch counted before the outage")
    assert healthy.total("nodehook_watch_restarts_total", resource=RESOURCE) == 0
    assert healthy.total("nodehook_api_requests_total", code="error") == 0
    with api_server_down(cluster):
        down = eventually(agent, lambda s: s.total("nodehook_api_requests_total", code="error", resource=RESOURCE) >= 2
                          and s.value("nodehook_watch_restarts_total", resource=RESOURCE, cause="error") >= 2,
                          "failed requests and watch errors during the outage")
        silent = eventually(agent, lambda s: s.value("nodehook_watch_seconds_since_activity", resource=RESOURCE) >= 3,
                            "the watch's silence growing")
        assert silent.value("nodehook_watch_restarts_total", resource=RESOURCE, cause="error") >= \
            down.value("nodehook_watch_restarts_total", resource=RESOURCE, cause="error")
    widgets.patch_spec("ok-o", {"size": 2})
    quiet = silent.value("nodehook_watch_seconds_since_activity", resource=RESOURCE)
    back = eventually(agent, lambda s: s.value("nodehook_hook_runs_total", resource=RESOURCE, handler="update",
                                               outcome="done") == 1 and
                      s.value("nodehook_watch_seconds_since_activity", resource=RESOURCE) < quiet,
                      "the update handled after the outage, and the silence over")
    assert back.value("nodehook_watch_state", resource=RESOURCE, state="watching") + \
        back.value("nodehook_watch_state", resource=RESOURCE, state="listed") == 1


def rule_metric_names(path):
    """The metric names (nodehook_* and process_*) in the expressions of a PrometheusRule."""
    rule = yaml.safe_load(path.read_text())
    exprs = [r["expr"] for g in rule["spec"]["groups"] for r in g["rules"]]
    assert exprs, "the rule has no expressions"
    return {name for e in exprs for name in re.findall(r"\b(?:nodehook|process)_[a-z_]+", e)}


def test_every_metric_in_the_example_prometheus_rule_exists_in_a_real_scrape(make_agent, widgets):
    agent = metrics_agent(make_agent, "node-a").start()
    widgets.create("ok-r", {"size": 1})
    s = eventually(agent, lambda s: s.value("nodehook_watch_state", resource=RESOURCE, state="watching") == 1 and
                   s.value("nodehook_hook_runs_total", resource=RESOURCE, handler="create", outcome="done") == 1,
                   "a scrape after one handled object")
    exported = {sample.name for sample in s.samples}
    names = rule_metric_names(REPO / "deploy" / "prometheusrule.yaml")
    assert names, "no metric names found in the rule"
    assert names <= exported, f"the rule names metrics no scrape has: {sorted(names - exported)}"


def dashboard_metric_names(path):
    """The metric names in every panel expression of a Grafana dashboard (and its variables)."""
    board = json.loads(path.read_text())
    exprs = [t["expr"] for p in board["panels"] for t in p.get("targets", [])]
    exprs += [v["query"] for v in board["templating"]["list"] if v.get("type") == "query"]
    assert len(exprs) >= 10, "the dashboard has almost no expressions"
    return {name for e in exprs for name in re.findall(r"\b(?:nodehook|process)_[a-z_]+", e)}


def test_every_metric_in_the_dashboard_and_the_rule_exists_in_a_real_scrape(make_agent, widgets):
    # A singleton resource, so the leader gauge is exported too.
    agent = metrics_agent(make_agent, "node-a", resource_options={"singleton": True},
                          lease_namespace=widgets.namespace, lease_name="metrics-dashboard").start()
    widgets.create("ok-d", {"size": 1})
    s = eventually(agent, lambda s: s.value("nodehook_leader") == 1 and
                   s.value("nodehook_hook_runs_total", resource=RESOURCE, handler="create", outcome="done") == 1,
                   "a scrape from the leader after one handled object")
    exported = {sample.name for sample in s.samples}
    names = dashboard_metric_names(REPO / "deploy" / "grafana" / "nodehook.json")
    names |= rule_metric_names(REPO / "deploy" / "prometheusrule.yaml")
    assert {"nodehook_hook_runs_total", "nodehook_queue_depth", "nodehook_queue_latency_seconds_bucket",
            "nodehook_watch_relists_total", "nodehook_leader"} <= names
    assert names <= exported, f"the dashboard or the rule names metrics no scrape has: {sorted(names - exported)}"


def test_every_family_has_help_and_a_type_and_counters_end_in_total(make_agent, widgets):
    agent = metrics_agent(make_agent, "node-a").start()
    s = eventually(agent, lambda s: s.value("nodehook_watch_state", resource=RESOURCE, state="watching") == 1,
                   "watching")
    helps = set(re.findall(r"^# HELP (\S+) \S", s.text, re.M))
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", s.text, re.M))
    assert helps == set(types), "every family has HELP and TYPE"
    for name, kind in types.items():
        assert name.startswith(("nodehook_", "process_")), name
        if kind == "counter":
            assert name.endswith("_total"), f"counter {name} does not end in _total"
        else:
            assert not name.endswith("_total"), f"{kind} {name} ends in _total"
