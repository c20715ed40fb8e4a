#!/usr/bin/env python3
"""The lint cache's key (test/lint_cached.py): what must re-check a file does, and nothing else.
A file's key changes with the file, with any project header it includes (transitively), with its
compile command and with a .clang-tidy on its path; it does not change with the checkout's path
or with a header it does not include. Usage: lint_cached_test.py (exit 0: all hold)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lint_cached import Keys  # noqa: E402


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def make_repo(root):
    write(f"{root}/.clang-tidy", "Checks: '-*,bugprone-*'\n")
    write(f"{root}/agent/a/a.cc", '#include "agent/a/a.h"\n#include <vector>\nint f() { return g(); }\n')
    write(f"{root}/agent/a/a.h", '#pragma once\n#include "agent/b/b.h"\n')
    write(f"{root}/agent/b/b.h", "#pragma once\ninline int g() { return 1; }\n")
    write(f"{root}/agent/b/other.h", "#pragma once\n")


def key(root, command="clang++ -I<root> -c agent/a/a.cc"):
    keys = Keys(root, f"{root}/build", "tool")
    return keys.key(f"{root}/agent/a/a.cc", command.replace("<root>", root))


failures = []


def check(what, condition):
    if not condition:
        failures.append(what)


with tempfile.TemporaryDirectory() as one, tempfile.TemporaryDirectory() as two:
    make_repo(one)
    make_repo(two)
    base = key(one)
    check("the same inputs in another checkout give the same key", key(two) == base)
    write(f"{one}/agent/b/other.h", "#pragma once\nint unrelated;\n")
    check("a header the file does not include leaves its key alone", key(one) == base)
    write(f"{one}/agent/b/b.h", "#pragma once\ninline int g() { return 2; }\n")
    changed = key(one)
    check("a header included through another header changes the key", changed != base)
    check("a changed compile command changes the key", key(one, "clang++ -O2 -I<root> -c agent/a/a.cc") != changed)
    write(f"{one}/agent/a/.clang-tidy", "InheritParentConfig: true\n")
    check("a .clang-tidy on the file's path changes the key", key(one) != changed)

for f in failures:
    print("FAILED:", f)
print(f"{5 - len(failures)} passed, {len(failures)} failed")
sys.exit(1 if failures else 0)
