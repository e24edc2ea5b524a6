"""The JSON API under /api, through the same guard ``toolfoundry serve`` uses (loopback, no
token): every operation, its refusals, and every response checked against the OpenAPI
document the API serves."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from toolfoundry import Foundry
from toolfoundry.server.web import web_routes
from toolfoundry.server.web.api import FALLBACK_ROUTE

from .test_server_web_support import (
    SHOUT,
    check_documented,
    compose,
    network_draft,
    seed,
    snapshot,
)


class Api:
    """A client that checks every response against the served OpenAPI document."""

    def __init__(self, client: TestClient) -> None:
        self.client = client
        self.document: dict[str, Any] = client.get("/api/openapi.json").json()

    def get(self, path: str, status: int = 200, **params: Any) -> Any:
        r = self.client.get(path, params=params)
        assert r.status_code == status, r.text
        check_documented(self.document, "GET", path, status, r.json())
        return r.json()

    def post(self, path: str, body: Any = None, status: int = 200) -> Any:
        r = self.client.post(path, json=body if body is not None else {})
        assert r.status_code == status, r.text
        check_documented(self.document, "POST", path, status, r.json())
        return r.json()


@pytest.fixture
def api(fd: Foundry) -> Iterator[Api]:
    with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as client:
        yield Api(client)


def test_every_api_route_is_documented_and_every_documented_operation_exists() -> None:
    routes = web_routes(lambda: None)  # type: ignore[arg-type, return-value]
    mount = next(r for r in routes if isinstance(r, Mount) and r.path == "/api")
    served = {
        (method.lower(), "/api" + route.path.replace(":int", ""))
        for route in mount.routes
        if isinstance(route, Route) and route.name != FALLBACK_ROUTE
        for method in (route.methods or set()) - {"HEAD"}
    }
    client = TestClient(compose(None), base_url="http://127.0.0.1")  # type: ignore[arg-type]
    document = client.get("/api/openapi.json").json()
    documented = {(m, p) for p, ops in document["paths"].items() for m in ops}
    assert served == documented
    assert len(served) == 18  # 16, /review and /run_js
    assert document["openapi"] == "3.1.0"
    ids = [op["operationId"] for ops in document["paths"].values() for op in ops.values()]
    assert len(ids) == len(set(ids))


def test_every_reference_in_the_document_resolves() -> None:
    client = TestClient(compose(None), base_url="http://127.0.0.1")  # type: ignore[arg-type]
    document = client.get("/api/openapi.json").json()

    def refs(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            if "$ref" in node:
                yield node["$ref"]
            for value in node.values():
                yield from refs(value)
        elif isinstance(node, list):
            for value in node:
                yield from refs(value)

    found = set(refs(document))
    assert found
    for ref in found:
        assert ref.startswith("#/components/schemas/")
        assert ref.rsplit("/", 1)[1] in document["components"]["schemas"], ref


def test_list_show_history_version_and_diff(api: Api) -> None:
    rows = {r["name"]: r for r in api.get("/api/tools")}
    assert rows["shout"]["status"] == "active"
    assert rows["shout"]["version"] == 2
    assert rows["weather"]["status"] == "pending_approval"
    assert rows["shout"]["usage"]["calls"] == 0
    assert rows["shout"]["last_error"] is None
    assert {r["name"] for r in api.get("/api/tools", active="true")} == {"shout"}

    shown = api.get("/api/tools/shout")
    assert shown["version"] == 2
    assert "'!'" in shown["code"]
    assert [v["version"] for v in api.get("/api/tools/shout/versions")] == [1, 2]

    old = api.get("/api/tools/shout/versions/1")
    assert old["diff_against"] == 2
    assert old["current_version"] == 2
    assert "-  return text.toUpperCase() + '!';" in old["diff"]
    weather = api.get("/api/tools/weather/versions/1")
    assert weather["capability_details"][0]["capability"] == "network"
    assert "api.example.com" in weather["capability_details"][0]["meaning"]
    assert weather["test_results"][0]["passed"] is True

    diff = api.get("/api/tools/shout/diff", **{"from": 1, "to": 2})
    assert "+  return text.toUpperCase() + '!';" in diff["diff"]


def test_unknown_names_and_bad_queries_are_structured_errors(api: Api) -> None:
    error = api.get("/api/tools/nope", 404)["error"]
    assert error["kind"] == "not_found"
    assert "nope" in error["message"]
    assert api.get("/api/tools/nope/versions", 404)["error"]["kind"] == "not_found"
    assert api.get("/api/tools/shout/versions/9", 404)["error"]["kind"] == "not_found"
    huge = "/api/tools/shout/versions/99999999999999999999"  # beyond BIGINT: was a 500
    assert api.get(huge, 404)["error"]["kind"] == "not_found"
    big_query = {"from": 1, "to": 10**20}
    assert api.get("/api/tools/shout/diff", 400, **big_query)["error"]["kind"] == "invalid_request"
    missing = api.get("/api/tools/shout/diff", 400, **{"from": 1})["error"]
    assert missing["kind"] == "invalid_request"
    assert "'to'" in missing["message"]
    assert api.get("/api/tools/shout/diff", 400, **{"from": "x", "to": 2})["error"]["kind"]
    assert api.get("/api/search", 400)["error"]["kind"] == "invalid_request"


def test_unknown_routes_and_wrong_methods_answer_in_json(api: Api) -> None:
    missing = api.client.get("/api/nowhere")
    assert missing.status_code == 404
    assert missing.json()["error"]["kind"] == "not_found"
    assert "/api/openapi.json" in missing.json()["error"]["message"]
    wrong = api.client.get("/api/tools/shout/call")
    assert wrong.status_code == 405
    assert wrong.headers["allow"] == "POST"
    assert wrong.json()["error"]["kind"] == "method_not_allowed"
    both = api.client.put("/api/tools", json={})
    assert both.status_code == 405
    assert both.headers["allow"] == "GET, POST"


def test_pending_then_approve_and_reject(api: Api, fd: Foundry) -> None:
    pending = api.get("/api/approvals")
    assert [(p["name"], p["version"]) for p in pending] == [("weather", 1), ("news", 1)]
    assert pending[0]["reasons"]

    done = api.post("/api/tools/weather/versions/1/approve", {"by": "alice", "reason": "ok"})
    assert done["status"] == "active"
    assert done["step"]["status"] == "completed"
    assert fd.show("weather").status.value == "active"
    again = api.post("/api/tools/weather/versions/1/approve", {"by": "alice"}, 409)
    assert again["step"]["blockers"] == ["not_pending"]

    before = snapshot(fd)
    refused = api.post("/api/tools/news/versions/1/reject", {"by": "bob"}, 422)["error"]
    assert refused["kind"] == "invalid_request"
    assert refused["problems"][0]["message"] == "'reason' is a required property"
    blank = api.post("/api/tools/news/versions/1/reject", {"reason": "   "}, 422)["error"]
    assert blank["problems"][0]["path"] == "$.reason"
    assert snapshot(fd) == before

    rejected = api.post(
        "/api/tools/news/versions/1/reject", {"by": "bob", "reason": "unknown host"}
    )
    assert rejected["status"] == "rejected"
    audit = api.get("/api/audit", tool="news")
    assert audit[-1]["event"] == "rejected"
    assert audit[-1]["actor"] == "bob"
    assert audit[-1]["detail"]["reason"] == "unknown host"
    assert api.get("/api/approvals") == []
    missing = api.post("/api/tools/nope/versions/1/approve", {}, 404)
    assert missing["step"]["blockers"] == ["not_found"]


def test_rollback_disable_enable(api: Api, fd: Foundry) -> None:
    back = api.post("/api/tools/shout/rollback", {"version": 1, "by": "carol"})
    assert back["version"] == 1
    assert back["current"] is True
    assert fd.call("shout", {"text": "a"}).value == "A"
    assert api.post("/api/tools/shout/rollback", {"version": 7}, 404)["error"]["kind"]
    assert api.post("/api/tools/weather/rollback", {"version": 1}, 409)["error"]["kind"] == (
        "not_active"
    )
    assert api.post("/api/tools/shout/rollback", {"version": "1"}, 422)["error"]["problems"]

    assert api.post("/api/tools/shout/disable", {"by": "carol"})["status"] == "disabled"
    assert api.post("/api/tools/shout/disable", {}, 409)["error"]["kind"] == "invalid_status"
    assert api.post("/api/tools/shout/call", {"args": {"text": "a"}}, 409)["error"]["kind"] == (
        "not_active"
    )
    assert api.post("/api/tools/shout/enable")["status"] == "active"
    events = [r["event"] for r in api.get("/api/audit", tool="shout", limit=3)]
    assert events == ["disabled", "called", "enabled"]


def test_call_tool(api: Api) -> None:
    ok = api.post("/api/tools/shout/call", {"args": {"text": "hey"}})
    assert ok["ok"] is True
    assert ok["value"] == "HEY!"
    assert ok["error"] is None
    assert api.post("/api/tools/shout/call", {"args": {"text": "a"}, "version": 1})["value"] == "A"

    bad = api.post("/api/tools/shout/call", {"args": {"text": 3}}, 422)
    assert bad["ok"] is False
    assert bad["error"]["kind"] == "invalid_arguments"
    assert bad["error"]["problems"][0]["path"] == "$.text"
    assert api.post("/api/tools/nope/call", {"args": {}}, 404)["error"]["kind"] == "not_found"
    pending = api.post("/api/tools/weather/call", {"args": {"city": "Oslo"}}, 409)
    assert pending["error"]["kind"] == "not_active"
    assert api.post("/api/tools/shout/call", {"args": []}, 422)["error"]["kind"] == (
        "invalid_request"
    )

    row = next(r for r in api.get("/api/tools") if r["name"] == "shout")
    assert row["usage"]["calls"] == 3
    assert row["usage"]["failures"] == {"invalid_arguments": 1}
    assert row["last_error"]["kind"] == "invalid_arguments"
    assert row["usage"]["p50_ms"] is not None


def test_create_from_a_draft(api: Api, fd: Foundry) -> None:
    draft = {**SHOUT, "name": "whisper", "code": SHOUT["code"].replace("Upper", "Lower")}
    draft["code"] = "export function handler({ text }) {\n  return text.toLowerCase();\n}\n"
    draft["tests"] = [{"input": {"text": "Hi"}, "expected": "hi"}]
    made = api.post("/api/tools", draft, 201)
    assert made["status"] == "active"
    assert made["version"] == 1
    assert api.post("/api/tools/whisper/call", {"args": {"text": "OK"}})["value"] == "ok"

    held = api.post("/api/tools", network_draft("quotes", "quotes.example.net"), 201)
    assert held["status"] == "pending_approval"
    assert held["step"]["blockers"] == ["awaiting_approval"]

    before = snapshot(fd)
    failing = {**draft, "name": "broken", "tests": [{"input": {"text": "A"}, "expected": "b"}]}
    rejected = api.post("/api/tools", failing, 422)
    assert rejected["status"] == "rejected"
    assert rejected["step"]["blockers"] == ["tests_failed"]
    assert api.post("/api/tools", {"name": "x"}, 422)["status"] == "rejected"
    assert api.post("/api/tools", [1, 2], 422)["error"]["kind"] == "invalid_request"
    assert snapshot(fd) == before


def test_bodies_that_are_not_json(api: Api, fd: Foundry) -> None:
    before = snapshot(fd)
    r = api.client.post(
        "/api/tools", content=b"{nope", headers={"content-type": "application/json"}
    )
    assert r.status_code == 400
    assert r.json()["error"]["kind"] == "invalid_json"
    r = api.client.post(
        "/api/tools/news/versions/1/approve", content=b"{}", headers={"content-type": "text/plain"}
    )
    assert r.status_code == 415
    assert r.json()["error"]["kind"] == "unsupported_media_type"
    r = api.client.post(
        "/api/tools",
        content=b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 413
    deep = b'{"a":' * 5000 + b"1" + b"}" * 5000  # too deep for the JSON parser: was a 500
    r = api.client.post("/api/tools", content=deep, headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["kind"] == "invalid_json"
    out_of_range = api.post("/api/tools/shout/rollback", {"version": 10**20}, 422)  # was a 500
    assert out_of_range["error"]["kind"] == "invalid_request"
    assert snapshot(fd) == before


def test_audit_and_search(api: Api) -> None:
    rows = api.get("/api/audit")
    assert {r["tool"] for r in rows} == {"shout", "weather", "news"}
    assert len(api.get("/api/audit", limit=2)) == 2
    assert api.get("/api/audit", 400, limit=0)["error"]["kind"] == "invalid_request"
    hits = api.get("/api/search", q="upper case text")
    assert hits[0]["name"] == "shout"
    assert api.get("/api/search", q="temperature") == []
    assert {h["name"] for h in api.get("/api/search", q="temperature", all="true")} == {
        "weather",
        "news",
    }


@pytest.mark.slow
@pytest.mark.postgres
def test_listing_usage_and_decisions_on_postgresql(pg_url: str) -> None:
    with Foundry.open(pg_url) as fd:
        seed(fd)
        fd.call("shout", {"text": 1})
        with TestClient(compose(fd), base_url="http://127.0.0.1:8000") as client:
            api = Api(client)
            row = next(r for r in api.get("/api/tools") if r["name"] == "shout")
            assert row["usage"]["calls"] == 1
            assert row["last_error"]["kind"] == "invalid_arguments"
            api.post("/api/tools/weather/versions/1/approve", {"by": "alice"})
            assert api.get("/api/tools/weather")["status"] == "active"
            assert "weather" in client.get("/ui/").text
