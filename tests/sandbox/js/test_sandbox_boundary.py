"""What crosses out of the guest passes the JSON gate: results, errors, logs, host requests.

Each attack on the boundary (results the host must decode, lone surrogates returned, logged or
thrown, a lone surrogate in a fetch URL, a hostile answer pointer) is contained: a clear
error kind, located, and the host keeps working. Also through ``toolfoundry js run`` as a
real subprocess: no traceback, strict JSON out.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.fetch import FetchPolicy
from toolfoundry.sandbox.host.storage import MemoryStorage, StorageHook, StorageQuota
from toolfoundry.sandbox.js.engine import Limits
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.modules import default_catalog
from toolfoundry.sandbox.js.wasm_engine import default_engine
from toolfoundry.spec import CallResult

DEEP = "let v = []; for (let i = 0; i < 1100; i++) v = [v]; export default v"


def kind(result: CallResult) -> str | None:
    return result.error.kind.value if result.error else None


@pytest.mark.parametrize(
    ("code", "path", "fragment"),
    [
        (DEEP, "$", "nests deeper than 128"),  # was a RecursionError in the host
        ('export default JSON.rawJSON("1".repeat(5000))', "$", "5000 characters"),  # ValueError
        ('export default {k: [JSON.rawJSON("1e999")]}', "$.k[0]", "1e999"),  # was Infinity
        ('export default {t: "a\\ud800b"}', "$.t", "lone surrogate U+D800"),
        ('export default {["k\\udc00"]: 1}', "$", "key holds a lone surrogate U+DC00"),
        ('export default ["ok", "\\ud83d"]', "$[1]", "lone surrogate U+D83D"),  # half an emoji
    ],
)
def test_results_the_host_refuses_are_invalid_output(code: str, path: str, fragment: str) -> None:
    result = run_js(code)
    assert kind(result) == "invalid_output", result
    assert result.error is not None
    assert result.error.problems[0].path == path
    assert fragment in result.error.message
    json.dumps(result.to_dict(), allow_nan=False).encode("utf-8")  # every output can carry it
    assert run_js("export default 41 + 1").value == 42  # and the engine still serves


def test_what_is_valid_still_passes() -> None:
    code = 'export default {e: "😀", n: JSON.rawJSON("1e308"), deep: ' + "[" * 127 + "]" * 127 + "}"
    result = run_js(code)
    assert result.ok, result
    assert result.value["e"] == "😀"
    assert result.value["n"] == 1e308


def test_a_lone_surrogate_logged_or_thrown_is_shown_escaped() -> None:
    result = run_js('console.log("x\\ud800y"); console.warn("\\udfff"); export default 1')
    assert result.ok
    assert result.logs == ("x\\ud800y", "[warn] \\udfff")  # the six characters, visible
    thrown = run_js('throw new Error("bad\\ud800")')
    assert kind(thrown) == "runtime_error"
    assert thrown.error is not None
    assert thrown.error.message.startswith("Error: bad\\ud800")
    for out in (result, thrown):
        json.dumps(out.to_dict(), ensure_ascii=False).encode("utf-8")


def test_huge_logs_with_surrogates_stay_capped() -> None:
    code = 'for (let i = 0; i < 5000; i++) console.log("\\ud800".repeat(100)); export default 1'
    result = run_js(code)
    assert result.ok
    assert result.logs[-1].startswith("[logs truncated")
    assert all(line.encode("utf-8") for line in result.logs)


def test_storage_keys_must_be_valid_unicode() -> None:
    result = run_js('localStorage.setItem("k\\ud800", "v"); export default 1')
    assert kind(result) == "runtime_error"
    assert result.error is not None
    assert "$.key" in result.error.message
    assert "lone surrogate" in result.error.message


def test_a_lone_surrogate_in_a_fetch_url_is_a_clean_refusal(
    caplog: pytest.LogCaptureFixture,
) -> None:
    policy = SandboxPolicy(fetch=FetchPolicy(allow=("api.example.com",)))
    code = (
        "export default async () => {\n"
        '  try { await fetch("https://api.example.com/\\ud800"); return "fetched" }\n'
        "  catch (e) { return String(e) }\n"
        "}\n"
    )
    with caplog.at_level(logging.ERROR):
        result = run_js(code, None, policy)
    assert result.ok
    assert "lone surrogate" in result.value
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]  # no traceback logged


def test_hostile_arguments_are_invalid_arguments() -> None:
    for args, path in [
        ({"n": 10**5000}, "$.n"),
        ({"t": "\ud800"}, "$.t"),
        ({"x": float("inf")}, "$.x"),
    ]:
        result = run_js("export const handler = (a) => a", args)
        assert kind(result) == "invalid_arguments"
        assert result.error is not None
        assert result.error.problems[0].path == path


def test_a_hostile_answer_pointer_is_invalid_output() -> None:
    """A guest whose memory a bug let the tool corrupt could return any (ptr << 32) | len.

    Simulated by a real instance whose run export answers a pointer past its memory's end
    (nothing in the guest can be made to do it on purpose): the host must not read there.
    """
    engine = default_engine()
    guest = engine.fresh()
    forged = ((guest.size() - 4) << 32) | 64
    guest.run = lambda *args: forged  # type: ignore[assignment]
    host = CallHost(
        fetch=None,
        storage=StorageHook(MemoryStorage(), "t", StorageQuota()),
        libraries=default_catalog(),
        log_lines=10,
        log_bytes=1000,
        deadline=time.monotonic() + 5,
    )
    limits = Limits(deadline=time.monotonic() + 5, memory_bytes=64 << 20, output_bytes=1 << 20)
    result = engine.run_in(guest, "export default 1", {}, limits, host)
    assert kind(result) == "invalid_output"
    assert result.error is not None
    assert "outside its memory" in result.error.message


def run_cli(tmp_path: Path, code: str, *extra: str) -> subprocess.CompletedProcess[bytes]:
    file = tmp_path / "tool.js"
    file.write_text(code, encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-m", "toolfoundry", "js", "run", str(file), *extra],
        capture_output=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "code",
    [
        'export default "a\\ud800b"',
        'export default JSON.rawJSON("1e999")',
        'export default JSON.rawJSON("1".repeat(5000))',
        DEEP,
        'console.log("\\ud800"); throw new Error("\\udc00")',
    ],
)
def test_js_run_json_is_strict_json_and_never_a_traceback(tmp_path: Path, code: str) -> None:
    out = run_cli(tmp_path, code, "--json")
    assert out.returncode == 1, out.stderr
    assert b"Traceback" not in out.stderr
    data = json.loads(out.stdout.decode("utf-8"))  # strict UTF-8, strict JSON
    assert data["ok"] is False
    assert data["error"]["kind"] in {"invalid_output", "runtime_error"}
    plain = run_cli(tmp_path, code)
    assert plain.returncode == 1
    assert b"Traceback" not in plain.stderr
    plain.stderr.decode("utf-8")
