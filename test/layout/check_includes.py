#!/usr/bin/env python3
"""Checks that the folders' includes follow their libraries' declared dependencies.

Each folder under agent/ (and storage/) is one CMake library. A file may include headers of its
own folder and of the folders its library links (target_link_libraries), directly or through
them; anything else is an include against the direction of the data flow, and this test names it.
It also checks that the cpprest headers are included by one source file only.
Usage: check_includes.py REPO
"""
import os
import re
import sys

repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "..")
repo = os.path.abspath(repo)

folders = ["storage"] + sorted("agent/" + d for d in os.listdir(os.path.join(repo, "agent"))
                               if os.path.isfile(os.path.join(repo, "agent", d, "CMakeLists.txt")))
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
include_re = re.compile(r'#include\s+"((?:agent/\w+|storage)/[^"]+)"')
for folder in folders:
    allowed = closure(folder)
    for name in sorted(os.listdir(os.path.join(repo, folder))):
        if not name.endswith((".h", ".cc")):
            continue
        path = os.path.join(folder, name)
        for lineno, line in enumerate(open(os.path.join(repo, path), errors="replace"), 1):
            if re.search(r"#include\s+<cpprest/", line):
                cpprest_includers.append(path)
            m = include_re.search(line)
            if not m:
                continue
            target = m.group(1)
            target_dir = "storage" if target.startswith("storage/") else "/".join(target.split("/")[:2])
            if target_dir not in allowed:
                problems.append(f"{path}:{lineno}: includes {target}, but {folder}'s library does not link "
                                f"{target_dir} (allowed: {', '.join(sorted(allowed))})")

if len(set(cpprest_includers)) > 1:
    problems.append("cpprest headers are included by more than one file: " + ", ".join(sorted(set(cpprest_includers))))
for p in problems:
    print(p)
print(f"{len(folders)} folders checked, {len(problems)} problems")
sys.exit(1 if problems else 0)
