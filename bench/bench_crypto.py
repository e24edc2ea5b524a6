"""crypto.subtle.digest in the JavaScript sandbox against Python's hashlib, interleaved.

Run: ``.venv/bin/python bench/bench_crypto.py [--rounds 5] [--sizes 1,3,16]``.

For each size (MiB), one sandboxed call fills a ``Uint8Array`` of that size and hashes it with
SHA-256; the figure is the digest alone as the tool sees it (``performance.now()`` around
``crypto.subtle.digest``, 1 ms resolution: the bytes' way to the host and back included) and the
whole call; the baseline is ``hashlib.sha256`` of the same bytes in this process. Rounds are
interleaved (ABAB); figures are medians. Not a test: they depend on the machine's load, which
is printed. A size the sandbox refuses is printed with the refusal.
"""

from __future__ import annotations

import argparse
import hashlib
import time
from typing import Any

from harness import goal_line, interleaved, print_machine
from toolfoundry.sandbox import SandboxPolicy, run_js

MIB = 1024 * 1024

DIGEST = """
export async function handler({ n }) {
  const data = new Uint8Array(n);
  for (let i = 0; i < n; i += 4096) data[i] = (i >> 12) & 255;
  const started = performance.now();
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  const ms = performance.now() - started;
  return [ms, Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("")];
}
"""


def same_bytes(n: int) -> bytes:
    data = bytearray(n)
    for i in range(0, n, 4096):
        data[i] = (i >> 12) & 255
    return bytes(data)


def measure(n: int, rounds: int, policy: SandboxPolicy) -> str:
    """One size's line: the digest in the call, the whole call, hashlib, their ratio, MB/s."""
    data = same_bytes(n)
    expected = hashlib.sha256(data).hexdigest()
    inner: list[float] = []
    refusal: list[str] = []

    def ours() -> float | None:
        started = time.perf_counter()
        out = run_js(DIGEST, {"n": n}, policy)
        took = time.perf_counter() - started
        if not out.ok:
            refusal[:] = [f"{out.error.kind.value}: {out.error.message}" if out.error else "?"]
            return None
        value: Any = out.value
        assert value[1] == expected, "the sandbox's digest differs from hashlib's"
        inner.append(float(value[0]) / 1000)
        return took

    def theirs() -> float:
        started = time.perf_counter()
        hashlib.sha256(data).digest()
        return time.perf_counter() - started

    got = interleaved({"call": ours, "hashlib": theirs}, rounds, warm=1)
    mib = n / MIB
    if "call" not in got:
        why = refusal[0].splitlines()[0][:110] if refusal else "no answer"
        return f"{mib:>4g} refused: {why}"
    timed = sorted(inner[-rounds:])  # the warm-up call's figure left out
    digest_s = timed[len(timed) // 2]
    ratio = digest_s / got["hashlib"] if got["hashlib"] else float("inf")
    rate = n / digest_s / 1e6 if digest_s else float("inf")
    goal_line(f"crypto.subtle.digest SHA-256 of {mib:g} MiB vs hashlib", ratio)
    return (
        f"{mib:>4g} {digest_s * 1000:>10.1f} {got['call'] * 1000:>9.1f}"
        f" {got['hashlib'] * 1000:>11.2f} {ratio:>6.1f}x {rate:>7.0f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--sizes", default="1,3,16", help="MiB, comma-separated")
    opts = parser.parse_args()
    print_machine()
    # room to measure the old hex-in-JSON path too: a generous budget, twice the data's memory
    policy = SandboxPolicy(timeout_s=120, memory_bytes=256 * MIB)
    heads = ("MiB", "digest ms", "call ms", "hashlib ms", "ratio", "MB/s")
    print(" ".join(f"{h:>{w}}" for h, w in zip(heads, (4, 10, 9, 11, 7, 7), strict=True)))
    for size in opts.sizes.split(","):
        print(measure(int(float(size) * MIB), opts.rounds, policy), flush=True)


if __name__ == "__main__":
    main()
