"""The OpenAPI document: served as committed (docs/openapi.json), its ``Draft`` schema the
forge's own declaration, and the response check that refuses undocumented keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from starlette.testclient import TestClient

from toolfoundry import Foundry
from toolfoundry.forge import parse_draft
from toolfoundry.forge.draft_json import DRAFT_FIELDS, FIXTURE_FIELDS, TEST_FIELDS
from toolfoundry.foundry.meta_tools import builtin_tools

from .test_server_web_support import SHOUT, compose, undocumented_keys

COMMITTED = Path(__file__).resolve().parents[2] / "docs" / "openapi.json"


def served() -> dict[str, Any]:
    client = TestClient(compose(None), base_url="http://127.0.0.1")  # type: ignore[arg-type]
    document: dict[str, Any] = client.get("/api/openapi.json").json()
    return document


def draft_schema(document: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = document["components"]["schemas"]["Draft"]
    return schema


def test_the_served_document_is_the_committed_one() -> None:
    assert served() == json.loads(COMMITTED.read_text(encoding="utf-8"))


def test_draft_schema_is_every_field_the_forge_takes() -> None:
    schema = draft_schema(served())
    assert tuple(schema["properties"]) == DRAFT_FIELDS
    assert {"returns", "changes_tests", "author"} <= set(schema["properties"])
    # code and tests may instead come from a run (from_run): the forge requires one or the other
    assert schema["required"] == ["name", "description"]
    assert schema["additionalProperties"] is False
    case = schema["properties"]["tests"]["anyOf"][0]["items"]
    assert tuple(case["properties"]) == TEST_FIELDS
    tool_fixture = case["properties"]["fixtures"]["items"]["anyOf"][1]
    assert tuple(tool_fixture["properties"]) == ("tool", "args", "version", "value", "error")
    fixture = schema["properties"]["fixtures"]["anyOf"][0]["items"]
    assert tuple(fixture["properties"]) == FIXTURE_FIELDS
    storage = schema["properties"]["capabilities"]["anyOf"][0]["properties"]["storage"]
    assert {"type": "boolean"} in storage["anyOf"]


def test_create_tool_offers_the_draft_fields_with_the_same_schemas() -> None:
    """One declaration: the same fields, in the same order, with the same schemas and
    defaults, and the same required ones."""
    (create,) = (t for t in builtin_tools() if t.spec.name == "create_tool")
    offered = create.spec.parameters["properties"]
    documented = draft_schema(served())
    assert tuple(offered) == DRAFT_FIELDS
    for name, schema in offered.items():
        assert schema == documented["properties"][name], name
    assert create.spec.parameters["required"] == documented["required"]
    assert "parameters" not in documented["required"]
    assert documented["properties"]["parameters"]["default"] == {
        "type": "object",
        "properties": {},
    }


def test_a_draft_with_every_field_matches_the_schema_and_is_created(fd: Foundry) -> None:
    document = served()
    draft = {
        **SHOUT,
        "name": "whisper",
        "language": "javascript",
        "code": "export function handler({ text }) {\n"
        "  if (!text) throw new Error('text is empty');\n"
        "  return text.toLowerCase();\n}\n",
        "tests": [
            {"name": "hi", "input": {"text": "Hi"}, "expected": "hi"},
            {"input": {"text": ""}, "error": "empty", "error_kind": "runtime_error"},
        ],
        "capabilities": {"storage": "tool"},
        "fixtures": [],
        "returns": {"type": "string"},
        "changes_tests": ["hi", 0],
        "author": "alice",
        "distinct_from": None,  # no active tool passes its tests
        "from_run": None,  # code given: no run in its place
        "base_version": None,  # nor a patch of an earlier version's code
        "patch": None,
        "uses": [],  # it calls no tool by a computed name
    }
    assert set(draft) == set(DRAFT_FIELDS)
    validator = Draft202012Validator(draft_schema(document))
    assert [e.message for e in validator.iter_errors(draft)] == []
    parse_draft(draft)  # what the schema accepts, the forge parses
    client = TestClient(compose(fd), base_url="http://127.0.0.1:8000")
    made = client.post("/api/tools", json=draft)
    assert made.status_code == 201, made.text
    assert fd.history("whisper")[0].author == "alice"

    unknown = {**draft, "owner": "bob"}
    assert not validator.is_valid(unknown)
    refused = client.post("/api/tools", json=unknown)
    assert refused.status_code == 422  # the forge's finding, as the document says
    assert refused.json()["status"] == "rejected"


def test_undocumented_response_keys_are_found() -> None:
    components = served()["components"]["schemas"]
    step = {"$ref": "#/components/schemas/Step"}
    assert undocumented_keys(step, {"status": "completed"}, components, "$") == []
    assert undocumented_keys(step, {"status": "completed", "new": 1}, components, "$") == ["$.new"]
    detail = {"$ref": "#/components/schemas/ToolDetail"}
    row = {"name": "x", "usage": {"calls": 1, "p99_ms": 3}, "last_error": None, "extra": {"a": 1}}
    assert undocumented_keys(detail, row, components, "$") == ["$.usage.p99_ms"]
    listed = {"type": "array", "items": step}
    assert undocumented_keys(listed, [{"status": "ready"}, {"why": 1}], components, "$") == [
        "$[1].why"
    ]
