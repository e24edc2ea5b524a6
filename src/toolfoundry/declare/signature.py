"""A function signature as one pydantic model: the schema a model sees and the validator it meets.

The same model produces the JSON Schema and validates call arguments, so the two cannot
disagree. Rules, each tested:

- Every parameter is keyword-addressable and annotated; ``*args``, ``**kwargs`` and
  positional-only parameters are refused (a JSON object has only names).
- A parameter without a default is required; ``X | None`` without a default is required
  and nullable.
- Descriptions: an ``Annotated[..., Field(description=...)]`` description wins over the
  docstring's, because it sits on the type itself; otherwise the docstring's is used.
- A parameter whose type is a pydantic model, dataclass or TypedDict stays *nested* under
  its own name (never flattened), so a call is always ``{"param": {...}}``.
- Defaults: a default with an exact JSON form is written as ``default`` in that form
  (datetime -> ISO 8601 string, Path -> string, Enum -> its value, tuple -> array). A default
  without one (a sentinel object, nan/inf, a function) is left out of the schema; the
  parameter stays optional and the function applies its own default. A JSON default that
  contradicts its own type (``x: int = None``) is refused.
- Validation is strict, in JSON mode: ``"25"`` is not an integer, ``1`` is not a boolean,
  exactly as the JSON Schema says.
"""

from __future__ import annotations

import inspect
import json
import math
import typing
import warnings
from collections.abc import Callable, Mapping
from typing import Annotated, Any

import pydantic_core
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    create_model,
)
from pydantic.errors import PydanticSchemaGenerationError, PydanticUserError
from pydantic.fields import FieldInfo
from pydantic.json_schema import PydanticJsonSchemaWarning

from toolfoundry.base.json_schema import InvalidSchema, compile_schema
from toolfoundry.declare.docstrings import DocInfo
from toolfoundry.declare.errors import DeclarationError
from toolfoundry.declare.pyschema import clean_schema
from toolfoundry.spec import Problem

_KIND_FIX = {
    inspect.Parameter.VAR_POSITIONAL: "*args cannot be described as JSON; "
    "replace it with a named list parameter such as `items: list[str]`",
    inspect.Parameter.VAR_KEYWORD: "**kwargs cannot be described as JSON; "
    "replace it with named parameters or one `options: dict[str, str]` parameter",
    inspect.Parameter.POSITIONAL_ONLY: "positional-only parameters have no name a model "
    "can send; remove the '/' from the signature",
}


class ArgumentsModel:
    """The pydantic model of a function's parameters, its JSON Schema, and its validator.

    Args:
        fn: the function (sync or async).
        label: how errors name the tool (its tool name).
        docs: the parsed docstring, for parameter descriptions.
    """

    def __init__(self, fn: Callable[..., Any], label: str, docs: DocInfo) -> None:
        self.label = label
        hints = resolve_hints(fn, label)
        signature = inspect.signature(fn)
        fields: dict[str, Any] = {}
        self._aliases: dict[str, str] = {}
        self._sets: set[str] = set()
        for index, param in enumerate(signature.parameters.values()):
            internal = f"p{index}"
            self._aliases[internal] = param.name
            fields[internal] = self._field(param, hints, docs)
        unknown = sorted(set(docs.params) - set(signature.parameters))
        if unknown:
            raise DeclarationError(
                f"{label}: the docstring documents {unknown}, which the signature does not "
                "have; fix the docstring or the signature so they agree"
            )
        try:
            self.model: type[BaseModel] = create_model(
                f"{label}_arguments",
                __config__=ConfigDict(extra="forbid"),
                **fields,
            )
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
                raw = self.model.model_json_schema()
        except (PydanticUserError, TypeError, NameError) as exc:
            # name the parameter that cannot be described: each is tried alone only now, as
            # building a schema per parameter first cost as much as the model's own (serve
            # builds the meta-tools at start-up)
            for param in signature.parameters.values():
                check_describable(hints[param.name], f"{label}: parameter {param.name!r}")
            raise DeclarationError(f"{label}: cannot describe the parameters: {exc}") from exc
        self.schema = self._finish(raw)

    @property
    def names(self) -> list[str]:
        """Parameter names in declaration order."""
        return list(self._aliases.values())

    def _field(
        self, param: inspect.Parameter, hints: Mapping[str, Any], docs: DocInfo
    ) -> tuple[Any, FieldInfo]:
        where = f"{self.label}: parameter {param.name!r}"
        if param.kind in _KIND_FIX:
            raise DeclarationError(f"{where}: {_KIND_FIX[param.kind]}")
        if param.name not in hints:
            raise DeclarationError(
                f"{where} has no type annotation; annotate it (e.g. `{param.name}: str`) "
                "so its JSON Schema can be derived"
            )
        annotation = hints[param.name]
        if isinstance(param.default, FieldInfo):
            raise DeclarationError(
                f"{where}: a pydantic Field() as the default value would also be the default "
                "of a direct call; write `Annotated[T, Field(...)] = value` instead"
            )
        if typing.get_origin(_bare(annotation)) in (set, frozenset):
            self._sets.add(param.name)
        has_own_description = any(
            isinstance(meta, FieldInfo) and meta.description
            for meta in typing.get_args(annotation)[1:]
        )
        extra: dict[str, Any] = {"alias": param.name}
        if not has_own_description and param.name in docs.params:
            extra["description"] = docs.params[param.name]
        if param.default is inspect.Parameter.empty:
            return annotation, Field(**extra)
        return annotation, Field(param.default, **extra)

    def _finish(self, raw: dict[str, Any]) -> dict[str, Any]:
        cleaned = clean_schema(raw)
        properties: dict[str, Any] = cleaned.get("properties", {})
        defs = cleaned.get("$defs")
        for name, prop in properties.items():
            if "default" not in prop:
                continue
            if not _is_exact_json(prop["default"]):
                del prop["default"]
                continue
            check = {**prop, "$defs": defs} if defs else prop
            rejected = _default_rejected(check, prop["default"])
            if rejected is not None:
                raise DeclarationError(
                    f"{self.label}: parameter {name!r} has default {prop['default']!r}, which "
                    f"its own type rejects ({rejected}); fix the annotation "
                    f"(e.g. `T | None = None`) or the default"
                )
        schema: dict[str, Any] = {"type": "object", "properties": properties}
        if cleaned.get("required"):
            schema["required"] = cleaned["required"]
        schema["additionalProperties"] = False
        if defs:
            schema["$defs"] = defs
        return schema

    def validate(self, arguments: object) -> dict[str, Any] | list[Problem]:
        """Validate JSON arguments; return keyword arguments for the call, or every problem.

        Only arguments the caller sent are returned: the function applies its own defaults.
        """
        if not isinstance(arguments, Mapping):
            return [Problem("$", f"arguments must be a JSON object, not {_json_type(arguments)}")]
        try:
            data = pydantic_core.to_json(arguments)
        except pydantic_core.PydanticSerializationError as exc:
            return [Problem("$", f"arguments must be JSON values: {exc}")]
        # JSON Schema's uniqueItems rejects duplicates, where a Python set would drop them.
        duplicates = [
            Problem(json_path([name]), "items must be unique (this is a set)")
            for name in self._sets
            if _has_duplicates(arguments.get(name))
        ]
        try:
            instance = self.model.model_validate_json(data, strict=True)
        except ValidationError as exc:
            return duplicates + problems_from(exc, arguments, self.names)
        if duplicates:
            return duplicates
        return {self._aliases[k]: getattr(instance, k) for k in instance.model_fields_set}


def resolve_hints(fn: Callable[..., Any], label: str) -> dict[str, Any]:
    """Type hints with string annotations resolved in the function's globals."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn).__call__
    try:
        return typing.get_type_hints(target, include_extras=True)
    except (NameError, TypeError, AttributeError) as exc:
        raise DeclarationError(
            f"{label}: cannot resolve the type annotations ({exc}); define every type at "
            "module level, where the function's globals can see it"
        ) from exc


def check_describable(annotation: Any, where: str) -> None:
    """Raise DeclarationError when pydantic cannot validate or describe ``annotation``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PydanticJsonSchemaWarning)
            TypeAdapter(annotation).json_schema()
    except (PydanticUserError, TypeError, NameError) as exc:
        first = str(exc).strip().splitlines()[0]
        if isinstance(exc, PydanticSchemaGenerationError):
            first = "pydantic has no schema for it"
        raise DeclarationError(
            f"{where} has type {_type_name(annotation)}, which cannot be described as JSON "
            f"({first}); use JSON-shaped types: str, int, float, bool, list, dict, Literal, "
            "Enum, dataclasses, TypedDict or pydantic models"
        ) from exc


def _bare(annotation: Any) -> Any:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _has_duplicates(value: Any) -> bool:
    if not isinstance(value, list):
        return False
    return len({json.dumps(item, sort_keys=True, default=repr) for item in value}) != len(value)


def _type_name(annotation: Any) -> str:
    return getattr(annotation, "__name__", None) or repr(annotation)


def _default_rejected(schema: dict[str, Any], default: Any) -> str | None:
    """Why ``default`` fails its parameter's own schema, or None when it passes.

    The one validator (base/json_schema) answers; a schema it refuses (a Python ``pattern``
    with lookaround, which agent-made tools may not use but a declared one may) is checked by
    jsonschema instead, loaded only then: declaring a function does not pay for it.
    """
    try:
        problems = compile_schema(schema).problems(default)
    except InvalidSchema:
        import jsonschema

        errors = list(jsonschema.Draft202012Validator(schema).iter_errors(default))
        return errors[0].message if errors else None
    return problems[0].message if problems else None


def _is_exact_json(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return False
    return not (isinstance(value, float) and math.isnan(value))


def _json_type(value: object) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if value is None:
        return "null"
    return type(value).__name__


def json_path(parts: list[str | int]) -> str:
    """``["items", 2, "id"]`` -> ``$.items[2].id`` (bracketed quotes for unusual keys)."""
    out = "$"
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}"
        else:
            out += "[" + json.dumps(part, ensure_ascii=False) + "]"
    return out


def problems_from(error: ValidationError, arguments: Any, names: list[str]) -> list[Problem]:
    """Every validation error as a Problem located by its path in the caller's arguments.

    pydantic's locations also name union members (``int``, ``list[str]``); those are not
    part of the data, so the path is found by walking the arguments themselves.
    """
    merged: dict[str, list[str]] = {}
    for item in error.errors(include_url=False):
        loc = list(item["loc"])
        parts = _data_path(loc, arguments, item["type"])
        message = _message(item["type"], item["msg"], parts, names)
        bucket = merged.setdefault(json_path(parts), [])
        if message not in bucket:
            bucket.append(message)
    return [Problem(path, "; or ".join(msgs)) for path, msgs in merged.items()]


def _data_path(loc: list[str | int], value: Any, kind: str) -> list[str | int]:
    parts: list[str | int] = []
    for i, step in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(value, Mapping) and isinstance(step, str):
            if step in value:
                parts.append(step)
                value = value[step]
            elif last and kind == "missing":
                parts.append(step)
                value = None
        elif isinstance(value, list) and isinstance(step, int):
            if 0 <= step < len(value):
                parts.append(step)
                value = value[step]
            elif last and kind == "missing":
                parts.append(step)
                value = None
    return parts


def _message(kind: str, msg: str, parts: list[str | int], names: list[str]) -> str:
    top = len(parts) == 1
    if kind == "missing":
        if parts and isinstance(parts[-1], int):
            return "item is missing"
        return "required argument is missing" if top else "required field is missing"
    if kind == "extra_forbidden":
        if top:
            return f"unknown argument; this tool takes: {', '.join(names) or 'no arguments'}"
        return "unknown field"
    return msg
