"""Helpers shared by the web tests (no tests here): drafts, the composed application (the
routes of ``toolfoundry.server.web`` behind ``toolfoundry.server.security.secure``), a real
uvicorn server on loopback, and checking responses against the OpenAPI document."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from jsonschema import Draft202012Validator
from sqlalchemy import func, select
from starlette.applications import Starlette
from starlette.types import ASGIApp
from tests.shared_drafts import network_draft as shared_network_draft

from toolfoundry import Foundry
from toolfoundry.registry.schema import metadata
from toolfoundry.server.security import secure
from toolfoundry.server.web import web_routes

SHOUT: dict[str, Any] = {
    "name": "shout",
    "description": "Upper-case a text",
    "parameters": {
        "type": "object",
        "properties": {"text": {"type": "string", "description": "the text"}},
        "required": ["text"],
        "additionalProperties": False,
    },
    "code": "export function handler({ text }) {\n  return text.toUpperCase();\n}\n",
    "tests": [{"name": "hi", "input": {"text": "hi"}, "expected": "HI"}],
}

SHOUT_V2_CODE = "export function handler({ text }) {\n  return text.toUpperCase() + '!';\n}\n"


def network_draft(name: str, host: str = "api.example.com") -> dict[str, Any]:
    """A tool that fetches from ``host``: the policy holds it for a human's approval."""
    return shared_network_draft(name, host)


def seed(fd: Foundry) -> None:
    """shout v1 active, shout v2 active and current, weather v1 and news v1 pending."""
    assert fd.create_tool(SHOUT).status == "active"
    v2 = {
        **SHOUT,
        "code": SHOUT_V2_CODE,
        "changes_tests": ["hi"],
        "tests": [{"name": "hi", "input": {"text": "hi"}, "expected": "HI!"}],
    }
    assert fd.create_tool(v2).status == "active", fd.create_tool(v2)
    assert fd.create_tool(network_draft("weather")).status == "pending_approval"
    assert fd.create_tool(network_draft("news", "news.example.org")).status == "pending_approval"


def compose(fd: Foundry, *, token: str | None = None, bind_host: str = "127.0.0.1") -> ASGIApp:
    """The same composition ``toolfoundry serve`` makes, minus MCP."""
    return secure(Starlette(routes=web_routes(lambda: fd)), token=token, bind_host=bind_host)


def snapshot(fd: Foundry) -> dict[str, int]:
    """Row counts of every registry table: equal snapshots mean nothing was written."""
    with fd.registry.engine.connect() as conn:
        return {
            t.name: conn.execute(select(func.count()).select_from(t)).scalar_one()
            for t in metadata.sorted_tables
        }


def csrf_of(html: str) -> str:
    """The CSRF token of the first form on a page."""
    match = re.search(r'name="csrf_token" value="([^"]*)"', html)
    assert match, "no CSRF field on the page"
    return match.group(1)


@contextmanager
def serve(app: ASGIApp, host: str = "127.0.0.1") -> Iterator[str]:
    """``app`` under a real uvicorn server in a thread, on a free port; yields its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=0, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive(), "uvicorn stopped"
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://{host}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def check_documented(
    document: dict[str, Any], method: str, path: str, status: int, body: Any
) -> None:
    """Assert ``body`` matches the schema the OpenAPI document gives for this response."""
    template = _template(document, path)
    operation = document["paths"][template][method.lower()]
    response = operation["responses"].get(str(status))
    assert response is not None, f"{method} {template} does not document status {status}"
    schema = response["content"]["application/json"]["schema"]
    validator = Draft202012Validator({**schema, "components": document["components"]})
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(body)]
    assert not errors, f"{method} {path} {status} does not match its documented schema: {errors}"
    extra = undocumented_keys(schema, body, document["components"]["schemas"], "$")
    assert not extra, f"{method} {path} {status} answers keys its schema does not declare: {extra}"


def undocumented_keys(schema: Any, value: Any, components: dict[str, Any], at: str) -> list[str]:
    """Paths of object keys in ``value`` that ``schema`` does not declare.

    Validation alone lets a new key in a ``to_dict`` go undocumented (the schemas are open);
    this walks the schema beside the value and reports such keys, so the document cannot
    fall behind what the code answers. A schema without ``properties`` (a free-form object
    or a map) declares every key.
    """
    schema = _resolve(schema, components)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if branches:
        for branch in branches:
            full = {**_resolve(branch, components), "components": {"schemas": components}}
            if Draft202012Validator(full).is_valid(value):
                return undocumented_keys(branch, value, components, at)
        return []
    properties = _declared(schema, components)
    found: list[str] = []
    if isinstance(value, dict) and properties:
        for key, item in value.items():
            if key not in properties:
                found.append(f"{at}.{key}")
            else:
                found += undocumented_keys(properties[key], item, components, f"{at}.{key}")
    elif isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            found += undocumented_keys(schema["items"], item, components, f"{at}[{i}]")
    return found


def _declared(schema: dict[str, Any], components: dict[str, Any]) -> dict[str, Any]:
    """The properties of ``schema`` and of every ``allOf`` part, however deep."""
    properties = dict(schema.get("properties", {}))
    for part in schema.get("allOf", []):
        properties.update(_declared(_resolve(part, components), components))
    return properties


def _resolve(schema: Any, components: dict[str, Any]) -> dict[str, Any]:
    while isinstance(schema, dict) and "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[1]]
    return schema if isinstance(schema, dict) else {}


def _template(document: dict[str, Any], path: str) -> str:
    for template in document["paths"]:
        pattern = "^" + re.sub(r"\\\{\w+\\\}", "[^/]+", re.escape(template)) + "$"
        if re.match(pattern, path):
            return str(template)
    raise AssertionError(f"{path} is not in the OpenAPI document")
