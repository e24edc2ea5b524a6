"""The one JSON Schema validator for schemas the host does not write: a tool's parameters, its
``returns`` (MCP ``outputSchema``), and everything a draft's tests are checked against.

Agent-made schemas are hostile input. Two rules follow:

- **Patterns are matched in linear time.** ``pattern`` and ``patternProperties`` are
  ECMA-262 regular expressions; they are compiled by jsonschema-rs with Rust's ``regex`` crate
  (a finite-automaton matcher: time linear in the text, whatever the pattern), with the
  ECMAScript meaning of ``\\d``, ``\\w``, ``\\s``, ``.``, ``$`` and ``\\p{...}``. Python's
  ``re`` is never used on such a pattern: it backtracks, cannot be interrupted and holds the
  GIL, so ``(a+)+$`` against 30 characters froze the whole server. The price: lookaround
  (``(?=``, ``(?<=``) and backreferences (``\\1``), which only a backtracking matcher runs, are
  refused when the tool is created, located, with a message saying why.
- **A schema is compiled once, when the tool is created**, and every problem is located:
  a pattern that does not compile, a ``$ref`` that resolves nowhere, a ``$ref`` cycle that
  never consumes any of the value (``{"$ref": "#"}``), a remote reference. Compiled validators
  are cached by the schema's canonical text in a cache bounded by count and by approximate
  bytes, so a long-running server does not grow with every draft it refused.

Problems are located by JSON path (:func:`toolfoundry.base.json_gate.json_path`). The
messages of the common keywords read as they always have (``'text' is a required property``,
``3 is not of type 'string'``, ``'ab!' does not match '^a+$'``); the others are jsonschema-rs's
own.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema_rs

from toolfoundry.base.json_gate import JSON_LIMITS, json_path
from toolfoundry.base.lru import SizedLRU
from toolfoundry.base.problem import Problem

# A compiled pattern's program and its lazy DFA are each capped (the crate's own defaults are
# 10 MiB and 2 MiB): a pattern such as "a{1000}{1000}" is refused at create time, not built.
_PATTERN_BYTES = 2 * 1024 * 1024
_PATTERNS = jsonschema_rs.RegexOptions(size_limit=_PATTERN_BYTES, dfa_size_limit=_PATTERN_BYTES)
# Only compiles (never matches), to tell a lookaround/backreference pattern from a malformed one.
_BACKTRACKING = jsonschema_rs.FancyRegexOptions(
    backtrack_limit=1, size_limit=_PATTERN_BYTES, dfa_size_limit=_PATTERN_BYTES
)
# (?=  (?!  (?<=  (?<!  \1  \k<name>: fixed and linear, so safe for Python's re
_BACKTRACKING_SYNTAX = re.compile(r"\(\?<?[=!]|\\[1-9]|\\k<")
MAX_REFERENCES = 1000  # "$ref"s in one schema: 1 000 chained compile in ~20 ms
CACHE_ENTRIES = 1024
CACHE_BYTES = 64 * 1024 * 1024
_MESSAGE_CHARS = 500  # a message quotes the value; a 1 MB string is not repeated in full
_MAX_COMPILE_PROBLEMS = 20


class InvalidSchema(ValueError):
    """A schema the validator cannot use, with every problem found, located in the schema."""

    def __init__(self, problems: list[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in self.problems))


@dataclass(frozen=True)
class CompiledSchema:
    """A compiled validator for one JSON Schema (draft 2020-12)."""

    validator: jsonschema_rs.Validator
    text: str

    @property
    def recursive(self) -> bool:
        """Whether a ``$ref`` may follow the value down as deep as it goes."""
        return '"$ref"' in self.text or '"$dynamicRef"' in self.text

    def is_valid(self, instance: Any) -> bool:
        """Whether ``instance`` (a JSON value) conforms; False for anything else."""
        return not self._refusal(instance) and self._is_valid(instance)

    def problems(self, instance: Any, at: str = "$") -> list[Problem]:
        """Every way ``instance`` fails the schema, located under the JSON path ``at``, sorted."""
        refusal = self._refusal(instance)
        if refusal:
            return [Problem(at, refusal)]
        if self._is_valid(instance):  # the common case, and the fast one
            return []
        try:
            errors = list(self.validator.iter_errors(instance))
        except ValueError as exc:  # not JSON (a set, bytes, a lone surrogate, an int key)
            return [Problem(at, f"is not a JSON value: {exc}")]
        found = [Problem(at + json_path(e.instance_path)[1:], _message(e)) for e in errors]
        return sorted(found, key=lambda p: (p.path, p.message))

    def _is_valid(self, instance: Any) -> bool:
        try:
            return self.validator.is_valid(instance)
        except ValueError:
            return False

    def _refusal(self, instance: Any) -> str | None:
        # A recursive schema follows the value down in native code, one stack frame per level:
        # 100 000 levels overflow the stack and end the process. The JSON gate's depth holds.
        limit = JSON_LIMITS.max_depth
        if self.recursive and _deeper_than(instance, limit):
            return f"nests deeper than {limit} levels"
        return None


def compile_schema(schema: Mapping[str, Any] | bool) -> CompiledSchema:
    """The compiled validator for ``schema``, from the cache when it was compiled before.

    Raises:
        InvalidSchema: every located reason the schema cannot be used (paths from ``$``).
    """
    text = canonical(schema)
    cached = _CACHE.get(text)
    if cached is not None:
        return cached
    compiled = CompiledSchema(_compile(json.loads(text)), text)
    _CACHE.put(text, compiled)
    return compiled


def schema_problems(schema: Mapping[str, Any] | bool, at: str = "$") -> list[Problem]:
    """Why ``schema`` cannot be compiled (empty when it can), each located under ``at``."""
    try:
        compile_schema(schema)
    except InvalidSchema as exc:
        return [Problem(at + p.path[1:], p.message) for p in exc.problems]
    return []


def canonical(schema: Mapping[str, Any] | bool) -> str:
    """The schema's cache key: sorted keys, no whitespace, exact Unicode."""
    return json.dumps(schema, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# ---- compiling ----


def _compile(schema: Any) -> jsonschema_rs.Validator:
    nodes = list(_subschemas(schema))
    references = sum(1 for _, node in nodes if isinstance(node.get("$ref"), str))
    if references > MAX_REFERENCES:  # compiling n chained references costs ~n² (3 s at 20 000)
        raise InvalidSchema(
            [Problem("$", f"has {references} references; at most {MAX_REFERENCES} are allowed")]
        )
    problems = [Problem(json_path(path), why) for path, why in _ref_loops(nodes)]
    if not problems:
        try:
            return _build(schema)
        except jsonschema_rs.ValidationError as first:
            problems = _compile_problems(schema, first)
        except (jsonschema_rs.ReferencingError, ValueError) as exc:
            problems = [Problem("$", f"cannot compile the schema: {_first_line(str(exc))}")]
    raise InvalidSchema(problems)


def _build(schema: Any) -> jsonschema_rs.Validator:
    # offline: a $ref is never fetched (drafts may only refer inside themselves)
    return jsonschema_rs.Draft202012Validator(schema, pattern_options=_PATTERNS, offline=True)


def _compile_problems(schema: Any, error: jsonschema_rs.ValidationError) -> list[Problem]:
    """Every pattern that does not compile (the compiler stops at the first), then the rest.

    Each bad pattern is blanked in a copy and the copy compiled again, so the compiler itself
    says which strings are patterns (a property named "pattern" is not one).
    """
    problems: list[Problem] = []
    current = schema
    while len(problems) < _MAX_COMPILE_PROBLEMS:
        where = list(error.instance_path)
        pattern = _pattern_at(current, where)
        if error.kind.name != "format" or pattern is None:
            problems.append(Problem(json_path(where), _first_line(error.message)))
            break
        problems.append(Problem(json_path(where), _pattern_message(pattern)))
        current = _without(current, where)
        try:
            _build(current)
            break
        except jsonschema_rs.ValidationError as again:
            error = again
        except (jsonschema_rs.ReferencingError, ValueError) as exc:
            problems.append(Problem("$", f"cannot compile the schema: {_first_line(str(exc))}"))
            break
    return problems


def _pattern_at(schema: Any, where: list[str | int]) -> str | None:
    if len(where) >= 2 and where[-2] == "patternProperties" and isinstance(where[-1], str):
        return where[-1]
    value = _at(schema, where)
    return value if where and where[-1] == "pattern" and isinstance(value, str) else None


def _pattern_message(pattern: str) -> str:
    try:
        if not _BACKTRACKING_SYNTAX.search(pattern):
            raise ValueError(pattern)
        jsonschema_rs.Draft202012Validator({"pattern": pattern}, pattern_options=_BACKTRACKING)
    except (jsonschema_rs.ValidationError, ValueError):
        return (
            f"{pattern!r} is not a valid ECMA-262 regular expression (or compiles to more "
            f"than {_PATTERN_BYTES // (1024 * 1024)} MiB)"
        )
    return (
        f"{pattern!r} uses lookaround or a backreference, which only a backtracking matcher "
        "runs (and one can stall the host); patterns are matched in linear time, so write "
        "it without them, or check this in the handler"
    )


def _at(value: Any, path: list[str | int] | tuple[str, ...]) -> Any:
    for key in path:
        if isinstance(value, Mapping):
            value = value.get(str(key))
        elif isinstance(value, list) and str(key).isdigit() and int(key) < len(value):
            value = value[int(key)]
        else:
            return None
    return value


def _without(schema: Any, path: list[str | int]) -> Any:
    """A copy of ``schema`` with the pattern at ``path`` made harmless: a ``pattern`` value
    becomes ``""``, a ``patternProperties`` key is dropped."""
    if not path:
        return schema
    head, rest = path[0], path[1:]
    if isinstance(schema, list) and isinstance(head, int):
        return [_without(v, rest) if i == head else v for i, v in enumerate(schema)]
    if not isinstance(schema, Mapping):
        return schema
    if not rest and head == "pattern":
        return {**schema, "pattern": ""}
    if not rest:  # a patternProperties key
        return {k: v for k, v in schema.items() if k != head}
    return {k: (_without(v, rest) if k == head else v) for k, v in schema.items()}


# Keywords that apply a subschema to the same value (not to a part of it): a cycle of $refs
# through only these never ends and never consumes anything.
_IN_PLACE = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")


def _ref_loops(
    subschemas: list[tuple[list[str | int], Mapping[str, Any]]],
) -> list[tuple[list[str | int], str]]:
    """``$ref`` chains that come back to where they started without descending into the value.

    One pass over the schema's in-place graph (a ``$ref`` and ``allOf``/``anyOf``/``oneOf``/
    ``not``/``if``/``then``/``else`` reach the same value): a ``$ref`` loops when its target is
    in its own strongly connected component. Linear in the schema's size, so a draft of many
    references cannot make this check itself slow.
    """
    paths: dict[tuple[str, ...], list[str | int]] = {}
    nodes: dict[tuple[str, ...], Mapping[str, Any]] = {}
    for path, node in subschemas:
        key = tuple(map(str, path))
        paths[key], nodes[key] = path, node
    edges = {
        key: [t for t in map(_pointer, _in_place_refs(node, key)) if t is not None and t in nodes]
        for key, node in nodes.items()
    }
    component = _components(edges)
    loops: list[tuple[list[str | int], str]] = []
    for key, node in nodes.items():
        ref = node.get("$ref")
        target = _pointer(ref) if isinstance(ref, str) else None
        if target is not None and target in nodes and component[target] == component[key]:
            loops.append(
                (
                    [*paths[key], "$ref"],
                    f"the reference {ref!r} leads back to itself without applying to any part "
                    "of the value, so it can never be decided",
                )
            )
    return sorted(loops, key=lambda loop: json_path(loop[0]))[:_MAX_COMPILE_PROBLEMS]


def _components(edges: dict[tuple[str, ...], list[tuple[str, ...]]]) -> dict[tuple[str, ...], int]:
    """Strongly connected components (Tarjan's algorithm, iterative: no recursion limit)."""
    index: dict[tuple[str, ...], int] = {}
    low: dict[tuple[str, ...], int] = {}
    component: dict[tuple[str, ...], int] = {}
    stack: list[tuple[str, ...]] = []
    on_stack: set[tuple[str, ...]] = set()
    for root in edges:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            successors = edges[node]
            if i < len(successors):
                work.append((node, i + 1))
                child = successors[i]
                if child not in index:
                    work.append((child, 0))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component[member] = index[node]
                    if member == node:
                        break
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return component


def _in_place_refs(node: Mapping[str, Any], at: tuple[str, ...]) -> Iterator[str]:
    if isinstance(node.get("$ref"), str):
        yield str(node["$ref"])
    # an in-place subschema reaches the same value: treat it as a pointer to itself
    for key in _IN_PLACE:
        branches = node.get(key)
        for i, sub in enumerate(branches if isinstance(branches, list) else ()):
            if isinstance(sub, Mapping):
                yield _as_ref((*at, key, str(i)))
    for key in _IN_PLACE_ONE:
        if isinstance(node.get(key), Mapping):
            yield _as_ref((*at, key))


def _as_ref(path: tuple[str, ...]) -> str:
    return "#" + "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in path)


def _pointer(ref: str) -> tuple[str, ...] | None:
    if ref == "#":
        return ()
    if not ref.startswith("#/"):
        return None  # an anchor ("#name"): the compiler resolves it; no loop check
    return tuple(p.replace("~1", "/").replace("~0", "~") for p in ref[2:].split("/"))


def _subschemas(schema: Any) -> Iterator[tuple[list[str | int], Mapping[str, Any]]]:
    """Every object in the schema document with its path (iterative: depth is the gate's)."""
    stack: list[tuple[list[str | int], Any]] = [([], schema)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, Mapping):
            yield path, node
            stack.extend(([*path, k], v) for k, v in node.items() if k not in ("enum", "const"))
        elif isinstance(node, list):
            stack.extend(([*path, i], v) for i, v in enumerate(node))


def _deeper_than(value: Any, limit: int) -> bool:
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, (list, tuple)):
            children = node
        else:
            continue
        if depth >= limit:
            return True
        stack.extend(
            (child, depth + 1) for child in children if isinstance(child, (dict, list, tuple))
        )
    return False


# ---- messages ----


def _message(error: jsonschema_rs.ValidationError) -> str:
    kind = error.kind
    if isinstance(kind, jsonschema_rs.ValidationErrorKind.Required):
        text = f"{kind.property!r} is a required property"
    elif isinstance(kind, jsonschema_rs.ValidationErrorKind.Type):
        text = f"{_short(error.instance)} is not of type {', '.join(map(repr, kind.types))}"
    elif isinstance(kind, jsonschema_rs.ValidationErrorKind.Pattern):
        text = f"{_short(error.instance)} does not match {kind.pattern!r}"
    else:
        text = error.message
    return text if len(text) <= _MESSAGE_CHARS else text[: _MESSAGE_CHARS - 1] + "…"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:79] + "…"


def _first_line(text: str) -> str:
    return text.strip().split("\n", 1)[0]


# ---- the cache ----


def _cost(key: str, _: CompiledSchema) -> int:
    # the text (key and CompiledSchema.text are one object) plus the compiled keywords and
    # regex programs, which cost a few times the text
    return 4 * len(key) + 4096


_CACHE: SizedLRU[str, CompiledSchema] = SizedLRU(CACHE_ENTRIES, CACHE_BYTES, _cost)
