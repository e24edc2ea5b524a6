"""ToolSpec: the one data model every declaration becomes and every catalog renders."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NotRequired

from typing_extensions import TypedDict

from toolfoundry.spec.capabilities import Capabilities, CapabilitiesJson
from toolfoundry.spec.names import validate_spec_name

JSON_SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
# Example arguments a spec carries (from its tool's passing tests): catalogues that take them
# (Anthropic's input_examples) show at most this many.
MAX_EXAMPLES = 3
# A JSON Schema document as parsed JSON: a tool's parameters, its returns, a catalogue's form.
JsonSchema = dict[str, Any]


class ToolSpecJson(TypedDict):
    """A spec's JSON form (:meth:`ToolSpec.to_dict`): an optional field is absent when unset."""

    name: str
    description: str
    parameters: JsonSchema
    level: str
    capabilities: CapabilitiesJson
    version: NotRequired[int]
    group: NotRequired[str]
    returns: NotRequired[JsonSchema | None]
    read_only: NotRequired[bool]
    examples: NotRequired[list[dict[str, Any]]]
    calls_tools: NotRequired[bool]


class Level(StrEnum):
    """Primitives do one thing with no reasoning; workflows run fixed steps over shared state."""

    PRIMITIVE = "primitive"
    WORKFLOW = "workflow"


def _examples_text(name: str, examples: Sequence[Mapping[str, Any]] | None) -> str | None:
    if not examples:
        return None
    if len(examples) > MAX_EXAMPLES or not all(isinstance(e, Mapping) for e in examples):
        raise ValueError(f"tool {name!r}: examples are at most {MAX_EXAMPLES} argument objects")
    return json.dumps(
        [dict(e) for e in examples], ensure_ascii=False, separators=(",", ":"), allow_nan=False
    )


def _canonical(schema: Mapping[str, Any] | None) -> str | None:
    if schema is None:
        return None
    # sort_keys is deliberately off: property order is meaningful to models and to people.
    return json.dumps(schema, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class Param:
    """One parameter, as a read-only view over the tool's JSON Schema."""

    name: str
    schema: Mapping[str, Any]
    required: bool

    @property
    def description(self) -> str | None:
        value = self.schema.get("description")
        return value if isinstance(value, str) else None

    @property
    def has_default(self) -> bool:
        return "default" in self.schema

    @property
    def default(self) -> Any:
        return self.schema.get("default")

    @property
    def enum(self) -> list[Any] | None:
        value = self.schema.get("enum")
        return list(value) if isinstance(value, list) else None


@dataclass(frozen=True, init=False)
class ToolSpec:
    """An immutable tool description.

    ``parameters`` is a JSON Schema (draft 2020-12) of ``type: object``. It is stored as
    canonical JSON, so reading it always gives a fresh copy and a spec cannot be mutated
    through a shared dict.

    ``calls_tools`` says the tool calls other tools (``call_tool``, ``run_js``): what a call
    may reach is then also what those tools reach, each under its own approval, however pure
    its own ``capabilities`` are.
    """

    name: str
    description: str
    level: Level
    capabilities: Capabilities
    version: int | None
    group: str | None
    read_only: bool | None
    calls_tools: bool
    _parameters: str = field(repr=False)
    _returns: str | None = field(repr=False)
    _examples: str | None = field(repr=False)

    def __init__(
        self,
        name: str,
        description: str,
        parameters: Mapping[str, Any] | None = None,
        *,
        level: Level | str = Level.PRIMITIVE,
        capabilities: Capabilities | Mapping[str, Any] | None = None,
        version: int | None = None,
        returns: Mapping[str, Any] | None = None,
        group: str | None = None,
        read_only: bool | None = None,
        examples: Sequence[Mapping[str, Any]] | None = None,
        calls_tools: bool = False,
    ) -> None:
        validate_spec_name(name)
        if not isinstance(description, str) or not description.strip():
            raise ValueError(f"tool {name!r} needs a non-empty description")
        schema = (
            dict(parameters) if parameters is not None else {"type": "object", "properties": {}}
        )
        if schema.get("type") != "object":
            raise ValueError(f"tool {name!r}: parameters must be a JSON Schema with type 'object'")
        if not isinstance(capabilities, Capabilities):
            capabilities = Capabilities.from_dict(capabilities)
        if version is not None and (not isinstance(version, int) or version < 1):
            raise ValueError(f"tool {name!r}: version must be a positive integer")
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "description", description.strip())
        set_(self, "level", Level(level))
        set_(self, "capabilities", capabilities)
        set_(self, "version", version)
        set_(self, "group", group)
        set_(self, "read_only", read_only)
        set_(self, "calls_tools", bool(calls_tools))
        set_(self, "_parameters", _canonical(schema))
        set_(self, "_returns", _canonical(returns))
        set_(self, "_examples", _examples_text(name, examples))

    @property
    def parameters(self) -> dict[str, Any]:
        """The parameters JSON Schema (a fresh copy on every access)."""
        value: dict[str, Any] = json.loads(self._parameters)
        return value

    @property
    def returns(self) -> dict[str, Any] | None:
        """JSON Schema of the return value, when the declaration states it."""
        return None if self._returns is None else json.loads(self._returns)

    @property
    def examples(self) -> list[dict[str, Any]]:
        """Example arguments (at most :data:`MAX_EXAMPLES`), each accepted by ``parameters``;
        empty when the declaration has none."""
        return [] if self._examples is None else json.loads(self._examples)

    @property
    def is_read_only(self) -> bool:
        """Whether calling the tool leaves the world unchanged.

        An explicit ``read_only`` wins; otherwise a sandboxed tool with no capabilities that
        calls no other tool is read-only, since it can reach nothing it could change.
        """
        if self.read_only is not None:
            return self.read_only
        return self.capabilities.is_pure and not self.calls_tools

    @property
    def params(self) -> tuple[Param, ...]:
        """Top-level parameters in declaration order."""
        schema = self.parameters
        required = set(schema.get("required", ()))
        props: dict[str, Any] = schema.get("properties", {})
        return tuple(Param(n, s, n in required) for n, s in props.items())

    def replace(self, **changes: Any) -> ToolSpec:
        """A copy with some fields changed (the spec itself never changes)."""
        current: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "level": self.level,
            "capabilities": self.capabilities,
            "version": self.version,
            "returns": self.returns,
            "group": self.group,
            "read_only": self.read_only,
            "examples": self.examples or None,
            "calls_tools": self.calls_tools,
        }
        current.update(changes)
        name = current.pop("name")
        description = current.pop("description")
        parameters = current.pop("parameters")
        return ToolSpec(name, description, parameters, **current)

    def to_dict(self) -> ToolSpecJson:
        out: ToolSpecJson = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
            "level": self.level.value,
            "capabilities": self.capabilities.to_dict(),
        }
        if self.version is not None:
            out["version"] = self.version
        if self.group is not None:
            out["group"] = self.group
        if self._returns is not None:
            out["returns"] = self.returns
        if self.read_only is not None:
            out["read_only"] = self.read_only
        if self._examples is not None:
            out["examples"] = self.examples
        if self.calls_tools:
            out["calls_tools"] = True
        return out
