"""The guest's clock: read from its own memory, advanced by the host in whole milliseconds.

``Date.now()`` is the host's wall clock at the call's start plus the time elapsed since;
``performance.now()`` counts from the call's start. Both have 1 ms resolution and never go back
within a call; neither crosses into the host when read (the guest imports no clock).
"""

from __future__ import annotations

import threading
import time

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.spec import CallResult, ErrorKind


def test_date_now_agrees_with_the_host_clock() -> None:
    before = time.time() * 1000
    r = run_js("export default [Date.now(), new Date().getUTCFullYear()]")
    after = time.time() * 1000
    assert r.ok, r.error
    now, year = r.value
    assert before - 1 <= now <= after + 1
    assert year == time.gmtime(now / 1000).tm_year


def test_the_clock_advances_while_the_guest_computes() -> None:
    # no host call in the loop: only the host's ticker moves the clock
    code = """export function handler() {
      const t0 = Date.now(), p0 = performance.now();
      let spins = 0;
      while (Date.now() - t0 < 30) spins++;
      return { wall: Date.now() - t0, mono: performance.now() - p0, spins };
    }"""
    started = time.monotonic()
    r = run_js(code)
    elapsed_ms = (time.monotonic() - started) * 1000
    assert r.ok, r.error
    assert r.value["wall"] >= 30
    assert r.value["mono"] >= 29
    assert elapsed_ms >= 29  # the guest waited for real time, not for a counter
    assert r.value["spins"] > 0


def test_readings_are_monotone_whole_milliseconds_from_the_call_start() -> None:
    code = """export function handler() {
      const mono = [], gaps = new Set();
      let last = -1, backwards = 0;
      const end = performance.now() + 15;
      while (performance.now() < end) {
        const m = performance.now(), w = Date.now(), again = performance.now();
        if (m < last) backwards++;
        if (m !== last) mono.push(m);
        if (m === again) gaps.add(w - m); // no tick between the two readings
        last = m;
      }
      return { first: mono[0], distinct: mono.length, backwards,
               whole: mono.every(Number.isInteger), offsets: gaps.size };
    }"""
    r = run_js(code)
    assert r.ok, r.error
    v = r.value
    assert v["backwards"] == 0
    assert v["whole"] is True  # 1 ms resolution: no finer reading exists
    assert 0 <= v["first"] < 1000  # counts from this call's start, not the host's uptime
    assert v["distinct"] >= 2  # it ticked during the 15 ms (a late ticker catches up in one step)
    assert v["offsets"] == 1  # Date.now() - performance.now() is the call's start, fixed


def test_the_clock_cannot_time_work_below_its_resolution() -> None:
    # a tool that times a short piece of work (the first step of a timing side channel) only
    # ever sees whole milliseconds: 0 for anything that ends within the tick
    code = """export function handler() {
      const seen = new Set();
      for (let i = 0; i < 2000; i++) {
        const t0 = performance.now();
        Math.sqrt(i);
        seen.add(performance.now() - t0);
      }
      return [...seen].sort((a, b) => a - b);
    }"""
    r = run_js(code)
    assert r.ok, r.error
    assert all(isinstance(d, int) for d in r.value)
    assert 0 in r.value


def test_a_clock_that_seems_to_stop_cannot_outlast_the_deadline() -> None:
    code = "const t0 = Date.now(); while (Date.now() >= t0) {} export default 1"
    started = time.monotonic()
    r = run_js(code, None, SandboxPolicy(timeout_s=0.3))
    assert r.error is not None
    assert r.error.kind is ErrorKind.TIMEOUT
    assert time.monotonic() - started < 0.3 + 1.0


def test_every_call_gets_its_own_clock() -> None:
    code = """export function handler({ ms }) {
      const p0 = performance.now();
      while (performance.now() - p0 < ms) {}
      return [p0, performance.now()];
    }"""
    results: dict[int, CallResult] = {}

    def call(ms: int) -> None:
        results[ms] = run_js(code, {"ms": ms})

    threads = [threading.Thread(target=call, args=(ms,)) for ms in (10, 25, 40)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for ms, r in results.items():
        assert r.ok, r.error
        start, end = r.value
        assert start < 1000  # each clock starts with its own call
        assert end - start >= ms
    # and a later call starts from zero again
    later = run_js("export default performance.now()")
    assert later.ok
    assert 0 <= later.value < 1000
