"""Math.random is seeded per call from the OS CSPRNG (cross-call state).

A process-wide Mersenne Twister handed every call its seed before: a tool that read enough
calls' Math.random could recover it and predict other calls' values. Each seed is now 8 fresh
bytes of ``os.urandom`` (``wasm_engine.py:_OsSeeds``), and nothing in ``sandbox/`` uses Python's
``random`` module.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

import pytest

from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.js import wasm_engine

SANDBOX = Path(wasm_engine.__file__).resolve().parents[1]
SEQUENCE = "export default Array.from({ length: 64 }, () => Math.random())"


def test_two_calls_draw_unrelated_math_random_sequences() -> None:
    first, second = run_js(SEQUENCE), run_js(SEQUENCE)
    assert first.ok, first.error
    assert second.ok, second.error
    assert len(set(first.value)) == 64
    # not equal, and not the same stream shifted: no value of one call appears in the other
    assert not set(first.value) & set(second.value)


def test_many_calls_never_share_a_first_value() -> None:
    firsts = [run_js("export default Math.random()").value for _ in range(40)]
    assert len(set(firsts)) == len(firsts)


def test_every_seed_is_fresh_os_entropy(monkeypatch: pytest.MonkeyPatch) -> None:
    # the seeds are the OS bytes themselves, 8 per call, each used once
    given: list[int] = []

    def urandom(n: int) -> bytes:
        given.append(n)
        return (bytes(range(256)) * (n // 256 + 1))[:n]

    monkeypatch.setattr(os, "urandom", urandom)  # the module reads os.urandom per chunk
    seeds = wasm_engine._OsSeeds()
    taken = [seeds.take() for _ in range(seeds.CHUNK // 8 + 1)]
    assert given == [seeds.CHUNK, seeds.CHUNK]  # refilled from the OS when spent
    chunk = bytes(range(256)) * (seeds.CHUNK // 256)
    expected = [(int.from_bytes(chunk[i : i + 8], "little") >> 1) | 1 for i in range(0, 64, 8)]
    assert taken[:8] == expected
    assert all(0 < s < 1 << 63 for s in taken)


def test_nothing_in_the_sandbox_uses_the_random_module() -> None:
    offenders = []
    for path in SANDBOX.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module or ""]
            if any(n == "random" or n.startswith("random.") for n in names):
                offenders.append(f"{path.relative_to(SANDBOX)}:{getattr(node, 'lineno', 0)}")
    assert offenders == []
