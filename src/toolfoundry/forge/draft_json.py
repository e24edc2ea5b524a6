"""The draft's JSON form as typed dictionaries: what every door into the forge takes.

One declaration, three readers, so they cannot drift apart:

- the ``create_tool`` meta-tool types its parameters with these aliases (the descriptions a
  model sees are the ones written here);
- the forge takes its field lists from them (:data:`DRAFT_FIELDS`, :data:`TEST_FIELDS`,
  :data:`FIXTURE_FIELDS`): a key that is not declared here is refused as unknown;
- the HTTP API's OpenAPI ``Draft`` schema is :func:`draft_json_schema`.

The types say what :func:`toolfoundry.forge.parse_draft` accepts; ``parse_draft`` checks the
rest (name rules, JSON Schema validity, hosts) and reports every problem with its path.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, NotRequired

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from typing_extensions import TypedDict

from toolfoundry.declare.pyschema import clean_schema
from toolfoundry.spec import ErrorKind, StorageScope


class Language(StrEnum):
    """The tier a tool runs in: QuickJS in Wasm, or Python under OS isolation."""

    JAVASCRIPT = "javascript"
    PYTHON = "python"


# Unknown keys are refused everywhere in a draft (the forge reports them as findings).
_CLOSED = ConfigDict(extra="forbid")


@with_config(_CLOSED)
class FixtureJson(TypedDict):
    """What the host's fetch answers to one request while tests run (the network is cut)."""

    url: str
    method: NotRequired[str]
    status: NotRequired[int]
    headers: NotRequired[dict[str, str]]
    body: NotRequired[Any]


@with_config(_CLOSED)
class CaseJson(TypedDict):
    """One example the tool must satisfy before it can become active."""

    name: NotRequired[str]
    input: dict[str, Any]
    expected: NotRequired[Any]
    error: NotRequired[str]
    error_kind: NotRequired[ErrorKind]
    fixtures: NotRequired[list[FixtureJson]]


@with_config(_CLOSED)
class CapabilitiesJson(TypedDict, total=False):
    """Capabilities beyond computation; any of them makes the tool wait for human approval."""

    network: list[str]
    credentials: list[str]
    storage: bool | StorageScope
    system: bool


DraftName = Annotated[
    str,
    Field(description="tool name: a letter or '_', then letters, digits, '_' or '-' (max 64)."),
]
DraftDescription = Annotated[
    str, Field(description="what the tool does and when to use it, for other models.")
]
DraftParameters = Annotated[
    dict[str, Any], Field(description="JSON Schema (type object) of the tool's arguments.")
]
DraftCode = Annotated[
    str,
    Field(
        description="an ES module exporting ``handler(args)`` (sync or async) that returns "
        "JSON; only fetch, localStorage, crypto and the bundled npm libraries exist."
    ),
]
DraftTests = Annotated[
    list[CaseJson],
    Field(
        description='examples the tool must pass: ``{"input": {...}, "expected": value}`` or '
        '``{"input": {...}, "error": "substring of the error"}``.'
    ),
]
DraftLanguage = Annotated[
    Language,
    Field(description="``javascript`` (in-process WebAssembly sandbox) or ``python``."),
]
DraftCapabilities = Annotated[
    CapabilitiesJson | None,
    Field(
        description="what the tool needs beyond computation, e.g. "
        '``{"network": ["api.example.com"]}``.'
    ),
]
DraftFixtures = Annotated[
    list[FixtureJson] | None,
    Field(description="canned HTTP answers that fetch returns while the tests run."),
]


@with_config(_CLOSED)
class TestChangeJson(TypedDict):
    """One retired test and why."""

    test: Annotated[str, Field(description='a test name, or "v3:name" for version 3\'s')]
    reason: Annotated[str, Field(description="why the test no longer holds (required)")]


DraftChangesTests = Annotated[
    list[str | int | TestChangeJson] | None,
    Field(
        description="tests of earlier versions this version deliberately retires (they no "
        'longer gate it): {"test": "name" or "v3:name", "reason": "..."}, or a bare name '
        "(every earlier test of that name) or 0-based index into the current version's tests."
    ),
]
DraftReturns = Annotated[
    dict[str, Any] | None,
    Field(
        description="JSON Schema of the value the tool returns; every expected value must match it."
    ),
]
DraftAuthor = Annotated[
    str | None,
    Field(description="who wrote this version, kept in its record (default: the caller)."),
]


@with_config(_CLOSED)
class DraftJson(TypedDict):
    """A tool draft: the forge checks its fields and reports every problem as a finding."""

    name: DraftName
    description: DraftDescription
    parameters: NotRequired[DraftParameters]
    code: DraftCode
    language: NotRequired[DraftLanguage]
    tests: DraftTests
    capabilities: NotRequired[DraftCapabilities]
    fixtures: NotRequired[DraftFixtures]
    returns: NotRequired[DraftReturns]
    changes_tests: NotRequired[DraftChangesTests]
    author: NotRequired[DraftAuthor]


# Declaration order is the order error messages list the known fields in.
DRAFT_FIELDS: tuple[str, ...] = tuple(DraftJson.__annotations__)
TEST_FIELDS: tuple[str, ...] = tuple(CaseJson.__annotations__)
FIXTURE_FIELDS: tuple[str, ...] = tuple(FixtureJson.__annotations__)


def draft_json_schema() -> dict[str, Any]:
    """The JSON Schema of :class:`DraftJson` (definitions inlined, no titles)."""
    return clean_schema(TypeAdapter(DraftJson).json_schema())
