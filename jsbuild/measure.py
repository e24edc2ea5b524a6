"""Measure what the bundles cost the sandbox: polyfills.js evaluation, each library's import.

    .venv/bin/python jsbuild/measure.py [--runs N]

Polyfills are evaluated once into the engine's memory image, so their cost is paid when that
image is built, not per call; it is timed here in fresh guest instances (QuickJS-NG under
wasmtime, the guest's own tf_init/tf_eval_script exports). Libraries are loaded per call when a
tool imports them, so their cost is timed through `run_js`, against an empty module; so is the
first use of Intl in a call (its code and data load then, per call).
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path
from typing import Any

import wasmtime

from toolfoundry.sandbox import SandboxPolicy, run_js

BUILD = Path(__file__).resolve().parent.parent / "src" / "toolfoundry" / "sandbox" / "js" / "_build"


def _guest(engine: wasmtime.Engine, module: wasmtime.Module) -> tuple[wasmtime.Store, Any]:
    store = wasmtime.Store(engine)
    linker = wasmtime.Linker(engine)
    linker.allow_shadowing = True
    i32, i64 = wasmtime.ValType.i32(), wasmtime.ValType.i64()
    ft = wasmtime.FuncType
    linker.define_func("tf", "host_call", ft([i32] * 6, [i32]), lambda *a: -1)
    linker.define_func("tf", "host_take", ft([i32], []), lambda *a: None)
    wasi = "wasi_snapshot_preview1"
    linker.define_func(wasi, "fd_write", ft([i32] * 4, [i32]), lambda *a: 0)
    linker.define_func(wasi, "fd_close", ft([i32], [i32]), lambda *a: 0)
    linker.define_func(wasi, "fd_fdstat_get", ft([i32, i32], [i32]), lambda *a: 8)
    linker.define_func(wasi, "fd_seek", ft([i32, i64, i32, i32], [i32]), lambda *a: 70)
    linker.define_func(wasi, "clock_time_get", ft([i32, i64, i32], [i32]), lambda *a: 0)
    instance = linker.instantiate(store, module)
    exports: Any = instance.exports(store)
    if "_initialize" in exports:
        exports["_initialize"](store)
    return store, exports


def polyfill_cost(runs: int) -> dict[str, float]:
    """Evaluation time (ms) and linear-memory growth (KiB) of polyfills.js in a fresh guest."""
    source = (BUILD / "polyfills.js").read_bytes() + b"\0"
    engine = wasmtime.Engine()
    module = wasmtime.Module.from_file(engine, str(BUILD / "quickjs.wasm"))
    times: list[float] = []
    growth: list[float] = []
    for _ in range(runs):
        store, ex = _guest(engine, module)
        store.set_epoch_deadline(1 << 40)
        assert ex["tf_init"](store, 256 * 1024) == 0
        before = ex["memory"].data_len(store)
        ptr = ex["tf_alloc"](store, len(source))
        ex["memory"].write(store, source, ptr)
        started = time.perf_counter()
        error = ex["tf_eval_script"](store, ptr, len(source) - 1, 0)
        times.append((time.perf_counter() - started) * 1000)
        assert error == 0, "polyfills.js failed to evaluate"
        growth.append((ex["memory"].data_len(store) - before) / 1024)
    return {"eval_ms_median": statistics.median(times), "memory_growth_kib": max(growth)}


def library_costs(runs: int) -> dict[str, float]:
    """Median added time (ms) of one `run_js` call that imports each library."""
    manifest = json.loads((BUILD / "libs" / "manifest.json").read_text())["libs"]

    def median_ms(code: str) -> float:
        run_js(code)  # warm the engine and any cache
        samples: list[float] = []
        for _ in range(runs):
            result = run_js(code)
            assert result.ok, result.error
            samples.append(result.duration_ms)
        return statistics.median(samples)

    base = median_ms("export default 1;")
    costs = {"(empty module)": base}
    for name in manifest:
        costs[name] = median_ms(f'import * as lib from "{name}";\nexport default 1;') - base
    return costs


INTL_USES = {
    "(1234.5).toLocaleString()": "number, en",
    'new Intl.NumberFormat("de", {style: "currency", currency: "EUR"}).format(1)': "currency, de",
    'new Date(0).toLocaleDateString("en-US", {timeZone: "UTC"})': "date, en, UTC",
    'new Date(0).toLocaleString("de-DE", {timeZone: "Europe/Berlin"})': "date, de, a zone",
    'new Intl.RelativeTimeFormat("en", {numeric: "auto"}).format(-1, "day")': "relative time",
    '["b", "a"].sort((x, y) => x.localeCompare(y))': "localeCompare",
}


def intl_costs(runs: int) -> dict[str, float]:
    """Median added time (ms) of a `run_js` call whose first use of Intl is each expression."""
    policy = SandboxPolicy(timeout_s=60)

    def median_ms(code: str) -> float:
        run_js(code, None, policy)
        samples = []
        for _ in range(runs):
            result = run_js(code, None, policy)
            assert result.ok, result.error
            samples.append(result.duration_ms)
        return statistics.median(samples)

    base = median_ms("export default 1;")
    return {label: median_ms(f"export default {e};") - base for e, label in INTL_USES.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description="Measure the JS bundles' cost in the sandbox.")
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    poly = (BUILD / "polyfills.js").read_bytes()
    print(f"polyfills.js: {len(poly)} bytes, {len(gzip.compress(poly, 9))} gzipped")
    for key, value in polyfill_cost(runs).items():
        print(f"polyfills.js {key}: {value:.1f}")
    manifest = json.loads((BUILD / "libs" / "manifest.json").read_text())["libs"]
    for name, ms in library_costs(runs).items():
        size = (BUILD / "libs" / manifest[name]["file"]).stat().st_size if name in manifest else 0
        print(f"{name:>16}: {size:>6} bytes  +{ms:.1f} ms per call that imports it")
    intl = json.loads((BUILD / "libs" / "manifest.json").read_text())["intl"]
    for kind in ("chunks", "data"):
        for name, entry in intl[kind].items():
            data = (BUILD / "libs" / entry["file"]).read_bytes()
            packed = len(gzip.compress(data, 9))
            print(f"Intl {kind} {name:>18}: {len(data):>8} bytes, {packed:>7} gzipped")
    for label, ms in intl_costs(runs).items():
        print(f"Intl first use, {label:>16}: +{ms:.1f} ms per call")


if __name__ == "__main__":
    main()
