"""Cheap measurements for the fleet simulation: a process's CPU and memory from /proc, plain
HTTP GETs on loopback, and Prometheus text parsed into {(name, labels): value}.

Everything here is read-only and safe to call from several threads."""

import http.client
import os
import re

_TICKS = os.sysconf("SC_CLK_TCK")
_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)')
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def cpu_seconds(pid):
    """utime + stime of the process itself (children such as hooks excluded); None once gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / _TICKS


def memory_kib(pid, field):
    """A VmRSS/VmHWM-style field of /proc/PID/status in KiB; None once gone."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak_rss(pid):
    """Starts a new VmHWM period (Linux: writing 5 to clear_refs); False when not allowed."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def http_get(port, path, timeout=3.0):
    """(status, body) of GET http://127.0.0.1:PORT/PATH; (None, error text) when nothing answered."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request("GET", path)
        resp = conn.getresponse()
        return resp.status, resp.read().decode(errors="replace")
    except OSError as e:
        return None, str(e)
    finally:
        conn.close()


def parse_prometheus(text):
    """{(name, frozenset of (label, value)): float} for every sample line."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            continue
        labels = frozenset(_LABEL.findall(m.group(2) or ""))
        try:
            samples[(m.group(1), labels)] = float(m.group(3))
        except ValueError:
            continue
    return samples


def sum_samples(samples, name, by=None, **match):
    """Sums samples of `name` whose labels include `match`; grouped by label `by` when given."""
    total = {} if by else 0.0
    for (n, labels), value in samples.items():
        if n != name:
            continue
        d = dict(labels)
        if any(d.get(k) != v for k, v in match.items()):
            continue
        if by:
            total[d.get(by, "")] = total.get(d.get(by, ""), 0.0) + value
        else:
            total += value
    return total
