"""Tables for test/bench/fleet_start_rest.py: the start and rest figures per fleet size, and the
model a + b·N fitted to them (least squares over the sizes measured) evaluated at 5,000 nodes.
Pure functions of the figures; no I/O besides the machine description."""

from fleet_report import commit, machine

MODEL_NODES = 5000
MIB = 1024.0 * 1024.0


def by_verb(requests):
    verbs = {}
    for key, value in requests.items():
        verb = key.split(" ")[0]
        verbs[verb] = verbs.get(verb, 0.0) + value
    return verbs


def verbs_text(verbs, scale=1.0):
    return ", ".join(f"{verb} {value * scale:,.0f}" for verb, value in sorted(verbs.items()) if value) or "0"


def fit(points):
    """(a, b) of y = a + b·x by least squares; with one point, the line through the origin."""
    if len(points) == 1:
        x, y = points[0]
        return 0.0, y / x if x else 0.0
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    b = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - b * mx, b


def model(rows, value):
    a, b = fit([(r["agents"], value(r)) for r in rows])
    return a, b, a + b * MODEL_NODES


def table(columns, cells):
    """A markdown table: `columns` as (title, alignment) pairs, `cells` one list of texts a row."""
    head = "| " + " | ".join(title for title, _ in columns) + " |"
    rule = "| " + " | ".join(align for _, align in columns) + " |"
    return "\n".join([head, rule] + ["| " + " | ".join(row) + " |" for row in cells])


def start_table(rows):
    columns = [("agents", "---:"), ("every agent ready (median)", "---:"), ("API-server CPU", "---:"),
               ("requests ended (by verb)", "---"), ("watches opened", "---:"), ("writes", "---:"),
               ("HTTP 429", "---:"), ("response MiB", "---:"), ("watch MiB", "---:"), ("agents exited", "---:")]
    cells = [[str(r["agents"]), f"{s['all_ready_s']:.1f} s ({s['median_ready_s']:.1f} s)", f"{s['apiserver_cpu_s']:.1f} s",
              verbs_text(by_verb(s["requests"])), f"{s.get('agent_requests', {}).get('watch', 0):,.0f}",
              f"{s['writes']:,.0f}", f"{s['http_429']:,.0f}", f"{s['response_bytes'] / MIB:,.1f}",
              f"{s['watch_bytes'] / MIB:,.1f}", str(s["agents_exited"])]
             for r, s in ((r, r["start"]) for r in rows)]
    return table(columns, cells)


def rest_table(rows):
    columns = [("agents", "---:"), ("API-server CPU (cores)", "---:"), ("requests per hour (by verb)", "---"),
               ("writes per hour (per s)", "---:"), ("response + watch MiB per hour", "---:"),
               ("agents' CPU (cores, sum)", "---:"), ("agents' RSS MiB (sum)", "---:")]
    cells = []
    for r in rows:
        s = r["rest"]
        scale = 3600.0 / s["seconds"]
        cells.append([str(r["agents"]), f"{s['apiserver_cpu_s'] / s['seconds']:.3f}", verbs_text(by_verb(s["requests"]), scale),
                      f"{s['writes'] * scale:,.0f} ({s['writes'] / s['seconds']:.2f})",
                      f"{(s['response_bytes'] + s['watch_bytes']) * scale / MIB:,.1f}",
                      f"{s['agents_cpu_s'] / s['seconds']:.3f}", f"{s['agents_rss_mib']:,.0f}"])
    return table(columns, cells)


def rest_detail(row, floor=100.0):
    """What the largest fleet's requests at rest were, per hour, by verb and resource; those
    below `floor` an hour (the API server's own informers renewing their watches) summed."""
    s = row["rest"]
    scale = 3600.0 / s["seconds"]
    items = sorted(s["requests"].items(), key=lambda kv: -kv[1])
    big = [(key, value * scale) for key, value in items if value * scale >= floor]
    small = [value * scale for _, value in items if value * scale < floor]
    text = ", ".join(f"{key} {value:,.0f}" for key, value in big)
    if small:
        text += f"; {len(small)} more below {floor:,.0f} each, {sum(small):,.0f} in all"
    return f"At rest with {row['agents']} agents, per hour: {text}."


def model_table(rows):
    figures = [
        ("start: API-server CPU s", lambda r: r["start"]["apiserver_cpu_s"], "{:,.1f}"),
        ("start: requests", lambda r: sum(r["start"]["requests"].values()), "{:,.0f}"),
        ("start: writes", lambda r: r["start"]["writes"], "{:,.0f}"),
        ("start: response + watch MiB", lambda r: (r["start"]["response_bytes"] + r["start"]["watch_bytes"]) / MIB, "{:,.1f}"),
        ("rest: writes per s", lambda r: r["rest"]["writes"] / r["rest"]["seconds"], "{:,.3f}"),
        ("rest: requests per s", lambda r: sum(r["rest"]["requests"].values()) / r["rest"]["seconds"], "{:,.3f}"),
        ("rest: API-server CPU (cores)", lambda r: r["rest"]["apiserver_cpu_s"] / r["rest"]["seconds"], "{:,.3f}"),
        ("rest: response + watch KiB per s",
         lambda r: (r["rest"]["response_bytes"] + r["rest"]["watch_bytes"]) / r["rest"]["seconds"] / 1024.0, "{:,.1f}"),
    ]
    columns = [("figure", "---"), ("fixed (a)", "---:"), ("per agent (b)", "---:"), (f"{MODEL_NODES:,} nodes", "---:")]
    cells = []
    for name, value, form in figures:
        a, b, at = model(rows, value)
        cells.append([name, form.format(a), f"{b:,.4g}", form.format(at)])
    return table(columns, cells)


def markdown(rows, args):
    return "\n\n".join([
        f"`test/bench/fleet_start_rest.py --agents {args.agents} --objects {args.objects} --rest {args.rest:g} "
        f"--settle {args.settle:g}` on {commit()}; {machine()}.",
        "**Start** (every agent stopped, then all started at the same moment on their state files; counted "
        f"until every agent was ready plus {args.settle:g} s):", start_table(rows),
        f"**Rest** ({rows[0]['rest']['seconds']:.0f} s measured, scaled to an hour):", rest_table(rows),
        rest_detail(rows[-1]),
        f"**Model** (a + b·N fitted to {', '.join(str(r['agents']) for r in rows)} agents):", model_table(rows),
    ]) + "\n"
