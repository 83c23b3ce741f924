#!/usr/bin/env python3
"""Checks every relative link and anchor in Derive's Markdown documentation.

Usage: python3 Scripts/check-doc-links.py [FILE.md ...]

Without arguments it reads README.md, CHANGELOG.md, Docs/*.md, Benchmarks/**/*.md,
Deploy/*.md and Samples/*.md. For each link `[text](target)` (and `![alt](target)`, and
reference definitions `[name]: target`) outside code, it checks that a relative target exists
and, when the target has `#anchor`, that the anchor is a heading of the target Markdown file
(as GitHub spells heading anchors) or an `<a id="...">` in it. Links to other schemes
(https:, mailto:) are not fetched. Exits 1 and lists every broken link, or exits 0.
"""
import re
import sys
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_GLOBS = ["README.md", "CHANGELOG.md", "Docs/*.md", "Benchmarks/**/*.md", "Deploy/*.md", "Samples/*.md"]

LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ID = re.compile(r"<a\s+[^>]*(?:id|name)\s*=\s*\"([^\"]+)\"", re.IGNORECASE)
FENCE = re.compile(r"^\s{0,3}(```|~~~)")


def outside_fences(lines):
    """Yields (line number, text) of the lines outside fenced code."""
    fence = None
    for number, line in enumerate(lines, 1):
        match = FENCE.match(line)
        if match:
            if fence is None:
                fence = match.group(1)
            elif match.group(1) == fence:
                fence = None
            continue
        if fence is None:
            yield number, line


def without_code(lines):
    """Yields (line number, text) outside fenced code, with inline code spans blanked."""
    for number, line in outside_fences(lines):
        yield number, blank_code_spans(line)


def blank_code_spans(line):
    """Replaces what is inside `code` spans with x's, so nothing in them reads as a link."""
    out, i = [], 0
    while i < len(line):
        if line[i] == "`":
            ticks = len(line[i:]) - len(line[i:].lstrip("`"))
            close = line.find("`" * ticks, i + ticks)
            if close == -1:
                out.append(line[i:])
                break
            out.append("`" * ticks + "x" * (close - i - ticks) + "`" * ticks)
            i = close + ticks
        else:
            out.append(line[i])
            i += 1
    return "".join(out)


def heading_text(raw):
    """The text GitHub renders for a heading's Markdown."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", raw)  # links and images: their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "")
    text = re.sub(r"(\*\*|__)(.+?)\1", r"\2", text)
    text = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\1", text)
    text = re.sub(r"(?<!\w)_(?!\s)(.+?)(?<!\s)_(?!\w)", r"\1", text)
    return text


def slug(text):
    """GitHub's anchor for a heading: lower case, punctuation but - and _ dropped, spaces to -."""
    text = heading_text(text).strip().lower()
    kept = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in "-_ " or category[0] in "LNM" or category == "Pc":
            kept.append(ch)
    return "".join(kept).replace(" ", "-")


_anchors = {}


def anchors(path):
    """Every anchor of a Markdown file: headings (numbered -1, -2 when repeated) and HTML ids."""
    if path not in _anchors:
        found, seen = set(), {}
        lines = path.read_text(encoding="utf-8").split("\n")
        for _, line in outside_fences(lines):
            heading = HEADING.match(line)
            if heading:
                base = slug(heading.group(2))
                count = seen.get(base, 0)
                seen[base] = count + 1
                found.add(base if count == 0 else f"{base}-{count}")
            for anchor in HTML_ID.findall(line):
                found.add(anchor)
        _anchors[path] = found
    return _anchors[path]


def check(path):
    problems = []
    lines = path.read_text(encoding="utf-8").split("\n")
    for number, line in without_code(lines):
        targets = [m.group(2) for m in LINK.finditer(line)]
        definition = DEFINITION.match(line)
        if definition:
            targets.append(definition.group(1))
        for target in targets:
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):  # https:, mailto:, ...
                continue
            file_part, _, anchor = target.partition("#")
            destination = (path.parent / file_part).resolve() if file_part else path
            where = f"{path.relative_to(ROOT)}:{number}: {target}"
            if not destination.exists():
                problems.append(f"{where}: no such file {file_part}")
                continue
            if anchor and destination.suffix == ".md" and destination.is_file():
                if anchor not in anchors(destination):
                    problems.append(f"{where}: no anchor #{anchor} in {destination.relative_to(ROOT)}")
    return problems


def main(arguments):
    if arguments:
        files = [Path(a).resolve() for a in arguments]
    else:
        # A benchmark package's own build folder holds its dependencies' checkouts, not our pages.
        files = sorted({p.resolve() for pattern in DEFAULT_GLOBS for p in ROOT.glob(pattern)
                        if not any(part.startswith(".build") for part in p.relative_to(ROOT).parts)})
    problems = [problem for path in files for problem in check(path)]
    for problem in problems:
        print(problem)
    print(f"{len(files)} files, {len(problems)} broken links", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
