"""The report of test/bench/compare.py: the "nodehook vs kopf (issue 11)" section of
docs/benchmarks.md (a table with ratios, the machine, versions and date) and its two plots,
drawn with matplotlib as SVG. Only the section between the markers is replaced."""

import re
from pathlib import Path
from statistics import mean

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

BEGIN = "<!-- BEGIN nodehook-vs-kopf: written by test/bench/compare.sh, edits are overwritten -->"
END = "<!-- END nodehook-vs-kopf -->"
SYSTEMS = ("nodehook", "kopf")
COLORS = {"nodehook": "tab:blue", "kopf": "tab:orange"}


def _mib(kib_list):
    return mean(kib_list) / 1024


def _advantage(nodehook, kopf, higher_is_better):
    """How many times better nodehook is (>1: better)."""
    if higher_is_better:
        nodehook, kopf = kopf, nodehook
    if nodehook == 0:
        return "∞" if kopf > 0 else "—"
    return f"{kopf / nodehook:.1f}×"


def _rows(results):
    """(figure, nodehook text, kopf text, advantage text) per table row."""
    s = results["systems"]
    nh, kp = s["nodehook"], s["kopf"]
    rows = []

    def drain(r, kind):
        return mean(r["drain"][kind]["hooks_per_s"])
    rows.append(("backlog drain, hooks/s per node (creates / updates)",
                 *(f"{drain(r, 'create'):.0f} / {drain(r, 'update'):.0f}" for r in (nh, kp)),
                 " / ".join(_advantage(drain(nh, k), drain(kp, k), True) for k in ("create", "update"))))
    ceiling = results.get("spawn_ceiling")
    if ceiling:
        def share(r):
            return [100 * drain(r, k) / ceiling for k in ("create", "update")]
        rows.append((f"backlog drain per node as a share of the spawn ceiling (the same hook started and waited "
                     f"for in a loop on one core: {ceiling:.0f}/s), creates / updates",
                     *(" / ".join(f"{v:.0f} %" for v in share(r)) for r in (nh, kp)),
                     " / ".join(_advantage(a, b, True) for a, b in zip(share(nh), share(kp)))))
    mid_rate = sorted(nh["rates"], key=float)[len(nh["rates"]) // 2]

    def cpu(r):
        return [mean(r["drain"]["create"]["cpu_ms_per_change"]), mean(r["drain"]["update"]["cpu_ms_per_change"]),
                mean(r["rates"][mid_rate]["cpu_ms_per_change"])]
    rows.append((f"agent CPU per handled change, without the hook, ms (create drain / update drain / {mid_rate} changes/s)",
                 *(" / ".join(f"{v:.2f}" for v in cpu(r)) for r in (nh, kp)),
                 " / ".join(_advantage(a, b, False) for a, b in zip(cpu(nh), cpu(kp)))))
    for rate in sorted(nh["rates"], key=float):
        a, b = nh["rates"][rate], kp["rates"][rate]
        rows.append((f"change → hook start at {rate} changes/s, ms (p50 / **p99** / max)",
                     *(f"{r['p50']:.0f} / **{r['p99']:.0f}** / {r['max']:.0f}" for r in (a, b)),
                     _advantage(a["p99"], b["p99"], False) + " (p99)"))
    mem = [r["memory"] for r in (nh, kp)]
    idle = [_mib(m["points"][0]["rss_kib"]) for m in mem]
    rows.append(("RSS idle, MiB (threads)", *(f"{v:.1f} ({mean(m['threads_idle']):.0f})" for v, m in zip(idle, mem)),
                 _advantage(*idle, False)))
    full = [_mib(m["points"][-1]["rss_kib"]) for m in mem]
    rows.append((f"RSS with {mem[0]['points'][-1]['objects']:,} objects handled, MiB", *(f"{v:.1f}" for v in full),
                 _advantage(*full, False)))
    after = [(_mib(m["restart"]["rss_kib"]), _mib(m["restart"]["peak_rss_kib"])) for m in mem]
    rows.append((f"RSS right after a restart with {mem[0]['restart']['objects']:,}, MiB (settled / peak)",
                 *(f"{a:.1f} / {p:.1f}" for a, p in after), _advantage(after[0][1], after[1][1], False) + " (peak)"))
    ready = [(mean(m["restart"]["ready_s"]), mean(m["restart"]["settled_s"]), m["restart"]["reruns"]) for m in mem]
    rows.append((f"restart with {mem[0]['restart']['objects']:,} handled: s to ready / s until its CPU settles, hook reruns",
                 *(f"{r:.2f} / {c:.1f}, {n}" for r, c, n in ready), _advantage(ready[0][1], ready[1][1], False) + " (settle)"))
    writes = [_writes_text(r) for r in (nh, kp)]
    rows.append(("API writes per handled change per node", *(w[0] for w in writes),
                 _advantage(writes[0][1], writes[1][1], False)))
    return rows


def _writes_text(system):
    phases = [system["drain"]["create"], system["drain"]["update"], *system["rates"].values()]
    per_change = mean(p["writes"]["per_change_per_node"] for p in phases)
    kinds = sorted({k for p in phases for k in p["writes"]["by_request"]})
    return (f"{per_change:.2f}" + (f" ({', '.join(kinds)})" if kinds else ""), per_change)


def _round_trips(results):
    medians = [r["write_round_trip_ms"]["p50"] for s in SYSTEMS for r in results["systems"][s]["rates"].values()]
    return f"{min(medians):.0f}–{max(medians):.0f}"


def latency_plot(results, path):
    rates = sorted(results["systems"]["nodehook"]["rates"], key=float)
    fig, axes = plt.subplots(1, len(rates), figsize=(4 * len(rates), 3.4), sharey=True, squeeze=False)
    for ax, rate in zip(axes[0], rates):
        for system in SYSTEMS:
            values = sorted(max(v, 0.1) for v in results["systems"][system]["rates"][rate]["latencies_ms"])
            ax.plot(values, [(i + 1) / len(values) for i in range(len(values))], label=system, color=COLORS[system])
        ax.set_xscale("log")
        ax.set_title(f"{rate} changes/s")
        ax.set_xlabel("change → hook start (ms, log)")
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("share of hook starts (CDF)")
    axes[0][0].legend(loc="lower right")
    _save(fig, path)


def memory_plot(results, path):
    fig, ax = plt.subplots(figsize=(6, 3.6))
    for system in SYSTEMS:
        mem = results["systems"][system]["memory"]
        xs = [p["objects"] for p in mem["points"]]
        ax.plot(xs, [_mib(p["rss_kib"]) for p in mem["points"]], "o-", label=f"{system}", color=COLORS[system])
        ax.plot([mem["restart"]["objects"]], [_mib(mem["restart"]["peak_rss_kib"])], "x", markersize=9,
                color=COLORS[system], label=f"{system}: peak during restart")
    ax.set_xlabel("objects handled")
    ax.set_ylabel("RSS per node (MiB)")
    ax.set_ylim(bottom=0)
    ax.grid(True, alpha=0.3)
    ax.legend()
    _save(fig, path)


def _save(fig, path):
    plt.rcParams["svg.hashsalt"] = "nodehook-vs-kopf"
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    plt.close(fig)


def section(results, latency_svg, memory_svg):
    m, v, p = results["machine"], results["versions"], results["params"]
    nh_points = results["systems"]["nodehook"]["memory"]["points"]
    lines = [BEGIN, "## nodehook vs kopf (issue 11)", "",
             f"Measured on {results['date']} by `{results['command']}` (about {results['minutes']:.0f} minutes). "
             f"Machine: {m['nproc']} CPUs ({m['cpu']}), {m['ram_gib']:.0f} GiB RAM, Linux {m['kernel']}; "
             f"load average {m['load_before']:.1f} before and {m['load_after']:.1f} after the run"
             + (" (other work was running: wall-clock figures are upper bounds, CPU per change is robust)."
                if max(m["load_before"], m["load_after"]) > 1.5 else "."),
             f"Versions: nodehook {v['nodehook']}, kopf {v['kopf']} on Python {v['python']}, "
             f"API server Kubernetes {v['kubernetes']} (test/cluster).", "",
             "One API server, the Widget CRD; each system runs as two nodes (two processes, each with its own "
             "state: nodehook a state file, kopf annotations with the prefix `<node>.kopf.zalando.org`), in its "
             "own namespace, on the same work, one system after the other. Both run the same hook program "
             "(`test/bench/hooks/timestamp-hook`: records its start time, drains stdin) for create and update, "
             "with their default settings (kopf: `--standalone`, events only for warnings). CPU is the agent "
             "process's utime+stime from /proc (hooks excluded); figures are means of the two nodes; "
             "latency is pooled over both nodes, from the moment the driver sent its write (so it includes the "
             f"write's round trip, whose median was {_round_trips(results)} ms in the runs).", "",
             f"Backlog: {p['drain']:,} objects created (then updated) while the nodes were stopped. Rates: each "
             f"object changed at most once per rate, for {p['rate_seconds']} s (achieved: "
             + ", ".join(f"{rate}: {results['systems']['nodehook']['rates'][rate]['achieved_per_s']:.0f} / "
                         f"{results['systems']['kopf']['rates'][rate]['achieved_per_s']:.0f}"
                         for rate in sorted(results["systems"]["nodehook"]["rates"], key=float))
             + " changes/s). Memory: objects created with the nodes running, RSS read once the nodes' CPU "
             "settled; then both nodes restarted.", "",
             "| figure | nodehook | kopf | nodehook advantage |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {a} | {b} | {c} | {d} |" for a, b, c, d in _rows(results)]
    uneven = [rate for rate, r in results["systems"]["nodehook"]["rates"].items()
              if abs(r["achieved_per_s"] - results["systems"]["kopf"]["rates"][rate]["achieved_per_s"])
              > 0.2 * max(r["achieved_per_s"], 1)]
    if uneven:
        lines += ["", "**Not comparable:** at " + ", ".join(f"{rate}" for rate in uneven) + " changes/s the "
                  "driver could not write as fast while one of the systems ran (the achieved rates above differ "
                  "by more than 20%), so those latency rows compare different loads."]
    lines += ["", "*nodehook advantage*: how many times better nodehook's figure is (kopf ÷ nodehook where "
              "lower is better, nodehook ÷ kopf for hooks/s); below 1× kopf is better."]
    lines += ["", f"![change to hook start, CDF per rate]({latency_svg})", "",
              "RSS per node (MiB, mean of the two nodes) against objects handled:", "",
              "| objects | " + " | ".join(f"{p['objects']:,}" for p in nh_points) + " |",
              "| --- | " + " | ".join("---:" for _ in nh_points) + " |"]
    lines += [f"| {system} | " + " | ".join(f"{_mib(p['rss_kib']):.1f}" for p in results["systems"][system]["memory"]["points"])
              + " |" for system in SYSTEMS]
    lines += ["", f"![RSS per node against objects handled]({memory_svg})", "",
              "Writes are counted from the API server's `apiserver_request_total` (the driver's own writes "
              "subtracted), over the backlog drains and the rate runs.", END]
    return "\n".join(lines) + "\n"


def _outside(doc):
    """`doc` without its marked section."""
    return re.sub(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", "", doc, count=1, flags=re.S).rstrip("\n")


def replace_section(doc_path, text):
    """Replaces the marked section of `doc_path` (appends it when the markers are missing) and
    checks that nothing outside it changed; returns an error message, or None."""
    doc = Path(doc_path).read_text() if Path(doc_path).exists() else "# Benchmarks\n"
    pattern = re.compile(re.escape(BEGIN) + ".*?" + re.escape(END) + "\n?", re.S)
    if pattern.search(doc):
        new = pattern.sub(lambda _: text, doc, count=1)
    else:
        new = doc.rstrip("\n") + "\n\n" + text
    if _outside(new) != _outside(doc) or text not in new:
        return f"replacing the section would change {doc_path} outside its markers; left it alone"
    Path(doc_path).write_text(new)
    return None
