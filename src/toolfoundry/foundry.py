"""The public ``Foundry``: create tools from drafts, call them, review, version and find them.

    fd = Foundry.open()                        # ./.toolfoundry/registry.db unless told otherwise
    r = fd.create_tool(draft)                  # forge (check, test, policy) -> registry
    out = fd.call("slugify", {"text": "Hi"})   # validate -> sandbox -> usage + audit

Data flows one way: draft -> forge -> registry -> call -> sandbox. The facade holds no
state of its own beyond caches of immutable versions.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolfoundry.config import Config, load_config
from toolfoundry.forge import (
    Draft,
    DraftError,
    DraftLimits,
    ExistingTool,
    Finding,
    ForgeReport,
    Language,
    RunLimits,
    Severity,
    ToolRunner,
    behaves_like,
    check_approval,
    forge_draft,
    parse_draft,
)
from toolfoundry.registry import (
    AuditEntry,
    NewVersion,
    Registry,
    RegistryError,
    SearchHit,
    ToolVersion,
    UsageStats,
    VersionStatus,
    resolve_url,
)
from toolfoundry.registry.faults import crash_point
from toolfoundry.registry.invocation import CallSettings, argument_problems, sandbox_policy
from toolfoundry.sandbox.host.protocols import FetchProvider
from toolfoundry.sandbox.process.executor import Executor, ProcessLimits
from toolfoundry.spec import CallResult, ErrorKind, StepResult, StepStatus, ToolSpec


@dataclass(frozen=True)
class CreateResult:
    """What ``create_tool`` did with a draft.

    Attributes:
        status: ``active``, ``pending_approval`` or ``rejected`` (rejected stores nothing).
        name: the tool's name (None when the draft had none usable).
        version: the version number registered (None when rejected).
        findings: draft problems, static-check findings and warnings, JSON-ready.
        test_results: the draft's own test results (then the regression results), JSON-ready.
        step: completed, or blocked with blockers (``invalid_draft``, ``static_check_failed``,
            ``tests_failed``, ``regression``, ``awaiting_approval``), or unavailable.
        duplicate_of: an active tool with the same code, or one that passes this draft's tests.
    """

    status: str
    name: str | None
    version: int | None
    findings: list[dict[str, Any]]
    test_results: list[dict[str, Any]]
    step: StepResult
    duplicate_of: str | None = None
    report: ForgeReport | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON ``toolfoundry create --json`` prints."""
        return {
            "status": self.status,
            "name": self.name,
            "version": self.version,
            "findings": self.findings,
            "test_results": self.test_results,
            "step": self.step.to_dict(),
            "duplicate_of": self.duplicate_of,
        }


@dataclass(frozen=True)
class Decision:
    """What ``approve``/``reject`` did: the version's new status, and the step outcome."""

    name: str
    version: int | None
    status: str | None
    step: StepResult

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "status": self.status,
            "step": self.step.to_dict(),
        }


class Foundry:
    """The foundry over one registry and one configuration."""

    def __init__(
        self, registry: Registry, config: Config | None = None, *, executor: Executor | None = None
    ) -> None:
        self.registry = registry
        self.config = config or Config()
        self._executor = executor
        self._owns_executor = executor is None
        limits = self.config.limits
        fetch = self.config.fetch
        self._settings = CallSettings(
            timeout_s=limits.timeout_s,
            memory_mib=limits.memory_mib,
            output_bytes=limits.output_bytes,
            fetch_allow=fetch.allow,
            allow_http=fetch.allow_http,
            allow_private=fetch.allow_private,
            max_requests=fetch.max_requests,
            credentials=fetch.credentials,
        )
        self._run_limits = RunLimits(timeout_s=limits.timeout_s, memory_mib=limits.memory_mib)
        self._draft_limits = DraftLimits(max_code_bytes=limits.max_code_bytes)
        self._versions: dict[int, tuple[ToolVersion, Any]] = {}

    @classmethod
    def open(
        cls,
        url: str | None = None,
        *,
        config: Config | str | Path | None = None,
        executor: Executor | None = None,
    ) -> Foundry:
        """Open (creating and migrating when needed) the registry and read the configuration.

        Args:
            url: a SQLAlchemy URL; else ``TOOLFOUNDRY_DB``, else ``[registry] url`` of the
                configuration, else SQLite under ``./.toolfoundry/``.
            config: a :class:`Config`, or the path of a toolfoundry.toml (default: the one in
                the working directory, when present).
            executor: runs Python-tier tools (default: :meth:`python_executor`'s choice).

        Raises:
            toolfoundry.config.ConfigError: the configuration cannot be used.
        """
        if not isinstance(config, Config):
            config = load_config(config)
        if url is None and not os.environ.get("TOOLFOUNDRY_DB"):
            url = config.registry_url
        return cls(Registry.open(resolve_url(url)), config, executor=executor)

    def close(self) -> None:
        """Release database connections (and the Python tier's warm workers we started)."""
        if self._owns_executor and self._executor is not None:
            self._executor.close()
            self._executor = None
        self.registry.close()

    def python_executor(self) -> Executor | None:
        """The Python tier's executor: the one given, else ``TOOLFOUNDRY_EXECUTOR`` (an
        executor service URL, token in ``TOOLFOUNDRY_EXECUTOR_TOKEN``), else a warm pool of
        bubblewrap jails; None when none is available (Python drafts are then refused)."""
        if self._executor is None:
            from toolfoundry.sandbox.process import default_executor

            self._executor = default_executor(self.config.policy.python_packages)
        return self._executor

    def _python_runner(self) -> ToolRunner | None:
        from toolfoundry.forge.sandbox_runner import PythonRunner

        executor = self.python_executor()
        return PythonRunner(executor, self._process_limits()) if executor else None

    def _process_limits(self) -> ProcessLimits:
        return ProcessLimits(
            timeout_s=self.config.limits.timeout_s,
            output_bytes=self.config.limits.output_bytes,
            allowed_packages=self.config.policy.python_packages,
        )

    def __enter__(self) -> Foundry:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- creating ------------------------------------------------------------------------

    def create_tool(self, draft: Draft | Mapping[str, Any] | str | bytes) -> CreateResult:
        """Forge a draft and register it as the tool's next version.

        Never raises for bad input: a malformed or failing draft gives a ``rejected`` result
        with structured findings, and the store is left unchanged.
        """
        try:
            parsed = (
                draft if isinstance(draft, Draft) else parse_draft(draft, limits=self._draft_limits)
            )
        except DraftError:
            return self._result(forge_draft(draft, draft_limits=self._draft_limits))
        previous = self._previous(parsed.name)
        report = forge_draft(
            parsed,
            previous=previous,
            policy=self.config.policy,
            limits=self._run_limits,
            python_runner=self._python_runner() if parsed.language is Language.PYTHON else None,
            draft_limits=self._draft_limits,
        )
        crash_point("after_forge")
        if report.status.value == VersionStatus.REJECTED.value:
            return self._result(report)
        findings = list(report.findings)
        duplicate_of = self._duplicate(parsed, report.code_sha256 or "", findings)
        results = [t.to_dict() for t in report.test_results]
        version = self.registry.add_version(
            NewVersion(
                name=parsed.name,
                code=parsed.code,
                description=parsed.description,
                parameters=parsed.parameters,
                status=VersionStatus(report.status.value),
                language=parsed.language.value,
                returns=parsed.returns,
                tests=[t.to_dict() for t in parsed.tests],
                fixtures=[f.to_dict() for f in parsed.fixtures],
                capabilities=parsed.capabilities,
                author=parsed.author or "agent",
                parent_version=previous.version if previous else None,
                findings=[f.to_dict() for f in findings],
                test_results=results,
                extra={
                    "changes_tests": list(parsed.changes_tests),
                    "regression": report.regression.to_dict() if report.regression else None,
                    "policy": report.decision.to_dict() if report.decision else None,
                },
                capability_hash=report.capabilities_hash,
            )
        )
        return self._result(
            report,
            version=version.version,
            findings=findings,
            duplicate_of=duplicate_of,
        )

    def _duplicate(self, draft: Draft, sha256: str, findings: list[Finding]) -> str | None:
        """Name an active tool with this exact code, or one that passes the draft's tests."""
        same = self.registry.find_active_by_sha(sha256, exclude=draft.name)
        if same is not None:
            message = f"the active tool {same.name!r} has exactly this code; call it instead"
            findings.append(Finding("duplicate", Severity.WARNING, message, path="$.code"))
            return same.name
        count = self.config.limits.duplicate_candidates
        if count <= 0:
            return None
        hits = self.registry.search(f"{draft.name} {draft.description}", count + 1)
        names = [h.name for h in hits if h.name != draft.name][:count]
        if not names:
            return None
        found = {
            v.name: v
            for v in self.registry.current_versions(status=VersionStatus.ACTIVE, names=names)
        }
        # a candidate is run against the draft's tests, not its own: skip parsing those
        candidates = [
            ExistingTool.from_dict({**found[n].to_dict(), "tests": []}) for n in names if n in found
        ]
        if not candidates:
            return None
        from toolfoundry.forge.sandbox_runner import SandboxRunner

        runner = SandboxRunner()
        # the first match is enough to warn; behaves_like stops at the first failing test
        twin = next(
            (
                c.name
                for c in candidates
                if behaves_like(c, draft, runner=runner, limits=self._run_limits)
            ),
            None,
        )
        if twin is None:
            return None
        message = (
            f"the active tool {twin!r} already passes every test of this draft; "
            "consider calling it, or improving it with a new version"
        )
        findings.append(Finding("behavioural_duplicate", Severity.WARNING, message, path="$.tests"))
        return twin

    def _previous(self, name: str) -> ExistingTool | None:
        try:
            current = self.registry.get(name)
        except RegistryError:
            return None
        if current.status is not VersionStatus.ACTIVE:
            return None
        return ExistingTool.from_dict(current.to_dict())

    def _result(
        self,
        report: ForgeReport,
        *,
        version: int | None = None,
        findings: list[Finding] | None = None,
        duplicate_of: str | None = None,
    ) -> CreateResult:
        results = [t.to_dict() for t in report.test_results]
        if report.regression is not None:
            results += [{**t.to_dict(), "regression": True} for t in report.regression.results]
        return CreateResult(
            status=report.status.value,
            name=report.name,
            version=version,
            findings=[f.to_dict() for f in (report.findings if findings is None else findings)],
            test_results=results,
            step=report.step,
            duplicate_of=duplicate_of,
            report=report,
        )

    # -- calling -------------------------------------------------------------------------

    def call(self, name: str, args: Any, *, version: int | None = None) -> CallResult:
        """Validate ``args`` against the version's schema, run it in the sandbox, record usage.

        Returns a CallResult whose ``details["step"]`` is the step outcome; failures carry
        ``not_found``, ``not_active``, ``invalid_arguments`` (every problem with its JSON
        path) or what the sandbox reported.
        """
        started = time.perf_counter()
        try:
            row_id, number, status = self.registry.resolve(name, version)
        except RegistryError as exc:
            return _with_step(
                CallResult.failure(ErrorKind.NOT_FOUND, exc.message, duration_ms=_ms(started))
            )
        if status is not VersionStatus.ACTIVE:
            message = f"{name!r} version {number} is {status.value}; only active versions run"
            refused = CallResult.failure(ErrorKind.NOT_ACTIVE, message, duration_ms=_ms(started))
            self.registry.record_call(
                name, number, duration_ms=refused.duration_ms, error_kind=ErrorKind.NOT_ACTIVE.value
            )
            return _with_step(refused)
        tool, policy = self._prepared(row_id, name, number)
        problems = argument_problems(tool.parameters, args)
        if problems:
            result = CallResult.failure(
                ErrorKind.INVALID_ARGUMENTS,
                f"{len(problems)} problem(s) with the arguments of {name!r}",
                problems=problems,
                duration_ms=_ms(started),
            )
        elif tool.language == "python":
            result = self._call_python(tool, args, policy.fetch, started)
        else:
            from toolfoundry.sandbox import run_js

            result = run_js(tool.code, dict(args), policy)
        kind = result.error.kind.value if result.error else None
        self.registry.record_call(name, number, duration_ms=result.duration_ms, error_kind=kind)
        return _with_step(result)

    def _call_python(
        self, tool: ToolVersion, args: Any, fetch: FetchProvider | None, started: float
    ) -> CallResult:
        executor = self.python_executor()
        if executor is None:
            return CallResult.failure(
                ErrorKind.CAPABILITY_DENIED,
                "the Python tier is not available here (no bubblewrap, no executor service)",
                duration_ms=_ms(started),
            )
        limits = self._process_limits()
        return executor.run(tool.code, dict(args), limits, tool=tool.name, fetch=fetch)

    def _prepared(self, row_id: int, name: str, number: int) -> tuple[ToolVersion, Any]:
        cached = self._versions.get(row_id)
        if cached is None:
            tool = self.registry.get(name, number)
            policy = sandbox_policy(name, tool.capabilities, self._settings, self.registry.storage)
            cached = self._versions[row_id] = (tool, policy)
        return cached

    # -- reviewing and versions ----------------------------------------------------------

    def approve(
        self, name: str, version: int | None = None, *, by: str, reason: str = ""
    ) -> Decision:
        """Approve a pending version (the newest when ``version`` is None): it becomes active
        and current. The approval binds ``by``, the time, ``reason``, the code hash and the
        capability-set hash."""
        return self._decide(name, version, approve=True, by=by, reason=reason)

    def reject(self, name: str, version: int | None = None, *, by: str, reason: str) -> Decision:
        """Reject a pending version; the current version, if any, stays as it is."""
        return self._decide(name, version, approve=False, by=by, reason=reason)

    def _decide(
        self, name: str, version: int | None, *, approve: bool, by: str, reason: str
    ) -> Decision:
        try:
            if version is None:
                waiting = [v.version for v in self.registry.pending() if v.name == name]
                version = max(waiting) if waiting else None
            if approve and version is not None:
                # the stored code and capabilities must still be what was forged and hashed
                target = self.registry.get(name, version)
                record = {"code_sha256": target.sha256, "capabilities_hash": target.capability_hash}
                check = check_approval(
                    record,
                    code=target.code,
                    capabilities=target.capabilities,
                    language=target.language,
                )
                if not check.valid:
                    message = "; ".join(check.problems)
                    blocked = StepResult(StepStatus.BLOCKED, None, ("binding_mismatch",), message)
                    return Decision(name, version, target.status.value, blocked)
            decided = self.registry.decide(name, version, approve=approve, by=by, reason=reason)
        except RegistryError as exc:
            step = StepResult(StepStatus.BLOCKED, blockers=(exc.kind,), message=exc.message)
            return Decision(name, version, None, step)
        verb = "approved and active" if approve else "rejected"
        step = StepResult(StepStatus.COMPLETED, message=f"{name} v{decided.version} {verb}")
        return Decision(name, decided.version, decided.status.value, step)

    def pending(self) -> list[ToolVersion]:
        """Versions waiting for a human, oldest first."""
        return self.registry.pending()

    def show(self, name: str, version: int | None = None) -> ToolVersion:
        """One version (the current one by default); raises RegistryError ``not_found``."""
        return self.registry.get(name, version)

    def history(self, name: str) -> list[ToolVersion]:
        """Every version of a tool, oldest first."""
        return self.registry.history(name)

    def diff(self, name: str, a: int, b: int) -> str:
        """Unified diff from version ``a`` to ``b`` of code, description, schema, capabilities."""
        old, new = self.registry.get(name, a), self.registry.get(name, b)
        parts = [
            _udiff(old.code, new.code, f"{name}@{a}/code.js", f"{name}@{b}/code.js"),
            _udiff(
                old.description,
                new.description,
                f"{name}@{a}/description",
                f"{name}@{b}/description",
            ),
            _udiff(
                _pretty(old.parameters),
                _pretty(new.parameters),
                f"{name}@{a}/parameters.json",
                f"{name}@{b}/parameters.json",
            ),
            _udiff(
                _pretty(old.capabilities.to_dict()),
                _pretty(new.capabilities.to_dict()),
                f"{name}@{a}/capabilities.json",
                f"{name}@{b}/capabilities.json",
            ),
        ]
        return "".join(p for p in parts if p)

    def rollback(self, name: str, to: int, *, by: str = "user") -> ToolVersion:
        """Make an earlier active version current again (audited; nothing is deleted)."""
        return self.registry.rollback(name, to, by=by)

    def disable(self, name: str, *, by: str = "user") -> ToolVersion:
        """Stop a tool from being called or listed until it is enabled."""
        return self.registry.set_enabled(name, False, by=by)

    def enable(self, name: str, *, by: str = "user") -> ToolVersion:
        """Re-enable a disabled tool."""
        return self.registry.set_enabled(name, True, by=by)

    # -- finding and describing ----------------------------------------------------------

    def search(self, query: str, k: int = 5, *, include_inactive: bool = False) -> list[SearchHit]:
        """Tools ranked by full-text relevance to ``query`` (active ones unless told)."""
        return self.registry.search(query, k, active_only=not include_inactive)

    def tools(self, *, include_inactive: bool = True) -> list[ToolVersion]:
        """The current version of every tool."""
        return self.registry.current_versions(
            status=None if include_inactive else VersionStatus.ACTIVE
        )

    def active_specs(self) -> list[ToolSpec]:
        """ToolSpecs of every active tool's current version (for catalogs and MCP)."""
        return [v.spec for v in self.registry.current_versions(status=VersionStatus.ACTIVE)]

    def catalog(self, format: str = "json") -> str:
        """The active tools rendered as ``json|openai|responses|anthropic|gemini|mcp|skill``."""
        from toolfoundry.catalog import render

        return render(format, self.active_specs())

    def usage(self, name: str) -> UsageStats:
        """Calls, failures by kind, p50/p95 duration and last use."""
        return self.registry.usage(name)

    def audit(self, name: str | None = None, *, limit: int | None = None) -> list[AuditEntry]:
        """The audit log (one tool's, or all), oldest first."""
        return self.registry.audit(name, limit=limit)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _with_step(result: CallResult) -> CallResult:
    if result.error is None:
        step = StepResult(StepStatus.COMPLETED)
    else:
        step = StepResult(
            StepStatus.BLOCKED, blockers=(result.error.kind.value,), message=result.error.message
        )
    return dataclasses.replace(result, details={**result.details, "step": step.to_dict()})


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _udiff(a: str, b: str, from_name: str, to_name: str) -> str:
    lines = difflib.unified_diff(
        a.splitlines(keepends=True), b.splitlines(keepends=True), from_name, to_name
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
