#!/usr/bin/env bash
# The dependency floors in pyproject.toml are true: install the lowest version of every direct
# dependency that the metadata allows (uv --resolution lowest-direct; uv comes from PyPI with
# the dev extra) into a fresh virtualenv, and run the fast tests against them.
#
#   scripts/lowest_deps.sh [PYTEST_ARGS...]
#
# Left out: tests/jslibs (the bundled npm libraries' behaviour, pinned by jsbuild's lockfile)
# and tests/sandbox/process (bubblewrap jails driven with the standard library): no floor of ours
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
# What was resolved for the names pyproject.toml lists (its [project] dependencies and the
# extras named), read from pyproject itself so the list cannot fall behind it.
resolved() {
  "$1" - "${@:2}" <<'PY'
import re, sys, tomllib
from importlib.metadata import PackageNotFoundError, version
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
specs = list(project["dependencies"])
for extra in sys.argv[1:]:
    specs += project["optional-dependencies"][extra]
for name in sorted({re.match(r"[A-Za-z0-9_.-]+", s).group() for s in specs} - {"toolfoundry"}):
    try:
        print(f"  {name} {version(name)}")
    except PackageNotFoundError:
        pass
PY
}
echo "lowest direct dependencies:"
resolved "$VENV/bin/python" postgres agents server
"$VENV/bin/pytest" -n 2 -q -p no:cacheprovider --ignore=tests/jslibs --ignore=tests/sandbox/process "$@"

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
resolved "$USER_VENV/bin/python" postgres agents server
"$USER_VENV/bin/pytest" -n 2 -q -p no:cacheprovider tests/agent tests/evaluation tests/server "$@"
