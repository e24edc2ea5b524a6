"""Start-up: a new process to its first answer (issue 15).

    .venv/bin/python bench/bench_startup.py [--rounds 5]

Each row is a new process, measured in interleaved rounds with the baselines from the same run
(``python -c pass``, ``node -e 0`` when node is installed, and ``python -c 'import mcp'``, the
SDK alone); medians printed with the ratio to ``pass``:
- ``serve initialize``: ``toolfoundry serve`` over stdio on a seeded SQLite registry, timed from
  the spawn to the JSON-RPC answer of ``initialize`` (goal: <= 0.5 s); ``serve tools/list``:
  the same process on to the answer of its first ``tools/list`` (after ``initialized``);
- ``Foundry.open + call``: ``Foundry.open(URL)`` and one ``fd.call`` of a JS tool (goal:
  <= 0.3 s); ``... no kept bytecode``: the same with the bundled libraries' bytecode removed
  from the cache before each run (the first process on a machine compiles them all);
- ``run_js``: ``from toolfoundry import run_js`` and one call, the sandbox alone;
- ``tools list``: the CLI listing the same registry (``bench/bench_listing.py`` has 10 000).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from toolfoundry import Foundry

CODE = "export function handler({ text }) { return text.trim() }\n"
PY = sys.executable
CLI = [PY, "-c", "from toolfoundry.cli import main; main()"]


def seed(directory: Path) -> str:
    """A SQLite registry with one active tool, ``trim``; returns its URL."""
    url = f"sqlite:///{directory / 'registry.db'}"
    with Foundry.open(url) as fd:
        created = fd.create_tool(
            {
                "name": "trim",
                "description": "Trims the text it is given.",
                "code": CODE,
                "parameters": {
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                },
                "tests": [{"input": {"text": " a "}, "expected": "a"}],
            }
        )
        if created.status == "rejected":
            raise RuntimeError(f"seeding failed: {created}")
        if created.status == "pending_approval":
            fd.approve("trim", by="bench")
    return url


def run(argv: list[str], env: dict[str, str]) -> float:
    """Seconds from spawn to exit of ``argv``."""
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        url = seed(directory)  # also compiles the guest and keeps the libraries' bytecode
        env = {**os.environ, "TOOLFOUNDRY_DB": url}
        cold = {**env, **no_kept_bytecode(directory / "cache")}
        kept = Path(cold["XDG_CACHE_HOME"], "toolfoundry", "wasm")
        call = (
            "from toolfoundry import Foundry\n"
            f"fd = Foundry.open({url!r})\n"
            "assert fd.call('trim', {'text': ' a '}).ok\n"
        )
        js = "from toolfoundry import run_js\nassert run_js('export default 1').ok\n"

        def cold_call() -> float:
            for path in kept.glob("*.libs"):
                path.unlink()  # written again by the run: removed before each
            return run([PY, "-c", call], cold)

        serve: list[tuple[float, float]] = []

        def serve_initialize() -> float:
            serve.append(serve_answers(env, directory))
            return serve[-1][0]

        rows: dict[str, Callable[[], float]] = {
            "python -c pass": lambda: run([PY, "-c", "pass"], env),
            "python -c 'import mcp'": lambda: run([PY, "-c", "import mcp"], env),
            "run_js": lambda: run([PY, "-c", js], env),
            "Foundry.open + call": lambda: run([PY, "-c", call], env),
            "  ... no kept bytecode": cold_call,
            "tools list": lambda: run([*CLI, "tools", "list"], env),
            "serve initialize": serve_initialize,
            "serve tools/list": lambda: serve[-1][1],  # the same process, on to tools/list
        }
        if shutil.which("node"):
            rows = {"node -e 0": lambda: run(["node", "-e", "0"], env), **rows}
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.rounds):
            for name, measure in rows.items():  # interleaved: load moves every row alike
                times[name].append(measure())
    base = statistics.median(times["python -c pass"])
    print(f"{'process':<26} {'median':>9} {'x pass':>7}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:<26} {median * 1000:>7.0f}ms {median / base:>7.1f}")
    print(f"machine: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
