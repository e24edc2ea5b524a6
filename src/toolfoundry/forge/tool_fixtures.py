"""Tool fixtures: what a test case's inner tool calls answer, as fetch fixtures answer fetches.

A test case's ``fixtures`` may hold, next to fetch fixtures, entries that answer a call the
code makes through code mode's ``tools``::

    {"tool": "weather", "args": {"city": "Oslo"}, "value": {"temp": 4}}
    {"tool": "later", "args": {}, "error": {"kind": "not_active", "message": "..."}}
    {"tool": "word_count", "args": {"text": "a b"}, "version": 2, "value": 2}

A call matches on the tool's name, its arguments (as canonical JSON) and the version it asked
for (none, or that one). A recorded run (``create_tool`` with ``from_run``) becomes a test whose
fixtures are the answers its inner calls got, so the test replays it without the network and
whatever the callees answer later. A call no fixture answers goes to the real callee when the
runner has one (``TestTools``'s ``callees``: the foundry's, where a callee that needs the
network or storage is refused, so a test never reaches either), else it is refused.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from toolfoundry.forge.draft_fields import canonical_json, key_path
from toolfoundry.forge.draft_json import ToolFixtureJson
from toolfoundry.sandbox.host.protocols import ToolRequest, ToolsHandler, ToolsProvider
from toolfoundry.spec import CallError, CallResult, ErrorKind, Problem

TOOL_FIXTURE_KEYS = ("tool", "args", "version", "value", "error")


@dataclass(frozen=True)
class ToolFixture:
    """A canned answer to one inner tool call."""

    tool: str
    args_json: str
    version: int | None = None
    value_json: str | None = None
    error: CallError | None = None

    @property
    def key(self) -> tuple[str, str, int | None]:
        """What a fixture answers: (tool, canonical arguments, version asked for)."""
        return (self.tool, self.args_json, self.version)

    def result(self) -> CallResult:
        """The answer: the value, or the error the script's ToolError carries."""
        if self.error is not None:
            return CallResult.failure(self.error.kind, self.error.message)
        return CallResult.success(None if self.value_json is None else json.loads(self.value_json))

    def to_dict(self) -> ToolFixtureJson:
        """The fixture's draft form."""
        out: ToolFixtureJson = {"tool": self.tool, "args": json.loads(self.args_json)}
        if self.version is not None:
            out["version"] = self.version
        if self.error is not None:
            out["error"] = {"kind": self.error.kind, "message": self.error.message}
        else:
            out["value"] = None if self.value_json is None else json.loads(self.value_json)
        return out


def is_tool_fixture(raw: object) -> bool:
    """Whether a fixtures entry answers an inner tool call (it names a ``tool``)."""
    return isinstance(raw, Mapping) and "tool" in raw


def parse_tool_fixtures(
    value: object, path: str, problems: list[Problem]
) -> tuple[ToolFixture, ...]:
    """The tool fixtures among a fixtures list (the fetch ones are fixtures.py's); each
    malformed one is left out and its problems recorded, located."""
    if not isinstance(value, list):
        return ()  # fixtures.py reports a fixtures value that is not a list
    out: list[ToolFixture] = []
    seen: set[tuple[str, str, int | None]] = set()
    for i, raw in enumerate(value):
        if not is_tool_fixture(raw):
            continue
        fixture = _tool_fixture(raw, f"{path}[{i}]", problems)
        if fixture is None:
            continue
        if fixture.key in seen:
            problems.append(Problem(f"{path}[{i}]", "repeats an earlier tool fixture's call"))
            continue
        seen.add(fixture.key)
        out.append(fixture)
    return tuple(out)


def _tool_fixture(raw: Mapping[str, Any], path: str, problems: list[Problem]) -> ToolFixture | None:
    before = len(problems)
    for key in raw:
        if key not in TOOL_FIXTURE_KEYS:
            known = ", ".join(TOOL_FIXTURE_KEYS)
            problems.append(
                Problem(key_path(path, str(key)), f"unknown field; a tool fixture has: {known}")
            )
    tool = raw.get("tool")
    if not isinstance(tool, str) or not tool:
        problems.append(Problem(f"{path}.tool", "must be the called tool's name"))
    args = raw.get("args", {})
    if not isinstance(args, Mapping):
        problems.append(Problem(f"{path}.args", "must be the call's arguments object"))
    version = raw.get("version")
    if version is not None and (
        isinstance(version, bool) or not isinstance(version, int) or version < 1
    ):
        problems.append(Problem(f"{path}.version", "must be a positive integer"))
    if ("value" in raw) == ("error" in raw):
        problems.append(Problem(path, "give exactly one of 'value' or 'error'"))
    error = _error(raw.get("error"), f"{path}.error", problems) if "error" in raw else None
    if len(problems) > before:
        return None
    try:
        value_json = canonical_json(raw["value"]) if "value" in raw else None
        return ToolFixture(str(tool), canonical_json(dict(args)), version, value_json, error)
    except (TypeError, ValueError) as exc:
        problems.append(Problem(path, f"args and value must be plain JSON values: {exc}"))
        return None


def _error(raw: object, path: str, problems: list[Problem]) -> CallError | None:
    kinds = {k.value for k in ErrorKind}
    if (
        not isinstance(raw, Mapping)
        or raw.get("kind") not in kinds
        or not isinstance(raw.get("message"), str)
        or set(raw) - {"kind", "message"}
    ):
        problems.append(
            Problem(path, f"must be {{kind, message}}, kind one of: {', '.join(sorted(kinds))}")
        )
        return None
    return CallError(ErrorKind(raw["kind"]), raw["message"])


class TestTools:
    """The ``tools`` of one test case: its fixtures first, then the real callees (when the
    runner has them), else a refusal saying which fixture would answer.

    ``uses``: the tools the draft declares it calls (read from its code, or its ``uses``,
    forge/uses.py); a call of any other is refused, naming the tool to add. None: any.
    """

    __test__ = False  # not a pytest class, despite the name

    def __init__(
        self,
        fixtures: Iterable[ToolFixture],
        callees: ToolsProvider | None = None,
        uses: frozenset[str] | None = None,
    ) -> None:
        self._fixtures = {f.key: f for f in fixtures}
        self._callees = callees
        self._uses = uses

    def handler(self, *, deadline: float, caller: str | None) -> ToolsHandler:
        callees = self._callees.handler(deadline=deadline, caller=caller) if self._callees else None
        return _TestToolsSession(self._fixtures, callees, self._uses)


class _TestToolsSession:
    def __init__(
        self,
        fixtures: Mapping[tuple[str, str, int | None], ToolFixture],
        callees: ToolsHandler | None,
        uses: frozenset[str] | None,
    ) -> None:
        self._fixtures = fixtures
        self._callees = callees
        self._uses = uses

    def call(self, request: ToolRequest) -> CallResult:
        if self._uses is not None and request.name not in self._uses:
            declared = ", ".join(sorted(self._uses)) or "none"
            message = (
                f"the code calls {request.name!r}, a tool it does not declare (it names "
                f"{declared}): a tool called by a computed name goes in the draft's uses, "
                f'e.g. "uses": [{json.dumps(request.name)[:80]}]'
            )
            return CallResult.failure(ErrorKind.CAPABILITY_DENIED, message)
        try:
            args = canonical_json(request.args)
        except (TypeError, ValueError):  # the host gated it: not reached
            args = ""
        found = self._fixtures.get((request.name, args, request.version))
        if found is not None:
            return found.result()
        if self._callees is not None:
            return self._callees.call(request)
        fixture = {"tool": request.name, "args": request.args, "value": "..."}
        message = (
            "no fixture answers this call and the test runs without a registry: add "
            f"{json.dumps(fixture, ensure_ascii=False)[:300]} to the test's fixtures"
        )
        return CallResult.failure(ErrorKind.CAPABILITY_DENIED, message)

    def close(self) -> None:
        if self._callees is not None:
            self._callees.close()
