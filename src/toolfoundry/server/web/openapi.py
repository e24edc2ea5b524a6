"""The OpenAPI 3.1 document of the JSON API, written from the endpoints' declarations."""

from __future__ import annotations

from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any

from toolfoundry.server.web.endpoints import Endpoint
from toolfoundry.server.web.schemas import COMPONENTS, ref

API_PREFIX = "/api"
_CONVERTOR_SCHEMA = {"int": {"type": "integer", "minimum": 1}, "str": {"type": "string"}}
_SECURITY_NOTE = (
    "On a loopback bind without a token no credentials are needed. Otherwise send "
    "`Authorization: Bearer <token>`. State-changing requests must be `application/json`, and "
    "cross-origin ones are refused (403)."
)


def _version() -> str:
    try:
        return package_version("toolfoundry")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0.0.0"


def _operation(endpoint: Endpoint) -> dict[str, Any]:
    parameters: list[dict[str, Any]] = [
        {
            "name": name,
            "in": "path",
            "required": True,
            "schema": _CONVERTOR_SCHEMA.get(convertor, {"type": "string"}),
        }
        for name, convertor in endpoint.path_params()
    ]
    parameters += [
        {
            "name": q.name,
            "in": "query",
            "required": q.required,
            "description": q.description,
            "schema": q.schema,
        }
        for q in endpoint.query
    ]
    responses = {
        str(status): {
            "description": description,
            "content": {"application/json": {"schema": schema}},
        }
        for status, (description, schema) in sorted(endpoint.responses.items())
    }
    error = {"content": {"application/json": {"schema": ref("Error")}}}
    if endpoint.query:
        responses.setdefault("400", {"description": "A bad query parameter.", **error})
    if endpoint.body is not None:
        responses.setdefault("400", {"description": "The body is not JSON.", **error})
        responses.setdefault("413", {"description": "The body is too large.", **error})
        responses.setdefault("415", {"description": "The body is not application/json.", **error})
    responses["401"] = {"description": "Missing or wrong bearer token.", **error}
    # every operation reads the registry: a database that cannot be read or written (a full
    # disk) is this, never a bare 500 (server/web/endpoints.py:_run)
    responses.setdefault(
        "503",
        {"description": "The registry database cannot be read or written; retry later.", **error},
    )
    op: dict[str, Any] = {
        "operationId": endpoint.operation_id,
        "summary": endpoint.summary,
        "tags": list(endpoint.tags),
        "responses": responses,
    }
    if parameters:
        op["parameters"] = parameters
    if endpoint.body is not None:
        op["requestBody"] = {
            "required": False,
            "content": {"application/json": {"schema": endpoint.body}},
        }
    return op


def openapi_document(endpoints: Sequence[Endpoint], self_path: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document for ``endpoints`` (served under ``/api``), including the
    route serving the document itself at ``self_path``."""
    paths: dict[str, dict[str, Any]] = {}
    for e in endpoints:
        paths.setdefault(API_PREFIX + e.openapi_path, {})[e.method.lower()] = _operation(e)
    paths[API_PREFIX + self_path] = {
        "get": {
            "operationId": "openapi",
            "summary": "This document.",
            "tags": ["meta"],
            "responses": {
                "200": {
                    "description": "The OpenAPI document.",
                    "content": {"application/json": {"schema": {"type": "object"}}},
                }
            },
        }
    }
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "toolfoundry",
            "version": _version(),
            "description": "Review, approve and manage agent-made tools. " + _SECURITY_NOTE,
        },
        "paths": paths,
        "components": {
            "schemas": COMPONENTS,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
        },
        "security": [{}, {"bearer": []}],
    }
