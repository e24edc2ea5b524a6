"""The real ToolRunner: each case in a pristine QuickJS sandbox, network cut, fixtures served."""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import Any

from toolfoundry.forge.draft import Fixture
from toolfoundry.forge.testrun import RunLimits
from toolfoundry.spec import CallResult, Capabilities


class SandboxRunner:
    """Runs JavaScript with ``toolfoundry.sandbox.run_js`` and fetch answered by fixtures."""

    def __init__(self) -> None:
        sandbox = importlib.import_module("toolfoundry.sandbox")
        fixtures = importlib.import_module("toolfoundry.sandbox.host.fixtures")
        self._run_js = sandbox.run_js
        self._policy = sandbox.SandboxPolicy
        self._fixture_fetch = fixtures.FixtureFetch

    def __call__(
        self,
        code: str,
        args: Mapping[str, Any],
        *,
        limits: RunLimits,
        fixtures: Sequence[Fixture],
        capabilities: Capabilities,
        tool: str | None,
    ) -> CallResult:
        """Run once; fetch is always the fixture provider, so the network is never reached."""
        policy = self._policy(
            timeout=limits.timeout_s,
            memory_mib=limits.memory_mib,
            fetch=self._fixture_fetch([f.to_dict() for f in fixtures]),
        )
        result: CallResult = self._run_js(code, dict(args), policy)
        return result
