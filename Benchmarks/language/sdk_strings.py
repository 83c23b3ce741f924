#!/usr/bin/env python3
"""Writes sdk-examples.tsv: the image transformation strings quoted in the test files of
Cloudinary's SDK repositories (public, MIT-licensed), one a line with the repository, commit,
path and line that quote it. The repositories are read from local git snapshots (bare
directories given on the command line, each `owner+name/repo`); nothing of them is copied but
the strings themselves, which are a few words each. The selection is corpus.py's: a candidate
is an image delivery URL's leading transformation components or a string wholly made of
transformation components; video strings, and strings from files about video, are left out.

Usage: sdk_strings.py SNAPSHOT... > Benchmarks/language/sdk-examples.tsv

The file was written from these snapshots, in this order (cloudinary/<name>@<commit>): the first
nine in issue 30's first session; the twelve after them, with .dart, .scala, .jsx and .tsx test
files read too, in its second:
cloudinary_npm@f75fb556ed8e cloudinary_php@c373c01db4ec cloudinary_java@e4f0019dda03
cloudinary_gem@da05bad41d3f CloudinaryDotNet@37776a488267 cloudinary_ios@ea94096c41ad
cloudinary_js@3a69a02d1366 cloudinary-go@02155967a4ad js-url-gen@f7c91d30e1a0
cloudinary_kotlin@71905162c38d cloudinary_android@126d27e217a2 cloudinary_dart@0d85ce0284c5
cloudinary_flutter@3715409cb632 cloudinary_scala@d045fa146c37 cloudinary_angular@13606a732e95
cloudinary-react@cf7b68bc3a71 cloudinary-vue@d52e86bed4bf cloudinary-react-native@ef0b0d4db01f
frontend-frameworks@9a05f3571fec js-transformation-builder-sdk@ca5e6b10af89
php-transformation-builder-sdk@e8de59409e8e
"""
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import corpus  # noqa: E402

# Test files: by folder and by name, in every language the SDKs are written in.
TEST_FILE = re.compile(r"(^|/)(test|tests|spec|__TESTS__|__tests__|Tests)/|Test\.(java|cs|swift|m|kt|scala)$|Tests?\.(cs|swift)$|_spec\.rb$|_test\.(go|dart)$|\.(spec|test)\.(js|ts|jsx|tsx)$")
SOURCE_EXT = re.compile(r"\.(js|ts|jsx|tsx|php|java|rb|cs|swift|m|go|py|kt|scala|dart)$")
# Files about video, and tests of expressions alone (the SDKs' expression normalisers and
# condition-expression builders: `w_gt_400`, `$__height`, which are not transformations; as
# corpus.py leaves out pycloudinary's test_expression_normalization.py).
SKIPPED_FILE = re.compile(r"video|audio|streaming|expression", re.I)
# String literals: double, single and backtick quotes, on one line.
LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"|\'((?:[^\'\\\n]|\\.)*)\'|`([^`\n]*)`')
# A PHP string in double quotes, and any Dart or Kotlin string, puts a variable's value in place
# of `$name` (`"e_blue:$this->adjustLevel"` is `e_blue:17` when the test runs): such a literal
# is not the string the SDK prints, and is left out. Cloudinary's own `$name` variables are
# written in single quotes in PHP, and with `\$` in Dart and Kotlin (left out with every
# backslash below).
INTERPOLATED = re.compile(r"\$[A-Za-z_{]")


def snapshot_strings(repo):
    repo = Path(repo)
    name = repo.parent.name.replace("+", "/")
    commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    files = subprocess.run(["git", "-C", repo, "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True).stdout.split("\n")
    for path in sorted(files):
        if not (TEST_FILE.search(path) and SOURCE_EXT.search(path)) or SKIPPED_FILE.search(path):
            continue
        blob = subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], capture_output=True, check=True).stdout
        text = blob.decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            for m in LITERAL.finditer(line):
                value = next(g for g in m.groups() if g is not None)
                if "${" in value or "#{" in value or "\\" in value:
                    continue
                interpolating = (path.endswith(".php") and m.group(1) is not None) or path.endswith((".dart", ".kt"))
                if interpolating and INTERPOLATED.search(value):
                    continue
                for string in corpus.candidates(value):
                    if corpus.is_video(string):
                        continue
                    yield string, f"github.com/{name}@{commit[:12]}:{path}:{number}"


def main():
    seen = set()
    print("# Image transformation strings quoted in the tests of Cloudinary's SDK repositories (MIT),")
    print("# one a line with the repository, commit, path and line; written by sdk_strings.py from git")
    print("# snapshots of the repositories. Every string once, at the first place it was found.")
    for repo in sys.argv[1:]:
        for string, source in snapshot_strings(repo):
            if string in seen:
                continue
            seen.add(string)
            print(f"{string}\t{source}")


if __name__ == "__main__":
    main()
