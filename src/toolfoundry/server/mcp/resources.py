"""Every active tool's source and tests as MCP resources, so a model can read before it edits.

- ``toolfoundry://tools/{name}/source``: the current version's code (``text/javascript`` or
  ``text/x-python``);
- ``toolfoundry://tools/{name}/tests``: the suite that version was gated by (earlier versions'
  tests first, each with input, expected value and fixtures; the tests it retired; the canned
  HTTP answers every test sees), as ``application/json``. The same facts ``show_tool`` gives.
- ``toolfoundry://types/tools.d.ts``: the TypeScript declarations of code mode's ``tools``
  global for every active tool (the catalogue's ``typescript`` format, of the registry's tools,
  which are what ``tools`` reaches), first on the first page; each ``search_tools`` hit and
  ``show_tool`` carry one tool's part as its ``signature``.

``resources/list`` pages by tool name (``page_size`` tools a page, 100 unless ``serve
--page-size`` says otherwise; the cursor an offset);
the list changes exactly when the active tool set does, so the server sends
``notifications/resources/list_changed`` from the same event as ``tools/list_changed``. A URI
of no active tool is an ``-32602`` error, as the MCP specification asks.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from toolfoundry.base.json_gate import encode
from toolfoundry.foundry import Foundry
from toolfoundry.registry import RegistryError, ToolVersion, VersionStatus
from toolfoundry.spec.limits import LIST_PAGE_BOUND, LIST_PAGE_SIZE
from toolfoundry.spec.names import InvalidName, validate_name

SCHEME = "toolfoundry"
_URI = re.compile(rf"^{SCHEME}://tools/([^/]+)/(source|tests)$")
_CURSOR = re.compile(r"[0-9]{1,12}")
_SOURCE_MIME = {"javascript": "text/javascript", "python": "text/x-python"}
JSON_MIME = "application/json"
TYPES_URI = f"{SCHEME}://types/tools.d.ts"
TYPES_MIME = "text/x-typescript"
TYPES_RESOURCE = types.Resource(
    uri=TYPES_URI,
    name="types/tools.d.ts",
    title="TypeScript types of the tools global",
    description=(
        "TypeScript declarations of every active tool as code mode's `tools` global reaches "
        "it in run_js: arguments, results, JSDoc, tools.call and ToolError."
    ),
    mime_type=TYPES_MIME,
)


def source_uri(name: str) -> str:
    """Where a tool's current source is read."""
    return f"{SCHEME}://tools/{name}/source"


def tests_uri(name: str) -> str:
    """Where a tool's current test suite is read."""
    return f"{SCHEME}://tools/{name}/tests"


def _entries(v: ToolVersion) -> list[types.Resource]:
    return [
        types.Resource(
            uri=source_uri(v.name),
            name=f"{v.name}/source",
            title=f"{v.name} v{v.version} source",
            description=f"The code of {v.name} v{v.version}, the current version.",
            mime_type=_SOURCE_MIME.get(v.language, "text/plain"),
        ),
        types.Resource(
            uri=tests_uri(v.name),
            name=f"{v.name}/tests",
            title=f"{v.name} v{v.version} tests",
            description=(
                f"Every test {v.name} v{v.version} was gated by (earlier versions' included), "
                "with inputs, expected values and fixtures; a next version must pass them."
            ),
            mime_type=JSON_MIME,
        ),
    ]


def tests_document(v: ToolVersion) -> dict[str, Any]:
    """The ``tests`` resource's JSON: the gating suite of ``v`` and its version-wide fixtures."""
    from toolfoundry.foundry.review import gating_suite

    return {"name": v.name, "version": v.version, **gating_suite(v), "fixtures": v.fixtures}


class ToolResources:
    """``resources/list`` and ``resources/read`` over a foundry (blocking: run in a thread).

    Args:
        foundry: whose active tools are served.
        hidden: names not served from the registry (the project's declared tools win).
        page_size: tools per ``resources/list`` page (two resources each).

    Raises:
        ValueError: ``page_size`` out of range (``spec.limits.LIST_PAGE_BOUND``).
    """

    def __init__(
        self, foundry: Foundry, hidden: Collection[str] = (), *, page_size: int = LIST_PAGE_SIZE
    ) -> None:
        if (problem := LIST_PAGE_BOUND.problem(page_size)) is not None:
            raise ValueError(f"page_size {problem}")
        self.foundry = foundry
        self.page_size = page_size
        self._hidden = frozenset(hidden)

    def list(self, cursor: str | None) -> types.ListResourcesResult:
        """One page of resources, two per active tool, by tool name."""
        offset = _offset(cursor)
        size = self.page_size
        page = self.foundry.tools(include_inactive=False, limit=size + 1, offset=offset)
        more = len(page) > size
        resources = [r for v in page[:size] if v.name not in self._hidden for r in _entries(v)]
        if offset == 0:
            resources.insert(0, TYPES_RESOURCE)
        return types.ListResourcesResult(
            resources=resources, next_cursor=str(offset + size) if more else None
        )

    def read(self, uri: str) -> types.ReadResourceResult:
        """The contents of one resource of an active tool's current version, or the types."""
        if uri == TYPES_URI:
            text = self.foundry.catalog("typescript")  # kept while the active set is unchanged
            contents = types.TextResourceContents(uri=uri, mime_type=TYPES_MIME, text=text)
            return types.ReadResourceResult(contents=[contents])
        match = _URI.fullmatch(uri)
        if match is None:
            expected = f"{source_uri('NAME')}, {tests_uri('NAME')} or {TYPES_URI}"
            raise _unknown(uri, f"expected {expected}")
        name, part = match.groups()
        try:
            v = self.foundry.show(validate_name(name))
        except (InvalidName, RegistryError):
            raise _unknown(uri, "no such tool") from None
        if v.status is not VersionStatus.ACTIVE or name in self._hidden:
            raise _unknown(uri, f"{name}'s current version is {v.status.value}, not active")
        if part == "source":
            mime, text = _SOURCE_MIME.get(v.language, "text/plain"), v.code
        else:
            mime, text = JSON_MIME, encode(tests_document(v), compact=False)
        contents = types.TextResourceContents(uri=uri, mime_type=mime, text=text)
        return types.ReadResourceResult(contents=[contents])


def _offset(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if _CURSOR.fullmatch(cursor) is None:  # only what list() hands out
        raise MCPError(types.INVALID_PARAMS, f"invalid cursor {cursor!r}")
    return int(cursor)


def _unknown(uri: str, why: str) -> MCPError:
    return MCPError(types.INVALID_PARAMS, f"resource not found: {uri!r} ({why})", {"uri": uri})
