"""The draft's JSON form: the one declaration every door into the forge takes.

:class:`DraftJson` declares each field once: its JSON type, the description a model reads, and
its default when the field is optional. Its readers cannot drift apart:

- the forge takes its field lists and defaults from it (:data:`DRAFT_FIELDS`,
  :data:`DRAFT_DEFAULTS`, :data:`TEST_FIELDS`, :data:`FIXTURE_FIELDS`): a key that is not
  declared here is refused as unknown, a field left out takes the default written here;
- the ``create_tool`` meta-tool's parameters are :func:`draft_signature` (MCP, the agent loop);
- the HTTP API's OpenAPI ``Draft`` schema is :func:`draft_json_schema`;
- docs/drafts.md's field tables are checked against it (tests/packaging/test_drafts_doc.py).

Adding a field is one entry here, then its check in :func:`toolfoundry.forge.parse_draft`
(which checks what types cannot say: name rules, JSON Schema validity, hosts, and reports every
problem with its path) and its attribute on :class:`toolfoundry.forge.Draft`.
"""

from __future__ import annotations

import inspect
import typing
from enum import StrEnum
from typing import Annotated, Any, NotRequired

from pydantic import ConfigDict, Field, TypeAdapter, with_config
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from typing_extensions import TypedDict

from toolfoundry.declare.pyschema import clean_schema
from toolfoundry.spec import ErrorKind
from toolfoundry.spec.capabilities import CapabilitiesJson
from toolfoundry.spec.tool import JsonSchema


class Language(StrEnum):
    """The tier a tool runs in: QuickJS in Wasm, or Python under OS isolation."""

    JAVASCRIPT = "javascript"
    PYTHON = "python"


# Unknown keys are refused everywhere in a draft (the forge reports them as findings).
_CLOSED = ConfigDict(extra="forbid")
# A draft without parameters declares a tool without arguments.
EMPTY_PARAMETERS: JsonSchema = {"type": "object", "properties": {}}


@with_config(_CLOSED)
class FixtureJson(TypedDict):
    """What the host's fetch answers to one request while tests run (the network is cut)."""

    url: str
    method: NotRequired[str]
    status: NotRequired[int]
    headers: NotRequired[dict[str, str]]
    body: NotRequired[Any]


@with_config(_CLOSED)
class ToolErrorJson(TypedDict):
    """How a tool fixture's inner call fails: the kind its ToolError carries, its message."""

    kind: ErrorKind
    message: str


@with_config(_CLOSED)
class ToolFixtureJson(TypedDict):
    """What one inner call ``tools.NAME(args)`` answers while the tests run (code mode)."""

    tool: str
    args: NotRequired[dict[str, Any]]
    version: NotRequired[int]
    value: NotRequired[Any]
    error: NotRequired[ToolErrorJson]


@with_config(_CLOSED)
class CaseJson(TypedDict):
    """One example the tool must satisfy before it can become active."""

    name: NotRequired[str]
    input: dict[str, Any]
    expected: NotRequired[Any]
    error: NotRequired[str]
    error_kind: NotRequired[ErrorKind]
    fixtures: NotRequired[list[FixtureJson | ToolFixtureJson]]


@with_config(_CLOSED)
class TestChangeJson(TypedDict):
    """One retired test and why."""

    test: Annotated[str, Field(description='a test name, or "v3:name" for version 3\'s')]
    reason: Annotated[str, Field(description="why the test no longer holds (required)")]


@with_config(_CLOSED)
class DistinctFromJson(TypedDict):
    """The active tool a draft differs from although that tool passes the draft's tests."""

    name: Annotated[str, Field(description="the active tool's name")]
    why: Annotated[str, Field(description="how this tool differs (shown to reviewers)")]


@with_config(_CLOSED)
class DraftJson(TypedDict):
    """A tool draft: the forge checks its fields and reports every problem as a finding."""

    name: Annotated[
        str,
        Field(description="tool name: a letter or '_', then letters, digits, '_' or '-' (max 64)."),
    ]
    description: Annotated[
        str, Field(description="what the tool does and when to use it, for other models.")
    ]
    parameters: NotRequired[
        Annotated[
            JsonSchema,
            Field(
                description="JSON Schema (type object) of the tool's arguments; by default the "
                "tool takes none.",
                default=EMPTY_PARAMETERS,
            ),
        ]
    ]
    code: NotRequired[
        Annotated[
            str | None,
            Field(
                description="an ES module exporting ``handler(args)`` (sync or async) that "
                "returns JSON; only fetch, localStorage, crypto, ``tools`` and the bundled npm "
                "libraries exist. Required unless from_run or patch is given.",
                default=None,
            ),
        ]
    ]
    from_run: NotRequired[
        Annotated[
            str | None,
            Field(
                description="in place of code: the run_id a successful run_js returned. Its "
                "module becomes the code and the run the first test (its arguments, result, "
                "and the answers its tools calls and fetches got, as that test's fixtures).",
                default=None,
            ),
        ]
    ]
    base_version: NotRequired[
        Annotated[
            int | None,
            Field(
                description="with patch: the version of this tool whose code the patch is "
                "against (tool_history lists them).",
                default=None,
                ge=1,
            ),
        ]
    ]
    patch: NotRequired[
        Annotated[
            str | None,
            Field(
                description="in place of code: a unified diff of base_version's code (hunks "
                "such as ``@@ -3,2 +3,2 @@`` with ' ', '-' and '+' lines). Each hunk must match "
                "that code exactly where its header says, or the draft is refused naming it.",
                default=None,
            ),
        ]
    ]
    language: NotRequired[
        Annotated[
            Language,
            Field(
                description="``javascript`` (in-process WebAssembly sandbox) or ``python``.",
                default=Language.JAVASCRIPT,
            ),
        ]
    ]
    tests: NotRequired[
        Annotated[
            list[CaseJson] | None,
            Field(
                description='examples the tool must pass: ``{"input": {...}, "expected": '
                'value}`` or ``{"input": {...}, "error": "substring of the error"}``; at least '
                "one (with from_run, the run is the first).",
                default=None,
            ),
        ]
    ]
    capabilities: NotRequired[
        Annotated[
            CapabilitiesJson | None,
            Field(
                description="what the tool needs beyond computation, e.g. "
                '``{"network": ["api.example.com"]}``.',
                default=None,
            ),
        ]
    ]
    uses: NotRequired[
        Annotated[
            list[str] | None,
            Field(
                description="tools the code calls by a computed name (``tools[name](...)``); "
                "those it names are read from the code.",
                default=None,
            ),
        ]
    ]
    fixtures: NotRequired[
        Annotated[
            list[FixtureJson] | None,
            Field(
                description="canned HTTP answers that fetch returns while the tests run.",
                default=None,
            ),
        ]
    ]
    returns: NotRequired[
        Annotated[
            JsonSchema | None,
            Field(
                description="JSON Schema of the value the tool returns; every expected value "
                "must match it.",
                default=None,
            ),
        ]
    ]
    changes_tests: NotRequired[
        Annotated[
            list[str | int | TestChangeJson] | None,
            Field(
                description="tests of earlier versions this version deliberately retires (they "
                'no longer gate it): {"test": "name" or "v3:name", "reason": "..."}, or a bare '
                "name (every earlier test of that name) or 0-based index into the current "
                "version's tests.",
                default=None,
            ),
        ]
    ]
    author: NotRequired[
        Annotated[
            str | None,
            Field(
                description="who wrote this version, kept in its record (default: the caller).",
                default=None,
            ),
        ]
    ]
    distinct_from: NotRequired[
        Annotated[
            DistinctFromJson | None,
            Field(
                description="when an active tool already passes every test of this draft, "
                "the draft is refused as its duplicate unless it names that tool here and "
                'says why it differs: {"name": "...", "why": "..."}.',
                default=None,
            ),
        ]
    ]


class _Declared(typing.NamedTuple):
    hint: Any  # the field's type, with its Annotated metadata, without NotRequired
    required: bool
    default: Any  # the declared default of an optional field


def _declared(fields: type) -> dict[str, _Declared]:
    """Each field of a TypedDict as declared (read from the hints: under postponed
    annotations ``__required_keys__`` cannot see ``NotRequired``)."""
    out: dict[str, _Declared] = {}
    for name, hint in typing.get_type_hints(fields, include_extras=True).items():
        required = typing.get_origin(hint) is not NotRequired
        if not required:
            hint = typing.get_args(hint)[0]
        info = next((m for m in typing.get_args(hint)[1:] if isinstance(m, FieldInfo)), None)
        default = None if info is None or info.default is PydanticUndefined else info.default
        out[name] = _Declared(hint, required, default)
    return out


_DRAFT = _declared(DraftJson)
# Declaration order is the order error messages list the known fields in.
DRAFT_FIELDS: tuple[str, ...] = tuple(_DRAFT)
# The value a draft's optional field takes when the draft leaves it out.
DRAFT_DEFAULTS: dict[str, Any] = {n: d.default for n, d in _DRAFT.items() if not d.required}
# The fields a draft must give.
DRAFT_REQUIRED: tuple[str, ...] = tuple(n for n, d in _DRAFT.items() if d.required)
TEST_FIELDS: tuple[str, ...] = tuple(CaseJson.__annotations__)
FIXTURE_FIELDS: tuple[str, ...] = tuple(FixtureJson.__annotations__)


def draft_signature() -> inspect.Signature:
    """The draft as keyword parameters (the ``create_tool`` meta-tool's), in declaration
    order, each optional one with its declared default."""
    return inspect.Signature(
        [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                annotation=d.hint,
                default=inspect.Parameter.empty if d.required else d.default,
            )
            for name, d in _DRAFT.items()
        ]
    )


def draft_json_schema() -> JsonSchema:
    """The JSON Schema of :class:`DraftJson` (definitions inlined, no titles)."""
    return clean_schema(TypeAdapter(DraftJson).json_schema())
