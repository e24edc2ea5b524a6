#!/usr/bin/env bash
# The dependency floors in pyproject.toml are true: install the lowest version of every direct
# dependency that the metadata allows (uv --resolution lowest-direct; uv comes from PyPI with
# the dev extra) into a fresh virtualenv, and run the fast tests against them.
#
#   scripts/lowest_deps.sh [PYTEST_ARGS...]
#
# Left out: tests/jslibs (the bundled npm libraries' behaviour, pinned by jsbuild's lockfile)
# and tests/process (bubblewrap jails driven with the standard library): no floor of ours
# decides how they run, and together they are about a third of the suite's time. Then the
# same for [all] alone (no dev packages to raise its floors): the agent, evaluation and
# server tests.
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

# The dev extra's other packages may raise a floor of a user-facing extra (openai-agents wants a
# newer openai than [agents] allows): resolve what a user of [all] alone gets at the lowest, with
# the same test tools, and run the tests of the code those extras serve.
TOOLS=$("$VENV/bin/python" -c "from importlib.metadata import version as v
print(' '.join(f'{n}=={v(n)}' for n in ('pytest', 'pytest-xdist', 'pytest-timeout', 'hypothesis', 'trustme', 'pyyaml')))")
USER_VENV=$(dirname "$VENV")/all
"$UV" venv -q --python .venv/bin/python "$USER_VENV"
# shellcheck disable=SC2086
"$UV" pip install -q --python "$USER_VENV/bin/python" --resolution lowest-direct -e ".[all]" $TOOLS
echo "lowest for [all] alone:"
"$UV" pip list --python "$USER_VENV/bin/python" 2>/dev/null \
  | grep -iE "^(mcp|openai|anthropic|psycopg|starlette|uvicorn) " | awk '{printf "  %s %s\n", $1, $2}'
"$USER_VENV/bin/pytest" -n 2 -q -p no:cacheprovider tests/agent tests/evaluation tests/server "$@"
