"""A server that reflects the credential in every covered form: the script never gets it back.

``Reflector`` is a real HTTP server on loopback that answers each route with the Authorization
value it received, spelled one way (reason phrase, header name, base64 at three alignments,
percent-encoded Location and Set-Cookie, ``\\u``-escaped JSON, hex, halves in two headers,
Range pieces, a chunk boundary in the middle). Each test checks, with its own decoder (not the
redactor's code), that no 8-byte piece of the secret can be recovered from what the script sees
(status, statusText, headers, body, error messages), the audit records or the logs; and, as a
control, that the same decoder does recover it from what the server sent.
"""

from __future__ import annotations

import base64
import contextlib
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus, unquote_to_bytes

import pytest
from tests.factories import error_of

from toolfoundry.sandbox.host.credentials import Credential
from toolfoundry.sandbox.host.fetch import FetchPolicy, FetchRecord
from toolfoundry.sandbox.host.redaction import Redactor, min_piece

SECRET = "Bearer tf~9QxZ?2mK>7pL4vR8sN1wY6"  # its base64 holds both '+' and '/'
RAW = SECRET.encode()
ENV = "TF_REDACTION_TEST_TOKEN"
PIECE = 8
BASIC_USER = b"alice:correct-horse-battery"


def _pieces(secret: bytes) -> list[bytes]:
    return [secret[i : i + PIECE] for i in range(len(secret) - PIECE + 1)]


def _decodings(blob: bytes) -> Iterator[bytes]:
    """Every way an attacker would try to read a secret back out of ``blob``."""
    layers = [blob, unquote_to_bytes(blob), unquote_to_bytes(blob.replace(b"+", b" "))]
    layers.append(
        re.sub(
            rb"\\u([0-9a-fA-F]{4})|\\(/)",
            lambda m: chr(int(m[1], 16)).encode() if m[1] else m[2],
            blob,
        )
    )
    for layer in layers:
        yield layer
        for run in re.findall(rb"[A-Za-z0-9+/_-]{8,}", layer):
            for offset in range(4):
                part = run[offset:]
                part = part[: len(part) // 4 * 4]
                for altchars in (b"+/", b"-_"):
                    with contextlib.suppress(ValueError):
                        yield base64.b64decode(part, altchars)
        for run in re.findall(rb"[0-9a-fA-F]{16,}", layer):
            for offset in (0, 1):
                part = run[offset:]
                yield bytes.fromhex(part[: len(part) // 2 * 2].decode())


def recoverable(blob: bytes | str, secrets: tuple[bytes, ...] = (RAW,)) -> bool:
    """True when some 8-byte piece of a secret can be read back from ``blob``."""
    if isinstance(blob, str):
        blob = blob.encode("utf-8", "surrogatepass")
    pieces = [p for s in secrets for p in _pieces(s)]
    return any(p in decoded for decoded in _decodings(blob) for p in pieces)


def _b64(data: bytes, alphabet: str, pad: bool) -> bytes:
    out = base64.urlsafe_b64encode(data) if alphabet == "url" else base64.b64encode(data)
    return out if pad else out.rstrip(b"=")


def _json_mixed(value: str) -> bytes:
    """Every other character as a ``\\uXXXX`` escape, in alternating letter case."""
    out = []
    for i, c in enumerate(value):
        escape = f"\\u{ord(c):04x}"
        out.append((escape.upper().replace("\\U", "\\u") if i % 4 == 1 else escape) if i % 2 else c)
    return b'{"token": "' + "".join(out).encode() + b'"}'


def _answer(route: str, seen: bytes) -> tuple[int, str, list[tuple[str, str]], bytes]:
    """(status, reason, headers, body) that reflect ``seen`` the way ``route`` names."""
    text = seen.decode("latin-1")
    name, _, arg = route.partition("/")
    if name == "reason":
        return 200, text, [], b"ok"
    if name == "header-name":
        return 200, "OK", [("X-" + re.sub(r"[^A-Za-z0-9~]", "-", text), "1")], b"ok"
    if name == "header-name-hex":
        return 200, "OK", [("X-" + seen.hex(), "1")], b"ok"
    if name == "b64":  # b64/<prefix bytes>-<std|url>-<pad|nopad>
        skip, alphabet, pad = arg.split("-")
        return 200, "OK", [], b"data=" + _b64(b"xy"[: int(skip)] + seen, alphabet, pad == "pad")
    if name == "b64-header":
        return 200, "OK", [("X-Token", _b64(b"x" + seen, "std", True).decode())], b"ok"
    if name == "location":
        return 302, "Found", [("Location", "https://cb.test/?t=" + quote(text, safe=""))], b""
    if name == "location-lower":
        lowered = re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), quote(text, safe=""))
        return 302, "Found", [("Location", "https://cb.test/?t=" + lowered)], b""
    if name == "location-b64":
        encoded = quote(_b64(b"?" + seen, "std", True).decode(), safe="")
        return 302, "Found", [("Location", "https://cb.test/?t=" + encoded)], b""
    if name == "cookie":
        return 200, "OK", [("Set-Cookie", f"sid={quote_plus(text)}; Path=/")], b"ok"
    if name == "percent-all":
        return 200, "OK", [], "".join(f"%{b:02X}" for b in seen).encode()
    if name == "json":
        return 200, "OK", [("Content-Type", "application/json")], _json_mixed(text)
    if name == "json-ascii":
        return (
            200,
            "OK",
            [],
            ('{"t": "' + "".join(f"\\u{ord(c):04x}" for c in text) + '"}').encode(),
        )
    if name == "hex":
        hexed = seen.hex()
        mixed = "".join(c.upper() if i % 3 else c for i, c in enumerate(hexed))
        return 200, "OK", [], {"lower": hexed, "upper": hexed.upper(), "mixed": mixed}[arg].encode()
    if name == "halves":
        half = len(seen) // 2
        headers = [("X-Part-1", seen[:half].decode()), ("X-Part-2", seen[half:].decode())]
        return 200, "OK", headers, b"ok"
    if name == "basic":  # the user:password of a Basic credential, decoded
        return 200, "OK", [("X-User", "seen")], base64.b64decode(text.split()[1])
    raise KeyError(route)


class Reflector(BaseHTTPRequestHandler):
    """Reflects the Authorization header it gets; remembers it for ``/replay`` (another host)."""

    protocol_version = "HTTP/1.1"
    last_seen = b""
    sent: list[bytes] = []
    port = 0  # the loopback server's, set when it starts

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        seen = (self.headers.get("Authorization") or "").encode("latin-1")
        if seen:
            type(self).last_seen = seen
        route = self.path.lstrip("/")
        if route == "range":
            self._range(seen)
        elif route == "chunked":
            self._chunked(seen)
        elif route == "broken":
            self._write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Bad " + seen + b"\r\n\r\nok")
        elif route == "replay":
            self._send(200, "OK", [("X-Replay", type(self).last_seen.decode())], self.last_seen)
        else:
            self._send(*_answer(route, seen))

    def _write(self, data: bytes) -> None:
        self.sent.append(data)
        self.wfile.write(data)
        self.wfile.flush()
        self.close_connection = True

    def _send(self, status: int, reason: str, headers: list[tuple[str, str]], body: bytes) -> None:
        head = [f"HTTP/1.1 {status} {reason}"] + [f"{k}: {v}" for k, v in headers]
        head += [f"Content-Length: {len(body)}", "Connection: close"]
        self._write("\r\n".join(head).encode("latin-1") + b"\r\n\r\n" + body)

    def _range(self, seen: bytes) -> None:
        resource = b"<<" + seen + b">>"
        first, last = map(int, self.headers["Range"].removeprefix("bytes=").split("-"))
        part = resource[first : last + 1]
        extra = [("Content-Range", f"bytes {first}-{first + len(part) - 1}/{len(resource)}")]
        self._send(206, "Partial Content", extra, part)

    def _chunked(self, seen: bytes) -> None:
        body = b"before " + seen + b" after"
        cut = len(b"before ") + len(seen) // 2  # the boundary falls inside the secret
        self._write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        for chunk in (body[:cut], body[cut:]):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            time.sleep(0.05)  # separate reads on the client side
        self.sent.append(body)  # before the last chunk: the client may return once it reads it
        self.wfile.write(b"0\r\n\r\n")


@pytest.fixture(scope="module")
def _reflecting_server() -> Iterator[type[Reflector]]:
    handler: type[Reflector] = type("Reflecting", (Reflector,), {"sent": [], "last_seen": b""})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    handler.port = server.server_address[1]
    yield handler
    server.shutdown()
    server.server_close()


@pytest.fixture
def reflector(_reflecting_server: type[Reflector]) -> type[Reflector]:
    """A real loopback server reflecting the credential; forgets earlier tests' traffic."""
    _reflecting_server.sent.clear()
    _reflecting_server.last_seen = b""
    return _reflecting_server


@pytest.fixture
def token(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(ENV, SECRET)
    return SECRET


def _policy(port: int, records: list[FetchRecord], **extra: Any) -> FetchPolicy:
    return FetchPolicy(
        allow=(f"api.test:{port}", f"other.test:{port}"),
        allow_http=("api.test", "other.test"),
        allow_private=("127.0.0.1",),
        credentials=(Credential("api.test", "Authorization", env=ENV),),
        resolver=lambda host: ["127.0.0.1"],
        audit=records.append,
        **extra,
    )


def _script_view(answer: dict[str, Any]) -> bytes:
    body = base64.b64decode(answer.get("body") or "")
    return json.dumps(answer).encode() + b"\n" + body


def _check_clean(views: list[bytes], records: list[FetchRecord], caplog: Any) -> None:
    assert not any(recoverable(v) for v in views), views
    assert not recoverable(json.dumps([r.to_dict() for r in records]))
    assert not recoverable(caplog.text)


ROUTES = [
    "reason",
    "header-name",
    "header-name-hex",
    *(
        f"b64/{skip}-{alphabet}-{pad}"
        for skip in "012"
        for alphabet in ("std", "url")
        for pad in ("pad", "nopad")
    ),
    "b64-header",
    "location",
    "location-lower",
    "location-b64",
    "cookie",
    "percent-all",
    "json",
    "json-ascii",
    "hex/lower",
    "hex/upper",
    "hex/mixed",
    "halves",
    "chunked",
    "broken",
]


@pytest.mark.parametrize("route", ROUTES)
def test_reflected_form_never_reaches_the_script(
    route: str, reflector: type[Reflector], token: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    records: list[FetchRecord] = []
    handler = _policy(reflector.port, records).handler(deadline=time.monotonic() + 5, tool="t")
    answer = handler.handle({"url": f"http://api.test:{reflector.port}/{route}"})
    assert reflector.last_seen == RAW  # the credential really went out
    assert recoverable(b"".join(reflector.sent))  # and came back in a form the decoder reads
    if route == "broken":
        assert answer["error"]["kind"] == "runtime_error"
    else:
        assert "error" not in answer, answer
    _check_clean([_script_view(answer)], records, caplog)


def test_reason_phrase_is_redacted_in_place(reflector: type[Reflector], token: str) -> None:
    handler = _policy(reflector.port, []).handler(deadline=time.monotonic() + 5, tool="t")
    answer = handler.handle({"url": f"http://api.test:{reflector.port}/reason"})
    assert answer["status"] == 200
    assert answer["statusText"] == "[redacted]"


def test_headers_holding_a_form_are_dropped_and_others_kept(
    reflector: type[Reflector], token: str
) -> None:
    handler = _policy(reflector.port, []).handler(deadline=time.monotonic() + 5, tool="t")
    answer = handler.handle({"url": f"http://api.test:{reflector.port}/halves"})
    names = [k.lower() for k, _ in answer["headers"]]
    assert "x-part-1" not in names
    assert "x-part-2" not in names
    assert "content-length" in names


def test_range_pieces_across_requests(
    reflector: type[Reflector], token: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    records: list[FetchRecord] = []
    handler = _policy(reflector.port, records).handler(deadline=time.monotonic() + 5, tool="t")
    views = []
    size = len(RAW) + 4
    for first in range(0, size, 16):  # two Range responses, each half of the secret
        headers = [["Range", f"bytes={first}-{min(first + 15, size - 1)}"]]
        url = f"http://api.test:{reflector.port}/range"
        answer = handler.handle({"url": url, "headers": headers})
        assert answer["status"] == 206
        views.append(_script_view(answer))
    assert recoverable(b"".join(reflector.sent))
    _check_clean([b"".join(views)], records, caplog)


def test_secret_replayed_by_another_host_later_in_the_call(
    reflector: type[Reflector], token: str, caplog: pytest.LogCaptureFixture
) -> None:
    records: list[FetchRecord] = []
    handler = _policy(reflector.port, records).handler(deadline=time.monotonic() + 5, tool="t")
    handler.handle({"url": f"http://api.test:{reflector.port}/reason"})
    answer = handler.handle({"url": f"http://other.test:{reflector.port}/replay"})
    assert records[-1].credential is False  # no credential on this request
    assert base64.b64decode(answer["body"]) == b"[redacted]"
    _check_clean([_script_view(answer)], records, caplog)


def test_basic_credential_decoded_user_and_password(
    reflector: type[Reflector], monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    value = "Basic " + base64.b64encode(BASIC_USER).decode()
    monkeypatch.setenv(ENV, value)
    handler = _policy(reflector.port, []).handler(deadline=time.monotonic() + 5, tool="t")
    answer = handler.handle({"url": f"http://api.test:{reflector.port}/basic"})
    body = base64.b64decode(answer["body"])
    assert body == b"[redacted]"
    assert not recoverable(_script_view(answer), (value.encode(), BASIC_USER))


# --- the redactor on its own: piece length, mixed data, speed of the hostile case ----------


def test_min_piece() -> None:
    assert min_piece(5) == 5  # a short secret: only the whole value
    assert min_piece(20) == 8
    assert min_piece(100) == 25  # quarters of a long secret are still caught


def test_pieces_shorter_than_the_minimum_are_left_alone() -> None:
    redactor = Redactor((SECRET,))
    short = RAW[10:17]  # 7 bytes: below the minimum piece, documented as out of reach
    assert redactor.redact(b"a " + short + b" b") == b"a " + short + b" b"
    assert redactor.redact(b"a " + RAW[10:18] + b" b") == b"a [redacted] b"


def test_ordinary_data_is_untouched() -> None:
    redactor = Redactor((SECRET,))
    data = json.dumps({"items": [{"id": i, "name": f"item-{i}%20x\\u0041"} for i in range(500)]})
    assert redactor.redact(data.encode()) == data.encode()


def test_many_copies_and_hostile_escapes_in_one_body() -> None:
    redactor = Redactor((SECRET, "token-two-0123456789abcdef"))
    chunk = RAW + b"|" + quote(SECRET, safe="").encode() + b"|" + RAW.hex().encode() + b"|"
    data = chunk * 300 + b"%41" * 20_000
    out = redactor.redact(data)
    assert out.count(b"[redacted]") == 900
    assert not recoverable(out[: 20 * len(chunk)])


@pytest.mark.parametrize("value", ['Bearer ab\tcd"ef\\gh%ij', "Bearer ab cd+ef/gh=ij"])
def test_secrets_with_characters_json_and_urls_escape(value: str) -> None:
    redactor = Redactor((value,))
    for encoded in (json.dumps({"t": value}), quote(value, safe=""), quote_plus(value)):
        data = ("x" * 70_000 + encoded + "y").encode()
        assert redactor.redact(data) in (
            ("x" * 70_000 + '{"t": "[redacted]"}y').encode(),
            ("x" * 70_000 + "[redacted]y").encode(),
        ), encoded


def test_text_with_lone_surrogates_and_non_latin_secret() -> None:
    redactor = Redactor(("Bearer ключ-секрет-42",))
    text = "\ud800 seen Bearer ключ-секрет-42 \udfff"
    assert redactor.redact_text(text) == "\ud800 seen [redacted] \udfff"
    assert redactor.holds_secret("x " + quote("ключ-секрет-42"))


# --- hostile scripts in the real sandbox, and the CLI ----------------------------------------

RECONSTRUCT = r"""
const hex = (s) =>
  (s.match(/[0-9a-f]{2}/gi) || []).map((h) => String.fromCharCode(parseInt(h, 16))).join("");
const strip = (s) => s.replace(/^data=|^.*\?t=|^sid=|;.*$/g, "");
const tryAll = (s) => {
  const out = [s];
  for (const f of [atob, decodeURIComponent, hex, (x) => JSON.parse(x).token]) {
    try { out.push(String(f(strip(s)))) } catch (e) { out.push(String(e)) }
  }
  return out;
};
export async function handler({ base, routes }) {
  const seen = [];
  for (const route of routes) {
    try {
      const r = await fetch(base + "/" + route);
      const body = await r.text();
      seen.push(r.statusText, ...tryAll(body));
      for (const [k, v] of r.headers) seen.push(k, ...tryAll(v));
    } catch (e) { seen.push(String(e.message)) }
  }
  // Two halves of the resource by Range, glued back together.
  let glued = "";
  for (const range of ["bytes=0-15", "bytes=16-35"]) {
    const r = await fetch(base + "/range", { headers: { Range: range } });
    glued += await r.text();
  }
  // Halves in two headers, glued.
  const h = await fetch(base + "/halves");
  glued += (h.headers.get("x-part-1") || "") + (h.headers.get("x-part-2") || "");
  seen.push(glued);
  console.log(JSON.stringify(seen));
  return seen;
}
"""

JS_ROUTES = [r for r in ROUTES if r not in ("halves",)]


def _result_text(result: Any) -> str:
    return json.dumps(
        {
            "value": result.value,
            "error": error_of(result).to_dict() if result.error else None,
            "logs": list(result.logs),
        }
    )


def test_hostile_script_cannot_reconstruct_the_secret(
    reflector: type[Reflector], token: str, caplog: pytest.LogCaptureFixture
) -> None:
    from toolfoundry.sandbox import SandboxPolicy, run_js

    caplog.set_level(logging.DEBUG)
    records: list[FetchRecord] = []
    policy = SandboxPolicy(fetch=_policy(reflector.port, records, max_requests=50), tool="hostile")
    base = f"http://api.test:{reflector.port}"
    result = run_js(RECONSTRUCT, {"base": base, "routes": JS_ROUTES}, policy)
    assert result.ok, result.error
    assert reflector.last_seen == RAW
    assert len(result.value) > 3 * len(JS_ROUTES)
    assert not recoverable(_result_text(result))
    assert not recoverable(caplog.text)
    assert not recoverable(json.dumps([r.to_dict() for r in records]))


def test_js_run_cli_output_holds_no_form_of_the_secret(
    tmp_path: Path, reflector: type[Reflector], token: str
) -> None:
    from click.testing import CliRunner

    from toolfoundry.cli import main

    script = tmp_path / "reconstruct.js"
    script.write_text(RECONSTRUCT)
    host = f"127.0.0.1:{reflector.port}"
    args = {"base": f"http://{host}", "routes": ["reason", "b64/1-url-nopad", "location", "json"]}
    result = CliRunner().invoke(
        main,
        [
            "js",
            "run",
            str(script),
            "--json",
            "--args",
            json.dumps(args),
            "--allow-host",
            f"http://{host}",
            "--allow-private",
            "127.0.0.1",
            "--credential",
            f"{host}:Authorization:{ENV}",
        ],
    )
    assert result.exit_code == 0, result.output
    assert reflector.last_seen == RAW
    assert json.loads(result.output)["ok"] is True
    assert not recoverable(result.output)


@pytest.mark.parametrize("shift", [-40, -7, 0, 3, 50])
def test_escaped_copy_across_a_window_of_the_escaped_views(shift: int) -> None:
    redactor = Redactor((SECRET,))
    every_byte = "".join(f"%{b:02X}" for b in RAW).encode()
    every_char = "".join(f"\\u{b:04x}" for b in RAW).encode()
    for encoded in (every_byte, every_char):
        data = b"x" * (64 * 1024 + shift) + encoded + b"y" * 100
        assert redactor.redact(data) == b"x" * (64 * 1024 + shift) + b"[redacted]" + b"y" * 100


def test_foundry_call_of_an_approved_tool_holds_no_form_of_the_secret(
    tmp_path: Path, reflector: type[Reflector], token: str, caplog: pytest.LogCaptureFixture
) -> None:
    from toolfoundry import Foundry
    from toolfoundry.config import parse_config

    caplog.set_level(logging.DEBUG)
    host = f"127.0.0.1:{reflector.port}"
    config = parse_config(
        {
            "fetch": {
                "allow_http": [host],
                "allow_private": ["127.0.0.1"],
                "credentials": [{"host": host, "header": "Authorization", "env": ENV}],
            }
        }
    )
    routes = ["reason", "b64/2-std-nopad", "cookie", "hex/mixed"]
    # What it rebuilt goes to its log (part of the call's output); the value stays the same
    # under the forge's fixtures and against the real server.
    code = RECONSTRUCT.replace(
        "export async function handler({ base, routes }) {",
        f"export async function handler() {{ const base = 'http://{host}', "
        f"routes = {json.dumps(routes)};",
    ).replace("return seen;", "return routes.length;")
    draft = {
        "name": "reflected",
        "description": "Reads what a reflecting server sends back",
        "parameters": {"type": "object", "properties": {}},
        "code": code,
        "capabilities": {"network": [host], "credentials": [host]},
        "fixtures": [{"url": f"http://{host}/{r}", "body": "ok"} for r in (*routes, "halves")]
        + [{"url": f"http://{host}/range", "body": "ok"}],
        "tests": [{"name": "runs", "input": {}, "expected": len(routes)}],
    }
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=config) as fd:
        created = fd.create_tool(draft)
        assert created.status == "pending_approval", created.to_dict()
        assert fd.approve("reflected", by="alice", reason="test").status == "active"
        out = fd.call("reflected", {})
    assert out.ok, out.to_dict()
    assert reflector.last_seen == RAW
    assert len(out.logs) == 1
    assert "[redacted]" in out.logs[0]
    assert not recoverable(json.dumps(out.to_dict()))
    assert not recoverable(caplog.text)
