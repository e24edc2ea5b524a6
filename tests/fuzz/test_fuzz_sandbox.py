"""Fuzz the JavaScript sandbox with generated programs under small budgets.

Loops, allocations, recursion, promise chains, string work, timers, imports of random
specifiers, fetch/localStorage/crypto with random inputs, hunts for host hooks, tampering
with built-ins and odd throws. For every program: the host carries on, the result is a
CallResult whose error kind is a known one, the call ends within its budget plus a margin, the
process's resident memory stays under the memory cap plus a margin, and nothing a program
leaves behind (a global, a prototype property, a localStorage key in its namespace, a
replaced built-in) is seen by the next call.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from hypothesis import event, given
from hypothesis import strategies as st

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.storage import MemoryStorage
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.spec import CallResult, ErrorKind

from .js_grammar import (
    SPECIFIERS,
    capability_snippet,
    compile_snippet,
    escapes_in,
    fuzz_settings,
    hook_snippet,
    quoted,
    soup,
)

MIB = 1024 * 1024
BUDGET_S = 0.3
MEMORY_CAP = 16 * MIB
# Shared 2-core machines stall threads now and then; the budget is enforced by the engine,
# the margin only absorbs scheduling.
TIME_MARGIN_S = 1.0
# The pool keeps a few prepared instances and the module cache; one call's guest is freed
# after it ends, so growth beyond cap + margin means memory is kept across calls.
RSS_MARGIN = 64 * MIB
BUNDLED = set(default_catalog().names())
STORAGE = MemoryStorage()

SIZES = st.sampled_from([0, 1, 10, 1000, 100_000, 10_000_000, 2**31, 1e9])


@st.composite
def workload(draw: st.DrawFn) -> str:
    n = draw(SIZES)
    kind = draw(
        st.sampled_from(
            [
                "loop",
                "array",
                "string",
                "typed",
                "grow",
                "recurse",
                "promises",
                "microtasks",
                "timers",
                "regex",
                "json",
                "output",
                "import",
                "throw",
                "surrogates",
                "numbers",
                "deep",
            ]
        )
    )
    forms = {
        "loop": f"for (let i = 0; i < {n}; i++) acc += i % 7;",
        "array": f"acc += new Array({n}).fill(1).length;",
        "string": f"acc += 'ab\\u00e9\\u0000'.repeat({n}).split('').reverse().join('').length;",
        "typed": f"acc += new Float64Array({n}).length;",
        "grow": f"{{ const b = []; for (let i = 0; i < {n}; i++) b.push(new Array(1000)); }}",
        "recurse": f"{{ const f = (k) => (k > 0 ? 1 + f(k - 1) : 0); acc += f({n}); }}",
        "promises": (
            f"{{ let p = Promise.resolve(0); for (let i = 0; i < Math.min({n}, 1e6); i++) "
            "p = p.then((x) => x + 1); acc += await p; }"
        ),
        "microtasks": (
            f"{{ let k = 0; const f = () => {{ if (++k < {n}) queueMicrotask(f); }}; f(); }}"
        ),
        "timers": (f"acc += await new Promise((ok) => setTimeout(() => ok(1), {draw(SIZES)}));"),
        "regex": f"acc += /(a+)+$/.test('a'.repeat(Math.min({n}, 40)) + 'b') ? 1 : 0;",
        "json": (
            f"acc += JSON.stringify(JSON.parse('[' + '1,'.repeat(Math.min({n}, 1e7)) + '1]'))"
            ".length;"
        ),
        "output": f"out.big = 'x'.repeat(Math.min({n}, 4e6));",
        # what the host must decode: lone surrogates returned, logged, thrown, used as keys
        "surrogates": draw(
            st.sampled_from(
                [
                    "out.s = '\\ud800';",
                    "out['k\\udc00'] = 1;",
                    "console.log('\\ud83d'.repeat(Math.min(" + str(n) + ", 1e4)));",
                    "throw new Error('\\udfff');",
                    "localStorage.setItem('\\ud800', '\\udc00');",
                ]
            )
        ),
        "numbers": draw(
            st.sampled_from(
                [
                    "out.n = JSON.rawJSON('1e999');",
                    "out.n = JSON.rawJSON('-' + '9'.repeat(Math.min(" + str(n) + " + 400, 1e5)));",
                    "out.n = JSON.rawJSON('1'.repeat(5000));",
                ]
            )
        ),
        "deep": (
            f"{{ let v = []; for (let i = 0; i < Math.min({n}, 1e5); i++) v = [v]; out.v = v; }}"
        ),
        "import": (
            f"{{ const m = await import({quoted(draw(st.sampled_from(SPECIFIERS)))}); "
            "acc += Object.keys(m).length; }"
        ),
        "throw": draw(
            st.sampled_from(
                [
                    "throw null;",
                    "throw Symbol('s');",
                    "throw { get message() { throw new Error('inner'); } };",
                    "throw new Proxy({}, { get() { throw 1; } });",
                    "throw Object.create(null);",
                    "throw 'x'.repeat(1e6);",
                ]
            )
        ),
    }
    code = forms[kind]
    event(f"workload: {kind}")
    return f"try {{ {code} }} catch (e) {{}}" if draw(st.booleans()) else code


TAMPER = st.sampled_from(
    [
        "JSON.stringify = () => '\"tampered\"';",
        "JSON.parse = () => ({ tampered: true });",
        "Object.prototype.toJSON = function () { return 'tampered'; };",
        "Array.prototype.push = function () { return 0; };",
        "Promise.prototype.then = function () { return this; };",
        "globalThis.fetch = () => 'tampered';",
        "Object.defineProperty(globalThis, 'localStorage', { value: null });",
        "String.prototype.repeat = () => 'tampered';",
        "delete globalThis.console;",
        "Object.freeze(Object.prototype);",
    ]
)
# Left by every program, looked for by the probe that runs right after it in another tool.
PROLOGUE = (
    "globalThis.tfCanary = 'leaked';\n"
    "Object.prototype.tfPolluted = 'leaked';\n"
    "try { localStorage.setItem('tf-canary', 'leaked'); } catch (e) {}\n"
)
PROBE = """
export function handler() {
  const seen = [];
  if (typeof globalThis.tfCanary !== "undefined") seen.push("global");
  if (({}).tfPolluted !== undefined) seen.push("prototype");
  if (localStorage.getItem("tf-canary") !== null) seen.push("storage");
  if (JSON.stringify({ a: [1] }) !== '{"a":[1]}') seen.push("JSON");
  const list = [];
  list.push(1);
  if (list.length !== 1) seen.push("Array");
  if ("ab".repeat(2) !== "abab") seen.push("String");
  if (typeof fetch !== "function" || typeof console !== "object") seen.push("globals");
  return seen;
}
"""


@st.composite
def programs(draw: st.DrawFn) -> str:
    parts = draw(
        st.lists(
            st.one_of(
                workload(),
                workload(),
                compile_snippet(),
                capability_snippet(),
                hook_snippet(),
                TAMPER,
            ),
            min_size=1,
            max_size=5,
        )
    )
    body = "\n  ".join(parts)
    if draw(st.integers(0, 9)) == 0:
        body += "\n  " + draw(soup())
    top_level = draw(st.booleans())
    return (
        "const reached = [];\nconst reach = (what) => reached.push(what);\n"
        "const out = {};\nlet acc = 0;\n"
        + PROLOGUE
        + (
            f"{body}\nexport default {{ reached, acc, ...out }};\n"
            if top_level
            else "export async function handler(args) {\n"
            f"  {body}\n  return {{ reached, acc, ...out }};\n}}\n"
        )
    )


def resident_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


def probe_next_call() -> list[str]:
    """What a fresh call of another tool, sharing the storage backend, can see."""
    seen = run_js(PROBE, None, SandboxPolicy(storage=STORAGE, tool="fuzz-probe"))
    assert seen.ok, seen.error
    assert isinstance(seen.value, list)
    return seen.value


BASELINE: list[int] = []


@fuzz_settings(250)
@given(code=programs())
def test_generated_programs_are_contained(code: str) -> None:
    if not BASELINE:
        run_js("export default 1")  # the engine's one-time set-up is not a call's memory
        BASELINE.append(resident_bytes())
    policy = SandboxPolicy(
        timeout_s=BUDGET_S, memory_bytes=MEMORY_CAP, storage=STORAGE, tool="fuzz-program"
    )
    started = time.monotonic()
    result = run_js(code, {"canary": "http://127.0.0.1:9"}, policy)
    elapsed = time.monotonic() - started

    assert isinstance(result, CallResult)
    assert result.ok == (result.error is None)
    if result.error is not None:
        assert isinstance(result.error.kind, ErrorKind)
        assert result.error.message
        event(f"kind: {result.error.kind.value}")
    else:
        event("kind: ok")
    assert elapsed < BUDGET_S + TIME_MARGIN_S, (elapsed, code)
    # This policy grants localStorage, so using it is no escape; the probe checks isolation.
    assert [m for m in escapes_in(result.value, BUNDLED) if m != "storage"] == [], code
    growth = resident_bytes() - BASELINE[0]
    # Figures for --hypothesis-show-statistics: overrun past the budget, RSS growth.
    event(f"overrun: {max(0, int((elapsed - BUDGET_S) * 10)) * 100} ms+")
    event(f"rss growth: {max(0, growth // (8 * MIB)) * 8} MiB+")
    assert growth < MEMORY_CAP + RSS_MARGIN, (growth // MIB, code)
    assert probe_next_call() == [], code


def test_the_probe_sees_what_a_call_leaves_in_its_own_namespace() -> None:
    """The control: within one tool's namespace localStorage persists by design, and the probe
    reports it; so an empty report above means the other tool's key was not visible."""
    shared = MemoryStorage()
    wrote = run_js(PROLOGUE + "export default 1", None, SandboxPolicy(storage=shared, tool="t"))
    assert wrote.ok, wrote.error
    seen = run_js(PROBE, None, SandboxPolicy(storage=shared, tool="t"))
    assert seen.value == ["storage"]


def test_budget_figures_hold_for_the_worst_forms() -> None:
    """Direct cases of the generator's worst forms, so a regression names its form."""
    policy = SandboxPolicy(timeout_s=BUDGET_S, memory_bytes=MEMORY_CAP)
    worst: dict[str, Any] = {
        "for (;;) {}": ErrorKind.TIMEOUT,
        "const b = []; for (;;) b.push(new Array(1000));": ErrorKind.MEMORY_LIMIT,
        "const f = (k) => 1 + f(k + 1); f(0);": ErrorKind.RUNTIME_ERROR,
        "export default 'x'.repeat(1.2e6);": ErrorKind.OUTPUT_TOO_LARGE,
        # A 4 MB result fits in memory now that a tool gets the memory its cap names (the
        # power-of-two allocator ran out of memory encoding it): the output cap refuses it.
        "export default 'x'.repeat(4e6);": ErrorKind.OUTPUT_TOO_LARGE,
        # One that cannot even be built under the cap is still memory_limit.
        "export default 'x'.repeat(8e7);": ErrorKind.MEMORY_LIMIT,
        "await import('qjs:os');": ErrorKind.RUNTIME_ERROR,
    }
    for code, kind in worst.items():
        started = time.monotonic()
        result = run_js(code, None, policy)
        assert time.monotonic() - started < BUDGET_S + TIME_MARGIN_S, code
        assert result.error is not None, code
        assert result.error.kind in (kind if isinstance(kind, tuple) else (kind,)), (
            code,
            result.error,
        )
