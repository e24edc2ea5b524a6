#!/usr/bin/env bash
# The dependency floors in pyproject.toml are true: install the lowest version of every direct
# dependency that the metadata allows (uv --resolution lowest-direct; uv comes from PyPI with
# the dev extra) into a fresh virtualenv, and run the fast tests against them.
#
#   scripts/lowest_deps.sh [PYTEST_ARGS...]
#
# Left out: tests/jslibs (the bundled npm libraries' behaviour, pinned by jsbuild's lockfile)
# and tests/process (bubblewrap jails driven with the standard library): no floor of ours
# decides how they run, and together they are about a third of the suite's time.
set -euo pipefail
cd "$(dirname "$0")/.."
UV=$PWD/.venv/bin/uv
VENV=$(mktemp -d)/lowest
trap 'rm -rf "$(dirname "$VENV")"' EXIT
"$UV" venv -q --python .venv/bin/python "$VENV"
"$UV" pip install -q --python "$VENV/bin/python" --resolution lowest-direct -e ".[dev]"
echo "lowest direct dependencies:"
"$UV" pip list --python "$VENV/bin/python" 2>/dev/null \
  | grep -iE "^(mcp|pydantic|click|rich|sqlalchemy|alembic|httpx|starlette|uvicorn|jsonschema|openai|anthropic|psycopg|wasmtime|tree-sitter|pytest) " \
  | awk '{printf "  %s %s\n", $1, $2}'
"$VENV/bin/pytest" -n 2 -q -p no:cacheprovider --ignore=tests/jslibs --ignore=tests/process "$@"
