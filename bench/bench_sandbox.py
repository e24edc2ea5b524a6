"""Sandbox benchmark: QuickJS-NG in wasmtime against the in-process alternatives, interleaved.

Run: ``.venv/bin/python bench/bench_sandbox.py [--rounds 7] [--batch 50] [--markdown]``.

Alternatives, each skipped with a line saying so when it is not installed
(``pip install -e '.[bench]'`` brings the first two, ``npm ci --prefix bench/node`` the last):
- native QuickJS (``quickjs`` from PyPI: the engine compiled for the host, memory-limited);
- V8 through ``mini-racer`` (PyPI; one ``MiniRacer`` is one V8 isolate);
- node's ``vm`` (Debian's node), in a node process kept warm (bench/node/baselines.js),
  timed inside node;
- quickjs-emscripten (npm): QuickJS compiled to WebAssembly by emscripten, run under node.

Every workload runs the same JavaScript on every side: compile a function, call it with
``{x: 1}``, hand ``2`` back. Ours is a module (``export function handler``) called with JSON
arguments from Python; the others evaluate ``(function handler(a){...})({x:1})``. Rounds are
ABAB: in each round every side runs one batch of ``--batch`` repetitions; a side's figure is
the median over rounds of its per-batch median (µs per repetition). Ratios are ours / theirs.
Not a test: figures depend on the machine's load, which is printed.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import (
    child_env,
    each,
    goal_line,
    interleaved,
    markdown_row,
    print_machine,
    process_seconds,
)
from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.storage import StorageHook, StorageQuota
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.sandbox.js.wasm_engine import default_engine

MIB = 1024 * 1024
CAP = SandboxPolicy().memory_bytes
TRIVIAL = "export function handler(a) { return a.x + 1 }"
CODE = "(function handler(a){return a.x+1})({x:1})"  # the same work, for the others
BOMB = "const a = []; while (true) a.push(new Uint8Array(1 << 20).fill(1))"
SMALL_BOMB = "const a = []; for (let i = 0; ; i++) a.push({ i, s: 'x' + i })"
NODE_DIR = Path(__file__).parent / "node"

Side = Callable[[], Any]


def batch_us(fn: Side, n: int, pace_s: float = 0.0) -> float:
    """Median µs of ``n`` calls of ``fn`` (``pace_s`` of sleep before each, not timed)."""
    return statistics.median(each(fn, n, pace_s)) * 1e6


def host() -> CallHost:
    return CallHost(
        fetch=None,
        storage=StorageHook(None, "bench", StorageQuota()),
        libraries=default_catalog(),
        log_lines=100,
        log_bytes=10_000,
        deadline=time.monotonic() + 3600,
    )


class NodeBaselines:
    """bench/node/baselines.js in one node process kept warm; None answers when missing."""

    def __init__(self) -> None:
        self.skip: dict[str, str] = {}
        exe = shutil.which("node")
        self._proc: subprocess.Popen[str] | None = None
        if exe is None:
            self.skip = {e: f"{e}: node not installed; skipped" for e in ("vm", "emscripten")}
            return
        self._proc = subprocess.Popen(
            [exe, "baselines.js"],
            cwd=NODE_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        ready = self._read()
        self.version = str(ready.get("node"))
        if ready.get("emscripten"):
            self.skip["emscripten"] = str(ready["emscripten"])

    def _read(self) -> dict[str, Any]:
        assert self._proc is not None
        assert self._proc.stdout is not None
        answer: dict[str, Any] = json.loads(self._proc.stdout.readline())
        return answer

    def ask(self, engine: str, work: str, n: int = 1, **extra: Any) -> float | None:
        if self._proc is None or engine in self.skip:
            return None
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps({"engine": engine, "work": work, "n": n, **extra}) + "\n")
        self._proc.stdin.flush()
        answer = self._read()
        return None if "skip" in answer else float(answer["us"])

    def close(self) -> None:
        if self._proc is not None:
            self._proc.terminate()
            self._proc.wait(timeout=10)


class NativeQuickJS:
    """``quickjs`` (PyPI): a Context is a fresh sandbox, limited to our memory cap."""

    def __init__(self) -> None:
        import quickjs  # type: ignore[import-untyped,import-not-found,unused-ignore]

        self._quickjs = quickjs
        self._reused = self._context()

    def _context(self) -> Any:
        context = self._quickjs.Context()
        context.set_memory_limit(CAP)
        return context

    def instantiate(self) -> None:
        self._context()

    def fresh(self) -> Any:
        return self._context().eval(CODE)

    def reused(self) -> Any:
        return self._reused.eval(CODE)


class MiniRacerV8:
    """``mini-racer`` (PyPI): a MiniRacer is one V8 isolate with one context."""

    def __init__(self) -> None:
        from py_mini_racer import MiniRacer  # type: ignore[import-not-found,unused-ignore]

        self._new = MiniRacer
        self._reused = MiniRacer()

    def instantiate(self) -> None:
        self._new().close()

    def fresh(self) -> Any:
        racer = self._new()
        try:
            return racer.eval(CODE)
        finally:
            racer.close()

    def reused(self) -> Any:
        return self._reused.eval(CODE)


def optional(name: str, make: Callable[[], Any]) -> tuple[Any | None, str | None]:
    try:
        return make(), None
    except ImportError:
        return None, f"{name}: not installed (pip install -e '.[bench]'); skipped"


BASELINES = ("quickjs", "mini-racer", "node vm", "quickjs-emscripten")


def table(rows: list[tuple[str, str, dict[str, float]]], markdown: bool) -> None:
    """One line per workload: what it is, ours, then each baseline with ours/theirs."""

    def cell(values: dict[str, float], side: str) -> str:
        if side not in values:
            return "-"
        ratio = f" ({values['ours'] / values[side]:.2f}x)" if side != "ours" else ""
        return f"{values[side]:.1f}{ratio}"

    head = ["workload", "unit", "ours", *BASELINES]
    if markdown:
        print(markdown_row(head))
        print("|" + "---|" * len(head))
    else:
        print(f"{head[0]:62} {head[1]:4} " + " ".join(f"{h:>20}" for h in head[2:]))
    for name, unit, values in rows:
        cells = [cell(values, side) for side in ("ours", *BASELINES)]
        if markdown:
            print(markdown_row([name, unit, *cells]))
        else:
            print(f"{name:62} {unit:4} " + " ".join(f"{c:>20}" for c in cells))


def cold_rows(rounds: int) -> list[tuple[str, str, dict[str, float]]]:
    """A new process, interpreter start + import + first trivial call, against node -e."""
    script = (
        "from toolfoundry.sandbox import run_js;"
        f"r = run_js({TRIVIAL!r}, {{'x': 1}}); assert r.ok, r"
    )
    ours = [sys.executable, "-c", script]
    node = ["node", "-e", f"console.log({CODE})"]
    env = child_env()
    process_seconds(ours, env)  # warm the page cache, compile and keep the bytecode

    def wall_ms(cmd: list[str]) -> Callable[[], float | None]:
        def run() -> float | None:
            if shutil.which(cmd[0]) is None and cmd[0] == "node":
                return None
            return process_seconds(cmd, env) * 1000

        return run

    got = interleaved({"ours": wall_ms(ours), "node vm": wall_ms(node)}, rounds)
    return [("cold: new process, import + first call (node: node -e)", "ms", got)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=7, help="ABAB rounds")
    parser.add_argument("--batch", type=int, default=50, help="repetitions per side per round")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    opts = parser.parse_args()
    rounds, n = opts.rounds, opts.batch

    engine = default_engine()
    run_js(TRIVIAL, {"x": 1})
    native, native_skip = optional("quickjs", NativeQuickJS)
    racer, racer_skip = optional("mini-racer", MiniRacerV8)
    node = NodeBaselines()
    guest = engine.fresh()
    limits = Limits(deadline=time.monotonic() + 3600, memory_bytes=CAP, output_bytes=MIB)

    def python_side(obj: Any, work: str, pace_s: float = 0.0) -> Callable[[], float | None]:
        if obj is None:
            return lambda: None
        return lambda: batch_us(getattr(obj, work), n, pace_s)

    def sides(ours: Callable[[], float | None], work: str) -> dict[str, Callable[[], float | None]]:
        return {
            "ours": ours,
            "quickjs": python_side(native, work),
            "mini-racer": python_side(racer, work),
            "node vm": lambda: node.ask("vm", work, n),
            "quickjs-emscripten": lambda: node.ask("emscripten", work, n),
        }

    rows: list[tuple[str, str, dict[str, float]]] = []
    rows.append(
        (
            "instantiate a fresh sandbox, nothing run (ours: a new wasm instance; quickjs:"
            " Context; mini-racer: isolate; vm: createContext; emscripten: runtime+context)",
            "us",
            interleaved(sides(lambda: batch_us(engine.fresh, n), "instantiate"), rounds),
        )
    )
    rows.append(
        (
            "fresh sandbox + compile + run, back to back (ours: run_js; the others: the row"
            " above, then evaluate the code in it)",
            "us",
            interleaved(
                sides(lambda: batch_us(lambda: run_js(TRIVIAL, {"x": 1}), n), "fresh"), rounds
            ),
        )
    )
    paced = {
        "ours": lambda: batch_us(lambda: run_js(TRIVIAL, {"x": 1}), n, 0.005),
        "quickjs": python_side(native, "fresh", 0.005),
        "mini-racer": python_side(racer, "fresh", 0.005),
    }
    rows.append(
        (
            "the same, calls 5 ms apart (ours takes a pre-made instance from its pool)",
            "us",
            interleaved(paced, rounds),
        )
    )
    rows.append(
        (
            "compile + run in a reused sandbox (ours: engine.run_in; quickjs/mini-racer:"
            " eval; vm: runInContext; emscripten: evalCode)",
            "us",
            interleaved(
                sides(
                    lambda: batch_us(
                        lambda: engine.run_in(guest, TRIVIAL, {"x": 1}, limits, host()), n
                    ),
                    "reused",
                ),
                rounds,
            ),
        )
    )

    loop = (
        "export function handler() { const b = new Uint8Array(4);"
        " for (let i = 0; i < 2000; i++) { BODY } return 1 }"
    )
    with_host = loop.replace("BODY", "crypto.getRandomValues(b);")
    without = loop.replace("BODY", "b[0] = i;")

    def ours_host_call() -> float:
        return (
            batch_us(lambda: run_js(with_host), 5) - batch_us(lambda: run_js(without), 5)
        ) / 2000

    rows.append(
        (
            "host call from JS: crypto.getRandomValues(4 bytes), per call (ours: 2000 in a"
            " loop minus the same loop without it; vm: 1000 in node)",
            "us",
            interleaved(
                {"ours": ours_host_call, "node vm": lambda: node.ask("vm", "host", 5)}, rounds
            ),
        )
    )

    def ours_overshoot() -> float:
        start = time.perf_counter()
        run_js("while (true) {}", None, SandboxPolicy(timeout_s=0.2))
        return (time.perf_counter() - start) * 1000 - 200

    def node_overshoot() -> float | None:
        us = node.ask("vm", "timeout", ms=200)
        return None if us is None else us / 1000

    rows.append(
        (
            "timeout overshoot, 200 ms budget on while(true){} (vm: the timeout option)",
            "ms",
            interleaved({"ours": ours_overshoot, "node vm": node_overshoot}, 5),
        )
    )
    node.close()
    rows.extend(cold_rows(5))

    table(rows, opts.markdown)
    fresh, apart = rows[1][2], rows[2][2]
    if "quickjs" in fresh:
        ratio = fresh["ours"] / fresh["quickjs"]
        measure = "a trivial call in a pristine sandbox, back to back, vs native QuickJS"
        goal_line(measure, ratio, goal="<= 1.0x", met=ratio <= 1.0)
    if "quickjs" in apart:
        measure = "the same, calls 5 ms apart, vs native QuickJS"
        goal_line(measure, apart["ours"] / apart["quickjs"])
    ours_only(engine, n)
    bombs()
    for note in (native_skip, racer_skip, *node.skip.values()):
        if note:
            print(note)
    print_machine()


def ours_only(engine: Any, n: int) -> None:
    """What only ours has: the pool of pre-made instances, and the engine's first call."""
    takes = []
    for _ in range(n):
        time.sleep(0.005)  # as between real calls: the pool refills off the call path
        start = time.perf_counter()
        holder = [engine.take()]
        takes.append(time.perf_counter() - start)
        engine.release(holder)
    script = (
        "import time; from toolfoundry.sandbox import run_js;"
        "import toolfoundry.sandbox.js.wasm_engine; t = time.perf_counter();"
        f"r = run_js({TRIVIAL!r}, {{'x': 1}}); assert r.ok;"
        "print((time.perf_counter() - t) * 1000)"
    )
    env = child_env()
    firsts = [
        float(
            subprocess.run(
                [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env
            ).stdout
        )
        for _ in range(5)
    ]
    take_us, first_ms = statistics.median(takes) * 1e6, statistics.median(firsts)
    print(
        f"ours only: a pre-made instance taken from the pool {take_us:.1f}"
        f" µs (median of {n}, 5 ms apart; goal <= 100 µs); engine + first call after imports"
        f" {first_ms:.1f} ms (median of 5 new processes; goal <= 40 ms)"
    )
    goal_line(
        "a pre-made instance taken from the pool",
        take_us,
        "µs",
        goal="<= 100 µs",
        met=take_us <= 100,
    )
    goal_line(
        "engine + first call, after imports", first_ms, "ms", goal="<= 40 ms", met=first_ms <= 40
    )


def bombs() -> None:
    """Memory bombs: how fast ours stops them, the host's peak RSS, node's behaviour."""
    # the bomb in a fresh process, so its peak RSS is the bomb's and not earlier rounds'
    bomb_script = (
        "import time; from toolfoundry.sandbox import SandboxPolicy, run_js;"
        "run_js('export default 1');"
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the parent across exec
        "rss = lambda: [int(l.split()[1]) / 1024 for l in open('/proc/self/status')"
        " if l.startswith('VmHWM')][0];"
        "before = rss(); times = []\n"
        "for _ in range(5):\n"
        "    t = time.perf_counter()\n"
        f"    r = run_js({BOMB!r}, None, SandboxPolicy(memory_bytes=16 << 20, timeout_s=10))\n"
        "    times.append((time.perf_counter() - t) * 1000)\n"
        "print(r.error.kind.value, sorted(times)[2], before, rss())"
    )
    out = subprocess.run(
        [sys.executable, "-c", bomb_script],
        capture_output=True,
        text=True,
        check=True,
        env=child_env(),
    ).stdout.split()
    kind, bomb_ms, rss_before, rss_bomb = out[0], float(out[1]), float(out[2]), float(out[3])
    start = time.perf_counter()
    small = run_js(SMALL_BOMB, None, SandboxPolicy(memory_bytes=16 * MIB, timeout_s=10))
    small_ms = (time.perf_counter() - start) * 1000
    assert small.error is not None
    line = f"16 MiB bomb, 1 MiB buffers: stopped as {kind} in {bomb_ms:.1f} ms (median of 5);"
    line += f" host peak RSS {rss_bomb:.0f} MiB (before: {rss_before:.0f} MiB)"
    print(line)
    goal_line(
        "a 16 MiB bomb of 1 MiB buffers stopped",
        bomb_ms,
        "ms",
        goal="<= 50 ms",
        met=kind == "memory_limit" and bomb_ms <= 50,
    )
    note = f"16 MiB bomb, small objects: stopped as {small.error.kind.value} in {small_ms:.1f} ms"
    if shutil.which("node"):
        start = time.perf_counter()
        # small objects: node's limit covers its JS heap, not ArrayBuffer memory
        died = subprocess.run(
            ["node", "--max-old-space-size=16", "-e", SMALL_BOMB],
            capture_output=True,
            timeout=60,
            check=False,
        )
        node_ms = (time.perf_counter() - start) * 1000
        note += f"; node --max-old-space-size=16: the process exits {died.returncode}"
        note += f" after {node_ms:.0f} ms"
    print(note)


if __name__ == "__main__":
    main()
