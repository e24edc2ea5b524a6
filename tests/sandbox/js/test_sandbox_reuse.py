"""An instance used again is the snapshot again, byte for byte (``WasmEngine._reset``).

A call that returned normally leaves its instance to be put back: every page it wrote gets the
pristine bytes again. Whatever the call did (globals, prototypes, big allocations, a thrown
error), the next call in that instance starts from the same memory as a new instance; a call
that trapped, timed out or grew memory leaves no instance behind at all.
"""

from __future__ import annotations

import ctypes
import mmap
import threading

import pytest

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.js.page_scan import PAGE, PageScan
from toolfoundry.sandbox.js.wasm_engine import RESTORE_PAGES, default_engine
from toolfoundry.spec import ErrorKind

SCAN = PageScan()
pytestmark = pytest.mark.skipif(not SCAN.available, reason="no PAGEMAP_SCAN: no reuse")

WRITERS = {
    "globals and prototypes": """export function handler() {
      globalThis.leak = "secret"; Object.prototype.polluted = 1; Array.prototype.push = null;
      JSON.stringify = () => "forged"; return 1 }""",
    "allocations": """export function handler() {
      const keep = []; for (let i = 0; i < 300; i++) keep.push({ i, s: "x".repeat(50) });
      return keep.length }""",
    "a thrown error": 'export function handler() { globalThis.leak = 1; throw new Error("no") }',
    "timers and promises": """export async function handler() {
      setTimeout(() => { globalThis.late = 1 }, 0); await null; return 2 }""",
}


def pristine() -> bytes:
    fresh = default_engine().fresh()
    return fresh.read(0, fresh.size())


@pytest.mark.parametrize("code", WRITERS.values(), ids=WRITERS.keys())
def test_a_used_instance_is_put_back_to_the_snapshot_bytes(code: str) -> None:
    engine = default_engine()
    run_js(code)
    guest = engine.take()  # the instance that call used, first in line again
    try:
        owned = SCAN.owned(guest.base(), guest.size(), RESTORE_PAGES)
        assert owned, "not the used instance: it owns no page"
        assert guest.read(0, guest.size()) == pristine()
    finally:
        engine.release([guest])


def test_the_next_call_sees_nothing_of_the_last() -> None:
    for code in WRITERS.values():
        run_js(code)
        seen = run_js(
            """export default [typeof leak, typeof late, ({}).polluted,
               typeof Array.prototype.push, JSON.stringify({ a: 1 })]"""
        )
        assert seen.value == ["undefined", "undefined", None, "function", '{"a":1}']


@pytest.mark.parametrize(
    ("code", "policy", "kind"),
    [
        ("globalThis.leak = 1; for (;;) {}", SandboxPolicy(timeout_s=0.2), ErrorKind.TIMEOUT),
        ("globalThis.leak = 1; const f = () => f(); f()", None, ErrorKind.RUNTIME_ERROR),
        (
            "globalThis.leak = 1; const b = []; for (;;) b.push(new Uint8Array(1 << 20))",
            SandboxPolicy(memory_bytes=16 << 20),
            ErrorKind.MEMORY_LIMIT,
        ),
    ],
    ids=["timeout", "stack overflow", "memory grown to the cap"],
)
def test_an_instance_that_did_not_end_normally_is_not_used_again(
    code: str, policy: SandboxPolicy | None, kind: ErrorKind
) -> None:
    engine = default_engine()
    ended = run_js(code, None, policy)
    assert ended.error is not None
    assert ended.error.kind is kind
    guest = engine.take()
    try:  # what the pool hands out now was made fresh or put back after a normal call
        assert guest.read(0, guest.size()) == pristine()
    finally:
        engine.release([guest])
    assert run_js("export default typeof leak").value == "undefined"


def test_a_call_that_wrote_too_many_pages_leaves_no_instance() -> None:
    engine = default_engine()
    many = (RESTORE_PAGES + 64) * PAGE
    # writes spread over more pages than a put-back copies, without growing memory
    code = f"""export function handler() {{
      globalThis.leak = 1; const b = new Uint8Array({many});
      for (let i = 0; i < b.length; i += 4096) b[i] = 1; return b.length }}"""
    assert run_js(code).ok
    guest = engine.take()
    try:
        owned = SCAN.owned(guest.base(), guest.size(), 10 * RESTORE_PAGES) or []
        assert sum(length for _, length in owned) <= RESTORE_PAGES * PAGE
        assert guest.read(0, guest.size()) == pristine()
    finally:
        engine.release([guest])


def test_scans_from_many_threads_each_see_their_own_pages() -> None:
    # the kernel answers into one buffer per PageScan; threads scanning at once (concurrent
    # calls putting their instances back) must not read each other's answers
    maps = [mmap.mmap(-1, 64 * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS) for _ in range(8)]
    for i, mapping in enumerate(maps):
        mapping[i * PAGE : i * PAGE + 1] = b"x"  # page i of mapping i, and nothing else
    cells = [ctypes.c_char.from_buffer(m) for m in maps]
    wrong: list[object] = []

    def scan(i: int) -> None:
        for _ in range(300):
            found = SCAN.owned(ctypes.addressof(cells[i]), 64 * PAGE, 8)
            if found != [(i * PAGE, PAGE)]:
                wrong.append((i, found))

    threads = [threading.Thread(target=scan, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    cells.clear()  # the buffers go before their mappings close
    for mapping in maps:
        mapping.close()
    assert wrong == []
