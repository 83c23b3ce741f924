#!/usr/bin/env bash
# Runs every test of Derive on a fresh Debian 12 machine: installs what is missing, then runs
# `swift test`. Integration servers (PostgreSQL, an HTTP origin, an S3-compatible store) are
# started here as later parts of Derive need them, each on a free loopback port and stopped on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
source Scripts/lib.sh

ensure_swift
ensure_packages "${DERIVE_BUILD_PACKAGES[@]}" python3 python3-pip
# Reference implementations the tests compare against: Python's JSON Schema validator,
# Pillow with LittleCMS (colour management), and the BlurHash reference.
ensure_python_modules jsonschema=jsonschema PIL=pillow blurhash=blurhash

export DERIVE_TEST_SUITE=1
export DERIVE_FIXTURES="${DERIVE_FIXTURES:-$(cd .. && pwd)/shared/fixtures}"
swift test "$@"
