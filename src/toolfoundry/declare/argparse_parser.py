"""Declarations from argparse parsers: one tool per leaf command, called through the parser.

    parser = argparse.ArgumentParser(prog="board")
    sub = parser.add_subparsers()
    posts = sub.add_parser("posts", help="Query a public board's feed")
    posts.add_argument("board")
    posts.add_argument("--sort", choices=("hot", "new"), default="hot")
    posts.set_defaults(func=run_posts)
    [cmd] = from_argparse(parser)          # cmd.spec.name == "board_posts"
    cmd.call({"board": "python", "sort": "new"})

The parser is the single source of truth: the JSON Schema is read from its actions, and a
call turns the JSON arguments back into argv and runs ``parse_args`` on that same parser.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import io
import json
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema

from toolfoundry.declare.argparse_schema import ArgumentSlot, parser_slots, tidy
from toolfoundry.declare.errors import DeclarationError
from toolfoundry.spec import (
    CallResult,
    Capabilities,
    ErrorKind,
    InvalidName,
    Level,
    Problem,
    ToolSpec,
    validate_name,
)

Handler = Callable[[argparse.Namespace], Any]

# argparse reports errors by printing to sys.stderr and exiting; redirecting the process-wide
# stream is the only way to capture that without altering the caller's parser.
_PARSE_LOCK = threading.Lock()
_ERROR_LINE = re.compile(r"^[^\n]*?: error: (?P<message>.*)$", re.MULTILINE | re.DOTALL)
_ARGUMENT = re.compile(r"^argument (?P<name>[^:]+): (?P<rest>.*)$", re.DOTALL)
_REQUIRED = "the following arguments are required: "


class ArgumentsRejected(ValueError):
    """The JSON arguments (or the parser) refused a call; ``problems`` lists every reason."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(f"{p.path}: {p.message}" for p in problems))
        self.problems = tuple(problems)


class ArgparseCommand:
    """One leaf command of a parser, satisfying :class:`toolfoundry.spec.DeclaredTool`.

    Attributes:
        parser: the root parser the command was read from (calls go through it).
        words: the subcommand words from the root to this command (empty for a lone parser).
        handler: what receives the parsed Namespace, or None.
    """

    def __init__(
        self,
        spec: ToolSpec,
        parser: argparse.ArgumentParser,
        words: tuple[str, ...],
        levels: tuple[tuple[ArgumentSlot, ...], ...],
        exclusive: tuple[tuple[bool, tuple[str, ...]], ...],
        handler: Handler | None,
    ) -> None:
        self._spec = spec
        self.parser = parser
        self.words = words
        self.handler = handler
        self._levels = levels
        self._exclusive = exclusive
        self._slots = {s.name: s for level in levels for s in level}
        self._validator = jsonschema.Draft202012Validator(spec.parameters)

    @property
    def spec(self) -> ToolSpec:
        """The command's ToolSpec."""
        return self._spec

    def __repr__(self) -> str:
        return f"ArgparseCommand({self._spec.name!r}, words={self.words!r})"

    def problems(self, arguments: Any) -> list[Problem]:
        """Every problem with ``arguments``: schema violations and exclusive-group conflicts."""
        if not isinstance(arguments, Mapping):
            return [Problem("$", f"arguments must be an object, not {type(arguments).__name__}")]
        found: list[Problem] = []
        known = list(self._slots)
        for error in self._validator.iter_errors(dict(arguments)):
            found.extend(_schema_problems(error, arguments, known))
        for required, names in self._exclusive:
            given = [n for n in names if _present(self._slots[n], arguments.get(n))]
            if len(given) > 1:
                for name in given[1:]:
                    found.append(Problem(f"$.{name}", f"not allowed with {given[0]!r}"))
            elif required and not given:
                found.append(Problem("$", f"exactly one of {', '.join(names)} is required"))
        return sorted(set(found), key=lambda p: (p.path, p.message))

    def to_argv(self, arguments: Mapping[str, Any]) -> list[str]:
        """The argv a shell user would type for ``arguments`` (assumed valid)."""
        argv: list[str] = []
        for depth, level in enumerate(self._levels):
            if depth:
                argv.append(self.words[depth - 1])
            prefix = self._parser_at(depth).prefix_chars
            positionals: list[str] = []
            open_ended = False  # an option with nargs '*'/'+' would swallow what follows
            for slot in level:
                if slot.name not in arguments:
                    continue
                value = arguments[slot.name]
                if slot.positional:
                    positionals.extend(slot.positional_tokens(value))
                else:
                    argv.extend(slot.tokens(value, prefix))
                    open_ended = open_ended or slot.action.nargs in ("*", "+")
            leaf = depth == len(self._levels) - 1
            dashed = any(t[:1] and t[0] in prefix for t in positionals)
            if leaf and positionals and (dashed or open_ended):
                argv.append("--")
            argv.extend(positionals)
        return argv

    def parse(self, arguments: Mapping[str, Any]) -> argparse.Namespace:
        """Validate ``arguments`` and parse them through the real parser.

        Raises:
            ArgumentsRejected: listing every problem, from the schema or from argparse.
        """
        found = self.problems(arguments)
        if found:
            raise ArgumentsRejected(found)
        return self._parse_argv(self.to_argv(arguments))

    def call(self, arguments: Mapping[str, Any]) -> CallResult:
        """Parse ``arguments`` through the parser and run the handler; never raises."""
        started = time.perf_counter()
        prepared = self._prepare(arguments, started)
        if isinstance(prepared, CallResult):
            return prepared
        handler, namespace = prepared
        try:
            value = handler(namespace)
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
        except BaseException as exc:
            return self._failed(exc, started)
        return self._finish(value, started)

    async def acall(self, arguments: Mapping[str, Any]) -> CallResult:
        """Async :meth:`call`: async handlers are awaited, sync ones run in a worker thread."""
        started = time.perf_counter()
        prepared = self._prepare(arguments, started)
        if isinstance(prepared, CallResult):
            return prepared
        handler, namespace = prepared
        try:
            if inspect.iscoroutinefunction(handler):
                value = await handler(namespace)
            else:
                value = await asyncio.to_thread(handler, namespace)
                if inspect.isawaitable(value):
                    value = await value
        except BaseException as exc:
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt):
                raise
            return self._failed(exc, started)
        return self._finish(value, started)

    def _prepare(
        self, arguments: Mapping[str, Any], started: float
    ) -> tuple[Handler, argparse.Namespace] | CallResult:
        try:
            namespace = self.parse(arguments)
        except ArgumentsRejected as exc:
            message = f"invalid arguments for {self._spec.name}: {exc}"
            return CallResult.failure(
                ErrorKind.INVALID_ARGUMENTS,
                message,
                problems=exc.problems,
                duration_ms=_ms(started),
            )
        if self.handler is None:
            message = (
                f"{self._spec.name} has no handler: pass handler= to from_argparse or "
                "set_defaults(func=...) on its parser"
            )
            return CallResult.failure(ErrorKind.RUNTIME_ERROR, message, duration_ms=_ms(started))
        return self.handler, namespace

    def _failed(self, exc: BaseException, started: float) -> CallResult:
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return CallResult.success(None, duration_ms=_ms(started))
        if isinstance(exc, KeyboardInterrupt):
            raise exc
        message = f"{self._spec.name} failed: {type(exc).__name__}: {exc}"
        return CallResult.failure(ErrorKind.RUNTIME_ERROR, message, duration_ms=_ms(started))

    def _finish(self, value: Any, started: float) -> CallResult:
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            message = f"{self._spec.name} returned a value that is not JSON: {exc}"
            return CallResult.failure(ErrorKind.RUNTIME_ERROR, message, duration_ms=_ms(started))
        return CallResult.success(value, duration_ms=_ms(started))

    def _parser_at(self, depth: int) -> argparse.ArgumentParser:
        parser = self.parser
        for word in self.words[:depth]:
            parser = _subparsers(parser).choices[word]  # type: ignore[union-attr]
        return parser

    def _parse_argv(self, argv: list[str]) -> argparse.Namespace:
        captured = io.StringIO()
        with (
            _PARSE_LOCK,
            contextlib.redirect_stderr(captured),
            contextlib.redirect_stdout(captured),
        ):
            try:
                return self.parser.parse_args(argv)
            except SystemExit:
                problems = self._argparse_problems(captured.getvalue())
            except argparse.ArgumentError as exc:  # parsers built with exit_on_error=False
                problems = self._argparse_problems(f"x: error: {exc}")
            except Exception as exc:  # a type= callable raising something argparse lets through
                problems = [Problem("$", f"{type(exc).__name__}: {exc}")]
        raise ArgumentsRejected(problems)

    def _argparse_problems(self, output: str) -> list[Problem]:
        match = _ERROR_LINE.search(output)
        message = match.group("message").strip() if match else output.strip() or "rejected"
        names = {
            argparse._get_action_name(a): s.name for s in self._slots.values() for a in s.actions
        }
        if message.startswith(_REQUIRED):
            missing = message[len(_REQUIRED) :].split(", ")
            return [Problem(_path(names.get(m)), "is required") for m in missing]
        argument = _ARGUMENT.match(message)
        if argument:
            return [Problem(_path(names.get(argument["name"])), argument["rest"])]
        return [Problem("$", message)]


async def _awaited(value: Any) -> Any:
    return await value


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0


def _path(name: str | None) -> str:
    return f"$.{name}" if name else "$"


def _present(slot: ArgumentSlot, value: Any) -> bool:
    """Whether ``value`` puts anything on the command line (what argparse's groups count)."""
    if value is None or slot.positional:
        return value is not None
    try:
        return bool(slot.tokens(value, "-"))
    except (TypeError, ValueError):
        return True  # a value of the wrong shape, already reported by the schema


def _schema_problems(
    error: jsonschema.ValidationError, arguments: Mapping[str, Any], known: list[str]
) -> list[Problem]:
    where = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path)
    if error.validator == "required":
        missing = [r for r in error.validator_value if r not in arguments]  # type: ignore[union-attr]
        return [Problem(f"{where}.{m}", "is required") for m in missing]
    if error.validator == "additionalProperties" and where == "$":
        extra = [k for k in arguments if k not in known]
        hint = f"known parameters: {', '.join(known)}" if known else "this command takes none"
        return [Problem(f"$.{k}", f"unknown parameter; {hint}") for k in extra]
    return [Problem(where, error.message)]


def _subparsers(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None


def from_argparse(
    parser: argparse.ArgumentParser,
    *,
    name: str | None = None,
    handler: Handler | None = None,
    group: str | None = None,
    capabilities: Capabilities | Mapping[str, Any] | None = None,
) -> list[ArgparseCommand]:
    """Read one :class:`ArgparseCommand` per leaf command of ``parser``.

    A parser with subparsers yields one command per subcommand (recursively), named
    ``<parent>_<command>`` with ``ToolSpec.group`` set to the parent's name; a parser
    without subparsers yields one command. ``set_defaults(_command_level="workflow")`` on a
    command's parser marks it a workflow.

    Args:
        parser: the root parser; it is read, never modified.
        name: name of the root (default: ``parser.prog`` without a ``.py`` suffix),
            sanitised to the portable tool-name pattern.
        handler: called with the parsed Namespace for every command; when omitted, each
            command's ``set_defaults(func=...)`` (or ``handler=...``) is used.
        group: overrides ``ToolSpec.group`` of every command.
        capabilities: capabilities of every command (default: none, a pure tool).

    Returns:
        The commands in declaration order.

    Raises:
        DeclarationError: when a name cannot be made portable, two commands end up with the
            same name, or an argument cannot be described honestly as JSON.
    """
    if not isinstance(parser, argparse.ArgumentParser):
        raise DeclarationError(f"from_argparse needs an ArgumentParser, not {type(parser)!r}")
    root = name if name is not None else _prog_name(parser.prog)
    caps = (
        capabilities
        if isinstance(capabilities, Capabilities)
        else Capabilities.from_dict(capabilities)
    )
    found: list[ArgparseCommand] = []
    _walk(parser, [parser], (), [_portable(root, parser.prog)], None, handler, group, caps, found)
    seen: dict[str, tuple[str, ...]] = {}
    for command in found:
        if command.spec.name in seen:
            raise DeclarationError(
                f"commands {' '.join(seen[command.spec.name]) or parser.prog!r} and "
                f"{' '.join(command.words)!r} both become the tool name {command.spec.name!r}"
            )
        seen[command.spec.name] = command.words
    return found


def _walk(
    parser: argparse.ArgumentParser,
    chain: list[argparse.ArgumentParser],
    words: tuple[str, ...],
    parts: list[str],
    help_: str | None,
    handler: Handler | None,
    group: str | None,
    caps: Capabilities,
    found: list[ArgparseCommand],
) -> None:
    sub = _subparsers(parser)
    if sub is None:
        parent = "_".join(parts[:-1]) or None
        found.append(_command(chain, words, "_".join(parts), help_, handler, group or parent, caps))
        return
    helps = {a.dest: a.help for a in sub._choices_actions}
    visited: set[int] = set()
    for word, child in sub.choices.items():
        if id(child) in visited:  # an alias of a command already read
            continue
        visited.add(id(child))
        child_help = helps.get(word)
        if child_help == argparse.SUPPRESS:
            continue
        if child_help and "%(" in child_help:
            child_help = child_help % {"prog": parser.prog, "dest": word}
        part = _portable(word, child.prog)
        _walk(
            child,
            [*chain, child],
            (*words, word),
            [*parts, part],
            child_help,
            handler,
            group,
            caps,
            found,
        )


def _command(
    chain: list[argparse.ArgumentParser],
    words: tuple[str, ...],
    name: str,
    help_: str | None,
    handler: Handler | None,
    group: str | None,
    caps: Capabilities,
) -> ArgparseCommand:
    leaf = chain[-1]
    if not (name[0].isalpha() or name[0] == "_"):
        name = f"_{name}"
    try:
        validate_name(name)
    except InvalidName as exc:
        raise DeclarationError(f"{leaf.prog}: {exc}; pass name= to from_argparse") from exc
    levels = [parser_slots(p, leaf=p is leaf) for p in chain]
    # a subcommand's namespace overwrites its parent's, so the parent's same-named option is moot
    taken: set[str] = set()
    kept: list[tuple[ArgumentSlot, ...]] = []
    for level in reversed(levels):
        kept.insert(0, tuple(s for s in level if s.name not in taken))
        taken.update(s.name for s in level)
    slots = [s for level in kept for s in level]
    exclusive = _exclusive_groups(chain, {id(a): s.name for s in slots for a in s.actions})
    properties = {s.name: s.schema for s in slots}
    required = [s.name for s in slots if s.required]
    for is_required, names in exclusive:
        if is_required and len(names) == 1 and names[0] not in required:
            required.append(names[0])  # the group's other members are hidden
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    schema["additionalProperties"] = False
    level_value = leaf.get_default("_command_level")
    try:
        kind = Level(level_value) if level_value is not None else Level.PRIMITIVE
    except ValueError as exc:
        raise DeclarationError(
            f"{leaf.prog}: _command_level must be 'primitive' or 'workflow', not {level_value!r}"
        ) from exc
    chosen = handler or leaf.get_default("func") or leaf.get_default("handler")
    if chosen is not None and not callable(chosen):
        raise DeclarationError(f"{leaf.prog}: the handler {chosen!r} is not callable")
    description = _description(leaf, help_, exclusive)
    spec = ToolSpec(name, description, schema, level=kind, capabilities=caps, group=group)
    rules = tuple((r, n) for r, n in exclusive if len(n) > 1)
    return ArgparseCommand(spec, chain[0], words, tuple(kept), rules, chosen)


def _exclusive_groups(
    chain: list[argparse.ArgumentParser], names: dict[int, str]
) -> list[tuple[bool, tuple[str, ...]]]:
    out: list[tuple[bool, tuple[str, ...]]] = []
    for parser in chain:
        for group in parser._mutually_exclusive_groups:
            members = [names[id(a)] for a in group._group_actions if id(a) in names]
            unique = tuple(dict.fromkeys(members))
            if unique:
                out.append((bool(group.required), unique))
    return out


def _description(
    leaf: argparse.ArgumentParser,
    help_: str | None,
    exclusive: list[tuple[bool, tuple[str, ...]]],
) -> str:
    raw = isinstance(leaf._get_formatter(), argparse.RawDescriptionHelpFormatter)
    texts: list[str] = []
    if help_:
        texts.append(tidy(help_, raw=False))
    if leaf.description and leaf.description != argparse.SUPPRESS:
        text = leaf.description
        if "%(prog)" in text:
            text = text % {"prog": leaf.prog}
        text = tidy(text, raw=raw)
        if not texts or not text.startswith(texts[0].rstrip(".")):
            texts.append(text)
        else:
            texts = [text]
    if not texts:
        texts.append(f"The '{leaf.prog}' command.")
    rules = [
        f"{'Exactly' if required else 'At most'} one of: {', '.join(names)}."
        for required, names in exclusive
        if len(names) > 1
    ]
    if rules:
        texts.append(" ".join(rules))
    return "\n\n".join(texts)


def _prog_name(prog: str) -> str:
    base = os.path.basename(prog.strip())
    return base[:-3] if base.endswith(".py") else base


def _portable(word: str, where: str) -> str:
    part = re.sub(r"[^A-Za-z0-9_-]+", "_", word).strip("_")
    if not part:
        raise DeclarationError(
            f"{where}: {word!r} has no letters or digits to make a tool name from; pass name="
        )
    return part
