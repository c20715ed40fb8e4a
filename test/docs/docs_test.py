#!/usr/bin/env python3
"""The README stays a newcomer's page and the docs stay connected: README.md is at most 20 KiB,
every docs/*.md file is linked from it, and every relative link in README.md and docs/*.md
names a file that exists and, for a Markdown file, a heading that exists in it.

Usage: docs_test.py REPO_DIR. Exit 0 when all hold; else 1, one line per problem."""

import re
import sys
from pathlib import Path

README_LIMIT = 20 * 1024
# [text](target): the text may hold one level of brackets; the target has no spaces.
LINK = re.compile(r"\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text):
    """(number, line) for the lines outside fenced code blocks."""
    inside = False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            inside = not inside
        elif not inside:
            yield number, line


def anchors(path):
    """GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, a repeated
    heading suffixed -1, -2, ..."""
    seen = {}
    found = set()
    for _, line in prose_lines(path.read_text()):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not heading:
            continue
        slug = re.sub(r"[^\w\- ]", "", heading.group(1).lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        found.add(slug if count == 0 else f"{slug}-{count}")
    return found


def links(path):
    for number, line in prose_lines(path.read_text()):
        for match in LINK.finditer(re.sub(r"`[^`]*`", "``", line)):  # a link inside `code` is text
            yield number, match.group(1)


def check(repo):
    problems = []
    readme = repo / "README.md"
    docs = sorted((repo / "docs").glob("*.md"))
    size = readme.stat().st_size
    if size > README_LIMIT:
        problems.append(f"README.md: {size} bytes, the limit is {README_LIMIT}; move the depth to docs/")
    checked = 0
    for page in [readme, *docs]:
        for number, target in links(page):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:
            file_part, _, anchor = target.partition("#")
            dest = (page.parent / file_part).resolve() if file_part else page
            where = f"{page.relative_to(repo)}:{number}: link {target}"
            checked += 1
            if not dest.exists():
                problems.append(f"{where}: no such file {dest}")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                problems.append(f"{where}: {dest.name} has no heading with anchor #{anchor}")
    linked = {(repo / t.partition("#")[0]).resolve() for _, t in links(readme) if t.startswith("docs/")}
    for doc in docs:
        if doc.resolve() not in linked:
            problems.append(f"README.md: does not link docs/{doc.name}; link it where its topic is summarized")
    if checked == 0:
        problems.append("no links found at all: the link pattern is broken")
    return problems, checked


def main():
    repo = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2])
    problems, checked = check(repo)
    for p in problems:
        print(p)
    print(f"docs_test: README.md {(repo / 'README.md').stat().st_size} bytes, {checked} links checked, "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
