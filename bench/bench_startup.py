"""Start-up: a new process to its first answer.

    .venv/bin/python bench/bench_startup.py [--rounds 5] [--compare-src DIR]

Each row is a new process, measured in interleaved rounds with the baselines from the same run
(``python -c pass``, ``node -e 0`` when node is installed, ``python -c 'import mcp'``, the SDK
alone, and ``python -c 'import mcp.server.lowlevel'``, what ``serve`` must import of it anyway);
medians printed with the ratio to ``pass``. Processes keep their bytecode, as an installed
package does (``harness.child_env``; one untimed round first compiles it):
- ``serve initialize``: ``toolfoundry serve`` over stdio on a seeded SQLite registry, timed from
  the spawn to the JSON-RPC answer of ``initialize`` (goal: <= 0.5 s); ``serve tools/list``:
  the same process on to the answer of its first ``tools/list`` (after ``initialized``);
- ``Foundry.open``: ``Foundry.open(URL)`` alone (the imports and opening the registry);
  ``Foundry.open + call``: the same and one ``fd.call`` of a JS tool (goal: <= 0.3 s);
  ``... no kept bytecode``: the same with the bundled JavaScript libraries' bytecode removed
  from the cache before each run (the first process on a machine compiles them all);
- ``run_js``: ``from toolfoundry import run_js`` and one call, the sandbox alone;
- ``tools list``: the CLI listing the same registry (``bench/bench_listing.py`` has 10 000).

``--python PATH`` runs the processes with another interpreter: a virtualenv's with the wheel
installed (``make dist``, then ``pip install dist/*.whl[server]``) measures what users install.
``--compare-src DIR`` also runs every toolfoundry row from another source tree (``PYTHONPATH``,
e.g. ``python bench/harness.py HEAD~1 /tmp/<you>-before``), interleaved with ours, each such
row printed after ours with ``(before)``: a before/after in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from harness import CLI, child_env, goal_line, interleaved, print_machine, process_seconds

PY = sys.executable
# run as ``python -c SEED URL`` by the toolfoundry under test: each tree writes its own schema
SEED = """
import sys
from toolfoundry import Foundry
with Foundry.open(sys.argv[1]) as fd:
    created = fd.create_tool(
        {
            "name": "trim",
            "description": "Trims the text it is given.",
            "code": "export function handler({ text }) { return text.trim() }",
            "parameters": {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
            "tests": [{"input": {"text": " a "}, "expected": "a"}],
        }
    )
    if created.status == "rejected":
        raise SystemExit(f"seeding failed: {created}")
    if created.status == "pending_approval":
        fd.approve("trim", by="bench")
"""


def seed(directory: Path, src: str | None) -> str:
    """A SQLite registry in ``directory`` with one active tool, ``trim``, written by ``src``'s
    toolfoundry (None: this tree's); returns its URL. Also compiles the guest and keeps the
    libraries' bytecode (another tree's in its own cache: see :func:`tree_env`)."""
    directory.mkdir()
    url = f"sqlite:///{directory / 'registry.db'}"
    process_seconds([PY, "-c", SEED, url], tree_env(directory, src))
    return url


def tree_env(directory: Path, src: str | None) -> dict[str, str]:
    """The environment of ``src``'s processes. Another tree gets a cache directory of its own:
    the kept library bytecode is keyed by the libraries' files, which differ between trees, so
    one shared cache would be recompiled and rewritten by every other process."""
    env = child_env(src)
    if src is not None:
        env["XDG_CACHE_HOME"] = str(directory / "cache")
    return env


def serve_answers(env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Seconds from spawning ``toolfoundry serve`` to its ``initialize`` answer, and to the
    answer of the first ``tools/list`` sent after ``notifications/initialized``."""
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    }
    start = time.perf_counter()
    proc = subprocess.Popen(
        [*CLI, "serve"],
        env=env,
        cwd=cwd,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    proc.stdin.write((json.dumps(request) + "\n").encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    initialized = time.perf_counter() - start
    answer = json.loads(line)
    if answer.get("id") != 1 or "result" not in answer:
        raise RuntimeError(f"unexpected initialize answer: {line!r}")
    follow = [
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
    ]
    proc.stdin.write("".join(json.dumps(m) + "\n" for m in follow).encode())
    proc.stdin.flush()
    line = proc.stdout.readline()
    listed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    answer = json.loads(line)
    if answer.get("id") != 2 or "trim" not in {t["name"] for t in answer["result"]["tools"]}:
        raise RuntimeError(f"unexpected tools/list answer: {line[:200]!r}")
    return initialized, listed


def no_kept_bytecode(cache: Path) -> dict[str, str]:
    """A copy of the compiled-guest cache without the libraries' kept bytecode (a machine's
    first process compiles them); the variables that point a process at it."""
    source = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolfoundry"
    target = cache / "toolfoundry"
    shutil.copytree(source / "wasm", target / "wasm", ignore=shutil.ignore_patterns("*.libs"))
    return {"XDG_CACHE_HOME": str(cache)}


def tree_rows(
    url: str, cwd: Path, uncached: dict[str, str], src: str | None
) -> dict[str, Callable[[], float]]:
    """The toolfoundry rows, each a new process from ``src`` (None: this tree) on ``url``
    (``seed``'s, in ``cwd``); ``uncached``: ``no_kept_bytecode``'s variables."""
    env = {**tree_env(cwd, src), "TOOLFOUNDRY_DB": url}
    cold = {**env, **uncached}
    kept = Path(uncached["XDG_CACHE_HOME"], "toolfoundry", "wasm")
    opened = f"from toolfoundry import Foundry\nfd = Foundry.open({url!r})\n"
    call = opened + "assert fd.call('trim', {'text': ' a '}).ok\n"
    js = "from toolfoundry import run_js\nassert run_js('export default 1').ok\n"

    def cold_call() -> float:
        for path in kept.glob("*.libs"):
            path.unlink()  # written again by the run: removed before each
        return process_seconds([PY, "-c", call], cold)

    serve: list[tuple[float, float]] = []

    def serve_initialize() -> float:
        serve.append(serve_answers(env, cwd))
        return serve[-1][0]

    return {
        "run_js": lambda: process_seconds([PY, "-c", js], env),
        "Foundry.open": lambda: process_seconds([PY, "-c", opened], env),
        "Foundry.open + call": lambda: process_seconds([PY, "-c", call], env),
        "  ... no kept bytecode": cold_call,
        "tools list": lambda: process_seconds([*CLI, "tools", "list"], env),
        "serve initialize": serve_initialize,
        "serve tools/list": lambda: serve[-1][1],  # the same process, on to tools/list
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--compare-src", default=None, help="another tree's src/ (before)")
    parser.add_argument(
        "--python",
        default=None,
        help="the measured processes' interpreter, e.g. a virtualenv's with the built wheel "
        "installed (pip compiled its bytecode): the product as users get it",
    )
    args = parser.parse_args()
    if args.python:
        global PY, CLI
        PY = args.python
        CLI = [PY, *CLI[1:]]
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        trees = {"ours": None, "before": args.compare_src} if args.compare_src else {"ours": None}
        urls = {name: seed(directory / name, src) for name, src in trees.items()}
        uncached = no_kept_bytecode(directory / "cache")
        env = child_env()

        def python(code: str) -> Callable[[], float]:
            return lambda: process_seconds([PY, "-c", code], env)

        rows: dict[str, Callable[[], float]] = {}
        if shutil.which("node"):
            rows["node -e 0"] = lambda: process_seconds(["node", "-e", "0"], env)
        rows["python -c pass"] = python("pass")
        rows["python -c 'import mcp'"] = python("import mcp")
        rows["python -c 'import mcp.server.lowlevel'"] = python("import mcp.server.lowlevel")
        ours = tree_rows(urls["ours"], directory / "ours", uncached, None)
        before = {}
        if args.compare_src:
            before = tree_rows(urls["before"], directory / "before", uncached, args.compare_src)
        for name, measure in ours.items():
            rows[name] = measure
            if name in before:
                rows[f"{name} (before)"] = before[name]
        # interleaved: load moves every row alike; the untimed round compiles the bytecode
        medians = interleaved(rows, args.rounds, warm=1)
    base = medians["python -c pass"]
    width = max(26, *(len(name) for name in medians))
    print(f"{'process':<{width}} {'median':>9} {'x pass':>7}")
    for name, median in medians.items():
        print(f"{name:<{width}} {median * 1000:>7.0f}ms {median / base:>7.1f}")
    if args.compare_src:
        print(f"(before): the same process from {args.compare_src}")
    for name, goal_s in (("Foundry.open + call", 0.3), ("serve initialize", 0.5)):
        took = medians[name]
        goal_line(f"{name}, a new process", took, "s", goal=f"<= {goal_s} s", met=took <= goal_s)
    # what serve costs of its own: against importing the MCP SDK's server alone
    sdk = medians["python -c 'import mcp.server.lowlevel'"]
    goal_line(
        "serve initialize vs importing the MCP SDK's server", medians["serve initialize"] / sdk
    )
    print_machine()


if __name__ == "__main__":
    main()
