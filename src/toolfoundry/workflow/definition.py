"""Declaring a workflow: an entry function that builds the shared state, then ordered steps.

    @workflow(unavailable_on=(FeedDown,))
    def announce(topic: str, max_notes: int = 5, publish: bool = False) -> AnnounceState:
        '''Research a topic in the archive, draft a post from the evidence, publish it.'''
        return AnnounceState(topic=topic, max_notes=max_notes, publish=publish)

    @announce.step(cap="max_notes")
    def research(state: AnnounceState) -> StepResult: ...

The entry function's signature and docstring are the workflow's tool declaration: its
parameters are projected by :func:`toolfoundry.declare.from_function`, with ``level=workflow``.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar, overload

from pydantic_core import PydanticSerializationError, to_jsonable_python

from toolfoundry.declare.function import FunctionTool, from_function
from toolfoundry.spec import (
    CallResult,
    Capabilities,
    ErrorKind,
    Level,
    StepResult,
    StepStatus,
    ToolSpec,
    validate_name,
)
from toolfoundry.spec.result import elapsed_ms
from toolfoundry.workflow.result import WorkflowResult, overall
from toolfoundry.workflow.step import Cap, Check, Step, WorkflowDeclarationError

S = TypeVar("S")
StepFunction = Callable[[S], StepResult]


class Workflow(Generic[S]):
    """A deterministic workflow; also a :class:`toolfoundry.spec.DeclaredTool` of level workflow.

    Args:
        entry: builds the shared state from the tool's arguments; its signature and
            docstring become the tool's parameters and description.
        name: the tool name (default: the entry function's name).
        description: overrides the entry docstring's description.
        group: the catalog group.
        capabilities: what the workflow's steps reach beyond computation (shown in catalogs).
        unavailable_on: exception kinds that mean a dependency failed, for every step.
        outputs: what of the final state the result shows (default: the whole state made
            JSON-ready; give a function when the state holds sessions or clients).
        done: the success condition (default: every step completed or skipped, and at
            least one completed).
    """

    def __init__(
        self,
        entry: Callable[..., S],
        *,
        name: str | None = None,
        description: str | None = None,
        group: str | None = None,
        capabilities: Capabilities | Mapping[str, Any] | None = None,
        unavailable_on: tuple[type[Exception], ...] = (),
        outputs: Callable[[S], Mapping[str, Any]] | None = None,
        done: Callable[[S], bool] | None = None,
    ) -> None:
        self._unavailable_on = _exception_kinds(unavailable_on, "unavailable_on")
        self._entry: FunctionTool[..., S] = from_function(
            entry,
            name=name,
            description=description,
            level=Level.WORKFLOW,
            capabilities=capabilities,
            group=group,
        )
        self._outputs = outputs
        self._done = done
        self._steps: list[Step[S]] = []

    @property
    def spec(self) -> ToolSpec:
        """The workflow's ToolSpec (``level=workflow``), projected from the entry function.

        The description is the entry's, followed by the steps in order with their gates, so
        a model reading the catalog knows the step names and blockers a response can carry.
        No ``returns``: the entry's return type is the state, not what :meth:`call` returns
        (a :class:`WorkflowResult` as a dict), and an MCP client validates results against it.
        """
        spec = self._entry.spec.replace(returns=None)
        if not self._steps:
            return spec
        steps = "; ".join(step.summary() for step in self._steps)
        return spec.replace(description=f"{spec.description}\n\nSteps, in order: {steps}.")

    @property
    def name(self) -> str:
        """The workflow's tool name."""
        return self._entry.spec.name

    @property
    def steps(self) -> tuple[Step[S], ...]:
        """The declared steps, in run order."""
        return tuple(self._steps)

    @overload
    def step(
        self,
        fn: StepFunction[S],
        /,
        *,
        name: str | None = None,
        cap: Cap[S] | None = None,
        needs: Mapping[str, Check[S]] | None = None,
        requires: Mapping[str, Check[S]] | None = None,
        after: tuple[str, ...] | list[str] = (),
        unavailable_on: tuple[type[Exception], ...] = (),
        run_if: Check[S] | None = None,
    ) -> StepFunction[S]: ...

    @overload
    def step(
        self,
        /,
        *,
        name: str | None = None,
        cap: Cap[S] | None = None,
        needs: Mapping[str, Check[S]] | None = None,
        requires: Mapping[str, Check[S]] | None = None,
        after: tuple[str, ...] | list[str] = (),
        unavailable_on: tuple[type[Exception], ...] = (),
        run_if: Check[S] | None = None,
    ) -> Callable[[StepFunction[S]], StepFunction[S]]: ...

    def step(
        self,
        fn: StepFunction[S] | None = None,
        /,
        *,
        name: str | None = None,
        cap: Cap[S] | None = None,
        needs: Mapping[str, Check[S]] | None = None,
        requires: Mapping[str, Check[S]] | None = None,
        after: tuple[str, ...] | list[str] = (),
        unavailable_on: tuple[type[Exception], ...] = (),
        run_if: Check[S] | None = None,
    ) -> StepFunction[S] | Callable[[StepFunction[S]], StepFunction[S]]:
        """Append a step (decorator, bare or with options); see :class:`Step` for the gates.

        Returns the function unchanged, so it stays testable on its own.

        Raises:
            WorkflowDeclarationError: a repeated or invalid name, or ``after`` naming a step
                that is not declared before this one.
        """

        def add(target: StepFunction[S]) -> StepFunction[S]:
            label = name if name is not None else getattr(target, "__name__", "")
            try:
                validate_name(label)
            except ValueError as exc:
                raise WorkflowDeclarationError(f"step name: {exc}") from exc
            known = [s.name for s in self._steps]
            if label in known:
                raise WorkflowDeclarationError(f"{self.name}: step {label!r} is declared twice")
            unknown = [a for a in after if a not in known]
            if unknown:
                raise WorkflowDeclarationError(
                    f"{self.name}: step {label!r} runs after {unknown}, which are not declared "
                    f"before it (declared so far: {known})"
                )
            self._steps.append(
                Step(
                    name=label,
                    run=target,
                    cap=cap,
                    needs=dict(needs or {}),
                    requires=dict(requires or {}),
                    after=tuple(after),
                    unavailable_on=_exception_kinds(unavailable_on, "unavailable_on"),
                    run_if=run_if,
                )
            )
            return target

        if fn is not None:
            return add(fn)
        return add

    def start(self, arguments: Mapping[str, Any] | None = None) -> S:
        """Validate ``arguments`` against the tool's schema and build the initial state.

        Raises:
            WorkflowArgumentsError: the arguments do not fit the schema (every problem listed).
        """
        kwargs = self._entry.arguments.validate(dict(arguments or {}))
        if isinstance(kwargs, list):
            raise WorkflowArgumentsError(self.name, [f"{p.path}: {p.message}" for p in kwargs])
        return self._entry(**kwargs)

    def run(self, arguments: Mapping[str, Any] | None = None) -> WorkflowResult:
        """Validate the arguments, build the state, and run every step in order.

        Raises:
            WorkflowArgumentsError: invalid arguments.
            Exception: whatever a step raised that is not of a declared ``unavailable_on``
                kind (such errors are bugs and are never turned into a status).
        """
        return self.run_state(self.start(arguments))

    def run_state(self, state: S) -> WorkflowResult:
        """Run every step in order over an already built state."""
        if not self._steps:
            raise WorkflowDeclarationError(f"{self.name}: a workflow needs at least one step")
        results: dict[str, StepResult] = {}
        for step in self._steps:
            results[step.name] = step.evaluate(state, results, self._unavailable_on)
        status, stopped_at = overall(results, self._is_done(state, results))
        return WorkflowResult(
            workflow=self.name,
            status=status,
            steps=results,
            outputs=self._output(state),
            stopped_at=stopped_at,
        )

    def call(self, arguments: Mapping[str, Any]) -> CallResult:
        """Run as a tool: the value is :meth:`WorkflowResult.to_dict`; never raises.

        A run whose steps did not all advance is still ``ok``: its statuses say why, and
        ``details["step"]`` holds the overall outcome (:meth:`WorkflowResult.to_step_result`),
        as for any foundry call. Bad arguments give ``invalid_arguments``; a step's undeclared
        exception gives ``runtime_error`` naming the step; both with a ``blocked`` step
        outcome whose blocker is the error kind.
        """
        begin = time.perf_counter()
        try:
            state = self.start(arguments)
        except WorkflowArgumentsError as exc:
            return _failure(ErrorKind.INVALID_ARGUMENTS, str(exc), begin)
        try:
            result = self.run_state(state)
            value = to_jsonable_python(result.to_dict())
        except PydanticSerializationError as exc:
            message = f"{self.name}: the workflow's outputs cannot be made JSON ({exc})"
            return _failure(ErrorKind.RUNTIME_ERROR, message, begin)
        except Exception as exc:
            notes = "; ".join(getattr(exc, "__notes__", ()))
            message = f"{type(exc).__name__}: {exc}" + (f" ({notes})" if notes else "")
            return _failure(ErrorKind.RUNTIME_ERROR, message, begin)
        step = result.to_step_result().to_dict()
        return CallResult(
            ok=True, value=value, duration_ms=elapsed_ms(begin), details={"step": step}
        )

    async def acall(self, arguments: Mapping[str, Any]) -> CallResult:
        """Like :meth:`call`, in a worker thread (steps are plain blocking functions)."""
        return await asyncio.to_thread(self.call, arguments)

    def __repr__(self) -> str:
        return f"<Workflow {self.name} steps={[s.name for s in self._steps]}>"

    def _is_done(self, state: S, results: Mapping[str, StepResult]) -> bool:
        if self._done is not None:
            return bool(self._done(state))
        statuses = [r.status.value for r in results.values()]
        return "completed" in statuses and set(statuses) <= {"completed", "skipped"}

    def _output(self, state: S) -> dict[str, Any]:
        data = self._outputs(state) if self._outputs is not None else state
        value = to_jsonable_python(data)
        if not isinstance(value, dict):
            raise TypeError(
                f"{self.name}: outputs must be an object (a dataclass, model or mapping), "
                f"got {type(value).__name__}; pass outputs=... to choose what to show"
            )
        return value


class WorkflowArgumentsError(ValueError):
    """Arguments that do not fit the workflow's parameters; ``problems`` lists each one."""

    def __init__(self, workflow: str, problems: list[str]) -> None:
        super().__init__(f"{workflow}: invalid arguments: {'; '.join(problems)}")
        self.problems = problems


@overload
def workflow(entry: Callable[..., S], /) -> Workflow[S]: ...


@overload
def workflow(
    *,
    name: str | None = None,
    description: str | None = None,
    group: str | None = None,
    capabilities: Capabilities | Mapping[str, Any] | None = None,
    unavailable_on: tuple[type[Exception], ...] = (),
    outputs: Callable[[S], Mapping[str, Any]] | None = None,
    done: Callable[[S], bool] | None = None,
) -> Callable[[Callable[..., S]], Workflow[S]]: ...


def workflow(
    entry: Callable[..., S] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    group: str | None = None,
    capabilities: Capabilities | Mapping[str, Any] | None = None,
    unavailable_on: tuple[type[Exception], ...] = (),
    outputs: Callable[[S], Mapping[str, Any]] | None = None,
    done: Callable[[S], bool] | None = None,
) -> Workflow[S] | Callable[[Callable[..., S]], Workflow[S]]:
    """Decorator form of :class:`Workflow`: ``@workflow`` or ``@workflow(unavailable_on=...)``."""

    def declare(target: Callable[..., S]) -> Workflow[S]:
        return Workflow(
            target,
            name=name,
            description=description,
            group=group,
            capabilities=capabilities,
            unavailable_on=unavailable_on,
            outputs=outputs,
            done=done,
        )

    if entry is not None:
        return declare(entry)
    return declare


def _exception_kinds(kinds: object, field: str) -> tuple[type[Exception], ...]:
    if not isinstance(kinds, tuple) or not all(
        isinstance(k, type) and issubclass(k, Exception) for k in kinds
    ):
        raise WorkflowDeclarationError(f"{field} must be a tuple of exception classes")
    return kinds


def _failure(kind: ErrorKind, message: str, begin: float) -> CallResult:
    result = CallResult.failure(kind, message, duration_ms=elapsed_ms(begin))
    step = StepResult(StepStatus.BLOCKED, blockers=(kind.value,), message=message)
    return dataclasses.replace(result, details={"step": step.to_dict()})
