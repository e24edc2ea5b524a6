"""POST /api/run_js: a snippet whose `tools` reaches the registry's tools, over the HTTP API
(every answer checked against the served OpenAPI document); the audit and usage it leaves."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from toolfoundry import Foundry

from .test_server_web_api import Api
from .test_server_web_support import compose

SNIPPET = """export default [
  await tools.shout({ text: "hi" }),
  await tools.weather({ city: "Oslo" }).catch((e) => e.kind),
];"""


@pytest.fixture
def api(fd: Foundry) -> Iterator[Api]:
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as client:
        yield Api(client)


def test_run_js_calls_the_registrys_tools_and_keeps_the_run(api: Api, fd: Foundry) -> None:
    out = api.post("/api/run_js", {"code": SNIPPET})
    assert out["ok"] is True
    assert out["value"] == ["HI!", "not_active"]  # shout v2 is current; weather waits
    run_id = out["run_id"]
    rows = api.get("/api/audit", tool="shout")
    called = [r for r in rows if r["event"] == "called"]
    assert called[-1]["caller"] == f"run:{run_id}"
    assert called[-1]["actor"] == "api"
    detail = api.get("/api/tools/shout")
    assert detail["usage"]["callers"] == {"run_js": 1}
    assert fd.registry.code_run(run_id) is not None


def test_a_failing_snippet_and_a_bad_body(api: Api) -> None:
    failed = api.post("/api/run_js", {"code": "throw new Error('no')", "args": {}})
    assert failed["ok"] is False
    assert failed["error"]["kind"] == "runtime_error"
    assert failed["run_id"]
    bad = api.post("/api/run_js", {"args": {}}, status=422)
    assert bad["error"]["kind"] == "invalid_request"
