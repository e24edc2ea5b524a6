"""Map arguments a model produced under a projection back to the ToolSpec's own schema.

Two projections change the argument space. OpenAI strict mode makes every optional property
required-but-nullable, so ``null`` there means "left out" (and the declared default applies).
Gemini sends non-string enum values as strings. Everything else passes through unchanged:
``restore_arguments`` is the identity for arguments already valid for the ToolSpec.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolfoundry.base.json_schema import InvalidSchema, compile_schema
from toolfoundry.catalog.gemini_schema import enum_string
from toolfoundry.catalog.schema_transform import accepts_null, definitions, resolve_ref


def restore_arguments(
    format: str, parameters: Mapping[str, Any], arguments: Mapping[str, Any]
) -> dict[str, Any]:
    """Arguments valid for a projection of ``parameters``, mapped back to ``parameters``.

    Args:
        format: the projection the model saw (``openai``, ``responses``, ``gemini``, ...).
        parameters: the ToolSpec's own parameters JSON Schema.
        arguments: what the model sent.

    Returns:
        A new dict: ``null`` for an optional property that does not itself accept ``null`` is
        dropped (every format: a model writing ``null`` means "not given"), and for Gemini,
        stringified enum values become the declared values again.
    """
    root = dict(parameters)
    walker = _Restorer(root, unstring_enums=format == "gemini")
    restored = walker.value(root, dict(arguments), frozenset())
    return dict(restored)


class _Restorer:
    def __init__(self, root: dict[str, Any], *, unstring_enums: bool) -> None:
        self.defs = definitions(root)
        # a branch is checked with the root's definitions beside it, so its "#/$defs/..." resolve
        self.root_defs: dict[str, Any] = {k: root[k] for k in ("$defs", "definitions") if k in root}
        self.unstring_enums = unstring_enums

    def value(self, schema: Any, value: Any, seen: frozenset[str]) -> Any:
        if not isinstance(schema, Mapping):
            return value
        if "$ref" in schema:
            ref = str(schema["$ref"])
            if ref in seen:  # a reference cycle that consumes no part of the value
                return value
            return self.value(resolve_ref(ref, self.defs), value, seen | {ref})
        if self.unstring_enums and isinstance(value, str):
            value = self._unstring(schema, value)
        if isinstance(value, dict) and isinstance(schema.get("properties"), Mapping):
            return self._object(schema, value)
        if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
            return [self.value(schema["items"], v, frozenset()) for v in value]
        if isinstance(value, list) and isinstance(schema.get("prefixItems"), list):
            slots = schema["prefixItems"]
            return [self.value(s, v, frozenset()) for s, v in zip(slots, value, strict=False)] + (
                value[len(slots) :]
            )
        for key in ("anyOf", "oneOf"):
            if isinstance(schema.get(key), list):
                return self._branches(schema[key], value)
        return value

    def _object(self, schema: Mapping[str, Any], value: dict[str, Any]) -> dict[str, Any]:
        props: Mapping[str, Any] = schema["properties"]
        required = set(schema.get("required", ()))
        out: dict[str, Any] = {}
        for key, item in value.items():
            sub = props.get(key)
            if sub is None:
                out[key] = item
            elif item is None and key not in required and not accepts_null(sub, self.defs):
                continue
            else:
                out[key] = self.value(sub, item, frozenset())
        return out

    def _branches(self, branches: list[Any], value: Any) -> Any:
        for branch in branches:
            candidate = self.value(branch, value, frozenset())
            if self._accepts(branch, candidate):
                return candidate
        return value

    def _accepts(self, branch: Any, value: Any) -> bool:
        # The one validator of agent-made schemas: a hostile pattern is matched in linear time.
        try:
            return compile_schema({**self.root_defs, "allOf": [branch]}).is_valid(value)
        except InvalidSchema:
            return False

    def _unstring(self, schema: Mapping[str, Any], value: str) -> Any:
        choices = list(schema.get("enum", ())) + ([schema["const"]] if "const" in schema else [])
        if value in choices:
            return value
        for choice in choices:
            if not isinstance(choice, str) and enum_string(choice) == value:
                return choice
        return value
