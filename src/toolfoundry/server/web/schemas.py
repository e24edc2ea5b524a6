"""JSON Schemas of the API's bodies, shared by request validation and the OpenAPI document.

``Draft`` is the forge's own declaration of a draft (:mod:`toolfoundry.forge.draft_json`).
The response schemas describe what the foundry's records' ``to_dict`` methods produce; the
API tests validate every response they receive against these and refuse a key a schema does
not declare, so the document stays honest. The document itself is committed as
``docs/openapi.json`` and checked against the code by ``make docs-check``.
"""

from __future__ import annotations

from typing import Any

from toolfoundry.forge.draft_json import draft_json_schema
from toolfoundry.foundry.review_schedule import TRIGGERS
from toolfoundry.foundry.upstream_uses import UseState
from toolfoundry.registry import HoldKind


def ref(name: str) -> dict[str, str]:
    """A reference to the component schema ``name``."""
    return {"$ref": f"#/components/schemas/{name}"}


def _obj(required: list[str], **properties: Any) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": properties}


_STR = {"type": "string"}
_INT = {"type": "integer"}
_NUM = {"type": "number"}
_BOOL = {"type": "boolean"}
_OPT_INT = {"type": ["integer", "null"]}
_OPT_STR = {"type": ["string", "null"]}
_OPT_NUM = {"type": ["number", "null"]}
_STATUS = {"enum": ["pending_approval", "active", "rejected", "disabled"]}
_LIST = {"type": "array"}
_DICT = {"type": "object"}
_BY = {"type": "string", "minLength": 1, "maxLength": 200, "description": "Who decides."}
_USES = {
    "type": "array",
    "items": ref("Use"),
    "description": "The tools its code calls (code mode), each with the version tested.",
}
_USED_BY = {
    "type": "array",
    "items": ref("UsedBy"),
    "description": "Versions of other tools whose code calls this tool: each tool's current "
    "version and those waiting for approval.",
}

COMPONENTS: dict[str, dict[str, Any]] = {
    "ErrorDetail": _obj(
        ["kind", "message"],
        kind=_STR,
        message=_STR,
        problems={"type": "array", "items": _obj(["path", "message"], path=_STR, message=_STR)},
    ),
    "Error": _obj(["error"], error=ref("ErrorDetail")),
    "Capabilities": {
        "type": "object",
        "description": "What the tool may reach beyond computation.",
        "properties": {
            "network": {"type": "array", "items": _STR},
            "credentials": {"type": "array", "items": _STR},
            "storage": {"type": ["string", "boolean"]},
            "system": _BOOL,
        },
    },
    "Usage": _obj(
        ["name", "calls", "failures", "p50_ms", "p95_ms", "mean_ms", "last_used"],
        name=_STR,
        calls=_INT,
        failures={"type": "object", "additionalProperties": _INT},
        p50_ms=_OPT_NUM,
        p95_ms=_OPT_NUM,
        mean_ms=_OPT_NUM,
        last_used=_OPT_STR,
        callers={
            "type": "object",
            "additionalProperties": _INT,
            "description": "Calls made by code through tools, by caller (a tool, or run_js).",
        },
    ),
    "LastError": {
        "type": ["object", "null"],
        "required": ["kind", "at"],
        "properties": {"kind": _STR, "at": _STR},
    },
    "VersionSummary": _obj(
        ["name", "version", "status", "current", "sha256", "capabilities", "author", "created_at"],
        name=_STR,
        version=_INT,
        status=_STATUS,
        current=_BOOL,
        sha256=_STR,
        capabilities=ref("Capabilities"),
        author=_STR,
        created_at=_STR,
        parent_version=_OPT_INT,
    ),
    "ToolRow": {
        "allOf": [
            ref("VersionSummary"),
            _obj(
                ["description", "usage", "last_error", "pending_versions"],
                description=_STR,
                usage=ref("Usage"),
                last_error=ref("LastError"),
                pending_versions={
                    "type": "array",
                    "items": _INT,
                    "description": "The tool's versions waiting for a human, ascending.",
                },
            ),
        ]
    },
    "Version": {
        "allOf": [
            ref("VersionSummary"),
            _obj(
                ["language", "description", "parameters", "code", "tests", "findings"],
                language=_STR,
                description=_STR,
                parameters=_DICT,
                returns={"type": ["object", "null"]},
                level=_STR,
                code=_STR,
                tests=_LIST,
                fixtures=_LIST,
                capability_hash=_STR,
                findings=_LIST,
                test_results=_LIST,
                extra=_DICT,
            ),
        ]
    },
    "Use": _obj(
        ["tool", "tested_against", "found", "status", "current_version"],
        tool={**_STR, "description": "A registry tool's name, or an upstream's UPSTREAM.TOOL."},
        tested_against={
            **_OPT_INT,
            "description": "The callee's version the tests ran against (null: upstream).",
        },
        found={"enum": ["code", "uses"], "description": "Read from the code, or named in uses."},
        status={**_OPT_STR, "description": "The callee's current status (null: not here)."},
        current_version=_OPT_INT,
        schema_hash={**_STR, "description": "An upstream tool's input schema hash, tested."},
        upstream={
            **_obj(
                ["tool", "state", "tested_schema_hash", "schema_hash", "message"],
                tool=_STR,
                state={"enum": [state.value for state in UseState]},
                tested_schema_hash=_OPT_STR,
                schema_hash={**_OPT_STR, "description": "Listed now (null: not listed)."},
                message=_STR,
            ),
            "description": "An upstream tool now, against what the tests ran with.",
        },
    ),
    "UsedBy": _obj(
        ["name", "version", "status", "current", "tested_against"],
        name=_STR,
        version=_INT,
        status=_STATUS,
        current={**_BOOL, "description": "Its tool's current version (else one waiting)."},
        tested_against={**_OPT_INT, "description": "The version of this tool it was tested on."},
    ),
    "ToolDetail": {
        "allOf": [
            ref("Version"),
            _obj(
                ["usage", "last_error", "uses", "used_by"],
                usage=ref("Usage"),
                last_error=ref("LastError"),
                uses=_USES,
                used_by=_USED_BY,
            ),
        ]
    },
    "Review": {
        "allOf": [
            ref("Version"),
            _obj(
                [
                    "reasons",
                    "capability_details",
                    "diff",
                    "diff_against",
                    "diff_base",
                    "current_version",
                    "capability_changes",
                    "suite",
                    "identical_to",
                    "approval_hold",
                    "description_diff",
                    "parameters_diff",
                    "test_tally",
                    "distinct_from",
                    "uses",
                    "used_by",
                ],
                uses=_USES,
                used_by=_USED_BY,
                reasons={"type": "array", "items": _STR},
                distinct_from={
                    "type": ["object", "null"],
                    "description": "The active tool that passes every test of this version and "
                    "why its draft says it differs (distinct_from), or null.",
                    "properties": {"name": _STR, "why": _STR},
                },
                capability_details={
                    "type": "array",
                    "items": _obj(
                        ["capability", "value", "meaning", "change"],
                        capability=_STR,
                        value={"description": "The hosts, the storage scope, or true."},
                        meaning=_STR,
                        change={
                            "enum": ["added", "kept"],
                            "description": "Against capability_changes.against: asked for "
                            "anew, or already held.",
                        },
                        shown={
                            **_STR,
                            "description": "A host as a person must read it: its Unicode and "
                            "punycode forms, and a WARNING for mixed scripts or a lookalike.",
                        },
                        host=_obj(
                            ["unicode", "ascii", "warning"],
                            unicode=_STR,
                            ascii={**_OPT_STR, "description": "The form the fetch uses."},
                            warning=_OPT_STR,
                        ),
                        resolves={
                            **_BOOL,
                            "description": "A credential: whether the configuration binds a "
                            "value to the host that can be read now.",
                        },
                        resolution={
                            **_STR,
                            "description": "A credential: its binding and whether it resolves "
                            "(never the value).",
                        },
                    ),
                },
                capability_changes=_obj(
                    ["against", "removed"],
                    against={
                        **_OPT_INT,
                        "description": "The active version compared with: the current one, "
                        "else the newest earlier active one (null: a new tool).",
                    },
                    removed={
                        "type": "array",
                        "items": _DICT,
                        "description": "Capabilities that version held and this one drops.",
                    },
                ),
                suite=ref("Suite"),
                identical_to={
                    **_OPT_INT,
                    "description": "Another version with the same code and parameters.",
                },
                diff=_STR,
                description_diff={
                    **_OPT_STR,
                    "description": "Unified diff of the description against diff_against "
                    "(null: unchanged, or nothing to compare).",
                },
                parameters_diff={
                    **_OPT_STR,
                    "description": "Unified diff of the parameters' JSON Schema (sorted keys) "
                    "against diff_against (null: unchanged, or nothing to compare).",
                },
                test_tally=_obj(
                    ["passed", "total", "own", "earlier"],
                    passed=_INT,
                    total=_INT,
                    own=_INT,
                    earlier={**_INT, "description": "Earlier versions' tests that ran."},
                ),
                diff_against=_OPT_INT,
                diff_base={"enum": ["current", "parent", "none"]},
                current_version=_OPT_INT,
                approval_hold={
                    "anyOf": [{"type": "null"}, ref("ApprovalHold")],
                    "description": "Why approving this pending version is refused now (null: "
                    "it may be approved).",
                },
            ),
        ]
    },
    "ApprovalHold": _obj(
        ["kind", "message", "by_version"],
        kind={
            "enum": [k.value for k in HoldKind],
            "description": "superseded: a newer version has been active, so approving would "
            "roll the tool back (reject it instead); disabled: a person disabled the tool "
            "(enable it first).",
        },
        message=_STR,
        by_version={**_OPT_INT, "description": "The newer version, for superseded."},
    ),
    "ReviewedTool": _obj(
        ["name", "version", "language", "message"],
        name=_STR,
        version=_INT,
        language=_STR,
        message=_STR,
        failed={"type": "array", "items": _STR, "description": "The failing tests' labels."},
        reasons={
            "type": "array",
            "items": _STR,
            "description": "Why each failed (the first ten), as label: reason.",
        },
    ),
    "LibraryReview": _obj(
        [
            "id",
            "started_at",
            "finished_at",
            "trigger",
            "runner",
            "fingerprint",
            "runtime",
            "summary",
            "findings",
            "running",
        ],
        id=_INT,
        started_at=_STR,
        finished_at=_OPT_STR,
        trigger={
            "enum": list(TRIGGERS),
            "description": "first: no review was stored; runtime_changed: toolfoundry, the "
            "guest or wasmtime differ from the newest review's; schedule: [review] every.",
        },
        runner=_STR,
        fingerprint=_STR,
        runtime=_obj(
            ["toolfoundry", "guest", "wasmtime"], toolfoundry=_STR, guest=_STR, wasmtime=_STR
        ),
        summary={
            "type": "object",
            "additionalProperties": _NUM,
            "description": "verified, passed, each finding's count, duration_s.",
        },
        findings=_obj(
            ["failing", "unfinished", "not_run", "unused", "capabilities", "waiting"],
            failing={
                "type": "array",
                "items": ref("ReviewedTool"),
                "description": "Active tools whose own suites fail under today's runtime and "
                "configuration: flagged for a person, never disabled.",
            },
            unfinished={"type": "array", "items": ref("ReviewedTool")},
            not_run={"type": "array", "items": ref("ReviewedTool")},
            unused={
                "type": "array",
                "items": _obj(
                    ["name", "version", "calls", "last_used", "idle_days"],
                    name=_STR,
                    version=_INT,
                    calls=_INT,
                    last_used=_OPT_STR,
                    idle_days=_NUM,
                ),
            },
            capabilities={
                "type": "array",
                "items": _obj(
                    ["name", "version", "status", "network", "credentials", "storage", "system"],
                    name=_STR,
                    version=_INT,
                    status=_OPT_STR,
                    network={"type": "array", "items": _STR},
                    credentials={"type": "array", "items": _STR},
                    storage={"type": ["string", "boolean"]},
                    system=_BOOL,
                ),
            },
            waiting={
                "type": "array",
                "items": _obj(
                    ["name", "version", "waiting_days", "approval_hold"],
                    name=_STR,
                    version=_INT,
                    author=_STR,
                    created_at=_STR,
                    waiting_days=_NUM,
                    capabilities=ref("Capabilities"),
                    approval_hold={"anyOf": [{"type": "null"}, ref("ApprovalHold")]},
                ),
            },
            runtime_changes={"type": "array", "items": _STR},
        ),
        running={**_BOOL, "description": "A newer review is under way."},
    ),
    "Suite": _obj(
        ["tests", "retired"],
        tests={
            "type": "array",
            "description": "The tests the version was gated by: earlier versions' (vN:name), "
            "then its own.",
            "items": _obj(
                ["label", "version", "input", "fixtures", "result"],
                label=_STR,
                version=_INT,
                input=_DICT,
                expected={"description": "The value the tool must return."},
                error={**_STR, "description": "A substring the error message must contain."},
                error_kind=_STR,
                fixtures={"type": "array", "items": _DICT},
                result={
                    "type": ["object", "null"],
                    "properties": {
                        "passed": _BOOL,
                        "duration_ms": _NUM,
                        "reason": _OPT_STR,
                        "diff": _OPT_STR,
                    },
                },
            ),
        },
        retired={
            "type": "array",
            "items": _obj(["test", "reason"], test=_STR, reason=_STR),
        },
    ),
    "Diff": _obj(
        ["name", "from", "to", "diff"], name=_STR, **{"from": _INT, "to": _INT}, diff=_STR
    ),
    "Step": _obj(
        ["status"],
        status={"enum": ["completed", "empty", "ready", "skipped", "unavailable", "blocked"]},
        blockers={"type": "array", "items": _STR},
        message=_STR,
    ),
    "Decision": _obj(
        ["name", "version", "status", "step"],
        name=_STR,
        version=_OPT_INT,
        status={"type": ["string", "null"]},
        step=ref("Step"),
    ),
    "CallResult": _obj(
        ["ok", "value", "error", "logs", "duration_ms"],
        ok=_BOOL,
        value={},
        error={"oneOf": [{"type": "null"}, ref("ErrorDetail")]},
        logs={"type": "array", "items": _STR},
        duration_ms=_NUM,
    ),
    "CodeRun": _obj(
        ["ok", "value", "error", "logs", "duration_ms", "run_id"],
        ok=_BOOL,
        value={},
        error={"oneOf": [{"type": "null"}, ref("ErrorDetail")]},
        logs={"type": "array", "items": _STR},
        duration_ms=_NUM,
        run_id={
            **_STR,
            "description": "The kept run: a draft's from_run makes it a tool and its first test.",
        },
    ),
    "CreateResult": _obj(
        [
            "status",
            "name",
            "version",
            "findings",
            "test_results",
            "step",
            "duplicate_of",
            "unchanged",
        ],
        status={"enum": ["active", "pending_approval", "rejected", "disabled"]},
        name=_OPT_STR,
        version=_OPT_INT,
        findings=_LIST,
        test_results=_LIST,
        step=ref("Step"),
        duplicate_of=_OPT_STR,
        unchanged=_BOOL,
    ),
    "AuditEntry": _obj(
        ["id", "at", "tool", "version", "event", "actor", "detail"],
        id=_INT,
        at=_STR,
        tool=_STR,
        version=_OPT_INT,
        event=_STR,
        actor=_STR,
        detail=_DICT,
        caller={
            **_STR,
            "description": "Who made the call through code mode's tools: run:<id> or "
            "name@version (absent for a direct call).",
        },
    ),
    "SearchHit": _obj(
        ["name", "version", "description", "status", "strength", "score", "relevance", "matched"],
        name=_STR,
        version=_INT,
        description=_STR,
        status=_STR,
        strength={
            "type": "string",
            "enum": ["strong", "weak"],
            "description": "strong: the tool shares enough of the need, in words or meaning; "
            "weak: only the closest there is (strong hits come first).",
        },
        score={**_NUM, "description": "What the hits are ordered by; higher is better."},
        relevance={
            **_NUM,
            "description": "The share of the query's words (weighted by rarity) the tool has, "
            "0..1; under the relevance floor a hit is weak unless alike in meaning.",
        },
        matched={
            "type": "array",
            "items": _STR,
            "description": "The query's words the tool's name, description or parameters have.",
        },
        similarity={
            **_NUM,
            "description": "Cosine similarity of the query and the tool's name and "
            "description (with the [search] extra only).",
        },
        parameters={
            **_DICT,
            "description": "The tool's parameters (JSON Schema), on the first hit only.",
        },
    ),
    # What the forge accepts, from the declaration it takes its field lists from.
    "Draft": draft_json_schema(),
}

DECIDE_BODY = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"by": _BY, "reason": {"type": "string", "maxLength": 2000}},
}
REJECT_BODY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["reason"],
    "properties": {
        "by": _BY,
        "reason": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": r"\S"},
    },
}
ACTOR_BODY = {"type": "object", "additionalProperties": False, "properties": {"by": _BY}}
ROLLBACK_BODY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["version"],
    "properties": {"version": {"type": "integer", "minimum": 1}, "by": _BY},
}
CALL_BODY = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "args": {"type": "object", "description": "The tool's arguments."},
        "version": {"type": "integer", "minimum": 1, "description": "Default: the current one."},
    },
}
RUN_JS_BODY = {
    "type": "object",
    "additionalProperties": False,
    "required": ["code"],
    "properties": {
        "code": {
            "type": "string",
            "description": "An ES module exporting handler(args) or a default value; "
            "`await tools.NAME(args)` calls the registry's active tools.",
        },
        "args": {"type": "object", "description": "The arguments passed to handler."},
    },
}
DRAFT_BODY = ref("Draft")
# The route only insists on an object: the forge checks the fields and answers every problem
# as a finding of a rejected CreateResult, which tells a model more than a schema error.
DRAFT_ENFORCED = {"type": "object"}
