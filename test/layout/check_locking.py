#!/usr/bin/env python3
"""Checks that every lock under agent/ and storage/ is a checked nodehook::Mutex.

nodehook::Mutex and MutexLock (agent/base/mutex.h) carry clang's thread-safety annotations, so
GUARDED_BY(mu_) is checked at compile time (-Wthread-safety); std::mutex and std::lock_guard do
not, and a lock note on them is only a comment. This test names every file:line outside
agent/base/mutex.h that declares a std::mutex, std::recursive_mutex, std::shared_mutex (or their
timed variants), a std::lock_guard, a std::scoped_lock or a std::unique_lock<std::mutex>. Comments
are ignored, and so is a reference to a held std::unique_lock<std::mutex>&, which is what
Mutex::WaitWith hands to condition-variable waits (Clock::WaitUntil).
Usage: check_locking.py REPO
"""
import os
import re
import sys

repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
repo = os.path.abspath(repo)

# The one file that may wrap the standard types.
allowed = {"agent/base/mutex.h"}
# What Mutex::WaitWith passes to a wait: a reference to the lock it already holds.
held_reference = re.compile(r"std::unique_lock<\s*std::mutex\s*>\s*&")
forbidden = re.compile(r"\bstd::(?:(?:recursive_|shared_)?(?:timed_)?mutex|lock_guard|scoped_lock)\b"
                       r"|\bstd::unique_lock<\s*std::mutex\s*>")


def code_lines(path):
    """(line number, text) of each line, with comments, string and character literals blanked."""
    text = open(path, errors="replace").read()
    token = re.compile(r'R"([^(\s]*)\(.*?\)\1"|//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S)
    text = token.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return enumerate(text.split("\n"), 1)


problems = []
sources = []
for root in ("agent", "storage"):
    for d, _, names in os.walk(os.path.join(repo, root)):
        sources += [os.path.relpath(os.path.join(d, n), repo) for n in names if n.endswith((".h", ".cc"))]
for path in sorted(sources):
    if path in allowed:
        continue
    for lineno, line in code_lines(os.path.join(repo, path)):
        m = forbidden.search(held_reference.sub("", line))
        if m:
            problems.append(f"{path}:{lineno}: {m.group(0)}: use nodehook::Mutex and MutexLock "
                            f"(agent/base/mutex.h) with GUARDED_BY")
for p in problems:
    print(p)
print(f"{len(sources)} files checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
