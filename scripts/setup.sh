#!/usr/bin/env bash
# Set up everything the project needs on a fresh machine: a virtualenv with the package and
# its dev tools, the QuickJS WebAssembly guest, the bundled npm libraries, and the Debian
# packages the slow suites use. Idempotent: re-running it only redoes what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-python3}

if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[dev,build]"
