"""Positive tests for every prelude API: timers, crypto, localStorage, fetch veneer, polyfills."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from toolfoundry.registry import Registry
from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.storage import MemoryStorage
from toolfoundry.sandbox.js.modules import POLYFILLS
from toolfoundry.spec import ErrorKind
from toolfoundry.spec.limits import FETCH_REQUESTS

needs_polyfills = pytest.mark.skipif(
    not POLYFILLS.exists(), reason="polyfills bundle not built (npm build produces it)"
)


def ok(code: str, args: Any = None, policy: SandboxPolicy | None = None) -> Any:
    r = run_js(code, args, policy)
    assert r.ok, r.error
    return r.value


# ---- timers ----


def test_set_timeout_orders_by_delay_then_insertion() -> None:
    code = """export async function handler() {
      const seen = [];
      setTimeout(() => seen.push('b'), 20);
      setTimeout(() => seen.push('a'), 10);
      setTimeout(() => seen.push('c'), 20);
      await new Promise((r) => setTimeout(r, 30));
      return seen; }"""
    assert ok(code) == ["a", "b", "c"]


def test_clear_timeout_and_interval() -> None:
    code = """export async function handler() {
      let n = 0; const id = setTimeout(() => n += 100, 5); clearTimeout(id);
      const iv = setInterval(() => { n += 1; if (n === 3) clearInterval(iv); }, 10);
      await new Promise((r) => setTimeout(r, 100));
      return n; }"""
    assert ok(code) == 3


def test_timer_beyond_budget_is_timeout() -> None:
    r = run_js(
        "export default await new Promise((r) => setTimeout(r, 60000))",
        policy=SandboxPolicy(timeout_s=1),
    )
    assert r.error is not None
    assert r.error.kind is ErrorKind.TIMEOUT


def test_queue_microtask() -> None:
    code = """export async function handler(){
      const s = []; queueMicrotask(() => s.push(1)); await null; return s }"""
    assert ok(code) == [1]


# ---- crypto ----


def test_get_random_values_and_uuid() -> None:
    code = """export default {
      a: Array.from(crypto.getRandomValues(new Uint8Array(32))),
      b: Array.from(crypto.getRandomValues(new Uint8Array(32))),
      u32: crypto.getRandomValues(new Uint32Array(4)).length,
      uuid: crypto.randomUUID() }"""
    v = ok(code)
    assert len(v["a"]) == 32
    assert v["a"] != v["b"]
    assert v["u32"] == 4
    assert uuid.UUID(v["uuid"]).version == 4


def test_math_random_differs_between_calls() -> None:
    code = "export default [Math.random(), Math.random()]"
    first, second = ok(code), ok(code)
    assert first != second
    assert all(0 <= x < 1 for x in first + second)


@pytest.mark.parametrize("alg", ["SHA-1", "SHA-256", "SHA-384", "SHA-512"])
def test_subtle_digest(alg: str) -> None:
    code = f"""export default Array.from(new Uint8Array(
      await crypto.subtle.digest({{name: "{alg}"}}, new Uint8Array([104, 105]))))"""
    expected = hashlib.new(alg.replace("-", "").lower(), b"hi").digest()
    assert bytes(ok(code)) == expected


def test_hmac_sign_and_verify() -> None:
    code = """
    const key = await crypto.subtle.importKey("raw", new Uint8Array([1,2,3,4]),
      {name: "HMAC", hash: "SHA-256"}, false, ["sign", "verify"]);
    const data = new Uint8Array([100, 97, 116, 97]);
    const sig = await crypto.subtle.sign("HMAC", key, data);
    const good = await crypto.subtle.verify("HMAC", key, sig, data);
    const bad = await crypto.subtle.verify("HMAC", key, sig, new Uint8Array([0]));
    export default { sig: Array.from(new Uint8Array(sig)), good, bad, type: key.type,
      alg: key.algorithm, keys: Object.keys(key) };"""
    v = ok(code)
    assert bytes(v["sig"]) == hmac.new(b"\x01\x02\x03\x04", b"data", "sha256").digest()
    assert v["good"] is True
    assert v["bad"] is False
    assert v["type"] == "secret"
    assert v["alg"] == {"name": "HMAC", "hash": {"name": "SHA-256"}, "length": 32}
    assert "raw" not in json.dumps(v["keys"])


def test_unsupported_digest_rejects_with_not_supported() -> None:
    code = "export default await crypto.subtle.digest('MD5', new Uint8Array(1)).catch(e => e.name)"
    assert ok(code) == "NotSupportedError"


# ---- localStorage ----


def storage_policy(backend: Any, tool: str = "t") -> SandboxPolicy:
    return SandboxPolicy(storage=backend, tool=tool)


def test_local_storage_web_semantics() -> None:
    code = """export default (() => {
      localStorage.clear();
      localStorage.setItem("b", 2); localStorage.setItem("a", {x: 1});
      localStorage.c = "three";
      const out = { len: localStorage.length, a: localStorage.getItem("a"), b: localStorage.b,
        missing: localStorage.getItem("zz"), key0: localStorage.key(0), key9: localStorage.key(9),
        has: "c" in localStorage, keys: Object.keys(localStorage) };
      localStorage.removeItem("a"); delete localStorage.c;
      out.after = localStorage.length;
      return out; })()"""
    v = ok(code, policy=storage_policy(MemoryStorage()))
    assert v == {
        "len": 3,
        "a": "[object Object]",
        "b": "2",
        "missing": None,
        "key0": "a",
        "key9": None,
        "has": True,
        "keys": ["a", "b", "c"],
        "after": 1,
    }


def test_local_storage_persists_in_sqlite_per_tool(tmp_path: Path) -> None:
    # The registry's backend is the one tools get; it must survive a reopened database.
    url = f"sqlite:///{tmp_path / 'ls.sqlite'}"
    registry = Registry.open(url)
    backend = registry.storage
    ok("localStorage.setItem('n', '1'); export default 0", policy=storage_policy(backend, "one"))
    registry.close()
    reopened = Registry.open(url)
    read = "export default localStorage.getItem('n')"
    assert ok(read, policy=storage_policy(reopened.storage, "one")) == "1"
    assert ok(read, policy=storage_policy(reopened.storage, "two")) is None
    reopened.close()


def test_local_storage_quota_raises_quota_exceeded() -> None:
    from toolfoundry.sandbox.host.storage import StorageQuota

    policy = SandboxPolicy(
        storage=MemoryStorage(),
        tool="q",
        storage_quota=StorageQuota(max_keys=2, max_value_bytes=10, max_total_bytes=100),
    )
    code = """export default (() => { const out = [];
      for (const [k, v] of [["a", "1"], ["b", "x".repeat(11)], ["c", "2"], ["d", "3"]]) {
        try { localStorage.setItem(k, v); out.push("ok"); }
        catch (e) { out.push(e.name + ":" + (e instanceof DOMException) + ":" + e.code); } }
      return out; })()"""
    assert ok(code, policy=policy) == [
        "ok",
        "QuotaExceededError:true:22",
        "ok",
        "QuotaExceededError:true:22",
    ]


def test_local_storage_without_capability_is_denied() -> None:
    r = run_js("localStorage.setItem('a', '1'); export default 1")
    assert r.error is not None
    assert r.error.kind is ErrorKind.CAPABILITY_DENIED


# ---- fetch veneer (the network policy itself is tested by the fetch area) ----


class CannedHandler:
    def __init__(self, seen: list[Mapping[str, Any]]) -> None:
        self.seen = seen

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        self.seen.append(request)
        if "denied" in request["url"]:
            return {"error": {"kind": "capability_denied", "message": "host not allowed"}}
        body = json.dumps({"method": request["method"], "echo": request["body"]}).encode()
        return {
            "status": 201,
            "statusText": "Created",
            "headers": [["content-type", "application/json"], ["x-a", "1"], ["x-a", "2"]],
            "body": base64.b64encode(body).decode(),
            "url": request["url"],
        }


class CannedFetch:
    max_requests = FETCH_REQUESTS

    def __init__(self) -> None:
        self.seen: list[Mapping[str, Any]] = []
        self.deadlines: list[float] = []

    def handler(self, *, deadline: float, tool: str | None) -> CannedHandler:
        self.deadlines.append(deadline)
        return CannedHandler(self.seen)


def test_fetch_veneer_round_trip() -> None:
    provider = CannedFetch()
    code = """export async function handler() {
      const res = await fetch("https://api.example.com/x", { method: "post",
        headers: { "X-Token": "t", "Content-Type": "application/json" },
        body: JSON.stringify({a: "é"}) });
      const clone = res.clone();
      return { status: res.status, ok: res.ok, statusText: res.statusText, url: res.url,
        ct: res.headers.get("content-type"), xa: res.headers.get("X-A"),
        json: await res.json(), text: (await clone.text()).length > 0, used: res.bodyUsed }; }"""
    v = ok(code, policy=SandboxPolicy(fetch=provider, tool="f"))
    assert v["status"] == 201
    assert v["ok"] is True
    assert v["statusText"] == "Created"
    assert v["url"] == "https://api.example.com/x"
    assert v["ct"] == "application/json"
    assert v["xa"] == "1, 2"
    assert v["json"]["method"] == "POST"
    assert json.loads(base64.b64decode(v["json"]["echo"])) == {"a": "é"}
    assert v["text"] is True
    assert v["used"] is True
    req = provider.seen[0]
    assert ["x-token", "t"] in req["headers"]
    assert len(provider.deadlines) == 1


def test_fetch_array_buffer_and_request_object() -> None:
    provider = CannedFetch()
    code = """export default await (async () => {
      const req = new Request("https://api.example.com/y",
        { method: "PUT", body: new Uint8Array([1,2,3]) });
      const res = await fetch(req);
      const buf = await res.arrayBuffer();
      return { isBuf: buf instanceof ArrayBuffer, n: buf.byteLength,
        made: new Response("hi", {status: 404}).ok, j: await Response.json({a: 1}).json() };
    })()"""
    v = ok(code, policy=SandboxPolicy(fetch=provider))
    assert v["isBuf"] is True
    assert v["n"] > 0
    assert v["made"] is False
    assert v["j"] == {"a": 1}
    assert base64.b64decode(provider.seen[0]["body"]) == b"\x01\x02\x03"


def test_fetch_host_error_is_type_error_with_kind() -> None:
    provider = CannedFetch()
    caught = """export default await fetch('https://denied.example/')
      .catch(e => e.name + ': ' + e.message)"""
    assert ok(caught, policy=SandboxPolicy(fetch=provider)) == "TypeError: host not allowed"
    r = run_js(
        "export default await fetch('https://denied.example/')",
        policy=SandboxPolicy(fetch=provider),
    )
    assert r.error is not None
    assert r.error.kind is ErrorKind.CAPABILITY_DENIED


def test_fetch_without_capability_is_denied() -> None:
    r = run_js("export default await fetch('https://example.com/')")
    assert r.error is not None
    assert r.error.kind is ErrorKind.CAPABILITY_DENIED
    assert "network" in r.error.message


# ---- polyfills (built by the npm area) ----


@needs_polyfills
def test_url_and_search_params() -> None:
    code = """const u = new URL("https://a.example/p?q=1&r=two#h");
      u.searchParams.append("s", "3 4");
      export default { host: u.host, q: u.searchParams.get("q"), href: u.href,
        usp: new URLSearchParams({a: "1", b: "x y"}).toString() }"""
    v = ok(code)
    assert v["host"] == "a.example"
    assert v["q"] == "1"
    assert "s=3+4" in v["href"]
    assert v["usp"] == "a=1&b=x+y"


@needs_polyfills
def test_text_encoding_base64_structured_clone() -> None:
    code = """const bytes = new TextEncoder().encode("é😀");
      export default { n: bytes.length, back: new TextDecoder().decode(bytes), b: btoa("hi"),
        a: atob("aGk="), c: structuredClone({d: [1, {e: 2}]}) }"""
    assert ok(code) == {"n": 6, "back": "é😀", "b": "aGk=", "a": "hi", "c": {"d": [1, {"e": 2}]}}


class NestedFetch:
    """A fetch provider whose answers come from running another script (nested run_js)."""

    max_requests = FETCH_REQUESTS

    def handler(self, *, deadline: float, tool: str | None) -> NestedFetch:
        return self

    def handle(self, request: Mapping[str, Any]) -> dict[str, Any]:
        inner = run_js("export default 'inner'")
        body = base64.b64encode(json.dumps(inner.value).encode()).decode()
        return {"status": 200, "statusText": "OK", "headers": [], "body": body, "url": ""}


def test_host_op_running_a_nested_script() -> None:
    code = """const a = await (await fetch("https://x.example/")).json();
      const b = crypto.getRandomValues(new Uint8Array(2)).length;
      export default [a, b]"""
    assert ok(code, policy=SandboxPolicy(fetch=NestedFetch())) == ["inner", 2]
