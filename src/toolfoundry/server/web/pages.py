"""The review page under ``/ui``: server-rendered HTML, plain forms, no JavaScript.

Every state change is a POST form carrying the CSRF token (checked by
:mod:`toolfoundry.server.security` before the request gets here), answered with a redirect
back to the page it came from (post/redirect/get), or the same page with the error shown.
A registry database that fails under any page (a full disk) is a 503 page saying so, in the
API's words.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from toolfoundry.base.display import visible
from toolfoundry.base.json_gate import encode
from toolfoundry.forge.host_display import host_label
from toolfoundry.foundry import Decision, Foundry
from toolfoundry.registry import RegistryError
from toolfoundry.registry.records import is_store_error
from toolfoundry.server.security import CSRF_FIELD, csrf_token
from toolfoundry.server.web import review
from toolfoundry.server.web.charts import usage_charts
from toolfoundry.server.web.endpoints import store_unavailable
from toolfoundry.server.web.highlight import highlighted, stylesheet
from toolfoundry.server.web.upstream_page import upstream_view

_HERE = Path(__file__).parent
_DEFAULT_REVIEWER = "web reviewer"
_NOTICES = {
    "approved": "Approved: this version is now active and current.",
    "rejected": "Rejected. The reason is in the audit log.",
    "disabled": "Disabled: the tool is no longer listed or callable.",
    "enabled": "Enabled again.",
    "rolled_back": "Rolled back: this version is current again.",
    "upstream_approved": "Approved: the upstream tool runs now, for this input schema.",
    "upstream_revoked": "Revoked: the upstream tool waits for a person again.",
}


def _shown(value: Any) -> Any:
    """What every ``{{ ... }}`` prints: text with its control characters and bidi overrides
    as visible escapes (autoescape then makes it safe HTML); markup already made stays."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return visible(value)
    return value


_env = Environment(
    loader=FileSystemLoader(_HERE / "templates"),
    autoescape=select_autoescape(["html"]),
    trim_blocks=True,
    lstrip_blocks=True,
    finalize=_shown,
)
_env.filters["host"] = host_label  # both forms of a host and its lookalike warning
_env.filters["json"] = lambda value: encode(value, indent=2)  # the one encoder; then escaped
_env.globals["highlighted"] = highlighted
_env.globals["csrf_field"] = CSRF_FIELD


def _render(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = _env.get_template(template).render(
        request=request,
        csrf=csrf_token(request.scope),
        root=request.scope.get("root_path", ""),
        **context,
    )
    return HTMLResponse(html, status_code=status)


def _not_found(request: Request, exc: RegistryError) -> HTMLResponse:
    return _render(request, "error.html", 404, title="Not found", message=exc.message)


Page = Callable[[Request], Awaitable[Response]]


def _store_guarded(page: Page) -> Page:
    """``page``, answering a 503 page with the reason when the registry database fails
    under it (a full disk), as the API answers a 503 of kind ``unavailable``."""

    async def guarded(request: Request) -> Response:
        try:
            return await page(request)
        except Exception as exc:
            if not is_store_error(exc):
                raise
            message = store_unavailable(exc)
            return _render(request, "error.html", 503, title="Unavailable", message=message)

    return guarded


def page_routes(foundry_factory: Callable[[], Foundry]) -> list[BaseRoute]:
    """The routes mounted at ``/ui``."""

    def fd() -> Foundry:
        return foundry_factory()

    async def index(request: Request) -> Response:
        rows = await run_in_threadpool(review.tool_rows, fd())
        pending = await run_in_threadpool(fd().pending)
        last = await run_in_threadpool(review.last_review, fd())
        return _render(
            request, "index.html", tools=rows, pending=len(pending), review=last, title="Tools"
        )

    async def library_review(request: Request) -> Response:
        last = await run_in_threadpool(review.last_review, fd())
        return _render(request, "library_review.html", r=last, title="Library review")

    async def approvals(request: Request) -> Response:
        packets = await run_in_threadpool(review.pending_reviews, fd())
        return _render(request, "approvals.html", packets=packets, title="Pending approvals")

    async def audit(request: Request) -> Response:
        tool = request.query_params.get("tool") or None
        rows = await run_in_threadpool(lambda: fd().audit(tool, limit=300))
        return _render(
            request, "audit.html", rows=list(reversed(rows)), tool=tool, title="Audit log"
        )

    async def tool(request: Request) -> Response:
        name = request.path_params["name"]
        try:
            detail, versions, series = await run_in_threadpool(
                lambda: (
                    review.tool_detail(fd(), name),
                    fd().history(name),
                    fd().registry.usage_series(name),
                )
            )
        except RegistryError as exc:
            return _not_found(request, exc)
        return _render(
            request,
            "tool.html",
            tool=detail,
            charts=usage_charts(series, detail["usage"]["failures"]),
            versions=list(reversed(versions)),
            notice=_NOTICES.get(request.query_params.get("done", "")),
            title=name,
        )

    async def version(request: Request, *, error: str = "", status: int = 200) -> Response:
        name, number = request.path_params["name"], request.path_params["version"]
        try:
            data = await run_in_threadpool(review.version_review, fd(), name, number)
        except RegistryError as exc:
            return _not_found(request, exc)
        audit_rows = await run_in_threadpool(lambda: fd().audit(name, limit=300))
        decisions = [
            r
            for r in audit_rows
            if r.version == number and r.event.value in {"approved", "rejected"}
        ]
        return _render(
            request,
            "version.html",
            status,
            v=data,
            decisions=decisions,
            error=error,
            notice=_NOTICES.get(request.query_params.get("done", "")),
            title=f"{name} v{number}",
        )

    async def decide(request: Request) -> Response:
        name, number = request.path_params["name"], request.path_params["version"]
        approve = request.url.path.endswith("/approve")
        form = await request.form()
        by = str(form.get("by") or "").strip()[:200] or _DEFAULT_REVIEWER
        reason = str(form.get("reason") or "").strip()[:2000]
        if not approve and not reason:
            return await version(request, error="A rejection needs a reason.", status=422)
        foundry = fd()
        call = foundry.approve if approve else foundry.reject
        decision: Decision = await run_in_threadpool(
            lambda: call(name, number, by=by, reason=reason)
        )
        if decision.step.blockers:
            status = 404 if "not_found" in decision.step.blockers else 409
            return await version(request, error=decision.step.message, status=status)
        done = "approved" if approve else "rejected"
        return _back(request, f"/tools/{name}/v/{number}", done)

    async def lifecycle(request: Request) -> Response:
        name = request.path_params["name"]
        action = request.url.path.rsplit("/", 1)[1]
        form = await request.form()
        by = str(form.get("by") or "").strip()[:200] or _DEFAULT_REVIEWER
        foundry = fd()
        try:
            if action == "rollback":
                raw = str(form.get("version") or "")
                if not raw.isdigit():
                    return _render(
                        request,
                        "error.html",
                        422,
                        title="Bad request",
                        message="Choose a version to roll back to.",
                    )
                current = await run_in_threadpool(lambda: foundry.rollback(name, int(raw), by=by))
                return _back(request, f"/tools/{name}/v/{current.version}", "rolled_back")
            change = foundry.disable if action == "disable" else foundry.enable
            await run_in_threadpool(lambda: change(name, by=by))
        except RegistryError as exc:
            status = 404 if exc.kind == "not_found" else 409
            return _render(request, "error.html", status, title="Refused", message=exc.message)
        return _back(request, f"/tools/{name}", f"{action}d")

    async def upstream(request: Request, *, error: str = "", status: int = 200) -> Response:
        view = await run_in_threadpool(upstream_view, fd())
        notice = _NOTICES.get(request.query_params.get("done", ""))
        return _render(
            request, "upstream.html", status, **view, notice=notice, error=error, title="Upstream"
        )

    async def upstream_decide(request: Request) -> Response:
        approve = request.url.path.endswith("/approve")
        form = await request.form()
        name = str(form.get("name") or "")
        by = str(form.get("by") or "").strip()[:200] or _DEFAULT_REVIEWER
        reason = str(form.get("reason") or "").strip()[:2000]
        seen = str(form.get("schema_hash") or "") or None
        if not approve and not reason:
            return await upstream(request, error="A revocation needs a reason.", status=422)
        foundry = fd()
        decide = foundry.approve_upstream if approve else foundry.revoke_upstream
        try:
            await run_in_threadpool(lambda: decide(name, by=by, reason=reason, schema_hash=seen))
        except LookupError as exc:
            return await upstream(request, error=str(exc).strip("'\""), status=404)
        except ValueError as exc:
            return await upstream(request, error=str(exc), status=409)
        return _back(request, "/upstream", "upstream_approved" if approve else "upstream_revoked")

    async def unknown(request: Request) -> Response:
        message = f"There is no page at {request.url.path}."
        return _render(request, "error.html", 404, title="Not found", message=message)

    async def highlight_css(_request: Request) -> Response:
        return PlainTextResponse(stylesheet(), media_type="text/css")

    guarded = _store_guarded
    return [
        Route("/", guarded(index), name="ui_index"),
        Route("/approvals", guarded(approvals), name="ui_approvals"),
        Route("/review", guarded(library_review), name="ui_review"),
        Route("/audit", guarded(audit), name="ui_audit"),
        Route("/upstream", guarded(upstream), name="ui_upstream"),
        Route("/upstream/approve", guarded(upstream_decide), methods=["POST"]),
        Route("/upstream/revoke", guarded(upstream_decide), methods=["POST"]),
        Route("/tools/{name}", guarded(tool), name="ui_tool"),
        Route("/tools/{name}/v/{version:int}", guarded(version), name="ui_version"),
        Route("/tools/{name}/v/{version:int}/approve", guarded(decide), methods=["POST"]),
        Route("/tools/{name}/v/{version:int}/reject", guarded(decide), methods=["POST"]),
        Route("/tools/{name}/rollback", guarded(lifecycle), methods=["POST"]),
        Route("/tools/{name}/disable", guarded(lifecycle), methods=["POST"]),
        Route("/tools/{name}/enable", guarded(lifecycle), methods=["POST"]),
        Route("/static/highlight.css", highlight_css),
        Mount("/static", StaticFiles(directory=_HERE / "static"), name="ui_static"),
        Route("/{path:path}", unknown, name="ui_unknown"),
    ]


def _back(request: Request, path: str, done: str) -> RedirectResponse:
    root = request.scope.get("root_path", "")
    return RedirectResponse(f"{root}{path}?done={done}", status_code=303)
