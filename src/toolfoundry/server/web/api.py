"""The JSON API under ``/api``: the review and lifecycle operations for other programs.

Errors are ``{"error": {"kind", "message"[, "problems"]}}`` as the CLI prints them with
``--json``; decisions, calls and creations return the same documents as ``toolfoundry
approvals approve --json``, ``call --json`` and ``create --json``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Match, Route

from toolfoundry.forge.testrun import unavailable_error
from toolfoundry.foundry import Decision, Foundry
from toolfoundry.server.web import review
from toolfoundry.server.web.endpoints import (
    ApiError,
    ApiRequest,
    Endpoint,
    QueryParam,
    StrictJSONResponse,
    build_route,
    error_response,
)
from toolfoundry.server.web.openapi import openapi_document
from toolfoundry.server.web.schemas import (
    ACTOR_BODY,
    CALL_BODY,
    DECIDE_BODY,
    DRAFT_BODY,
    DRAFT_ENFORCED,
    REJECT_BODY,
    ROLLBACK_BODY,
    RUN_JS_BODY,
    ref,
)
from toolfoundry.spec import ErrorKind

OPENAPI_PATH = "/openapi.json"
OPENAPI_PREFIX = "/api"
FALLBACK_ROUTE = "api_fallback"
_ANY = ("GET", "POST", "PUT", "PATCH", "DELETE")
_NOT_FOUND = {404: ("No such tool or version.", ref("Error"))}
_CONFLICT = {409: ("The tool is not in a state that allows this.", ref("Error"))}
_INVALID = {422: ("The request body does not match its schema.", ref("Error"))}
# Call failures that are the caller's, not the tool's: reported with a 4xx status.
_CALL_STATUS = {
    ErrorKind.NOT_FOUND: 404,
    ErrorKind.NOT_ACTIVE: 409,
    ErrorKind.INVALID_ARGUMENTS: 422,
    ErrorKind.SANDBOX_UNAVAILABLE: 503,  # the server's own fault, fixed by its operator
    ErrorKind.OVERLOADED: 503,  # the Python tier's concurrent-call budget is full: retry later
    ErrorKind.UNAVAILABLE: 503,  # the registry database cannot be read or written (disk full)
}
_UNAVAILABLE = {
    503: (
        "Not judged: the sandbox is missing or damaged, the Python tier is full, or the "
        "registry database cannot be written; the error's kind says which.",
        ref("Error"),
    )
}


def _array(name: str) -> dict[str, Any]:
    return {"type": "array", "items": ref(name)}


# Who holds the server's token: the API has one shared token, so one identity.
API_ACTOR = "api"


def _by(call: ApiRequest, default: str = API_ACTOR) -> str:
    by: str = call.body.get("by") or default
    return by


def list_tools(call: ApiRequest) -> tuple[int, Any]:
    return 200, review.tool_rows(call.foundry, active_only=call.query.get("active", False))


def show_tool(call: ApiRequest) -> tuple[int, Any]:
    return 200, review.tool_detail(call.foundry, call.path["name"])


def history(call: ApiRequest) -> tuple[int, Any]:
    return 200, [v.summary() for v in call.foundry.history(call.path["name"])]


def show_version(call: ApiRequest) -> tuple[int, Any]:
    return 200, review.version_review(call.foundry, call.path["name"], call.path["version"])


def diff(call: ApiRequest) -> tuple[int, Any]:
    name, a, b = call.path["name"], call.query["from"], call.query["to"]
    return 200, {"name": name, "from": a, "to": b, "diff": call.foundry.diff(name, a, b)}


def pending(call: ApiRequest) -> tuple[int, Any]:
    return 200, review.pending_reviews(call.foundry)


def _decision(decision: Decision) -> tuple[int, Any]:
    blockers = decision.step.blockers
    status = 200 if not blockers else 404 if "not_found" in blockers else 409
    return status, decision.to_dict()


def approve(call: ApiRequest) -> tuple[int, Any]:
    name, version = call.path["name"], call.path["version"]
    reason = call.body.get("reason", "")
    return _decision(call.foundry.approve(name, version, by=_by(call), reason=reason))


def reject(call: ApiRequest) -> tuple[int, Any]:
    name, version = call.path["name"], call.path["version"]
    reason = call.body["reason"].strip()
    return _decision(call.foundry.reject(name, version, by=_by(call), reason=reason))


def rollback(call: ApiRequest) -> tuple[int, Any]:
    v = call.foundry.rollback(call.path["name"], call.body["version"], by=_by(call))
    return 200, v.summary()


def disable(call: ApiRequest) -> tuple[int, Any]:
    return 200, call.foundry.disable(call.path["name"], by=_by(call)).summary()


def enable(call: ApiRequest) -> tuple[int, Any]:
    return 200, call.foundry.enable(call.path["name"], by=_by(call)).summary()


def call_tool(call: ApiRequest) -> tuple[int, Any]:
    result = call.foundry.call(
        call.path["name"], call.body.get("args", {}), version=call.body.get("version")
    )
    status = _CALL_STATUS.get(result.error.kind, 200) if result.error else 200
    return status, result.to_dict()


def run_js(call: ApiRequest) -> tuple[int, Any]:
    result = call.foundry.run_js(call.body["code"], call.body.get("args", {}), by=API_ACTOR)
    status = _CALL_STATUS.get(result.error.kind, 200) if result.error else 200
    return status, {**result.to_dict(), "run_id": result.details["run_id"]}


def create(call: ApiRequest) -> tuple[int, Any]:
    # the body is the draft, self-declared throughout: the actor is the token's holder
    result = call.foundry.create_tool(call.body, by=API_ACTOR)
    unavailable = unavailable_error(result.step)
    if unavailable is not None:  # no verdict on the draft: the server cannot test it
        return 503, {"error": unavailable.to_dict()}
    return (422 if result.status == "rejected" else 201), result.to_dict()


def audit(call: ApiRequest) -> tuple[int, Any]:
    rows = call.foundry.audit(call.query.get("tool"), limit=call.query.get("limit", 100))
    return 200, [r.to_dict() for r in rows]


def last_review(call: ApiRequest) -> tuple[int, Any]:
    found = review.last_review(call.foundry)
    if found is None:
        message = "no review of the library has finished yet (serve runs one by itself; [review])"
        raise ApiError(404, "not_found", message)
    return 200, found


def search(call: ApiRequest) -> tuple[int, Any]:
    hits = call.foundry.search(
        call.query["q"], call.query.get("k", 5), include_inactive=call.query.get("all", False)
    )
    return 200, [h.to_dict() for h in hits]


ENDPOINTS: tuple[Endpoint, ...] = (
    Endpoint(
        "GET",
        "/tools",
        "listTools",
        "Every tool's current version with usage (calls, failures, p50) and last error.",
        list_tools,
        {200: ("The tools.", _array("ToolRow"))},
        query=(QueryParam("active", {"type": "boolean"}, "Only tools whose version is active."),),
    ),
    Endpoint(
        "POST",
        "/tools",
        "createTool",
        "Forge a draft and register it as the tool's next version.",
        create,
        {
            201: ("Registered, active or pending approval.", ref("CreateResult")),
            422: (
                "Rejected by the forge (nothing was stored), or the body is not an object.",
                {"anyOf": [ref("CreateResult"), ref("Error")]},
            ),
            **_UNAVAILABLE,
        },
        body=DRAFT_BODY,
        enforced_body=DRAFT_ENFORCED,
    ),
    Endpoint(
        "GET",
        "/tools/{name}",
        "showTool",
        "The current version in full, with usage.",
        show_tool,
        {200: ("The tool.", ref("ToolDetail")), **_NOT_FOUND},
    ),
    Endpoint(
        "GET",
        "/tools/{name}/versions",
        "toolHistory",
        "Every version of a tool, oldest first.",
        history,
        {200: ("The versions.", _array("VersionSummary")), **_NOT_FOUND},
    ),
    Endpoint(
        "GET",
        "/tools/{name}/versions/{version:int}",
        "showVersion",
        "One version with the reviewer's view: diff against the current version, what each "
        "capability means, findings and test results.",
        show_version,
        {200: ("The version.", ref("Review")), **_NOT_FOUND},
    ),
    Endpoint(
        "GET",
        "/tools/{name}/diff",
        "diffVersions",
        "Unified diff of code, description, parameters and capabilities from one version to "
        "another.",
        diff,
        {200: ("The diff.", ref("Diff")), **_NOT_FOUND},
        query=(
            QueryParam("from", {"type": "integer", "minimum": 1}, "Old version.", required=True),
            QueryParam("to", {"type": "integer", "minimum": 1}, "New version.", required=True),
        ),
    ),
    Endpoint(
        "POST",
        "/tools/{name}/versions/{version:int}/approve",
        "approveVersion",
        "Approve a pending version: it becomes active and current.",
        approve,
        {
            200: ("Approved.", ref("Decision")),
            404: ("No such version.", ref("Decision")),
            409: ("Not pending, or the binding changed.", ref("Decision")),
            **_INVALID,
        },
        body=DECIDE_BODY,
        tags=("approvals",),
    ),
    Endpoint(
        "POST",
        "/tools/{name}/versions/{version:int}/reject",
        "rejectVersion",
        "Reject a pending version (a reason is required).",
        reject,
        {
            200: ("Rejected.", ref("Decision")),
            404: ("No such version.", ref("Decision")),
            409: ("Not pending.", ref("Decision")),
            **_INVALID,
        },
        body=REJECT_BODY,
        tags=("approvals",),
    ),
    Endpoint(
        "POST",
        "/tools/{name}/rollback",
        "rollbackTool",
        "Make an earlier active version current again (nothing is deleted).",
        rollback,
        {
            200: ("The new current version.", ref("VersionSummary")),
            **_NOT_FOUND,
            **_CONFLICT,
            **_INVALID,
        },
        body=ROLLBACK_BODY,
    ),
    Endpoint(
        "POST",
        "/tools/{name}/disable",
        "disableTool",
        "Stop a tool from being called or listed.",
        disable,
        {200: ("Disabled.", ref("VersionSummary")), **_NOT_FOUND, **_CONFLICT, **_INVALID},
        body=ACTOR_BODY,
    ),
    Endpoint(
        "POST",
        "/tools/{name}/enable",
        "enableTool",
        "Re-enable a disabled tool.",
        enable,
        {200: ("Enabled.", ref("VersionSummary")), **_NOT_FOUND, **_CONFLICT, **_INVALID},
        body=ACTOR_BODY,
    ),
    Endpoint(
        "POST",
        "/tools/{name}/call",
        "callTool",
        "Validate the arguments and run the tool in the sandbox. A failure of the tool itself "
        "is a 200 with ok false; unknown, inactive and bad arguments are 404, 409, 422.",
        call_tool,
        {
            200: ("The call ran.", ref("CallResult")),
            404: ("No such tool.", ref("CallResult")),
            409: ("The version is not active.", ref("CallResult")),
            422: ("Bad arguments or request body.", {"anyOf": [ref("CallResult"), ref("Error")]}),
            503: (
                "Not run or not recorded: the sandbox is missing or damaged, the Python tier is "
                "full, or the registry database cannot be read or written (kind unavailable).",
                ref("CallResult"),
            ),
        },
        body=CALL_BODY,
    ),
    Endpoint(
        "POST",
        "/run_js",
        "runJs",
        "Run a one-off ES module in the sandbox (code mode): its `tools` calls the registry's "
        "active tools, each a real call under that tool's own capabilities, audited with the "
        "run as its caller. The run is kept: a draft's from_run makes it a tool. A failure of "
        "the module is a 200 with ok false.",
        run_js,
        {
            200: ("The module ran.", ref("CodeRun")),
            422: ("Bad request body.", ref("Error")),
            503: ("The sandbox is missing or damaged; the error says the fix.", ref("CodeRun")),
        },
        body=RUN_JS_BODY,
    ),
    Endpoint(
        "GET",
        "/approvals",
        "listPending",
        "Versions awaiting a human decision, oldest first, with the reviewer's view.",
        pending,
        {200: ("The pending versions.", _array("Review"))},
        tags=("approvals",),
    ),
    Endpoint(
        "GET",
        "/audit",
        "auditLog",
        "The append-only audit log, oldest first (the newest ``limit`` rows).",
        audit,
        {200: ("Audit rows.", _array("AuditEntry"))},
        query=(
            QueryParam("tool", {"type": "string"}, "Only this tool's rows."),
            QueryParam("limit", {"type": "integer", "minimum": 1}, "Newest N rows (100)."),
        ),
        tags=("audit",),
    ),
    Endpoint(
        "GET",
        "/review",
        "lastReview",
        "The newest review of the library that serve ran by itself ([review] every, and at "
        "start after a runtime change): tools failing their own suites under the current "
        "runtime, unused tools, capabilities held, versions waiting.",
        last_review,
        {
            200: ("The review.", ref("LibraryReview")),
            404: ("No review has finished yet.", ref("Error")),
        },
        tags=("review",),
    ),
    Endpoint(
        "GET",
        "/search",
        "searchTools",
        "Search names, descriptions and parameter docs (hybrid with the [search] extra): "
        "strong hits first, then weak ones (the closest there is).",
        search,
        {200: ("Hits, best first.", _array("SearchHit"))},
        query=(
            QueryParam("q", {"type": "string"}, "The query.", required=True),
            QueryParam("k", {"type": "integer", "minimum": 1}, "How many results (5)."),
            QueryParam("all", {"type": "boolean"}, "Include tools that are not active."),
        ),
    ),
)


def api_document() -> dict[str, Any]:
    """The OpenAPI document the API serves (committed as ``docs/openapi.json``)."""
    return openapi_document(ENDPOINTS, OPENAPI_PATH)


def api_routes(foundry_factory: Callable[[], Foundry]) -> list[BaseRoute]:
    """The routes of every endpoint, plus the OpenAPI document at ``/openapi.json``."""
    document = api_document()

    async def openapi(_request: Any) -> Response:
        return StrictJSONResponse(document)

    routes: list[BaseRoute] = [build_route(e, foundry_factory) for e in ENDPOINTS]
    routes.append(Route(OPENAPI_PATH, openapi, methods=["GET"], name="openapi"))
    known = list(routes)

    async def fallback(request: Request) -> Response:
        # Unknown paths and wrong methods answer in the API's JSON error shape too.
        allowed = sorted(
            {m for r in known if r.matches(request.scope)[0] is Match.PARTIAL for m in _methods(r)}
        )
        if allowed:
            return StrictJSONResponse(
                ApiError(405, "method_not_allowed", f"use {', '.join(allowed)}").to_dict(),
                status_code=405,
                headers={"allow": ", ".join(allowed)},
            )
        message = f"no API route {request.url.path}; see {OPENAPI_PREFIX}{OPENAPI_PATH}"
        return error_response(ApiError(404, "not_found", message))

    routes.append(Route("/{path:path}", fallback, methods=list(_ANY), name=FALLBACK_ROUTE))
    return routes


def _methods(route: BaseRoute) -> set[str]:
    return set(getattr(route, "methods", None) or ()) - {"HEAD"}
