"""crypto's bytes cross as bytes: the documented 16 MiB input works within the default budget.

Digest and HMAC inputs once crossed as hex inside JSON: a 5 MiB digest was refused as a
"malformed host request" (the JSON gate's 8 MiB) and a 3 MiB one took 2.5 s, past the
default budget. Through ``toolfoundry js run`` and ``Foundry.call`` with default limits, 16 MiB
digests and signs, and one byte more is a ``QuotaExceededError`` naming the limit.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolfoundry import Foundry
from toolfoundry.sandbox.host.crypto import MAX_INPUT_BYTES

# Fills n bytes natively (a JS loop over 16 MiB would spend the budget), marks both ends.
CRYPTO = """
const hex = (buffer) =>
  Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
export async function handler({ n, op }) {
  const data = new Uint8Array(n).fill(0x61);
  data[0] = 1;
  data[n - 1] = 2;
  try {
    if (op === "digest") return hex(await crypto.subtle.digest("SHA-512", data));
    const alg = { name: "HMAC", hash: "SHA-256" };
    const usages = ["sign", "verify"];
    const key = await crypto.subtle.importKey("raw", data.subarray(0, 64), alg, false, usages);
    const mac = await crypto.subtle.sign("HMAC", key, data);
    const ok = await crypto.subtle.verify("HMAC", key, mac, data);
    const forged = new Uint8Array(mac).slice();
    forged[0] ^= 1;
    return [hex(mac), ok, await crypto.subtle.verify("HMAC", key, forged, data)];
  } catch (e) {
    return [e.name, e.message];
  }
}
"""


def the_bytes(n: int) -> bytes:
    data = bytearray(b"a" * n)
    data[0], data[-1] = 1, 2
    return bytes(data)


def expected(op: str, n: int) -> Any:
    data = the_bytes(n)
    if op == "digest":
        return hashlib.sha512(data).hexdigest()
    mac = hmac.new(data[:64], data, "sha256").hexdigest()
    return [mac, True, False]


def refused(what: str) -> list[str]:
    size = MAX_INPUT_BYTES + 1
    return [
        "QuotaExceededError",
        f"{what}: the data is {size} bytes; the limit is {size - 1} (16 MiB)",
    ]


def js_run(module: Path, args: dict[str, Any]) -> dict[str, Any]:
    command = ["js", "run", str(module), "--args", json.dumps(args), "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "toolfoundry", *command],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.mark.parametrize("op", ["digest", "hmac"])
def test_sixteen_mib_works_and_one_more_byte_is_refused_by_js_run(op: str, tmp_path: Path) -> None:
    module = tmp_path / "crypto.js"
    module.write_text(CRYPTO)
    out = js_run(module, {"n": MAX_INPUT_BYTES, "op": op})
    assert out["ok"], out
    assert out["value"] == expected(op, MAX_INPUT_BYTES)
    assert out["duration_ms"] < 2000  # the default budget, with room: ~100 ms unloaded
    over = js_run(module, {"n": MAX_INPUT_BYTES + 1, "op": op})
    assert over["value"] == refused("digest" if op == "digest" else "hmac")


def test_sixteen_mib_digest_through_a_registered_tool(tmp_path: Path) -> None:
    draft = {
        "name": "digest",
        "description": "SHA-512 of n bytes, in hex",
        "parameters": {
            "type": "object",
            "properties": {"n": {"type": "integer"}, "op": {"type": "string"}},
            "required": ["n", "op"],
        },
        "code": CRYPTO,
        "tests": [{"input": {"n": 3, "op": "digest"}, "expected": expected("digest", 3)}],
    }
    with Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}") as fd:
        assert fd.create_tool(draft).status == "active"
        out = fd.call("digest", {"n": MAX_INPUT_BYTES, "op": "digest"})  # default limits
        assert out.ok, out.to_dict()
        assert out.value == expected("digest", MAX_INPUT_BYTES)
        over = fd.call("digest", {"n": MAX_INPUT_BYTES + 1, "op": "digest"})
        assert over.value == refused("digest")
