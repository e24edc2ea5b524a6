"""run_js end to end: handler and default exports, async, errors, limits."""

from __future__ import annotations

import pytest

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.spec import ErrorKind


def test_handler_gets_args() -> None:
    r = run_js("export function handler(a){return a.x+1}", {"x": 1})
    assert r.ok, r.error
    assert r.value == 2
    assert r.duration_ms > 0


def test_async_handler_and_top_level_await() -> None:
    code = """
    const base = await Promise.resolve(40);
    export async function handler({ n }) { await null; return base + n; }
    """
    assert run_js(code, {"n": 2}).value == 42


def test_default_export_value_and_function() -> None:
    assert run_js("export default {a: [1, 'b', null]}").value == {"a": [1, "b", None]}
    assert run_js("export default (a) => a.s.toUpperCase()", {"s": "hi"}).value == "HI"


def test_undefined_result_is_null() -> None:
    r = run_js("export function handler(){}")
    assert r.ok
    assert r.value is None


def test_module_without_exports_is_a_clear_error() -> None:
    r = run_js("const x = 1;")
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR
    assert "neither handler() nor a default" in r.error.message


def test_thrown_error_has_name_message_and_location() -> None:
    r = run_js("export function handler(){ throw new RangeError('too big') }")
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR
    assert "RangeError: too big" in r.error.message
    assert "tool.js" in r.error.message


def test_syntax_error_is_runtime_error() -> None:
    r = run_js("export function handler( { return 1 }")
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR
    assert "SyntaxError" in r.error.message


@pytest.mark.parametrize(
    ("expr", "needle"),
    [
        ("() => () => 1", "function"),
        ("10n", "BigInt"),
        ("(() => { const o = {}; o.o = o; return o })()", "circular"),
    ],
)
def test_result_must_be_json(expr: str, needle: str) -> None:
    r = run_js(f"export default {expr}")
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR
    assert "not JSON-serialisable" in r.error.message
    assert needle.lower() in r.error.message.lower()


def test_args_that_are_not_json_are_invalid_arguments() -> None:
    r = run_js("export default 1", {"x": float("nan")})
    assert r.error is not None
    assert r.error.kind is ErrorKind.INVALID_ARGUMENTS


def test_console_is_captured() -> None:
    code = """export function handler(){
      console.log('a', 1, {b: 2}); console.info('i'); console.debug('d');
      console.warn('w'); console.error(new Error('boom')); return 0 }"""
    r = run_js(code)
    assert r.logs == ('a 1 {"b":2}', "i", "d", "[warn] w", "[error] Error: boom")


def test_logs_survive_a_failure() -> None:
    r = run_js("console.log('before'); while(true){}", policy=SandboxPolicy(timeout_s=0.2))
    assert r.error is not None
    assert r.error.kind is ErrorKind.TIMEOUT
    assert r.logs == ("before",)


def test_unicode_round_trip() -> None:
    r = run_js("export const handler = (a) => a.s + '✓😀'", {"s": "é"})
    assert r.value == "é✓😀"


def test_policy_validation() -> None:
    with pytest.raises(ValueError):
        SandboxPolicy(timeout_s=0)
    with pytest.raises(ValueError):
        SandboxPolicy(memory_bytes=1024)


def test_large_module_and_args() -> None:
    big = "x" * 400_000
    code = f"const s = {big!r}; export function handler(a) {{ return s.length + a.t.length }}"
    r = run_js(code, {"t": "y" * 300_000})
    assert r.ok, r.error
    assert r.value == 700_000
