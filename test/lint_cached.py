#!/usr/bin/env python3
"""Runs clang-tidy over the project's .cc files, skipping each file whose clean result is cached.

A file's result is reused only when nothing that can change it has changed. Its key hashes:
  - the file itself and every project header it includes, transitively (#include "...");
  - its compile command (with the checkout's path taken out, so every checkout shares the cache);
  - the .clang-tidy files that apply to it (the top-level one and any in its folders);
  - the tool: `clang-tidy --version`, and the installed packages' versions (`dpkg-query -W`),
    which cover the system headers (Catch2, cpprest, the C++ library) and the tool's own build.
Only clean results are cached: a file with findings is checked again on every run, so a finding is
never hidden. The cache lives outside the checkout, like ccache's
(${NODEHOOK_LINT_CACHE_DIR:-${XDG_CACHE_HOME:-~/.cache}/nodehook-lint}), one empty file per key.

Usage: lint_cached.py --build DIR --repo DIR --jobs N --log FILE FILE_REGEX
Exit 0 when every file is clean (checked now or earlier), 1 on any finding.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def tool_key(tidy):
    h = hashlib.sha256()
    h.update(subprocess.run([tidy, "--version"], capture_output=True, text=True, check=True).stdout.encode())
    packages = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n"],
                              capture_output=True, text=True, check=False).stdout
    h.update(packages.encode())
    return h.hexdigest()


class Keys:
    """Hashes files and the project headers they include, each file read once per run."""

    def __init__(self, repo, build, base_key):
        self.repo, self.build, self.base_key = repo, build, base_key
        self.contents = {}
        self.closures = {}

    def read(self, path):
        if path not in self.contents:
            try:
                with open(path, "rb") as f:
                    self.contents[path] = f.read()
            except OSError:
                self.contents[path] = None
        return self.contents[path]

    def resolve(self, name, including_dir):
        for root in (including_dir, self.repo, self.build):
            candidate = os.path.normpath(os.path.join(root, name))
            if os.path.isfile(candidate):
                return candidate
        return None

    def closure(self, path):
        """The project files `path` includes, transitively, itself included (sorted)."""
        if path in self.closures:
            return self.closures[path]
        seen, stack = {path}, [path]
        while stack:
            current = stack.pop()
            text = self.read(current)
            if text is None:
                continue
            for name in INCLUDE.findall(text.decode("utf-8", "replace")):
                found = self.resolve(name, os.path.dirname(current))
                # An include that is not found here (a system header written with quotes) is
                # named in the key by its spelling; its content is the packages' business.
                target = found if found else "unresolved:" + name
                if target not in seen:
                    seen.add(target)
                    if found:
                        stack.append(found)
        self.closures[path] = sorted(seen)
        return self.closures[path]

    def tidy_configs(self, path):
        configs = []
        folder = os.path.dirname(path)
        while folder.startswith(self.repo):
            config = os.path.join(folder, ".clang-tidy")
            if os.path.isfile(config):
                configs.append(config)
            if folder == self.repo:
                break
            folder = os.path.dirname(folder)
        return configs

    def key(self, path, command):
        h = hashlib.sha256(self.base_key.encode())
        h.update(command.replace(self.repo, "<repo>").replace(self.build, "<build>").encode())
        for part in self.closure(path) + self.tidy_configs(path):
            h.update(b"\0" + os.path.relpath(part, self.repo).encode() + b"\0")
            content = self.read(part) if not part.startswith("unresolved:") else b""
            h.update(hashlib.sha256(content or b"").digest())
        return h.hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--log", required=True)
    parser.add_argument("regex")
    args = parser.parse_args()
    repo, build = os.path.realpath(args.repo), os.path.realpath(args.build)

    tidy = shutil.which("clang-tidy") or shutil.which("clang-tidy-14")
    if not tidy:
        sys.exit("lint: clang-tidy is not installed")
    cache = os.environ.get("NODEHOOK_LINT_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "nodehook-lint")
    os.makedirs(cache, exist_ok=True)

    with open(os.path.join(build, "compile_commands.json")) as f:
        entries = json.load(f)
    pattern = re.compile(args.regex)
    files = {}
    for entry in entries:
        path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
        if pattern.search(path):
            files[path] = entry.get("command") or " ".join(entry.get("arguments", []))

    keys = Keys(repo, build, tool_key(tidy))
    todo = []
    for path in sorted(files):
        key = keys.key(path, files[path])
        if not os.path.exists(os.path.join(cache, key)):
            todo.append((path, key))

    start = time.monotonic()

    def check(item):
        path, key = item
        run = subprocess.run([tidy, "-p", build, "--quiet", path], capture_output=True, text=True)
        if run.returncode == 0:
            with open(os.path.join(cache, key), "w"):
                pass
        return path, run.returncode, run.stdout + run.stderr

    failed = []
    with open(args.log, "w") as log, concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for done, (path, code, output) in enumerate(pool.map(check, todo), 1):
            log.write(f"== {os.path.relpath(path, repo)} (exit {code})\n{output}\n")
            if code != 0:
                failed.append(path)
            if sys.stdout.isatty() or done % 25 == 0 or done == len(todo):
                print(f"lint: {done}/{len(todo)} checked", flush=True)
    print(f"lint: {len(files)} files, {len(files) - len(todo)} clean in the cache, {len(todo)} checked "
          f"in {time.monotonic() - start:.0f} s", flush=True)
    if failed:
        print("lint: findings in " + ", ".join(os.path.relpath(p, repo) for p in failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
