"""Hostile scripts: each must end with the right error kind, and the host must carry on."""

from __future__ import annotations

import threading
import time

import pytest

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.storage import MemoryStorage
from toolfoundry.spec import CallResult, ErrorKind

FAST = SandboxPolicy(timeout_s=0.5, memory_bytes=32 * 1024 * 1024)


def host_survives() -> None:
    r = run_js("export function handler(a) { return a.x * 2 }", {"x": 21})
    assert r.ok, r.error
    assert r.value == 42


def fails(code: str, kind: ErrorKind, policy: SandboxPolicy = FAST) -> CallResult:
    started = time.monotonic()
    r = run_js(code, None, policy)
    elapsed = time.monotonic() - started
    assert r.error is not None, f"expected {kind}, got value {r.value!r}"
    assert r.error.kind is kind, r.error
    assert elapsed < policy.timeout_s + 1.0
    host_survives()
    return r


# ---- time ----


@pytest.mark.parametrize(
    "code",
    [
        "while (true) {}",
        "for (;;) { Math.sqrt(2) }",
        "export async function handler() { await null; while (true) {} }",
        "export default (function spin() { let i = 0; while (i >= 0) i = (i + 1) % 10; })()",
        "const s = 'a'.repeat(40) + 'b'; export default /(a+)+$/.test(s)",  # ReDoS
        "export default /(x+x+)+y/.test('x'.repeat(40))",  # ReDoS, another shape
        "function f() { Promise.resolve().then(f) } f(); export default 1",  # microtask storm
        "throw { get message() { while (true) {} } }",  # the error itself spins
        "export default { toJSON() { while (true) {} } }",  # the result spins
        "export default 'x'.repeat(1e4).split('').sort((a, b) => { while (true) {} })",
    ],
)
def test_endless_work_times_out(code: str) -> None:
    fails(code, ErrorKind.TIMEOUT)


def test_endless_promise_chain_stops_on_time_or_memory() -> None:
    r = run_js("const f = () => Promise.resolve().then(f); export default await f()", None, FAST)
    assert r.error is not None
    assert r.error.kind in (ErrorKind.TIMEOUT, ErrorKind.MEMORY_LIMIT)
    host_survives()


def test_timeout_is_prompt() -> None:
    started = time.monotonic()
    fails("while (true) {}", ErrorKind.TIMEOUT, SandboxPolicy(timeout_s=0.3))
    assert time.monotonic() - started < 0.3 + 0.5  # generous: the build machine is shared


def test_compile_bomb_counts_against_the_budget() -> None:
    code = "export default [" + "[1,2,3,{a:[4,5]}]," * 400_000 + "]"
    r = run_js(code, None, SandboxPolicy(timeout_s=0.05, memory_bytes=256 * 1024 * 1024))
    assert r.error is not None
    assert r.error.kind is ErrorKind.TIMEOUT
    host_survives()


def test_never_resolving_promise_is_reported_at_once() -> None:
    r = fails("export default await new Promise(() => {})", ErrorKind.RUNTIME_ERROR)
    assert r.error is not None
    assert "never settled" in r.error.message
    fails("export function handler() { return new Promise(() => {}) }", ErrorKind.RUNTIME_ERROR)


def test_endless_interval_runs_out_of_budget() -> None:
    fails("setInterval(() => {}, 0); export default await new Promise(() => {})", ErrorKind.TIMEOUT)


# ---- memory ----


@pytest.mark.parametrize(
    "code",
    [
        "const a = []; for (let i = 0; ; i++) a.push(i)",  # array bomb
        "const s = 'x'.repeat(1 << 20); const a = []; while (true) a.push(s + a.length)",
        "const a = []; while (true) a.push(new ArrayBuffer(1 << 20))",  # ArrayBuffer bomb
        "export default new ArrayBuffer(1 << 30).byteLength",
        "export default new Array(1e8).fill(0).length",
        "const m = new Map(); for (let i = 0; ; i++) m.set(i, {i})",
        "const a = []; while (true) a.push(new Uint8Array(1 << 20).fill(1))",
    ],
)
def test_memory_bombs_hit_the_cap(code: str) -> None:
    fails(code, ErrorKind.MEMORY_LIMIT, SandboxPolicy(timeout_s=10, memory_bytes=32 * 1024 * 1024))


def test_catching_out_of_memory_does_not_escape_the_cap() -> None:
    code = """let caught = 0;
      for (let round = 0; round < 3; round++) {
        try { const a = []; while (true) a.push(new Uint8Array(1 << 20)); }
        catch (e) { caught++; } }
      export default caught"""
    r = run_js(code, None, FAST)
    assert r.ok
    assert r.value == 3
    host_survives()


# ---- stack ----


@pytest.mark.parametrize(
    "code",
    [
        "function f(n) { return f(n + 1) + 1 } export default f(0)",
        "async function f(n) { return await f(n + 1) } export default await f(0)",
        "export default JSON.parse('['.repeat(1e6) + ']'.repeat(1e6))",
        "export default " + "[" * 100_000 + "]" * 100_000,  # nested literal: parser recursion
        "const o = {}; o.toString = () => `${o}`; export default String(o)",
    ],
)
def test_deep_recursion_is_a_runtime_error(code: str) -> None:
    fails(code, ErrorKind.RUNTIME_ERROR)


# ---- output and logs ----


def test_huge_return_value_is_output_too_large() -> None:
    r = fails("export default 'x'.repeat(2 * 1024 * 1024)", ErrorKind.OUTPUT_TOO_LARGE)
    assert r.error is not None
    assert "limit" in r.error.message


def test_log_flood_is_capped_and_fast() -> None:
    policy = SandboxPolicy(log_lines=50, log_bytes=10_000)
    started = time.monotonic()
    r = run_js(
        "for (let i = 0; i < 2e5; i++) console.log('line', i); export default 1", None, policy
    )
    assert r.ok
    assert time.monotonic() - started < 1.5
    assert len(r.logs) == 51
    assert r.logs[-1].startswith("[logs truncated")


def test_one_giant_log_line_is_cut_to_the_byte_cap() -> None:
    policy = SandboxPolicy(log_bytes=1000)
    r = run_js("console.log('y'.repeat(1e6)); export default 1", None, policy)
    assert r.ok
    assert sum(len(line) for line in r.logs) <= 1000 + 100


# ---- prelude bypass ----


def test_raw_host_hook_is_unreachable() -> None:
    code = """const probes = [
        typeof __host, typeof globalThis.__host, "__host" in globalThis,
        (() => { try { return typeof Function("return __host")() } catch (e) { return e.name } })(),
        (() => { try { return typeof console.log.constructor("return __host")() }
                 catch (e) { return e.name } })(),
        Object.getOwnPropertyNames(globalThis).filter((n) => n.includes("host")).join(","),
      ];
      export default probes"""
    r = run_js(code)
    assert r.value == ["undefined", "undefined", False, "ReferenceError", "ReferenceError", ""]


def test_no_ambient_globals() -> None:
    names = ["WebAssembly", "std", "os", "print", "require", "process", "scriptArgs", "Deno"]
    checks = ", ".join(f"typeof {n}" for n in names)
    r = run_js(f"export default [{checks}]")
    assert r.value == ["undefined"] * len(names)


def test_overwriting_globals_breaks_only_the_script() -> None:
    code = """JSON.stringify = () => '"forged"'; JSON.parse = () => ({});
      Promise.prototype.then = function () { throw new Error('hijacked') };
      globalThis.fetch = null; Object.defineProperty = null; Array.prototype.map = null;
      export function handler(a) { return { x: a.x, kind: 'real' } }"""
    r = run_js(code, {"x": 5})
    assert r.ok, r.error
    assert r.value == {"x": 5, "kind": "real"}


def test_forged_error_kind_is_not_trusted() -> None:
    code = "throw Object.assign(new Error('x'), { kind: 'timeout', __tf_kind: 'timeout' })"
    fails(code, ErrorKind.RUNTIME_ERROR)


def test_crafted_values_to_prelude_apis_are_rejected() -> None:
    code = """const out = [];
      const attempt = (f) => { try { f(); out.push("accepted") } catch (e) { out.push(e.name) } };
      attempt(() => crypto.getRandomValues(new Float64Array(2)));
      attempt(() => crypto.getRandomValues(new Uint8Array(65537)));
      attempt(() => crypto.getRandomValues({ length: 5, byteLength: 5 }));
      attempt(() => localStorage.setItem(Symbol("k"), "v"));
      attempt(() => localStorage.setItem("k", { toString() { throw new RangeError("no") } }));
      attempt(() => new Headers({ "bad name": "v" }));
      export default out"""
    r = run_js(code, None, SandboxPolicy(storage=MemoryStorage()))
    assert r.value == [
        "TypeMismatchError",
        "QuotaExceededError",
        "TypeMismatchError",
        "TypeError",
        "RangeError",
        "TypeError",
    ]


# ---- no state leaks between calls ----


def test_globals_and_prototypes_do_not_leak() -> None:
    first = """globalThis.leak = 1; Object.prototype.polluted = 'yes';
      Array.prototype.push = null; Math.random = () => 4; console.log = null;
      Storage.prototype.getItem = null; export default 1"""
    assert run_js(first).ok
    second = """export default [typeof leak, ({}).polluted, typeof [].push, Math.random() < 1,
      typeof console.log, typeof localStorage.getItem]"""
    assert run_js(second).value == ["undefined", None, "function", True, "function", "function"]


def test_timers_do_not_leak() -> None:
    run_js("setTimeout(() => { globalThis.late = 1 }, 10); export default 1")
    r = run_js("export default await new Promise((r) => setTimeout(() => r(typeof late), 50))")
    assert r.value == "undefined"


def test_storage_namespaces_are_separate() -> None:
    backend = MemoryStorage()
    run_js(
        "localStorage.setItem('secret', 's'); export default 1",
        None,
        SandboxPolicy(storage=backend, tool="alice"),
    )
    r = run_js(
        "export default [localStorage.length, localStorage.getItem('secret')]",
        None,
        SandboxPolicy(storage=backend, tool="mallory"),
    )
    assert r.value == [0, None]


def test_concurrent_calls_are_isolated() -> None:
    results: dict[int, CallResult] = {}

    def call(i: int) -> None:
        code = "while (true) {}" if i == 0 else f"globalThis.v = {i}; export default globalThis.v"
        results[i] = run_js(code, None, SandboxPolicy(timeout_s=0.5))

    threads = [threading.Thread(target=call, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results[0].error is not None
    assert results[0].error.kind is ErrorKind.TIMEOUT
    assert [results[i].value for i in (1, 2, 3)] == [1, 2, 3]


# ---- odd throws ----


@pytest.mark.parametrize(
    "code",
    [
        "throw null",
        "throw undefined",
        "throw { toString() { throw new Error('inner') } }",
        "throw Symbol('s')",
        "export default await Promise.reject(42)",
        "export default new Proxy({}, { ownKeys() { throw new Error('keys') } })",
    ],
)
def test_strange_throws_are_runtime_errors(code: str) -> None:
    fails(code, ErrorKind.RUNTIME_ERROR)
