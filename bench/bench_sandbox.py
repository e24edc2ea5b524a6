"""Sandbox benchmark: QuickJS-NG in wasmtime against a `node` baseline measured in the same run.

Run: ``.venv/bin/python bench/bench_sandbox.py [--rounds N]``. Prints a table of absolutes,
ratios to node, and the goals from issue 3. Not a test: numbers depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.storage import StorageHook, StorageQuota
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.sandbox.js.wasm_engine import default_engine

MIB = 1024 * 1024
TRIVIAL = "export function handler(a) { return a.x + 1 }"
BOMB = "const a = []; while (true) a.push(new Uint8Array(1 << 20).fill(1))"
SMALL_BOMB = "const a = []; for (let i = 0; ; i++) a.push({ i, s: 'x' + i })"


def median_us(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e6


def best_us(fn: Callable[[], Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times) * 1e6


def node(script: str) -> dict[str, float] | None:
    exe = shutil.which("node")
    if exe is None:
        return None
    out = subprocess.run(
        [exe, "-e", script], capture_output=True, text=True, timeout=120, check=False
    )
    try:
        parsed: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return None
    return parsed


def wall_ms(cmd: list[str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, timeout=120, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def host() -> CallHost:
    return CallHost(
        fetch=None,
        storage=StorageHook(None, "bench", StorageQuota()),
        libraries=default_catalog(),
        log_lines=100,
        log_bytes=10_000,
        deadline=time.monotonic() + 60,
    )


NODE_IN_PROCESS = r"""
const vm = require('vm');
const med = (f, n) => { const t = []; for (let i = 0; i < n; i++) {
  const s = process.hrtime.bigint(); f(); t.push(Number(process.hrtime.bigint() - s) / 1e3); }
  t.sort((a, b) => a - b); return t[t.length >> 1]; };
const N = ROUNDS;
const fresh = med(() => vm.runInNewContext('(function handler(a){return a.x+1})({x:1})'), N);
const ctx = vm.createContext({});
const reused = med(() => vm.runInContext('(function handler(a){return a.x+1})({x:1})', ctx), N);
const buf = new Uint8Array(4);
const spin = () => { for (let i = 0; i < 1000; i++) crypto.getRandomValues(buf); };
const hostCall = med(spin, 20) / 1000;
const s = Date.now();
try { vm.runInNewContext('while(true){}', {}, { timeout: 200 }); } catch (e) {}
const overshoot = Date.now() - s - 200;
console.log(JSON.stringify({ fresh, reused, hostCall, overshoot }));
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=300)
    opts = parser.parse_args()
    rounds = opts.rounds

    # cold: a new process importing toolfoundry and making its first call
    cold_script = (
        "import time; t0 = time.perf_counter();"
        "from toolfoundry.sandbox import run_js;"
        "import toolfoundry.sandbox.js.wasm_engine; t1 = time.perf_counter();"
        f"r = run_js({TRIVIAL!r}, {{'x': 1}}); t2 = time.perf_counter();"
        "assert r.ok; print((t2 - t0) * 1000, (t2 - t1) * 1000)"
    )
    subprocess.run([sys.executable, "-c", cold_script], capture_output=True, check=True)  # warm
    colds = []
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-c", cold_script], capture_output=True, text=True, check=True
        )
        colds.append(tuple(float(x) for x in out.stdout.split()))
    cold_total = statistics.median(c[0] for c in colds)
    cold_call = statistics.median(c[1] for c in colds)
    cold_process = wall_ms([sys.executable, "-c", cold_script], 5)
    node_process = wall_ms(["node", "-e", "console.log(((a)=>a.x+1)({x:1}))"], 5)

    engine = default_engine()
    run_js(TRIVIAL, {"x": 1})
    pristine = median_us(engine.fresh, rounds)
    takes = []
    for _ in range(min(rounds, 100)):
        time.sleep(0.005)  # as between real calls: the pool refills off the call path
        start = time.perf_counter()
        holder = [engine.take()]
        takes.append(time.perf_counter() - start)
        engine.release(holder)
    take = statistics.median(takes) * 1e6
    call_burst = median_us(lambda: run_js(TRIVIAL, {"x": 1}), rounds)
    spaced = []
    for _ in range(min(rounds, 200)):
        time.sleep(0.005)  # calls arriving apart: the pool has had time to prepare
        start = time.perf_counter()
        run_js(TRIVIAL, {"x": 1})
        spaced.append(time.perf_counter() - start)
    call = statistics.median(spaced) * 1e6
    guest = engine.fresh()
    limits = Limits(deadline=time.monotonic() + 3600, memory_bytes=64 * MIB, output_bytes=MIB)
    reused = median_us(lambda: engine.run_in(guest, TRIVIAL, {"x": 1}, limits, host()), rounds)

    loop = (
        "export function handler() { const b = new Uint8Array(4);"
        " for (let i = 0; i < 2000; i++) { BODY } return 1 }"
    )
    with_host = loop.replace("BODY", "crypto.getRandomValues(b);")
    without = loop.replace("BODY", "b[0] = i;")
    host_call = (
        median_us(lambda: run_js(with_host), 20) - median_us(lambda: run_js(without), 20)
    ) / 2000
    host_call_best = (
        best_us(lambda: run_js(with_host), 20) - best_us(lambda: run_js(without), 20)
    ) / 2000

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
        [sys.executable, "-c", bomb_script], capture_output=True, text=True, check=True
    ).stdout.split()
    bomb_kind, bomb_ms, rss_before, rss_bomb = out[0], float(out[1]), float(out[2]), float(out[3])
    start = time.perf_counter()
    small = run_js(SMALL_BOMB, None, SandboxPolicy(memory_bytes=16 * MIB, timeout_s=10))
    small_ms = (time.perf_counter() - start) * 1000
    assert small.error is not None

    overshoots = []
    for _ in range(5):
        start = time.perf_counter()
        run_js("while (true) {}", None, SandboxPolicy(timeout_s=0.2))
        overshoots.append((time.perf_counter() - start) * 1000 - 200)
    overshoot = statistics.median(overshoots)

    nd = node(NODE_IN_PROCESS.replace("ROUNDS", str(rounds))) or {}
    node_bomb_start = time.perf_counter()
    node_bomb = subprocess.run(
        # small objects: node's limit covers its JS heap, not ArrayBuffer memory
        ["node", "--max-old-space-size=16", "-e", SMALL_BOMB],
        capture_output=True,
        timeout=30,
        check=False,
    )
    node_bomb_ms = (time.perf_counter() - node_bomb_start) * 1000

    try:
        import quickjs_rs  # type: ignore[import-not-found]  # noqa: F401

        qjs_note = "quickjs-rs: installed but not wired into this benchmark"
    except ImportError:
        qjs_note = "quickjs-rs: not installed (not on this machine's package index); skipped"

    def ratio(ours: float, theirs: float | None) -> str:
        return f"{ours / theirs:6.2f}x" if theirs else "   n/a"

    rows = [
        (
            "cold: new process, import + first call",
            cold_process,
            "ms",
            node_process,
            "node -e",
            "-",
        ),
        ("cold: import + first call (in process)", cold_total, "ms", None, "", "-"),
        ("cold: engine + first call (after import)", cold_call, "ms", None, "", "<= 40 ms"),
        (
            "pristine instance (instantiate)",
            pristine,
            "us",
            nd.get("fresh"),
            "vm.runInNewContext",
            "<= 500 us",
        ),
        ("pristine instance taken from the pool", take, "us", None, "", "<= 100 us"),
        (
            "run_js trivial call, pristine, calls 5 ms apart",
            call,
            "us",
            nd.get("fresh"),
            "vm.runInNewContext",
            "-",
        ),
        ("run_js trivial call, pristine, back to back", call_burst, "us", None, "", "-"),
        (
            "call in a reused instance (compile+run)",
            reused,
            "us",
            nd.get("reused"),
            "vm.runInContext",
            "<= 50 us",
        ),
        (
            "host call from JS (getRandomValues), median",
            host_call,
            "us",
            nd.get("hostCall"),
            "in-process",
            "<= 20 us",
        ),
        ("host call from JS, best of 20 runs", host_call_best, "us", None, "", "<= 20 us"),
        (
            "16 MiB bomb (small objects) stopped",
            small_ms,
            "ms",
            node_bomb_ms,
            "node, 16 MiB heap: process dies",
            "-",
        ),
        ("16 MiB bomb (1 MiB buffers) stopped", bomb_ms, "ms", None, "", "<= 50 ms"),
        (
            "host peak RSS through the 16 MiB bomb",
            rss_bomb,
            "MiB",
            None,
            f"peak before: {rss_before:.0f} MiB",
            "<= cap + 30",
        ),
        (
            "timeout overshoot (200 ms budget)",
            overshoot,
            "ms",
            nd.get("overshoot"),
            "vm timeout",
            "<= 10 ms",
        ),
    ]
    print(f"{'measure':45} {'ours':>10} {'unit':4} {'baseline':>10} {'ratio':>7}  baseline/goal")
    for name, ours, unit, base, what, goal in rows:
        base_s = f"{base:10.1f}" if isinstance(base, float | int) else f"{'':10}"
        print(f"{name:45} {ours:10.1f} {unit:4} {base_s} {ratio(ours, base)}  {what} | goal {goal}")
    print(
        f"bomb kinds: {bomb_kind}, {small.error.kind.value};"
        f" node bomb exit code {node_bomb.returncode}"
    )
    print(qjs_note)
    print(f"machine: {os.cpu_count()} cpus, load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
