"""Calling an argparse command: JSON -> argv -> the very same parser -> Namespace -> handler."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import inspect
import io
import json
import re
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

import jsonschema

from toolfoundry.declare.argparse.slot import ArgumentSlot
from toolfoundry.declare.argparse.values import NOT_DOUBLE_DASH
from toolfoundry.spec import (
    CallResult,
    ErrorKind,
    Problem,
    ToolSpec,
)
from toolfoundry.spec.result import elapsed_ms

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
                    argv.extend(slot.tokens(value))
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
                if _loop_running():
                    if inspect.iscoroutine(value):
                        value.close()
                    message = f"{self._spec.name} has an async handler: use acall in an event loop"
                    return CallResult.failure(
                        ErrorKind.RUNTIME_ERROR, message, duration_ms=elapsed_ms(started)
                    )
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
                duration_ms=elapsed_ms(started),
            )
        if self.handler is None:
            message = (
                f"{self._spec.name} has no handler: pass handler= to from_argparse or "
                "set_defaults(func=...) on its parser"
            )
            return CallResult.failure(
                ErrorKind.RUNTIME_ERROR, message, duration_ms=elapsed_ms(started)
            )
        return self.handler, namespace

    def _failed(self, exc: BaseException, started: float) -> CallResult:
        if isinstance(exc, SystemExit) and exc.code in (0, None):
            return CallResult.success(None, duration_ms=elapsed_ms(started))
        if isinstance(exc, KeyboardInterrupt):
            raise exc
        message = f"{self._spec.name} failed: {type(exc).__name__}: {exc}"
        return CallResult.failure(ErrorKind.RUNTIME_ERROR, message, duration_ms=elapsed_ms(started))

    def _finish(self, value: Any, started: float) -> CallResult:
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            message = f"{self._spec.name} returned a value that is not JSON: {exc}"
            return CallResult.failure(
                ErrorKind.RUNTIME_ERROR, message, duration_ms=elapsed_ms(started)
            )
        return CallResult.success(value, duration_ms=elapsed_ms(started))

    def _parser_at(self, depth: int) -> argparse.ArgumentParser:
        parser = self.parser
        for word in self.words[:depth]:
            parser = subparsers_of(parser).choices[word]  # type: ignore[union-attr]
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


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


async def _awaited(value: Any) -> Any:
    return await value


def _path(name: str | None) -> str:
    return f"$.{name}" if name else "$"


def _present(slot: ArgumentSlot, value: Any) -> bool:
    """Whether ``value`` puts anything on the command line (what argparse's groups count)."""
    if value is None or slot.positional:
        return value is not None
    try:
        return bool(slot.tokens(value))
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
    if error.validator == "pattern" and error.validator_value == NOT_DOUBLE_DASH:
        return [Problem(where, "a bare '--' cannot be passed as a value through argparse")]
    if error.validator == "pattern" and str(error.validator_value).startswith("^(?!["):
        message = "a value here cannot start with an option prefix (argparse reads it as an option)"
        return [Problem(where, message)]
    return [Problem(where, error.message)]


def subparsers_of(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any] | None:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return action
    return None
