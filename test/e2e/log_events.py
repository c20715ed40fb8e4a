#!/usr/bin/env python3
"""Finds every structured log event in the agent's sources: each Log(level, event, {fields}) call,
its event name(s) and the keys it logs. Event names built at run time are found too: a ternary of
literals gives each literal; "prefix" + x gives a pattern with <...> for the part only known at
run time; a variable gives the literals assigned to it in the function (or, for a parameter, the
first literal argument of each call of that function in the file).

  log_events.py            prints the table docs/logs.md holds
Used by test_log_events.py to check that docs/logs.md lists exactly what the code logs."""

import re
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SOURCES = ["agent", "storage"]
STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _skip_string(text, i):
    j = i + 1
    while text[j] != '"':
        j += 2 if text[j] == "\\" else 1
    return j + 1


def _call_args(text, start):
    """The top-level arguments of the call whose '(' is at `start`, and the index after ')'."""
    depth, i, args, current = 0, start, [], start + 1
    while True:
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        if c == "'":
            i += 3 if text[i + 1] != "\\" else 4
            continue
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
            if depth == 0:
                args.append(text[current:i].strip())
                return args, i + 1
        elif c == "," and depth == 1:
            args.append(text[current:i].strip())
            current = i + 1
        i += 1


def _literals(expr):
    return [s[1:-1] for s in STRING.findall(expr)]


def _enclosing_function(text, pos):
    """(start, name) of the function body holding `pos`: the last line opening at column 0."""
    starts = [m for m in re.finditer(r"^[A-Za-z].*?(\w+)\([^;]*?\)\s*(?:const\s*)?\{\s*$", text[:pos], re.M | re.S)]
    return (starts[-1].start(), starts[-1].group(1)) if starts else (0, "")


def _variable_names(text, pos, name):
    start, function = _enclosing_function(text, pos)
    body = text[start:pos]
    assigned = []
    for m in re.finditer(r"\b" + re.escape(name) + r"\s*=(?!=)([^;]*);", body):
        assigned += _literals(m.group(1))
    if assigned:
        return assigned
    calls = []
    for m in re.finditer(r"\b" + re.escape(function) + r"\(", text):
        args, _ = _call_args(text, m.end() - 1)
        if args and args[0].startswith('"'):
            calls += _literals(args[0])
    return calls


def _event_names(text, pos, expr):
    expr = expr.strip()
    if STRING.fullmatch(expr) or re.fullmatch(r'[^"]*\?\s*(?:"[^"]*"\s*:\s*[^"]*\?\s*)*"[^"]*"\s*:\s*"[^"]*"', expr):
        return _literals(expr)
    if re.fullmatch(r"\w+", expr):
        return _variable_names(text, pos, expr)
    # A concatenation: the run-time parts become <...>.
    parts, pattern = re.split(r"\s*\+\s*", expr), ""
    for part in parts:
        pattern += part[1:-1] if STRING.fullmatch(part) else "<" + re.findall(r"\w+", part)[-1].strip("_") + ">"
    return [pattern]


# The keys the OutcomeReporter adds after a subject's identity on an unfinished run.
UNFINISHED_KEYS = {"outcome", "message", "retries", "next"}
WORD_FIELDS = ["succeeded", "failed", "retry_later", "in_progress", "gave_up"]


def _lane_words():
    """{"kHookWords": {"succeeded": "hook succeeded", ...}} from hooks/outcome_reporter.h."""
    text = (REPO / "agent" / "hooks" / "outcome_reporter.h").read_text()
    lanes = {}
    for m in re.finditer(r"inline constexpr LaneWords (\w+)\{(.*?)\};", text, re.S):
        lanes[m.group(1)] = dict(zip(WORD_FIELDS, _literals(m.group(2))))
    return lanes


def _body(text, brace):
    """The text of the block whose '{' is at `brace`, up to its matching '}'."""
    depth, i = 0, brace
    while True:
        c = text[i]
        if c == '"':
            i = _skip_string(text, i)
            continue
        depth += {"{": 1, "}": -1}.get(c, 0)
        if depth == 0:
            return text[brace:i + 1]
        i += 1


def _subject_makers(texts):
    """{function: keys} for each function that returns a ReportSubject (`ReportSubject Name(...)`):
    the identity keys of the one it builds, or of the maker it returns the result of."""
    bodies = {}
    for text in texts:
        for m in re.finditer(r"^ReportSubject\s+(?:\w+::)?(\w+)\([^;{]*\)\s*(?:const\s*)?\{", text, re.M):
            bodies[m.group(1)] = _body(text, m.end() - 1)
    makers = {}

    def keys_of(name, seen=()):
        body = bodies[name]
        built = re.search(r"ReportSubject\s*\w*\{(.*)\};", body, re.S)
        if built:
            return set(re.findall(r'\{\s*"([a-z_]+)"\s*,', built.group(1)))
        called = next((c for c in re.findall(r"return\s+(\w+)\(", body) if c in bodies and c not in seen), None)
        return keys_of(called, (*seen, name)) if called else set()
    for name in bodies:
        makers[name] = keys_of(name)
    return makers


def _subject_keys(text, start, call_start, first_arg, makers):
    """The identity keys of the subject a reporter call reports: a ReportSubject built in the same
    function, one assigned there from a maker, or a maker called as the first argument; with the
    keys the function adds to its identity (`subject.identity.emplace_back("key", ...)`)."""
    region = text[start:call_start]
    added = set(re.findall(r'\.identity\.(?:emplace_back|push_back)\(\s*\{?\s*"([a-z_]+)"', region))
    built = re.search(r"ReportSubject\s+\w+\{(.*?)\};", region, re.S)
    if built:
        return set(re.findall(r'\{\s*"([a-z_]+)"\s*,', built.group(1))) | added
    assigned = re.search(r"ReportSubject\s+\w+\s*=\s*(\w+)\(", region)
    called = re.match(r"(\w+)\(", first_arg.strip())
    name = assigned.group(1) if assigned else called.group(1) if called else None
    return set(makers.get(name, set())) | added


def _reported(text, path, events, lanes, makers):
    """The OutcomeReporter's lines: each Succeeded/Unfinished call logs its lane's words, with the
    identity keys of the subject it reports (_subject_keys), then the tail (Succeeded) or the
    reporter's own keys (Unfinished)."""
    for m in re.finditer(r"reporter_\.(Succeeded|Unfinished)\(", text):
        args, _ = _call_args(text, m.end() - 1)
        words = lanes.get(args[1].strip())
        if not words:
            continue
        start, _ = _enclosing_function(text, m.start())
        keys = _subject_keys(text, start, m.start(), args[0], makers)
        if m.group(1) == "Succeeded":
            names = [words["succeeded"]]
            keys |= set(re.findall(r'\{\s*"([a-z_]+)"\s*,', args[4])) if len(args) > 4 else set()
        else:
            names = [words[f] for f in WORD_FIELDS[1:]]
            keys |= UNFINISHED_KEYS
        for name in names:
            events[name]["keys"] |= keys
            events[name]["files"].add(path.relative_to(REPO).as_posix())


def scan():
    """{event: {"keys": set, "files": set}} for every Log call in the sources, and every line the
    OutcomeReporter writes for its callers."""
    events = defaultdict(lambda: {"keys": set(), "files": set()})
    lanes = _lane_words()
    paths = [path for root in SOURCES for path in sorted((REPO / root).rglob("*"))
             if path.suffix in (".cc", ".h") and not path.name.startswith("log.")]
    texts = {path: path.read_text() for path in paths}
    makers = _subject_makers(texts.values())
    for path in paths:
        text = texts[path]
        _reported(text, path, events, lanes, makers)
        for m in re.finditer(r"(?<![\w.:>])Log\(", text):
            line_start = text.rfind("\n", 0, m.start()) + 1
            if text[line_start:m.start()].lstrip().startswith("//") or re.search(r"\bvoid\s+$", text[line_start:m.start()]):
                continue
            args, _ = _call_args(text, m.end() - 1)
            if len(args) < 2:
                continue
            keys = set(re.findall(r'\{\s*"([a-z_]+)"\s*,', args[2])) if len(args) > 2 else set()
            for name in _event_names(text, m.start(), args[1]):
                events[name]["keys"] |= keys
                events[name]["files"].add(path.relative_to(REPO).as_posix())
    return dict(events)


def table(events):
    lines = ["| event | keys (besides ts, level, event) | logged in |", "|---|---|---|"]
    for name in sorted(events, key=str.lower):
        e = events[name]
        keys = ", ".join(sorted(e["keys"])) or "-"
        lines.append(f"| `{name}` | {keys} | {', '.join(sorted(e['files']))} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table(scan()))
