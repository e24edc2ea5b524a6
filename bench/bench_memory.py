"""Memory a tool gets under its cap, and what reading the clock costs.

    .venv/bin/python bench/bench_memory.py [--rounds 5]

Ours is ``run_js`` under the default policy (64 MiB cap). Baselines, measured in the same run
and interleaved with ours round by round: native QuickJS (the ``quickjs`` package from PyPI:
the same engine family compiled for the host, with ``set_memory_limit`` at the same 64 MiB) and
node's ``vm`` (``runInContext``; node caps no context's memory, so it is a baseline for the
clock only). Optional baselines that are not installed are skipped with a note:
``pip install -e '.[bench]'`` brings ``quickjs``; node comes from Debian (``scripts/setup.sh``).

Printed, each with ours / baseline:
- usable memory: 1 MiB buffers kept until refused, and the largest single ArrayBuffer (MiB);
- a 2M-item array, 60 x 1 MiB buffers, a 50 MiB buffer: fits or not;
- how fast cap + 1 MiB is refused (ms, median);
- ``Date.now()`` and ``performance.now()`` per read (µs), from N reads minus an empty loop.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import time
from collections.abc import Callable
from typing import Any

from harness import goal_line, print_machine
from toolfoundry.sandbox import SandboxPolicy, run_js

MIB = 1024 * 1024
CAP = SandboxPolicy().memory_bytes
READS = 1_000_000  # --reads; an engine whose clock crosses into the host needs far fewer


def guarded(body: str) -> str:
    """An expression that runs ``body`` and is false when it throws (e.g. out of memory)."""
    return f"(() => {{ try {{ {body} }} catch (e) {{ return false }} }})()"


KEEP_BUFFERS = guarded(
    "const kept = []; try { for (;;) kept.push(new Uint8Array(1 << 20)) } catch (e) {}"
    " return kept.length"
)
ONE_BUFFER = guarded("return new ArrayBuffer(__SIZE__).byteLength > 0")
BIG_ARRAY = guarded("const a = []; for (let i = 0; i < 2e6; i++) a.push(i); return a.length")
SIXTY = guarded(
    "const a = []; for (let i = 0; i < 60; i++) a.push(new Uint8Array(1 << 20)); return a.length"
)
READ_LOOP = "(() => { let x = 0; for (let i = 0; i < __N__; i++) x += __READ__; return x > -1 })()"


def ours(expression: str) -> Any:
    r = run_js(f"export default {expression}")
    return r.value if r.ok else None


def ours_refusal_ms() -> float:
    start = time.perf_counter()
    r = run_js(f"export default new ArrayBuffer({CAP + MIB}).byteLength")
    elapsed = (time.perf_counter() - start) * 1000
    assert r.error is not None, r
    assert r.error.kind.value == "memory_limit", r
    return elapsed


class NativeQuickJS:
    """The ``quickjs`` binding: a fresh context per evaluation, memory limited like ours."""

    def __init__(self) -> None:
        import quickjs  # type: ignore[import-untyped,import-not-found,unused-ignore]

        self._quickjs = quickjs

    def __call__(self, expression: str) -> Any:
        context = self._quickjs.Context()
        context.set_memory_limit(CAP)
        try:
            return context.eval(expression)
        except self._quickjs.JSException:
            return None

    def refusal_ms(self) -> float:
        start = time.perf_counter()
        self(f"new ArrayBuffer({CAP + MIB}).byteLength")
        return (time.perf_counter() - start) * 1000


def load_native() -> tuple[NativeQuickJS | None, str]:
    try:
        return NativeQuickJS(), ""
    except ImportError:
        return None, "native quickjs: not installed (pip install -e '.[bench]'); skipped"


NODE_READS = r"""
const vm = require('vm');
const ctx = vm.createContext({ Date, performance });
const time = (src) => { const s = process.hrtime.bigint(); vm.runInContext(src, ctx);
  return Number(process.hrtime.bigint() - s) / 1e3; };
const N = __N__;
const loop = (read) =>
  `(() => { let x = 0; for (let i = 0; i < ${N}; i++) x += ${read}; return x })()`;
time(loop('Date.now()')); time(loop('0'));
const empty = time(loop('0'));
console.log(JSON.stringify({ date: (time(loop('Date.now()')) - empty) / N,
                             perf: (time(loop('performance.now()')) - empty) / N }));
"""


def node_reads(reads: int) -> dict[str, float] | None:
    exe = shutil.which("node")
    if exe is None:
        return None
    script = NODE_READS.replace("__N__", str(reads))
    out = subprocess.run([exe, "-e", script], capture_output=True, text=True, timeout=60)
    try:
        parsed: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return parsed


def per_read_us(evaluate: Callable[[str], Any], read: str, reads: int) -> float | None:
    """Host-timed: N reads minus N iterations of the same loop without the read (None when
    the engine has no such clock)."""

    def timed(body: str) -> tuple[float, Any]:
        src = READ_LOOP.replace("__N__", str(reads)).replace("__READ__", body)
        start = time.perf_counter()
        value = evaluate(src)
        return time.perf_counter() - start, value

    spent, ok = timed(read)
    empty, _ = timed("0")
    return (spent - empty) / reads * 1e6 if ok else None


def largest_buffer_mib(evaluate: Callable[[str], Any]) -> int:
    """The largest ArrayBuffer (whole MiB) that one fresh evaluation can allocate."""
    low, high = 0, CAP // MIB + 8
    while low < high:
        mid = (low + high + 1) // 2
        if evaluate(ONE_BUFFER.replace("__SIZE__", str(mid * MIB))):
            low = mid
        else:
            high = mid - 1
    return low


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--reads", type=int, default=READS, help="clock reads per measurement")
    opts = parser.parse_args()
    rounds, reads = opts.rounds, opts.reads
    native, native_note = load_native()
    run_js("export default 1")  # engine set-up is not what is measured

    samples: dict[str, list[float]] = {}

    def add(name: str, value: float | None) -> None:
        if value is not None:
            samples.setdefault(name, []).append(float(value))

    fits: dict[str, tuple[bool | None, bool | None]] = {}
    for _ in range(rounds):  # interleaved: each round measures ours, then each baseline
        add("buffers:ours", ours(KEEP_BUFFERS))
        add("buffers:native", native(KEEP_BUFFERS) if native else None)
        add("big:ours", largest_buffer_mib(ours))
        add("big:native", largest_buffer_mib(native) if native else None)
        add("refuse:ours", ours_refusal_ms())
        add("refuse:native", native.refusal_ms() if native else None)
        for read in ("Date.now()", "performance.now()"):
            add(f"{read}:ours", per_read_us(ours, read, reads))
            add(f"{read}:native", per_read_us(native, read, reads) if native else None)
        nd = node_reads(reads)
        if nd:
            add("Date.now():node", nd["date"])
            add("performance.now():node", nd["perf"])
    for name, expression in (("2M-item array", BIG_ARRAY), ("60 x 1 MiB", SIXTY)):
        fits[name] = (ours(expression), native(expression) if native else None)
    fifty = ONE_BUFFER.replace("__SIZE__", str(50 * MIB))
    fits["one 50 MiB buffer"] = (ours(fifty), native(fifty) if native else None)

    def med(name: str) -> float | None:
        values = samples.get(name)
        return statistics.median(values) if values else None

    def row(label: str, unit: str, key: str, other: str = "native", goal: str = "") -> None:
        a, b = med(f"{key}:ours"), med(f"{key}:{other}")
        mine = f"{a:10.2f}" if a is not None else f"{'failed':>10}"
        base = f"{b:10.2f}" if b is not None else f"{'n/a':>10}"
        ratio = f"{a / b:7.2f}x" if a is not None and b else f"{'':8}"
        print(f"{label:44} {mine} {unit:4} {base} {ratio}  {other} | {goal}")

    print(f"cap {CAP // MIB} MiB (default policy); medians of {rounds} interleaved rounds")
    print(f"{'measure':44} {'ours':>10} {'unit':4} {'baseline':>10} {'ratio':>8}  vs | goal")
    row("1 MiB buffers kept until refused", "MiB", "buffers", goal=">= 60 MiB")
    row("largest single ArrayBuffer", "MiB", "big", goal="-")
    row("cap + 1 MiB refused after", "ms", "refuse", goal="<= 50 ms")
    for read in ("Date.now()", "performance.now()"):
        row(f"{read} per read", "µs", read, goal="<= 2 µs")
        row(f"{read} per read", "µs", read, other="node", goal="(node vm)")
    for name, (a, b) in fits.items():
        print(f"{name + ' fits':44} {a!s:>10}      {b!s:>10}           native")
    # the goals, as absolute figures of ours (a failed measure is no goal line)
    goals = [
        ("1 MiB buffers kept until refused (64 MiB cap)", "buffers", "MiB", ">= 60 MiB", 60.0),
        ("the cap's next 1 MiB refused after", "refuse", "ms", "<= 50 ms", -50.0),
        ("Date.now() per read", "Date.now()", "µs", "<= 2 µs", -2.0),
        ("performance.now() per read", "performance.now()", "µs", "<= 2 µs", -2.0),
    ]
    for measure, key, unit, goal, bound in goals:
        value = med(f"{key}:ours")
        if value is not None:  # a negative bound is an upper one
            met = value >= bound if bound > 0 else value <= -bound
            goal_line(measure, value, unit, goal=goal, met=met)
    if native_note:
        print(native_note)
    if shutil.which("node") is None:
        print("node: not installed; node vm column skipped")
    print_machine()


if __name__ == "__main__":
    main()
