"""Typed Python functions as tools: ``@tool`` and :func:`from_function`.

The declaration is the function itself: its name, its docstring (Google, NumPy or Sphinx),
its annotations and defaults. From them comes one :class:`~toolfoundry.spec.ToolSpec`, and
calls go through the same pydantic model that produced the schema. See
:mod:`toolfoundry.declare.signature` for the schema rules (descriptions, defaults, nesting)
and :mod:`toolfoundry.declare.docstrings` for how descriptions are read.

    @tool
    def posts(board: str, sort: Literal["hot", "new"] = "hot", limit: int = 25) -> list[dict]:
        '''Query a public board's feed.'''

    posts.spec          # ToolSpec
    posts.call({"board": "python"})   # CallResult; posts("python") still calls the function
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Generic, ParamSpec, TypeVar, cast, overload

from pydantic_core import PydanticSerializationError, to_jsonable_python

from toolfoundry.declare.docstrings import parse_docstring
from toolfoundry.declare.errors import DeclarationError
from toolfoundry.declare.pyschema import returns_schema
from toolfoundry.declare.signature import ArgumentsModel, resolve_hints
from toolfoundry.spec import (
    CallResult,
    Capabilities,
    ErrorKind,
    InvalidName,
    Level,
    ToolSpec,
    validate_name,
)
from toolfoundry.spec.result import ToolCallFailed, elapsed_ms

P = ParamSpec("P")
R = TypeVar("R")


class FunctionTool(Generic[P, R]):
    """A Python function declared as a tool; satisfies :class:`toolfoundry.spec.DeclaredTool`.

    It stays callable exactly like the function it wraps and keeps its ``__name__``,
    ``__doc__`` and ``__wrapped__``.

    Attributes:
        arguments: the pydantic model of the parameters (schema and validator in one).
        is_async: whether the wrapped function is a coroutine function.
    """

    __wrapped__: Callable[P, R]
    _fn: Callable[P, R]

    def __init__(
        self,
        fn: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        level: Level | str = Level.PRIMITIVE,
        capabilities: Capabilities | Mapping[str, Any] | None = None,
        group: str | None = None,
        read_only: bool | None = None,
        calls_tools: bool = False,
    ) -> None:
        if not callable(fn):
            raise DeclarationError(f"tool() needs a function, got {type(fn).__name__}")
        if isinstance(fn, FunctionTool):  # re-declaring a tool with other options
            fn = fn._fn
        functools.update_wrapper(self, fn)
        self._fn = fn
        self.__wrapped__ = fn
        self._run: Callable[..., Any] = fn
        label = name if name is not None else getattr(fn, "__name__", type(fn).__name__)
        try:
            validate_name(label)
        except InvalidName as exc:
            raise DeclarationError(f"{exc}; pass name=... to choose a valid tool name") from exc
        docs = parse_docstring(_docstring(fn))
        text = description if description is not None else docs.description
        if text is None or not text.strip():
            raise DeclarationError(
                f"{label}: a tool needs a description; give the function a docstring whose "
                "first line says what it does, or pass description=..."
            )
        self.is_async = inspect.iscoroutinefunction(fn) or (
            not inspect.isroutine(fn) and inspect.iscoroutinefunction(type(fn).__call__)
        )
        self.arguments = ArgumentsModel(fn, label, docs)
        hints = resolve_hints(fn, label)
        returns = returns_schema(hints["return"], docs.returns) if "return" in hints else None
        try:
            self._spec = ToolSpec(
                label,
                text,
                self.arguments.schema,
                level=level,
                capabilities=capabilities,
                returns=returns,
                group=group,
                read_only=read_only,
                calls_tools=calls_tools,
            )
        except ValueError as exc:
            raise DeclarationError(f"{label}: {exc}") from exc

    @property
    def spec(self) -> ToolSpec:
        """The tool's ToolSpec."""
        return self._spec

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<FunctionTool {self._spec.name}>"

    def call(self, arguments: Mapping[str, Any]) -> CallResult:
        """Validate ``arguments`` and run the function; never raises for bad input or failures.

        An exception is a ``runtime_error``, except :class:`~toolfoundry.spec.ToolCallFailed`,
        whose error (and kind) is the result's.

        An async function is run with ``asyncio.run``; inside a running event loop that is
        impossible, and the result says to use :meth:`acall`.
        """
        start = time.perf_counter()
        if self.is_async:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return asyncio.run(self.acall(arguments))
            return CallResult.failure(
                ErrorKind.RUNTIME_ERROR,
                f"{self._spec.name} is async and call() was used inside a running event loop; "
                "use `await tool.acall(arguments)` there",
                duration_ms=elapsed_ms(start),
            )
        kwargs = self.arguments.validate(arguments)
        if isinstance(kwargs, list):
            return _invalid(kwargs, start)
        try:
            value = self._run(**kwargs)
        except Exception as exc:
            return _raised(exc, start)
        return _returned(value, start)

    async def acall(self, arguments: Mapping[str, Any]) -> CallResult:
        """Like :meth:`call`, awaiting async functions; sync ones run in a worker thread."""
        start = time.perf_counter()
        kwargs = self.arguments.validate(arguments)
        if isinstance(kwargs, list):
            return _invalid(kwargs, start)
        try:
            if self.is_async:
                value = await cast(Callable[..., Awaitable[Any]], self._run)(**kwargs)
            else:
                value = await asyncio.to_thread(self._run, **kwargs)
        except Exception as exc:
            return _raised(exc, start)
        return _returned(value, start)


def _docstring(fn: Callable[..., Any]) -> str | None:
    if inspect.isfunction(fn) or inspect.ismethod(fn):
        return fn.__doc__
    # A callable object: its class docstring, else its __call__'s.
    return type(fn).__doc__ or getattr(type(fn).__call__, "__doc__", None)


def _invalid(problems: list[Any], start: float) -> CallResult:
    count = len(problems)
    summary = "; ".join(f"{p.path}: {p.message}" for p in problems)
    return CallResult.failure(
        ErrorKind.INVALID_ARGUMENTS,
        f"{count} problem{'s' if count != 1 else ''} with the arguments: {summary}",
        problems=problems,
        duration_ms=elapsed_ms(start),
    )


def _raised(exc: Exception, start: float) -> CallResult:
    if isinstance(exc, ToolCallFailed):  # the function chose its error's kind itself
        error = exc.error
        return CallResult.failure(
            error.kind,
            error.message,
            problems=error.problems,
            logs=exc.logs,
            duration_ms=elapsed_ms(start),
        )
    return CallResult.failure(
        ErrorKind.RUNTIME_ERROR, f"{type(exc).__name__}: {exc}", duration_ms=elapsed_ms(start)
    )


def _returned(value: Any, start: float) -> CallResult:
    try:
        ready = to_jsonable_python(value)
        json.dumps(ready, allow_nan=False)
    except (PydanticSerializationError, TypeError, ValueError) as exc:
        return CallResult.failure(
            ErrorKind.RUNTIME_ERROR,
            f"the tool returned a {type(value).__name__} that cannot be made JSON: {exc}",
            duration_ms=elapsed_ms(start),
        )
    return CallResult.success(ready, duration_ms=elapsed_ms(start))


def from_function(
    fn: Callable[P, R],
    *,
    name: str | None = None,
    description: str | None = None,
    level: Level | str = Level.PRIMITIVE,
    capabilities: Capabilities | Mapping[str, Any] | None = None,
    group: str | None = None,
    read_only: bool | None = None,
    calls_tools: bool = False,
) -> FunctionTool[P, R]:
    """Declare ``fn`` as a tool.

    Args:
        fn: a sync or async function with annotated, named parameters and a docstring.
        name: the tool name (default: the function's ``__name__``).
        description: overrides the docstring's description.
        level: ``primitive`` (default) or ``workflow``.
        capabilities: what the tool reaches beyond computation.
        group: the catalog group the tool belongs to.
        read_only: whether calling it leaves the world unchanged (MCP's readOnlyHint);
            default: derived from ``capabilities`` and ``calls_tools``.
        calls_tools: whether it calls other tools, and so may reach what they reach (each
            under its own approval) beyond its own ``capabilities``.

    Returns:
        A FunctionTool, callable like ``fn``, with ``.spec``, ``.call`` and ``.acall``.

    Raises:
        DeclarationError: when the function cannot be described honestly.
    """
    return FunctionTool(
        fn,
        name=name,
        description=description,
        level=level,
        capabilities=capabilities,
        group=group,
        read_only=read_only,
        calls_tools=calls_tools,
    )


@overload
def tool(fn: Callable[P, R], /) -> FunctionTool[P, R]: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    level: Level | str = Level.PRIMITIVE,
    capabilities: Capabilities | Mapping[str, Any] | None = None,
    group: str | None = None,
    read_only: bool | None = None,
    calls_tools: bool = False,
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...


def tool(
    fn: Callable[P, R] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    level: Level | str = Level.PRIMITIVE,
    capabilities: Capabilities | Mapping[str, Any] | None = None,
    group: str | None = None,
    read_only: bool | None = None,
    calls_tools: bool = False,
) -> FunctionTool[P, R] | Callable[[Callable[P, R]], FunctionTool[P, R]]:
    """Decorator form of :func:`from_function`: ``@tool`` or ``@tool(name=..., level=...)``."""

    def declare(target: Callable[P, R]) -> FunctionTool[P, R]:
        return from_function(
            target,
            name=name,
            description=description,
            level=level,
            capabilities=capabilities,
            group=group,
            read_only=read_only,
            calls_tools=calls_tools,
        )

    if fn is not None:
        return declare(fn)
    return declare
