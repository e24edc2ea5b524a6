"""API endpoints as declarations: one list feeds both the Starlette routes and the OpenAPI
document, so the document cannot describe a route that does not exist, or miss one.

A handler is a plain synchronous function of an :class:`ApiRequest` (the foundry, path and
query parameters already converted, the JSON body already validated against the declared
schema) returning ``(status, JSON value)``. It runs in a worker thread, because the foundry
talks to the database and the sandbox synchronously.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from jsonschema import Draft202012Validator
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from toolfoundry.base.json_gate import TEXT_REASONS, InvalidJson, JsonLimits, decode, encode
from toolfoundry.foundry import Foundry
from toolfoundry.registry import RegistryError
from toolfoundry.registry.records import is_store_error, store_error_text
from toolfoundry.server.web.schemas import COMPONENTS

MAX_BODY_BYTES = 1024 * 1024
BODY_LIMITS = JsonLimits(max_bytes=MAX_BODY_BYTES).enclosing(2)  # {"args": ...}, {"tests": [..]}
# The largest integer the stores hold (SQL BIGINT); a larger one names nothing stored.
MAX_INTEGER = 2**63 - 1
_PATH_PARAM = re.compile(r"\{(\w+)(?::(\w+))?\}")


class ApiError(Exception):
    """A request the API refuses, with the HTTP status and the error kind it reports."""

    def __init__(self, status: int, kind: str, message: str, problems: list[Any] | None = None):
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message
        self.problems = problems or []

    def to_dict(self) -> dict[str, Any]:
        """``{"error": {"kind", "message"[, "problems"]}}``, as the CLI prints errors."""
        error: dict[str, Any] = {"kind": self.kind, "message": self.message}
        if self.problems:
            error["problems"] = self.problems
        return {"error": error}


@dataclass(frozen=True)
class ApiRequest:
    """What a handler gets: the foundry and the request's validated parts."""

    foundry: Foundry
    path: Mapping[str, Any]
    query: Mapping[str, Any]
    body: Any


Handler = Callable[[ApiRequest], tuple[int, Any]]


@dataclass(frozen=True)
class QueryParam:
    """A query-string parameter: ``schema`` is ``integer``, ``boolean`` or ``string``."""

    name: str
    schema: dict[str, Any]
    description: str
    required: bool = False


@dataclass(frozen=True)
class Endpoint:
    """One API operation: route, documentation and handler together."""

    method: str
    path: str
    operation_id: str
    summary: str
    handler: Handler
    responses: Mapping[int, tuple[str, dict[str, Any]]]
    query: tuple[QueryParam, ...] = ()
    body: dict[str, Any] | None = None
    tags: tuple[str, ...] = field(default=("tools",))
    # What the route itself enforces when the handler checks the body and reports problems
    # in its own shape (a draft: the forge's findings); ``body`` is what the document shows.
    enforced_body: dict[str, Any] | None = None

    @property
    def openapi_path(self) -> str:
        """The path with Starlette convertors removed (``{version:int}`` -> ``{version}``)."""
        return _PATH_PARAM.sub(lambda m: "{" + m.group(1) + "}", self.path)

    def path_params(self) -> list[tuple[str, str]]:
        """``(name, convertor)`` of every path parameter."""
        return [(m.group(1), m.group(2) or "str") for m in _PATH_PARAM.finditer(self.path)]


class StrictJSONResponse(JSONResponse):
    """A JSON response written by the JSON gate's encoder: strict JSON, and text that no value
    can make unencodable (a lone surrogate is written as its visible escape, never a 500)."""

    def render(self, content: Any) -> bytes:
        return encode(content).encode("utf-8")


def error_response(error: ApiError) -> JSONResponse:
    """The JSON error response for ``error``."""
    return StrictJSONResponse(error.to_dict(), status_code=error.status)


def registry_error(exc: RegistryError) -> ApiError:
    """A registry refusal as an API error: ``not_found`` is 404, the rest are conflicts."""
    return ApiError(404 if exc.kind == "not_found" else 409, exc.kind, exc.message)


def build_route(endpoint: Endpoint, foundry_factory: Callable[[], Foundry]) -> Route:
    """The Starlette route serving ``endpoint``."""
    enforced = endpoint.enforced_body or endpoint.body
    validator = (
        Draft202012Validator({**enforced, "components": {"schemas": COMPONENTS}})
        if enforced is not None
        else None
    )

    async def serve(request: Request) -> Response:
        try:
            if any(isinstance(v, int) and v > MAX_INTEGER for v in request.path_params.values()):
                raise ApiError(404, "not_found", "no tool version has a number that large")
            query = _query(endpoint, request)
            body = await _body(request, validator) if validator is not None else None
            call = ApiRequest(foundry_factory(), dict(request.path_params), query, body)
            status, data = await run_in_threadpool(_run, endpoint.handler, call)
        except ApiError as exc:
            return error_response(exc)
        return StrictJSONResponse(data, status_code=status)

    return Route(endpoint.path, serve, methods=[endpoint.method], name=endpoint.operation_id)


def _run(handler: Handler, call: ApiRequest) -> tuple[int, Any]:
    try:
        return handler(call)
    except RegistryError as exc:
        raise registry_error(exc) from None
    except OverflowError:  # an integer in the body beyond what the store can hold
        raise ApiError(422, "invalid_request", "a number in the request is out of range") from None
    except Exception as exc:  # the database failed (a full disk, a server that does not answer)
        if not is_store_error(exc):
            raise
        raise ApiError(503, "unavailable", store_unavailable(exc)) from None


def store_unavailable(exc: BaseException) -> str:
    """What the API and the review page say when the registry database failed under a
    request (status 503, kind ``unavailable``)."""
    return (
        f"the registry database could not be read or written ({store_error_text(exc)}); retry later"
    )


def _query(endpoint: Endpoint, request: Request) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for param in endpoint.query:
        raw = request.query_params.get(param.name)
        if raw is None:
            if param.required:
                raise ApiError(
                    400, "invalid_request", f"query parameter {param.name!r} is required"
                )
            continue
        kind = param.schema.get("type")
        if kind == "integer":
            try:
                out[param.name] = int(raw)
                if abs(out[param.name]) > MAX_INTEGER:
                    raise ValueError(raw)
            except ValueError:
                raise ApiError(
                    400, "invalid_request", f"query parameter {param.name!r} must be an integer"
                ) from None
            low = param.schema.get("minimum")
            if low is not None and out[param.name] < low:
                raise ApiError(
                    400, "invalid_request", f"query parameter {param.name!r} must be >= {low}"
                )
        elif kind == "boolean":
            if raw.lower() not in {"true", "false", "1", "0"}:
                raise ApiError(
                    400, "invalid_request", f"query parameter {param.name!r} must be true or false"
                )
            out[param.name] = raw.lower() in {"true", "1"}
        else:
            out[param.name] = raw
    return out


async def _body(request: Request, validator: Draft202012Validator) -> Any:
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY_BYTES:
            raise ApiError(413, "too_large", f"request body over {MAX_BODY_BYTES} bytes")
    if not raw.strip():
        raw = b"{}"
    try:
        body = decode(raw, BODY_LIMITS)  # the JSON gate: depth, numbers, valid Unicode
    except InvalidJson as exc:
        if exc.reason in TEXT_REASONS:
            message = f"the request body is not valid JSON: {exc}"
            raise ApiError(400, "invalid_json", message) from None
        found = [{"path": p.path, "message": p.message} for p in exc.problems]
        message = f"{len(found)} problem(s) with the request body"
        raise ApiError(422, "invalid_request", message, found) from None
    try:
        problems = [
            {"path": _json_path(e.absolute_path), "message": e.message}
            for e in sorted(
                validator.iter_errors(body), key=lambda e: list(map(str, e.absolute_path))
            )
        ]
    except RecursionError:  # a body within the gate's depth cannot get here; a second fence
        raise ApiError(400, "invalid_json", "the request body nests too deeply") from None
    if problems:
        raise ApiError(
            422, "invalid_request", f"{len(problems)} problem(s) with the request body", problems
        )
    return body


def _json_path(parts: Any) -> str:
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)


__all__ = [
    "ApiError",
    "ApiRequest",
    "Endpoint",
    "Handler",
    "QueryParam",
    "build_route",
    "error_response",
    "registry_error",
]
