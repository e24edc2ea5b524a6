"""Error kinds are the host's: a script cannot choose the kind its call fails with.

The prelude only suggests a kind; the engine keeps it only when the host saw the fact behind it
(memory.grow refused, a timer past the budget, a refusal the host itself answered in this call,
``wasm_engine.py:_decided_kind``). Every forgery below overrides the built-ins the prelude uses
or throws a value shaped like a host error, and must come out as ``runtime_error`` through
``run_js``, ``Foundry.call`` and the HTTP API (which would map not_found / not_active /
invalid_arguments to 404 / 409 / 422).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient
from tests.server.test_server_web_support import compose

from toolfoundry import Foundry
from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.spec import ErrorKind

FORGED_KINDS = [
    "not_found",
    "not_active",
    "invalid_arguments",
    "memory_limit",
    "timeout",
    "capability_denied",
    "output_too_large",
    "invalid_output",
    "sandbox_unavailable",
]

# Statements that end a call with a forged kind; each runs in a fresh instance.
ATTACKS: dict[str, str] = {
    "weakmap_get": 'WeakMap.prototype.get = () => "{k}"; throw new Error("forged")',
    "weakmap_get_on_host_shaped_error": (
        'WeakMap.prototype.get = () => "{k}";'
        ' throw new TypeError("fetch is not allowed: this tool has no network capability")'
    ),
    "map_get": 'Map.prototype.get = () => "{k}"; throw new Error("forged")',
    "object_prototype": 'Object.prototype.kind = "{k}"; throw new Error("forged")',
    "to_primitive": 'throw {{ [Symbol.toPrimitive]: () => "{k}", kind: "{k}" }}',
    "error_name": 'Error.prototype.name = "{k}"; throw new Error("{k}")',
    "plain_object": 'throw {{ kind: "{k}", message: "forged" }}',
    "host_shaped_answer": 'throw {{ error: {{ kind: "{k}", message: "forged" }} }}',
    "error_with_kind": 'const e = new TypeError("forged"); e.kind = "{k}"; throw e',
    "reflect_apply": 'Reflect.apply = () => "{k}"; throw new Error("forged")',
}
PLAIN_FORGERIES: dict[str, str] = {
    "internal_error_oom": 'throw new InternalError("out of memory")',
    "uncaught_null": "throw null",
    "timer_state_minus_two": "throw -2",
    "rejected_oom": 'await Promise.reject(new InternalError("out of memory"))',
}


def _cases() -> list[tuple[str, str]]:
    cases = [
        (f"{name}:{kind}", body.format(k=kind))
        for name, body in ATTACKS.items()
        for kind in FORGED_KINDS
    ]
    return cases + list(PLAIN_FORGERIES.items())


CASES = _cases()


@pytest.mark.parametrize(("label", "body"), CASES, ids=[c[0] for c in CASES])
def test_a_forged_kind_is_runtime_error(label: str, body: str) -> None:
    r = run_js(f"{body};\nexport default 1", None)
    assert r.error is not None, r.value
    assert r.error.kind is ErrorKind.RUNTIME_ERROR, (label, r.error)


def test_a_forged_kind_inside_the_handler_is_runtime_error() -> None:
    code = (
        "export async function handler() {\n"
        '  WeakMap.prototype.get = () => "not_found";\n'
        '  throw new InternalError("out of memory");\n'
        "}"
    )
    r = run_js(code, {})
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR


def test_a_refusal_the_host_made_keeps_its_kind() -> None:
    r = run_js('await fetch("https://example.com/"); export default 1', None)
    assert r.error is not None
    assert r.error.kind is ErrorKind.CAPABILITY_DENIED


def test_a_caught_refusal_does_not_lend_its_kind_to_another_forgery() -> None:
    code = (
        'try { await fetch("https://example.com/") } catch {}\n'
        'WeakMap.prototype.get = () => "not_found"; throw { kind: "not_found" };\n'
        "export default 1"
    )
    r = run_js(code, None)
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR


def test_real_limits_keep_their_kinds() -> None:
    small = SandboxPolicy(memory_bytes=16 * 1024 * 1024)
    oom = run_js("export default new ArrayBuffer(17 * 1024 * 1024).byteLength", None, small)
    assert oom.error is not None
    assert oom.error.kind is ErrorKind.MEMORY_LIMIT
    late = run_js("await new Promise((r) => setTimeout(r, 1e9)); export default 1", None)
    assert late.error is not None
    assert late.error.kind is ErrorKind.TIMEOUT
    spin = run_js("for (;;) {}", None, SandboxPolicy(timeout_s=0.2))
    assert spin.error is not None
    assert spin.error.kind is ErrorKind.TIMEOUT


FORGER_CODE = """
const attacks = { ATTACKS };
export async function handler({ attack }) {
  await attacks[attack]();
  return "not reached";
}
"""
# the forgeries the HTTP API would turn into 404 / 409 / 422, plus the memory one
API_CASES = {
    label: body
    for label, body in CASES
    if label.endswith((":not_found", ":not_active", ":invalid_arguments"))
    or label == "internal_error_oom"
}


@pytest.fixture
def forger(tmp_path: Path) -> Iterator[Foundry]:
    foundry = Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}")
    functions = ", ".join(f"{json.dumps(k)}: async () => {{ {v} }}" for k, v in API_CASES.items())
    draft: dict[str, Any] = {
        "name": "forger",
        "description": "Throws what it is told to, to forge an error kind.",
        "parameters": {
            "type": "object",
            "properties": {"attack": {"type": "string"}},
            "required": ["attack"],
        },
        "code": FORGER_CODE.replace("ATTACKS", functions),
        "tests": [
            {
                "name": "forges",
                "input": {"attack": "plain_object:not_found"},
                "error": "forged",
                "error_kind": "runtime_error",
            }
        ],
    }
    created = foundry.create_tool(draft)
    assert created.status == "active", created
    yield foundry
    foundry.close()


@pytest.mark.parametrize("label", list(API_CASES))
def test_forged_kinds_through_foundry_call_and_the_http_api(forger: Foundry, label: str) -> None:
    result = forger.call("forger", {"attack": label})
    assert result.error is not None
    assert result.error.kind is ErrorKind.RUNTIME_ERROR, result.error
    with TestClient(compose(forger), base_url="http://127.0.0.1:8000") as client:
        response = client.post("/api/tools/forger/call", json={"args": {"attack": label}})
    assert response.status_code not in (404, 409, 422), response.text
    assert response.json()["error"]["kind"] == "runtime_error", response.text
