"""Field checks shared by drafts and their test cases: schemas, capabilities, JSON paths."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from toolfoundry.base.json_schema import InvalidSchema, compile_schema, schema_problems
from toolfoundry.base.lru import SizedLRU, text_cost
from toolfoundry.sandbox.host.hosts import pattern_covered, pattern_problem
from toolfoundry.spec import JSON_SCHEMA_DIALECT, Capabilities, Problem
from toolfoundry.spec.capabilities import KNOWN_CAPABILITIES, StorageScope
from toolfoundry.spec.tool import JsonSchema

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

_IDENT = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


class DraftErrorJson(TypedDict):
    """A refused draft's JSON form: each problem's ``path`` and ``message``."""

    problems: list[dict[str, str]]


class DraftError(ValueError):
    """A draft the forge refuses, carrying every problem found (never just the first)."""

    def __init__(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        self.problems = tuple(problems)
        lines = "; ".join(f"{p.path}: {p.message}" for p in self.problems)
        super().__init__(f"invalid draft ({len(self.problems)} problem(s)): {lines}")

    def to_dict(self) -> DraftErrorJson:
        """JSON-ready form: ``{"problems": [{"path", "message"}, ...]}``."""
        return {"problems": [p.to_dict() for p in self.problems]}


@lru_cache(maxsize=1)
def _meta_validator() -> Draft202012Validator:
    """The 2020-12 meta-schema's validator, built on the first draft checked.

    The meta-schema is the host's own (its patterns are fixed and linear), so Python's
    validator may check a draft's schema against it; the draft's schema itself only ever runs
    in base/json_schema.py. Imported here, not at the top: jsonschema costs a quarter second
    of import under load that opening a foundry or calling a tool never needs.
    """
    from jsonschema import Draft202012Validator

    return Draft202012Validator(Draft202012Validator.META_SCHEMA)


def canonical_json(value: Any) -> str:
    """Compact JSON text of a value (no NaN), the form drafts keep their JSON parts in."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def key_path(base: str, key: str | int) -> str:
    """Extend a JSON path: ``$.a``, ``$.a[2]``, ``$["odd key"]``."""
    if isinstance(key, int):
        return f"{base}[{key}]"
    if _IDENT.match(key):
        return f"{base}.{key}"
    return f"{base}[{json.dumps(key, ensure_ascii=False)}]"


def _error_path(base: str, segments: Iterable[str | int]) -> str:
    for segment in segments:
        base = key_path(base, segment)
    return base


def _remote_refs(schema: object, path: str) -> list[str]:
    found: list[str] = []
    if isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str) and not value.startswith("#"):
                found.append(key_path(path, key))
            found += _remote_refs(value, key_path(path, str(key)))
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            found += _remote_refs(value, key_path(path, i))
    return found


MetaErrors = tuple[tuple[tuple[str | int, ...], str], ...]


def _meta_cost(text: str, errors: MetaErrors) -> int:
    return text_cost(text, *(message for _, message in errors), overhead=512 + 256 * len(errors))


# Cached by canonical text: an agent resubmits the same schema while it fixes its code. By
# bytes: a cache of 256 texts of 1 MB each held 256 MB (150 distinct rejected drafts grew a
# server by 150 MB).
_META_ERRORS: SizedLRU[str, MetaErrors] = SizedLRU(256, 16 * 1024 * 1024, _meta_cost)


def _meta_errors(schema_text: str) -> MetaErrors:
    return _META_ERRORS.get_or_make(
        schema_text,
        lambda: tuple(
            (tuple(e.absolute_path), e.message)
            for e in _meta_validator().iter_errors(json.loads(schema_text))
        ),
    )


def check_schema(
    value: object, path: str, problems: list[Problem], require_object: bool
) -> JsonSchema | None:
    """Meta-validate a JSON Schema (draft 2020-12); returns it when valid, else records why."""
    before = len(problems)
    if not isinstance(value, Mapping):
        problems.append(Problem(path, 'must be a JSON Schema object such as {"type": "object"}'))
        return None
    if require_object and value.get("type") != "object":
        problems.append(
            Problem(path, 'the parameters schema must have "type": "object" at the top level')
        )
    dialect = value.get("$schema")
    if dialect is not None and str(dialect).rstrip("#") != JSON_SCHEMA_DIALECT:
        problems.append(Problem(f"{path}.$schema", f"only {JSON_SCHEMA_DIALECT} is supported"))
    try:
        text = json.dumps(value, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        problems.append(Problem(path, f"must be plain JSON with string keys: {exc}"))
        return None
    for where, message in _meta_errors(text):
        problems.append(Problem(_error_path(path, where), message))
    for ref in _remote_refs(value, path):
        problems.append(Problem(ref, "only local references ('#/...') are allowed"))
    if len(problems) == before:  # well-formed: can it be compiled (patterns, $ref loops)?
        problems += schema_problems(value, path)
    return dict(value) if len(problems) == before else None


def validate_instance(
    instance: object, schema: JsonSchema, path: str, problems: list[Problem]
) -> None:
    """Record every way ``instance`` fails ``schema`` (a schema already meta-validated)."""
    try:
        compiled = compile_schema(schema)
    except InvalidSchema as exc:  # check_schema reports these; never crash here
        problems.append(Problem(path, f"cannot validate against the schema: {exc}"))
        return
    problems += compiled.problems(instance, path)


def check_capabilities(value: object, problems: list[Problem]) -> Capabilities | None:
    """Parse the capabilities field, recording unknown or malformed entries."""
    if value is None:
        return Capabilities()
    if not isinstance(value, Mapping):
        problems.append(Problem("$.capabilities", 'must be an object such as {"network": [...]}'))
        return None
    before = len(problems)
    for key in value:
        if key not in KNOWN_CAPABILITIES:
            problems.append(
                Problem(
                    key_path("$.capabilities", str(key)),
                    f"unknown capability; known: {', '.join(KNOWN_CAPABILITIES)}",
                )
            )
    for field in ("network", "credentials"):
        hosts = value.get(field, [])
        if not isinstance(hosts, list) or not all(isinstance(h, str) and h for h in hosts):
            problems.append(Problem(f"$.capabilities.{field}", "must be a list of host names"))
            continue
        for i, host in enumerate(hosts):
            why = pattern_problem(host)
            if why:
                problems.append(Problem(f"$.capabilities.{field}[{i}]", why))
    storage = value.get("storage", False)
    scopes = {s.value for s in StorageScope}
    named = isinstance(storage, str) and storage in scopes  # a list here is unhashable
    if not isinstance(storage, bool) and not named and storage is not None:
        problems.append(
            Problem("$.capabilities.storage", f"must be true, false or one of {sorted(scopes)}")
        )
    if not isinstance(value.get("system", False), bool):
        problems.append(Problem("$.capabilities.system", "must be true or false"))
    if len(problems) == before:
        network = value.get("network", [])
        for i, host in enumerate(value.get("credentials", [])):
            if not pattern_covered(host, network):
                problems.append(
                    Problem(
                        f"$.capabilities.credentials[{i}]",
                        f"{host!r} is not in capabilities.network; a credential is only sent "
                        "to a host the tool may fetch",
                    )
                )
    if len(problems) > before:
        return None
    try:
        return Capabilities.from_dict(value)
    except ValueError as exc:
        problems.append(Problem("$.capabilities", str(exc)))
        return None
