"""A stored version as the forge compares against it: :class:`~toolfoundry.forge.ExistingTool`.

The registry keeps a version's tests and fixtures in their JSON (draft) form and what gated it
as a typed :class:`~toolfoundry.spec.gate.GateRecord`; here they become the forge's typed cases,
fixtures and accumulated suite, read straight from the record's fields.
"""

from __future__ import annotations

from collections.abc import Callable

from toolfoundry.forge import ExistingTool, Language
from toolfoundry.forge.cases import parse_test_cases
from toolfoundry.forge.draft_fields import DraftError, canonical_json
from toolfoundry.forge.fixtures import parse_fixtures
from toolfoundry.forge.regression import SuiteTest, accumulate
from toolfoundry.registry import ToolVersion, VersionStatus
from toolfoundry.spec import Problem
from toolfoundry.spec.gate import EarlierTest


def existing_tool(
    version: ToolVersion, earlier: tuple[SuiteTest, ...] = (), *, with_tests: bool = True
) -> ExistingTool:
    """``version`` as the forge reads it (``with_tests=False``: without its own tests, for a
    candidate run against another draft's tests).

    Raises:
        DraftError: the stored tests, fixtures or language cannot be read.
    """
    problems: list[Problem] = []
    fixtures = parse_fixtures(version.fixtures, "$.fixtures", problems)
    if version.language not in {x.value for x in Language}:
        problems.append(Problem("$.language", f"unknown language {version.language!r}"))
    if problems:
        raise DraftError(problems)
    return ExistingTool(
        name=version.name,
        version=version.version,
        code=version.code,
        tests=parse_test_cases(version.tests) if with_tests and version.tests else (),
        fixtures=fixtures,
        capabilities=version.capabilities,
        language=Language(version.language),
        parameters_json=canonical_json(version.parameters),
        earlier=earlier,
    )


def with_suite(version: ToolVersion, history: Callable[[], list[ToolVersion]]) -> ExistingTool:
    """``version`` with the earlier tests it was gated by and did not retire: its stored
    suite, or for a version stored before suites were, rebuilt from ``history()`` (read only
    then, and not for a v1: nothing came before it).

    Raises:
        DraftError: a stored test or fixture cannot be read.
    """
    suite = version.gate.suite
    if suite is not None:
        earlier = suite_tests(suite.earlier)
    elif version.version == 1:
        earlier = ()
    else:  # stored before suites were: rebuild from the earlier active versions
        earlier = legacy_earlier(history(), version.version)
    return existing_tool(version, earlier)


def suite_tests(earlier: tuple[EarlierTest, ...]) -> tuple[SuiteTest, ...]:
    """The stored earlier tests as the forge's cases."""
    cases = parse_test_cases([e.case for e in earlier]) if earlier else ()
    return tuple(SuiteTest(c, e.version) for c, e in zip(cases, earlier, strict=True))


def earlier_tests(suite: tuple[SuiteTest, ...]) -> tuple[EarlierTest, ...]:
    """The forge's suite entries in the form the gate record keeps them."""
    return tuple(EarlierTest(s.version, s.case.to_dict()) for s in suite)


def legacy_earlier(history: list[ToolVersion], before: int) -> tuple[SuiteTest, ...]:
    """The earlier suite of a version stored without one: every test of each earlier
    active version, minus the names later versions listed in ``changes_tests``."""
    earlier: list[SuiteTest] = []
    for version in history:
        if version.version >= before:
            break
        if version.status is not VersionStatus.ACTIVE:
            continue
        dropped = {c for c in version.gate.changes_tests if isinstance(c, str)}
        earlier = [s for s in earlier if s.case.name not in dropped]
        earlier = accumulate(earlier, parse_test_cases(version.tests), version.version)
    return tuple(earlier)
