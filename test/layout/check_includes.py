#!/usr/bin/env python3
"""Checks that the folders' includes follow their libraries' declared dependencies.

Each folder under agent/ (at any depth: agent/kube/client is one) and storage/ is one CMake
library; a file belongs to the deepest such folder that contains it. A file may include headers
of its own folder and of the folders its library links (target_link_libraries), directly or
through them; anything else is an include against the direction of the data flow, and this test names it.
It also checks that the cpprest headers are included by exactly one source file.
Usage: check_includes.py REPO
"""
import os
import re
import sys

repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
repo = os.path.abspath(repo)

# A folder is any directory under agent/ (at any depth, e.g. agent/kube/client) whose
# CMakeLists.txt declares a library or an executable.
declares_target = re.compile(r"add_(?:library|executable)\(")
folders = ["storage"] + sorted(
    os.path.relpath(d, repo) for d, _, names in os.walk(os.path.join(repo, "agent"))
    if "CMakeLists.txt" in names and declares_target.search(open(os.path.join(d, "CMakeLists.txt")).read()))
target_folder = {}
deps = {}
for folder in folders:
    text = open(os.path.join(repo, folder, "CMakeLists.txt")).read()
    for m in re.finditer(r"add_(?:library|executable)\((\w+)", text):
        target_folder[m.group(1)] = folder
    deps[folder] = set()
    for m in re.finditer(r"target_link_libraries\(\w+([^)]*)\)", text):
        deps[folder].update(re.findall(r"\bnodehook_\w+|\bnodehook\b", m.group(1)))


def closure(folder, seen=None):
    seen = seen if seen is not None else set()
    if folder in seen:
        return seen
    seen.add(folder)
    for target in deps.get(folder, ()):
        if target in target_folder:
            closure(target_folder[target], seen)
    return seen


problems = []
cpprest_includers = []
include_re = re.compile(r'#include\s+"((?:agent|storage)/[^"]+)"')


def owner(path):
    """The folder (library) a file belongs to: the deepest folder that contains it, or None."""
    d = os.path.dirname(path)
    while d:
        if d in deps:
            return d
        d = os.path.dirname(d)
    return None


sources = []
for root in ("agent", "storage"):
    for d, _, names in os.walk(os.path.join(repo, root)):
        sources += [os.path.relpath(os.path.join(d, n), repo) for n in names if n.endswith((".h", ".cc"))]
for path in sorted(sources):
    folder = owner(path)
    if folder is None:
        problems.append(f"{path}: in no folder whose CMakeLists.txt declares a library")
        continue
    allowed = closure(folder)
    for lineno, line in enumerate(open(os.path.join(repo, path), errors="replace"), 1):
        if re.search(r"#include\s+<cpprest/", line):
            cpprest_includers.append(path)
        m = include_re.search(line)
        if not m:
            continue
        target = m.group(1)
        target_dir = owner(target)
        if target_dir is None:
            problems.append(f"{path}:{lineno}: includes {target}, which is in no library's folder")
        elif target_dir not in allowed:
            problems.append(f"{path}:{lineno}: includes {target}, but {folder}'s library does not link "
                            f"{target_dir} (allowed: {', '.join(sorted(allowed))})")

# Exactly one: none would mean the scan missed the transport's folder.
if len(set(cpprest_includers)) != 1:
    problems.append("cpprest headers must be included by exactly one file, not: " +
                    (", ".join(sorted(set(cpprest_includers))) or "none"))
for p in problems:
    print(p)
print(f"{len(folders)} folders checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
