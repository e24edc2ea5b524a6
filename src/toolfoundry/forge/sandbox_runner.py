"""The real ToolRunner: each case in a pristine QuickJS sandbox, network cut, fixtures served."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from toolfoundry.forge.draft_json import FixtureJson
from toolfoundry.forge.fixtures import Fixture
from toolfoundry.forge.tool_fixtures import TestTools, ToolFixture
from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.fixtures import FixtureError, FixtureFetch
from toolfoundry.sandbox.host.netguard import FetchError, parse_url
from toolfoundry.sandbox.host.protocols import ToolsProvider
from toolfoundry.sandbox.host.storage import MemoryStorage
from toolfoundry.sandbox.process.executor import Executor, ProcessLimits
from toolfoundry.spec import CallLimits, CallResult, Capabilities, ErrorKind, StorageScope


def canonical_fixtures(fixtures: Sequence[Fixture]) -> list[FixtureJson]:
    """Fixture dicts for FixtureFetch, keeping the first of any that answer the same request."""
    seen: set[tuple[str, str]] = set()
    out: list[FixtureJson] = []
    for fixture in fixtures:
        try:
            key = (fixture.method, str(parse_url(fixture.url)))
        except FetchError:
            key = fixture.key
        if key not in seen:
            seen.add(key)
            out.append(fixture.to_dict())
    return out


class SandboxRunner:
    """Runs JavaScript with :func:`toolfoundry.sandbox.run_js`; fetch answers only from fixtures.

    Each call gets a fresh sandbox and, when the tool uses storage, a fresh empty
    localStorage, so no test sees another's state. The code's ``tools`` calls are answered by
    the case's tool fixtures, then by ``callees`` (the real tools: the foundry gives its own,
    which refuses a callee that needs the network or storage), else refused.

    Args:
        callees: the registry's tools, for calls no fixture answers; None: fixtures only.
        uses: the tools the code under test declares it calls (forge/uses.py): a call of any
            other is refused. None: any (a runner shared by several tools' code).
    """

    def __init__(
        self, callees: ToolsProvider | None = None, *, uses: frozenset[str] | None = None
    ) -> None:
        self.callees = callees
        self.uses = uses

    def __call__(
        self,
        code: str,
        args: Mapping[str, Any],
        *,
        limits: CallLimits,
        fixtures: Sequence[Fixture],
        capabilities: Capabilities,
        tool: str | None,
        tool_fixtures: Sequence[ToolFixture] = (),
    ) -> CallResult:
        """Run once; the network is never reached (unmatched requests are capability_denied)."""
        try:
            fetch = FixtureFetch(canonical_fixtures(fixtures))
        except FixtureError as exc:
            return CallResult.failure(ErrorKind.INVALID_ARGUMENTS, f"bad fixtures: {exc}")
        storage = MemoryStorage() if capabilities.storage is not StorageScope.NONE else None
        tools = TestTools(tool_fixtures, self.callees, self.uses)
        policy = SandboxPolicy.under(limits, fetch=fetch, storage=storage, tool=tool, tools=tools)
        return run_js(code, dict(args), policy)


class PythonRunner:
    """Runs Python-tier drafts on an :class:`Executor` (each case in its own jail).

    A draft that declares network hosts gets ``fetch`` answered from its fixtures, as in
    the JS tier; the case's time and output caps are the call limits', the rest ``limits``'.
    """

    def __init__(self, executor: Executor, limits: ProcessLimits | None = None) -> None:
        self.executor = executor
        self.limits = limits or ProcessLimits()

    def __call__(
        self,
        code: str,
        args: Mapping[str, Any],
        *,
        limits: CallLimits,
        fixtures: Sequence[Fixture],
        capabilities: Capabilities,
        tool: str | None,
        tool_fixtures: Sequence[ToolFixture] = (),
    ) -> CallResult:
        """Run once in a fresh jail (a Python tool has no ``tools``: ``tool_fixtures`` are
        not used)."""
        budget = self.limits.bounded_by(limits)
        fetch = None
        if capabilities.network:
            try:
                fetch = FixtureFetch(canonical_fixtures(fixtures))
            except FixtureError as exc:
                return CallResult.failure(ErrorKind.INVALID_ARGUMENTS, f"bad fixtures: {exc}")
        return self.executor.run(code, dict(args), budget, tool=tool, fetch=fetch)
