"""Markdown for the fleet simulation: one table per run, written into docs/benchmarks.md between
the section's markers. Each run has its own inner markers, so a run of one kind (all objects,
sharded, strategy comparison, smoke) replaces only its own part of the section."""

import os
import platform
import re
import subprocess
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BEGIN, END = "<!-- fleet-sim:begin -->", "<!-- fleet-sim:end -->"
HEADER = """## Fleet simulation (issue 11)

`test/bench/fleet_sim.py` runs N `nodehook run` processes (own node name, state file, scratch
directory, health port on 127.0.0.1) against one test API server (kube-apiserver with etcd in the
same process: its CPU and memory include etcd). Every hook is `/bin/true`, and by default only the
delete hook is set, so creates and updates only move the diffbase: the agents' list, watch and
store work is all there, the per-node cost of hook processes is left to the speed benchmarks.
Sharded: each object is labelled `fleet.nodehook.io/node=<node>` and each agent selects
`fleet.nodehook.io/node={node}` (written out as its node's name for a binary without selector
templates, which makes the same requests). "Handled" means a marker object deleted after the event reached every agent's delete hook (4
markers beside the objects, 4 per node when sharded). Requests per agent are counted twice: by
the server (`apiserver_request_total`, which counts a WATCH when it ends) and by the agents
(`nodehook_api_requests_total`, counted when sent, failed attempts during an outage included).
Lists served: `apiserver_cache_list_total` (watch cache) and `etcd_requests_total` (list; a
consistent read from the cache first reads etcd's revision with a get). Watch bytes:
`apiserver_watch_events_sizes` per event delivered to each watcher, bookmarks included.
The cost model drawn from these figures is in [fleet-cost.md](fleet-cost.md).

**List strategy: `paginated` stays the default** (evidence: *List strategies compared* below;
reasoning in [fleet-cost.md](fleet-cost.md#where-the-lists-were-served)). On this API server
(1.36) every strategy is served from the watch cache, so etcd load does not separate them.
`watch_cache` saves about 10% of the API server's CPU per start but doubles its memory peak (one
unpaginated response of every object per agent) and gives up consistency; `streaming` has the
lowest memory peak but cost 3x the CPU when 50 agents started at once (about 5 watch attempts
per agent) and 8-20% more in the rollout and the restart. Rerun `--compare-strategies` when
either changes.
"""


def machine():
    cpu = "unknown CPU"
    try:
        cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    load = os.getloadavg()
    return (f"{os.cpu_count()} vCPU {cpu}, Linux {platform.release()}, "
            f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} at the end")


def commit():
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def fmt(value, digits=1):
    if isinstance(value, dict):
        return " / ".join(fmt(value.get(k), digits) for k in ("median", "p90", "max")) if value else "-"
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if isinstance(value, float) else f"{value:,}"


def verbs(per_agent):
    return ", ".join(f"{verb} {count:.2f}" for verb, count in sorted(per_agent.items()) if count) or "0"


def sources(per_agent):
    return (f"watch cache {per_agent.get('cache lists', 0):.2f} (objects scanned "
            f"{per_agent.get('cache objects scanned', 0):,.0f}), etcd lists {per_agent.get('etcd lists', 0):.2f}, "
            f"etcd reads {per_agent.get('etcd gets', 0):.2f}") if per_agent else "-"


def memory(s):
    text = f"{fmt(s.get('apiserver_rss_start_mib'), 0)} → {fmt(s['apiserver_peak_rss_mib'], 0)}"
    if "apiserver_heap_start_mib" in s:
        text += f" ({fmt(s['apiserver_heap_start_mib'], 0)} → {fmt(s['apiserver_heap_end_mib'], 0)})"
    return text


def run_table(run):
    rows = ["| scenario | API server CPU s | API server RSS MiB: before → peak (Go heap before → after) | requests per agent (server) | "
            "requests per agent (agents' counters) | agents' CPU s (sum) | agents' RSS MiB (sum / max) | "
            "lists served per agent | ready / handled, s |", "| --- | ---: | ---: | --- | --- | ---: | ---: | --- | --- |"]
    for s in run["scenarios"]:
        rows.append(f"| {s['scenario']} | {fmt(s['apiserver_cpu_s'])} | {memory(s)} | "
                    f"{verbs(s['server_requests_per_agent'])} | {verbs(s['agent_requests_per_agent'])} | "
                    f"{fmt(s['agents_cpu_s'])} | {fmt(s['agents_rss_total_mib'], 0)} / {fmt(s['agent_rss_max_mib'])} | "
                    f"{sources(s.get('list_sources_per_agent', {}))} | {timing(s)} |")
    return "\n".join(rows)


def timing(s):
    parts = []
    for key, label in (("all_ready_s", "all ready"), ("all_stored_s", "all stored"),
                       ("ready_after_restart_s", "restart→ready median/p90/max"),
                       ("marker_after_all_ready_s", "marker after all ready m/p90/max"),
                       ("start_s", "server start"),
                       ("marker_after_server_ready_s", "server ready→marker handled m/p90/max"),
                       ("achieved_rate", "changes/s sent"),
                       ("caught_up_after_writer_s", "writer end→marker handled m/p90/max"),
                       ("bytes_per_change_per_agent", "watch bytes per change per agent"),
                       ("events_per_change_per_agent", "watch events per change per agent")):
        if key in s:
            parts.append(f"{label} {fmt(s[key], 2 if 'events' in key else 1)}")
    return "; ".join(parts) or "-"


def notes(run):
    """Sentences about what did not go as asked (the figures stand, but read them with this)."""
    said = []
    for s in run["scenarios"]:
        if "achieved_rate" in s and s["achieved_rate"] < 0.9 * run["args"]["rate"]:
            said.append(f"{s['scenario']}: the writer fell behind; {s['changes']:,} changes went out at "
                        f"{s['achieved_rate']:.1f}/s (the API server answered slowly), so the phase lasted "
                        f"{s['wall_s']:.0f} s.")
    return said


def run_markdown(run):
    a = run["args"]
    return "\n".join([
        f"### {run['title']}",
        "",
        f"Measured {time.strftime('%Y-%m-%d', time.gmtime(run['ended']))} at {commit()} on {machine()}; "
        f"{a['agents']} agents, {a['objects']} objects, list strategy `{run['strategy']}`"
        f"{', sharded by node label' if a['sharded'] else ''}. "
        "Shared with other engineers' builds and tests: every time and CPU figure is an upper bound.",
        "",
        "```sh",
        run["command"],
        "```",
        "",
        run_table(run),
        "",
        *[f"- {note}" for note in notes(run)],
    ]).rstrip() + "\n"


def write_section(doc, key, markdown):
    """Replaces the run `key` inside the section (adding the section or the run when missing)."""
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    run_begin, run_end = f"<!-- fleet-sim:{key}:begin -->", f"<!-- fleet-sim:{key}:end -->"
    block = f"{run_begin}\n{markdown}{run_end}\n"
    if BEGIN not in text:
        text = text.rstrip() + f"\n\n{BEGIN}\n{HEADER}\n{END}\n"
    head, rest = text.split(BEGIN, 1)
    section, tail = rest.split(END, 1)
    pattern = re.compile(re.escape(run_begin) + r".*?" + re.escape(run_end) + r"\n", re.S)
    section = pattern.sub(lambda _: block, section) if run_begin in section else section.rstrip() + f"\n\n{block}"
    # The header is regenerated too, so the prose stays in step with the script.
    section = "\n" + HEADER + "\n" + section[section.index("<!-- fleet-sim:"):] if "<!-- fleet-sim:" in section else section
    doc.write_text(head + BEGIN + section + END + tail)
