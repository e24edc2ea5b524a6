"""Start-up: a new process to its first answer (issue 15).

    .venv/bin/python bench/bench_startup.py [--rounds 5]

Each row is a new process, measured in interleaved rounds with two baselines from the same run
(``python -c pass`` and ``python -c 'import mcp'``); medians printed with the ratio to ``pass``:
- ``serve initialize``: ``toolfoundry serve`` over stdio on a seeded SQLite registry, timed from
  the spawn to the JSON-RPC answer of ``initialize`` (goal: <= 0.5 s);
- ``Foundry.open + call``: ``Foundry.open(URL)`` and one ``fd.call`` of a JS tool (goal:
  <= 0.3 s);
- ``tools list``: the CLI listing the same registry.
"""

from __future__ import annotations

import argparse
import json
import os
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


def serve_initialize(env: dict[str, str], cwd: Path) -> float:
    """Seconds from spawning ``toolfoundry serve`` to its ``initialize`` answer."""
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
    elapsed = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=30)
    answer = json.loads(line)
    if answer.get("id") != 1 or "result" not in answer:
        raise RuntimeError(f"unexpected initialize answer: {line!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        url = seed(directory)
        env = {**os.environ, "TOOLFOUNDRY_DB": url}
        call = (
            "from toolfoundry import Foundry\n"
            f"fd = Foundry.open({url!r})\n"
            "assert fd.call('trim', {'text': ' a '}).ok\n"
        )
        rows: dict[str, Callable[[], float]] = {
            "python -c pass": lambda: run([PY, "-c", "pass"], env),
            "python -c 'import mcp'": lambda: run([PY, "-c", "import mcp"], env),
            "Foundry.open + call": lambda: run([PY, "-c", call], env),
            "tools list": lambda: run([*CLI, "tools", "list"], env),
            "serve initialize": lambda: serve_initialize(env, directory),
        }
        times: dict[str, list[float]] = {name: [] for name in rows}
        for _ in range(args.rounds):
            for name, measure in rows.items():  # interleaved: load moves every row alike
                times[name].append(measure())
    base = statistics.median(times["python -c pass"])
    print(f"{'process':<26} {'median':>9} {'x pass':>7}")
    for name, samples in times.items():
        median = statistics.median(samples)
        print(f"{name:<26} {median * 1000:>7.0f}ms {median / base:>7.1f}")


if __name__ == "__main__":
    main()
