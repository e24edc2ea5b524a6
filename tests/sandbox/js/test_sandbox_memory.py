"""The memory cap is what a tool may allocate: the baseline is outside it, blocks cost their size.

Under the default cap (64 MiB) a tool gets about 64 MiB for its own data; 1 MiB more than the
cap fails as ``memory_limit``. The guest's allocator (``guest/alloc.c``) keeps a block's cost
at its size plus a few bytes, so many 1 MiB buffers, one big buffer and a big array all fit.
"""

from __future__ import annotations

import time

import pytest

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.wasm_engine import default_engine
from toolfoundry.spec import ErrorKind

MIB = 1024 * 1024
DEFAULT_CAP = SandboxPolicy().memory_bytes


def test_the_default_cap_is_64_mib_of_the_tools_own() -> None:
    engine = default_engine()
    assert DEFAULT_CAP == 64 * MIB
    # the baseline (C stack, QuickJS, polyfills, prelude) is small and added on top of the cap
    assert 0 < engine.baseline_bytes < 8 * MIB
    limits = Limits(deadline=time.monotonic() + 1, memory_bytes=DEFAULT_CAP, output_bytes=1)
    assert engine.memory_limit(limits) == engine.baseline_bytes + DEFAULT_CAP


def test_sixty_1_mib_buffers_fit_under_the_default_cap() -> None:
    code = """export function handler() {
      const kept = [];
      for (let i = 0; i < 60; i++) kept.push(new Uint8Array(1 << 20).fill(i));
      return kept.reduce((sum, b, i) => sum + (b[b.length - 1] === i ? 1 : 0), 0);
    }"""
    r = run_js(code)
    assert r.ok, r.error
    assert r.value == 60


def test_one_50_mib_buffer_fits_under_the_default_cap() -> None:
    code = """export function handler() {
      const b = new Uint8Array(new ArrayBuffer(50 * 1024 * 1024));
      b[b.length - 1] = 7;
      return [b.length, b[b.length - 1], b[0]];
    }"""
    r = run_js(code)
    assert r.ok, r.error
    assert r.value == [50 * MIB, 7, 0]


def test_a_2m_item_array_fits_under_the_default_cap() -> None:
    code = """export function handler() {
      const a = [];
      for (let i = 0; i < 2e6; i++) a.push(i);
      return [a.length, a[1999999]];
    }"""
    r = run_js(code)
    assert r.ok, r.error
    assert r.value == [2_000_000, 1_999_999]


ALLOCATE_UNTIL_REFUSED = """export function handler({ step }) {
  const kept = [];
  try { for (;;) kept.push(new Uint8Array(step)); }
  catch (e) { return kept.length; }
}"""


@pytest.mark.parametrize("cap_mib", [16, 64])
def test_a_tool_gets_nearly_all_of_its_cap_in_1_mib_steps(cap_mib: int) -> None:
    r = run_js(ALLOCATE_UNTIL_REFUSED, {"step": MIB}, SandboxPolicy(memory_bytes=cap_mib * MIB))
    assert r.ok, r.error
    assert cap_mib - 2 <= r.value <= cap_mib  # the call's own state takes a little


@pytest.mark.parametrize("cap_mib", [16, 64])
def test_one_mib_more_than_the_cap_is_memory_limit(cap_mib: int) -> None:
    code = f"export default new ArrayBuffer({cap_mib + 1} * 1024 * 1024).byteLength"
    started = time.monotonic()
    r = run_js(code, None, SandboxPolicy(memory_bytes=cap_mib * MIB))
    assert r.error is not None, r.value
    assert r.error.kind is ErrorKind.MEMORY_LIMIT
    # refused at once, not after a search (bench/bench_memory.py measures it: well under 50 ms)
    assert time.monotonic() - started < 1.0


def test_freed_big_blocks_are_reused_not_regrown() -> None:
    # 200 rounds of 40 MiB under a 64 MiB cap: only reuse of the freed block makes this pass
    code = """export function handler() {
      let total = 0;
      for (let round = 0; round < 200; round++) {
        const b = new Uint8Array(40 * 1024 * 1024 + round * 4096);
        b[round] = 1;
        total += b[round];
      }
      return total;
    }"""
    r = run_js(code)
    assert r.ok, r.error
    assert r.value == 200


def test_churn_of_mixed_sizes_keeps_every_byte() -> None:
    # many sizes allocated, grown (arrays, strings), dropped and reallocated; each buffer keeps
    # its own fill pattern, so a block handed out twice or merged wrongly shows up
    code = """export function handler() {
      let seed = 12345;
      const rnd = (n) => { seed = (seed * 1103515245 + 12345) >>> 0; return seed % n; };
      const slots = new Array(500).fill(null);
      let grown = [];
      let text = "";
      for (let i = 0; i < 20000; i++) {
        const k = rnd(slots.length);
        const old = slots[k];
        if (old && old.data[old.data.length - 1] !== old.tag) return `corrupt at ${i}`;
        if (old && old.data[0] !== old.tag) return `corrupt start at ${i}`;
        const r = rnd(100);
        const size = r < 70 ? 1 + rnd(600) : r < 95 ? 1 + rnd(70000) : 1 + rnd(3000000);
        const tag = 1 + rnd(250);
        slots[k] = rnd(4) === 0 ? null : { data: new Uint8Array(size).fill(tag), tag };
        grown.push(i);
        if (grown.length > 50000) grown = [];
        text += String.fromCharCode(97 + (i % 26));
        if (text.length > 100000) text = text.slice(50000);
      }
      for (const s of slots) if (s && s.data.some((b) => b !== s.tag)) return "corrupt at end";
      return "intact";
    }"""
    r = run_js(code, None, SandboxPolicy(timeout_s=30))
    assert r.ok, r.error
    assert r.value == "intact"


@pytest.mark.parametrize(
    "code",
    [
        "const a = []; while (true) a.push(new Uint8Array(1 << 20))",
        "const a = []; for (let i = 0; ; i++) a.push({i, s: 'x' + i})",
        "let s = 'x'; while (true) s = s.repeat(2)",  # doubling flat string
        "const a = []; while (true) a.push(new ArrayBuffer(4000))",  # many small blocks
        "let a = [1]; while (true) a = a.concat(a)",  # ever bigger copies
    ],
)
def test_allocation_bombs_stop_at_the_cap_and_the_next_call_is_clean(code: str) -> None:
    r = run_js(code, None, SandboxPolicy(timeout_s=10, memory_bytes=24 * MIB))
    assert r.error is not None
    assert r.error.kind is ErrorKind.MEMORY_LIMIT, r.error
    after = run_js(ALLOCATE_UNTIL_REFUSED, {"step": MIB})
    assert after.ok, after.error
    assert after.value >= 60  # a fresh instance: nothing of the bomb is left
