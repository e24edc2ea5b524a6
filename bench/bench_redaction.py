"""Credential redaction benchmark: the fetch Redactor against the exact-copy replace it replaced.

    .venv/bin/python bench/bench_redaction.py [--rounds 15]

Each 1 MiB body is redacted by the old rule (``bytes.replace`` of each secret's exact bytes: the
baseline) and by ``toolfoundry.sandbox.host.redaction.Redactor.redact`` (every covered form),
with one and with five secrets, interleaved round by round so both see the same machine load.
Printed: the median per body and the Redactor's ratio to the baseline.
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from collections.abc import Callable
from urllib.parse import quote

from harness import goal_line, interleaved, timed
from toolfoundry.sandbox.host.redaction import MARK, Redactor

MIB = 1 << 20
SECRETS = (
    "Bearer tf~9QxZ?2mK>7pL4vR8sN1wY6",
    "Basic " + base64.b64encode(b"alice:correct-horse-battery").decode(),
    "sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "token 0123456789abcdefABCDEF0123456789",
    "ghp_R4nd0mL00k1ngT0k3nV4lu3F0rB3nch1ng",
)


def bodies(secret: str) -> dict[str, bytes]:
    item = {"id": 7, "name": "item café", "url": "https://x.test/a%20b?q=1", "note": "\\u00e9"}
    plain = json.dumps([item] * (MIB // 80), ensure_ascii=False).encode()[:MIB]
    raw = secret.encode()
    copies = b"|".join(
        (raw, base64.b64encode(b"x" + raw), quote(secret, safe="").encode(), raw.hex().encode())
    )
    reflected = (plain[: MIB - 100 * len(copies)] + copies * 100)[:MIB]
    return {
        "1 MiB JSON, no secret": plain,
        "1 MiB JSON, 400 reflected copies": reflected,
        "1 MiB of %41 (hostile escapes)": b"%41" * (MIB // 3),
    }


def old_redact(secrets: tuple[str, ...]) -> Callable[[bytes], bytes]:
    def redact(body: bytes) -> bytes:
        for secret in secrets:
            body = body.replace(secret.encode(), MARK)
        return body

    return redact


def pair(
    base: Callable[[bytes], bytes], new: Callable[[bytes], bytes], body: bytes, rounds: int
) -> tuple[float, float]:
    got = interleaved({"base": timed(lambda: base(body)), "new": timed(lambda: new(body))}, rounds)
    return got["base"] * 1e3, got["new"] * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    rounds = parser.parse_args().rounds
    print(f"{'body':36} {'secrets':>7} {'old ms':>8} {'new ms':>8} {'x old':>7}")
    for count in (1, 5):
        secrets = SECRETS[:count]
        redactor = Redactor(secrets)
        old = old_redact(secrets)
        for name, body in bodies(secrets[0]).items():
            base_ms, new_ms = pair(old, redactor.redact, body, rounds)
            ratio = new_ms / base_ms if base_ms else float("inf")
            print(f"{name:36} {count:>7} {base_ms:8.2f} {new_ms:8.2f} {ratio:7.1f}")
            if count == 5 and "reflected" in name:  # every encoding of five secrets, found
                goal_line(f"redact {name}, {count} secrets, vs plain replace", ratio)
    started = time.perf_counter()
    Redactor(SECRETS)
    print(f"building a Redactor for 5 secrets: {(time.perf_counter() - started) * 1e3:.2f} ms")


if __name__ == "__main__":
    main()
