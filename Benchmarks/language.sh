#!/usr/bin/env bash
# How much of the Cloudinary language Derive reads: every string of the corpus that
# Benchmarks/language/corpus.py builds (the image transformation strings in the tests and docs
# of pinned PyPI source distributions, downloaded with pip and checked by SHA-256, the strings of
# Cloudinary's SDK repositories' tests in sdk-examples.tsv, and the hand-written documentation
# and issue examples in Benchmarks/language/) through parse, resolve and plan, as `derive
# explain` does. Prints the corpus's tune and held-out report parts, the shares accepted, refused
# with a clear reason and refused with an unclear one, by source, the excluded categories
# (generative AI, add-ons, object and OCR gravities), the tune part's most frequent refusals and
# every unclear one. The
# same run is LanguageCorpusTests, whose figures only move up. Results: Benchmarks/RESULTS.md.
# Usage: bash Benchmarks/language.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh
ensure_swift
language_corpus

report="$(mktemp)"
log="$(mktemp)"
trap 'rm -f "$report" "$log"' EXIT
if ! DERIVE_CORPUS_REPORT="$report" swift test --filter LanguageCorpusTests >"$log" 2>&1; then
    if [ ! -s "$report" ]; then
        tail -30 "$log" >&2
        exit 1
    fi
    echo "LanguageCorpusTests failed (figures below; the test's expectations in its output):" >&2
    grep -E "Expectation failed|error:" "$log" | head -10 >&2 || true
fi
cat "$report"
