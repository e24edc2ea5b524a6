"""Loading ``toolfoundry.toml``: capability policy, fetch allowlists and credentials, limits.

Every section is optional and every problem is reported at once in a :class:`ConfigError`.
What each section and key means, with an example of every one: ``docs/configuration.md``
(tests/test_docs_examples.py checks that it shows every key this module accepts).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from toolfoundry.catalog.drift import Artifact
from toolfoundry.catalog.formats import FORMATS, SUFFIX_FORMATS
from toolfoundry.catalog.skill import SKILL_NAME_PATTERN
from toolfoundry.forge.policy import CapabilityPolicy, CapabilityPolicyError
from toolfoundry.sandbox.host.credentials import Credential, CredentialError
from toolfoundry.sandbox.host.fetch_hints import CONFIG_FILE as CONFIG_FILE  # named by hints too
from toolfoundry.sandbox.host.fetch_settings import FetchSettings as FetchSettings  # its home
from toolfoundry.spec import CallLimits
from toolfoundry.spec.limits import (
    CALL_LIMIT_BOUNDS,
    FETCH_REQUESTS,
    FETCH_REQUESTS_BOUND,
    MIB,
    PYTHON_QUEUE_S,
    PYTHON_TOTAL_BYTES,
    Bound,
    DraftLimits,
)
from toolfoundry.upstream.settings import UpstreamSettings, parse_upstreams

SECTIONS = (
    "registry",
    "policy",
    "fetch",
    "limits",
    "provider",
    "catalog",
    "review",
    "serve",
    "upstream",
)
# sections that are arrays of tables ([[upstream]]), read by their own parser
ARRAY_SECTIONS = ("upstream",)
SERVE_KEYS = ("expose_upstream",)
FETCH_KEYS = ("allow", "allow_http", "allow_private", "max_requests", "credentials")
CALL_LIMIT_KEYS = tuple(f.name for f in fields(CallLimits))
PYTHON_KEYS = ("python_total_mib", "python_queue_s")  # the Python tier's admission control
LIMIT_KEYS = (
    *CALL_LIMIT_KEYS,
    "max_code_bytes",
    "duplicate_candidates",
    "dependent_tests",
    *PYTHON_KEYS,
)
# how many similar active tools (by search) a new draft's tests are run against, to warn about
# behavioural duplicates; 0 turns the check off
DUPLICATE_CANDIDATES = 3
# how many test cases of the tools that call a tool are run against a new version of it
# (foundry/dependents.py); the dependents past it are named in a warning, and verify runs them
DEPENDENT_TESTS = 200
# every [limits] key's accepted range: the call limits' from spec/limits.py, the rest here
LIMIT_BOUNDS: dict[str, Bound] = {
    **CALL_LIMIT_BOUNDS,
    "max_code_bytes": Bound(1, DraftLimits().max_draft_bytes),
    "duplicate_candidates": Bound(0, 100),
    "dependent_tests": Bound(0, 100_000),
    "python_total_mib": Bound(16, 1024 * 1024),
    "python_queue_s": Bound(0, 3600, integer=False),
}
CATALOG_KEYS = ("sources", "pythonpath", "skill_name", "out")


class ConfigError(ValueError):
    """toolfoundry.toml cannot be used; the message lists every problem with its key."""


@dataclass(frozen=True)
class ReviewSettings:
    """The ``[review]`` table: the review ``serve`` runs of the library by itself
    (foundry/review_schedule.py).

    Attributes:
        every_s: seconds between reviews (``every``, ``"1d"`` by default); None (``"off"``)
            runs none, not even at start after a runtime change.
        unused_days: an active tool not called for this many days is reported unused.
        tool_budget_s: one tool's suite stops after this many seconds (the test running then
            ends at its own timeout) and the tool is reported unfinished.
    """

    every_s: float | None = 86400.0
    unused_days: int = 30
    tool_budget_s: float = 60.0


REVIEW_KEYS = ("every", "unused_days", "tool_budget_s")
REVIEW_BOUNDS = {
    "every": Bound(1, 366 * 86400, integer=False),
    "unused_days": Bound(1, 3650),
    "tool_budget_s": Bound(1, 3600, integer=False),
}
_EVERY_WORDS = {"hourly": 3600.0, "daily": 86400.0, "weekly": 7 * 86400.0}
_EVERY_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def every_seconds(value: Any) -> float | None:
    """``[review] every`` in seconds: ``"30s"``, ``"15m"``, ``"6h"``, ``"1d"``, ``"hourly"``,
    ``"daily"``, ``"weekly"`` or a number of seconds; None for ``"off"``.

    Raises:
        ValueError: anything else, or a span outside 1 s to 366 days.
    """
    if isinstance(value, str):
        word = value.strip().lower()
        if word == "off":
            return None
        if word in _EVERY_WORDS:
            return _EVERY_WORDS[word]
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhd])", word)
        if match is None:
            raise ValueError(
                f'must be like "30s", "15m", "6h", "1d", "daily" or "off", got {value!r}'
            )
        value = float(match.group(1)) * _EVERY_UNITS[match.group(2)]
    problem = REVIEW_BOUNDS["every"].problem(value)
    if problem is not None:
        raise ValueError(f"{problem} (seconds)")
    return float(value)


@dataclass(frozen=True)
class ServeSettings:
    """The ``[serve]`` table: what ``toolfoundry serve``'s MCP server lists.

    Attributes:
        expose_upstream: also list every callable upstream tool (``UPSTREAM.TOOL``) for
            clients without code mode; by default only code mode and search reach them.
    """

    expose_upstream: bool = False


@dataclass(frozen=True)
class CatalogSettings:
    """The ``[catalog]`` table: the project's own declared tools and its committed catalogue.

    ``out`` None means the default set (docs/catalog.json, docs/SKILL.md and
    docs/skills/<skill_name>/SKILL.md); its paths, like ``pythonpath``, are relative to the
    configuration file's folder.
    """

    sources: tuple[str, ...] = ()
    pythonpath: tuple[str, ...] = (".",)
    skill_name: str | None = None
    out: tuple[Artifact, ...] | None = None


@dataclass(frozen=True)
class Config:
    """The whole configuration (defaults when there is no file).

    The ``[limits]`` table is read into: ``limits`` (what every call and every test run may
    use: ``timeout_s``, ``memory_mib``, ``output_bytes``), ``draft_limits``
    (``max_code_bytes``), ``duplicate_candidates``, ``dependent_tests`` (how many test cases
    of the tools that call a tool a new version of it must pass), and the Python tier's
    admission control
    (``python_total_mib``: the memory budgets of its concurrent calls and test runs together;
    ``python_queue_s``: how long one waits for room before it is ``overloaded``).
    """

    policy: CapabilityPolicy = field(default_factory=CapabilityPolicy)
    fetch: FetchSettings = field(default_factory=FetchSettings)
    limits: CallLimits = field(default_factory=CallLimits)
    provider: dict[str, Any] = field(default_factory=dict)
    registry_url: str | None = None
    path: Path | None = None
    catalog: CatalogSettings = field(default_factory=CatalogSettings)
    draft_limits: DraftLimits = field(default_factory=DraftLimits)
    duplicate_candidates: int = DUPLICATE_CANDIDATES
    dependent_tests: int = DEPENDENT_TESTS
    python_total_mib: int = PYTHON_TOTAL_BYTES // MIB
    python_queue_s: float = PYTHON_QUEUE_S
    review: ReviewSettings = field(default_factory=ReviewSettings)
    serve: ServeSettings = field(default_factory=ServeSettings)
    upstreams: tuple[UpstreamSettings, ...] = ()


def load_config(path: str | Path | None = None) -> Config:
    """Read ``path``, or ``./toolfoundry.toml`` when it exists, else the defaults.

    Raises:
        ConfigError: the file is missing (when named), not TOML, or has bad values.
    """
    if path is None:
        candidate = Path.cwd() / CONFIG_FILE
        if not candidate.is_file():
            return Config()
        path = candidate
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: no such configuration file") from exc
    except (tomllib.TOMLDecodeError, ValueError) as exc:  # ValueError: a 4300+ digit integer
        raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
    return parse_config(data, path=path)


def parse_config(data: Mapping[str, Any], *, path: Path | None = None) -> Config:
    """Build a :class:`Config` from parsed TOML, collecting every problem."""
    problems = [
        f"unknown section [{k}] (known: {', '.join(SECTIONS)})" for k in data if k not in SECTIONS
    ]
    tables: dict[str, Mapping[str, Any]] = {}
    for section in SECTIONS:
        if section in ARRAY_SECTIONS:
            continue
        value = data.get(section, {})
        if not isinstance(value, Mapping):
            problems.append(f"[{section}] must be a table")
            value = {}
        tables[section] = value
    policy = CapabilityPolicy()
    try:
        policy = CapabilityPolicy.from_config(tables["policy"])
    except CapabilityPolicyError as exc:
        problems.append(str(exc))
    fetch = _fetch(tables["fetch"], problems)
    limits, draft_limits, duplicate_candidates = _limits(tables["limits"], problems)
    python_total_mib = tables["limits"].get("python_total_mib", Config.python_total_mib)
    python_queue_s = tables["limits"].get("python_queue_s", Config.python_queue_s)
    dependent_tests = tables["limits"].get("dependent_tests", Config.dependent_tests)
    catalog = _catalog(tables["catalog"], problems)
    review = _review(tables["review"], problems)
    serve = _serve(tables["serve"], problems)
    upstreams = parse_upstreams(data.get("upstream"), problems)
    url = tables["registry"].get("url")
    if url is not None and not isinstance(url, str):
        problems.append("registry.url must be a string")
    problems += [f"unknown key registry.{k}" for k in tables["registry"] if k != "url"]
    if problems:
        where = f"{path}: " if path else ""
        raise ConfigError(where + "; ".join(problems))
    return Config(
        policy,
        fetch,
        limits,
        dict(tables["provider"]),
        url,
        path,
        catalog,
        draft_limits=draft_limits,
        duplicate_candidates=duplicate_candidates,
        dependent_tests=dependent_tests,
        python_total_mib=python_total_mib,
        python_queue_s=float(python_queue_s),  # checked by _limits: a number
        review=review,
        serve=serve,
        upstreams=upstreams,
    )


def _hosts(table: Mapping[str, Any], key: str, problems: list[str]) -> tuple[str, ...]:
    value = table.get(key, [])
    if not isinstance(value, list) or not all(isinstance(h, str) and h for h in value):
        problems.append(f"fetch.{key} must be a list of host patterns")
        return ()
    return tuple(value)


def _fetch(table: Mapping[str, Any], problems: list[str]) -> FetchSettings:
    problems += [
        f"unknown key fetch.{k} (known: {', '.join(FETCH_KEYS)})"
        for k in table
        if k not in FETCH_KEYS
    ]
    credentials: list[Credential] = []
    raw = table.get("credentials", [])
    if not isinstance(raw, list):
        problems.append("fetch.credentials must be an array of tables")
        raw = []
    for i, item in enumerate(raw):
        if not isinstance(item, Mapping):
            problems.append(f"fetch.credentials[{i}] must be a table")
            continue
        try:
            credentials.append(Credential(**dict(item)))
        except (CredentialError, TypeError) as exc:
            problems.append(f"fetch.credentials[{i}]: {exc}")
    max_requests = table.get("max_requests", FETCH_REQUESTS)
    if (problem := FETCH_REQUESTS_BOUND.problem(max_requests)) is not None:
        problems.append(f"fetch.max_requests {problem}")
        max_requests = FETCH_REQUESTS
    return FetchSettings(
        allow=_hosts(table, "allow", problems) if "allow" in table else None,
        allow_http=_hosts(table, "allow_http", problems),
        allow_private=_hosts(table, "allow_private", problems),
        max_requests=max_requests,
        credentials=tuple(credentials),
    )


def _limits(table: Mapping[str, Any], problems: list[str]) -> tuple[CallLimits, DraftLimits, int]:
    problems += [
        f"unknown key limits.{k} (known: {', '.join(LIMIT_KEYS)})"
        for k in table
        if k not in LIMIT_KEYS
    ]
    values: dict[str, Any] = {}
    for key in LIMIT_KEYS:
        if key not in table:
            continue
        problem = LIMIT_BOUNDS[key].problem(table[key])  # inf, nan, negative, huge: refused
        if problem is not None:
            problems.append(f"limits.{key} {problem}")
            continue
        values[key] = float(table[key]) if key == "timeout_s" else table[key]
    call = CallLimits(**{k: values[k] for k in CALL_LIMIT_KEYS if k in values})
    draft = DraftLimits()
    if "max_code_bytes" in values:
        draft = DraftLimits(max_code_bytes=values["max_code_bytes"])
    return call, draft, values.get("duplicate_candidates", DUPLICATE_CANDIDATES)


def _serve(table: Mapping[str, Any], problems: list[str]) -> ServeSettings:
    problems += [
        f"unknown key serve.{k} (known: {', '.join(SERVE_KEYS)})"
        for k in table
        if k not in SERVE_KEYS
    ]
    expose = table.get("expose_upstream", False)
    if not isinstance(expose, bool):
        problems.append("serve.expose_upstream must be true or false")
        expose = False
    return ServeSettings(expose_upstream=expose)


def _review(table: Mapping[str, Any], problems: list[str]) -> ReviewSettings:
    problems += [
        f"unknown key review.{k} (known: {', '.join(REVIEW_KEYS)})"
        for k in table
        if k not in REVIEW_KEYS
    ]
    defaults = ReviewSettings()
    every_s = defaults.every_s
    if "every" in table:
        try:
            every_s = every_seconds(table["every"])
        except ValueError as exc:
            problems.append(f"review.every {exc}")
    values: dict[str, Any] = {}
    for key in ("unused_days", "tool_budget_s"):
        if key in table:
            problem = REVIEW_BOUNDS[key].problem(table[key])
            if problem is not None:
                problems.append(f"review.{key} {problem}")
            else:
                values[key] = table[key]
    return ReviewSettings(
        every_s=every_s,
        unused_days=values.get("unused_days", defaults.unused_days),
        tool_budget_s=float(values.get("tool_budget_s", defaults.tool_budget_s)),
    )


def _strings(table: Mapping[str, Any], key: str, problems: list[str]) -> tuple[str, ...] | None:
    value = table.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        problems.append(f"catalog.{key} must be a list of non-empty strings")
        return None
    return tuple(value)


def _catalog(table: Mapping[str, Any], problems: list[str]) -> CatalogSettings:
    problems += [
        f"unknown key catalog.{k} (known: {', '.join(CATALOG_KEYS)})"
        for k in table
        if k not in CATALOG_KEYS
    ]
    skill_name = table.get("skill_name")
    if skill_name is not None and not (
        isinstance(skill_name, str) and re.fullmatch(SKILL_NAME_PATTERN, skill_name)
    ):
        problems.append("catalog.skill_name must be lowercase letters, digits and single hyphens")
        skill_name = None
    out: list[Artifact] | None = None
    raw = table.get("out")
    if raw is not None and not isinstance(raw, list):
        problems.append("catalog.out must be a list of paths or {path, format} tables")
    elif raw is not None:
        out = [a for i, item in enumerate(raw) if (a := _out_file(i, item, problems))]
    return CatalogSettings(
        sources=_strings(table, "sources", problems) or (),
        pythonpath=_strings(table, "pythonpath", problems) or (".",),
        skill_name=skill_name,
        out=tuple(out) if out is not None else None,
    )


def _out_file(index: int, item: Any, problems: list[str]) -> Artifact | None:
    """One ``catalog.out`` entry: ``"docs/SKILL.md"`` or ``{path, format, skill_name}``."""
    where = f"catalog.out[{index}]"
    entry = {"path": item} if isinstance(item, str) else item
    if not isinstance(entry, Mapping) or not isinstance(entry.get("path"), str):
        problems.append(f"{where} must be a path or a table with a path")
        return None
    unknown = [k for k in entry if k not in ("path", "format", "skill_name")]
    problems += [f"unknown key {where}.{k} (known: path, format, skill_name)" for k in unknown]
    path, format = Path(entry["path"]), entry.get("format")
    if format is None:
        format = SUFFIX_FORMATS.get(path.suffix.lower())
    if format not in FORMATS:
        problems.append(f"{where}: give a format, one of {', '.join(FORMATS)}")
        return None
    skill_name = entry.get("skill_name")
    if skill_name is not None and not (
        isinstance(skill_name, str) and re.fullmatch(SKILL_NAME_PATTERN, skill_name)
    ):
        problems.append(f"{where}.skill_name must be lowercase letters, digits and single hyphens")
        skill_name = None
    return Artifact(path, format, skill_name)
