"""The workflow runner: every status and blocker path, gates that keep steps from running."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from toolfoundry.catalog import describe, skill_markdown
from toolfoundry.spec import DeclaredTool, ErrorKind, Level, StepResult, StepStatus
from toolfoundry.workflow import (
    Workflow,
    WorkflowArgumentsError,
    WorkflowDeclarationError,
    WorkflowResult,
    workflow,
)


class ServiceDown(Exception):
    """A dependency failure the workflow declares."""


@dataclass
class Job:
    query: str
    cap: int | None
    session: str | None
    confirm: bool
    found: list[str] = field(default_factory=list)
    ran: list[str] = field(default_factory=list)
    submitted: bool = False


def build(
    *,
    corpus: tuple[str, ...] = ("alpha report", "alpha memo", "beta memo"),
    down: bool = False,
    crash: type[Exception] | None = None,
) -> Workflow[Job]:
    def research_job(
        query: str, cap: int | None = 5, session: str | None = "s1", confirm: bool = True
    ) -> Job:
        """Find documents, check them, submit a job built from them.

        Args:
            query: words to look for.
            cap: documents to use at most; 0 turns the search off.
            session: the platform session token.
            confirm: submit for real; false stops at a preview.
        """
        return Job(query, cap, session, confirm)

    flow = Workflow(
        research_job,
        unavailable_on=(ServiceDown,),
        outputs=lambda j: {"found": j.found, "submitted": j.submitted},
    )

    @flow.step(cap="cap")
    def search(job: Job) -> StepResult:
        job.ran.append("search")
        if down:
            raise ServiceDown("search API answered 503")
        if crash is not None:
            raise crash("bug in search")
        job.found = [d for d in corpus if job.query in d][: job.cap]
        if not job.found:
            return StepResult(StepStatus.EMPTY, message="nothing matched")
        return StepResult(StepStatus.COMPLETED, data={"count": len(job.found)})

    @flow.step(
        needs={"platform_session": lambda j: j.session is not None},
        requires={
            "research_evidence_empty": lambda j: bool(j.found),
            "too_few_documents": lambda j: len(j.found) >= 2,
        },
        run_if=lambda j: j.confirm,
    )
    def submit(job: Job) -> StepResult:
        job.ran.append("submit")
        job.submitted = True
        return StepResult(StepStatus.COMPLETED, data={"job": "j-1"})

    return flow


def test_all_steps_complete() -> None:
    result = build().run({"query": "alpha"})
    assert result.status is StepStatus.COMPLETED
    assert result.statuses() == {"search": "completed", "submit": "completed"}
    assert result.outputs == {"found": ["alpha report", "alpha memo"], "submitted": True}
    assert result.stopped_at is None
    assert result.step("search").data == {"count": 2}


def test_cap_of_zero_is_skipped_and_never_runs() -> None:
    flow = build()
    state = flow.start({"query": "alpha", "cap": 0})
    result = flow.run_state(state)
    assert result.step("search").status is StepStatus.SKIPPED
    assert "cap is 0" in result.step("search").message
    assert state.ran == []  # neither search nor submit ran
    # the downstream step is blocked by its own preconditions, not forced
    assert result.step("submit").blockers == ("research_evidence_empty", "too_few_documents")
    assert result.status is StepStatus.BLOCKED
    assert result.stopped_at == "submit"


def test_cap_none_means_uncapped_and_a_cap_limits() -> None:
    assert build().run({"query": "memo", "cap": None}).outputs["found"] == [
        "alpha memo",
        "beta memo",
    ]
    assert build().run({"query": "memo", "cap": 1}).outputs["found"] == ["alpha memo"]


def test_cap_from_a_function_and_from_a_mapping_state() -> None:
    def counter(limit: int = 0) -> dict[str, int]:
        """Count to a limit.

        Args:
            limit: how far; 0 turns counting off.
        """
        return {"limit": limit, "count": 0}

    flow = Workflow(counter)

    @flow.step(cap=lambda s: s["limit"])
    def count_up(state: dict[str, int]) -> StepResult:
        state["count"] = state["limit"]
        return StepResult(StepStatus.COMPLETED)

    @flow.step(cap="limit")
    def count_again(state: dict[str, int]) -> StepResult:
        return StepResult(StepStatus.COMPLETED)

    assert flow.run({"limit": 3}).outputs == {"limit": 3, "count": 3}
    off = flow.run({})
    assert off.status is StepStatus.SKIPPED  # every step turned off
    assert off.stopped_at is None
    assert off.step("count_again").details == {"cap": "limit"}


@pytest.mark.parametrize("bad", [-1, True, "3"])
def test_a_cap_that_is_not_a_count_is_an_error(bad: object) -> None:
    def capped(limit: object = None) -> dict[str, object]:
        """A cap of any value."""
        return {"limit": limit}

    flow = Workflow(capped)
    flow.step(lambda s: StepResult(StepStatus.COMPLETED), name="go", cap="limit")
    with pytest.raises(WorkflowDeclarationError, match="non-negative integer"):
        flow.run({"limit": bad})


def test_missing_session_is_unavailable_and_never_runs() -> None:
    flow = build()
    state = flow.start({"query": "alpha", "session": None})
    result = flow.run_state(state)
    submit = result.step("submit")
    assert submit.status is StepStatus.UNAVAILABLE
    assert submit.details == {"missing": ["platform_session"]}
    assert "platform_session" in submit.message
    assert state.ran == ["search"]
    assert (result.status, result.stopped_at) == (StepStatus.UNAVAILABLE, "submit")


def test_missing_session_also_reports_failing_preconditions() -> None:
    result = build().run({"query": "beta", "session": None})
    assert result.step("submit").details == {
        "missing": ["platform_session"],
        "also_blocked_by": ["too_few_documents"],
    }


def test_declared_exception_is_unavailable() -> None:
    result = build(down=True).run({"query": "alpha"})
    search = result.step("search")
    assert search.status is StepStatus.UNAVAILABLE
    assert search.message == "ServiceDown: search API answered 503"
    assert search.details == {"error": "ServiceDown"}
    assert result.step("submit").blockers == ("research_evidence_empty", "too_few_documents")
    # root cause first: the search was unavailable, the block follows from it
    assert (result.status, result.stopped_at) == (StepStatus.UNAVAILABLE, "search")


def test_step_level_exception_kind() -> None:
    def one(x: int = 1) -> dict[str, int]:
        """One step."""
        return {"x": x}

    flow = Workflow(one)

    @flow.step(unavailable_on=(TimeoutError,))
    def wait(state: dict[str, int]) -> StepResult:
        raise TimeoutError("upstream took 30 s")

    assert flow.run().step("wait").status is StepStatus.UNAVAILABLE


@pytest.mark.parametrize("kind", [KeyError, ValueError, RuntimeError])
def test_undeclared_exceptions_surface(kind: type[Exception]) -> None:
    flow = build(crash=kind)
    with pytest.raises(kind) as info:
        flow.run({"query": "alpha"})
    assert "raised in workflow step 'search'" in info.value.__notes__
    out = flow.call({"query": "alpha"})
    assert not out.ok
    assert out.error is not None
    assert out.error.kind is ErrorKind.RUNTIME_ERROR
    assert kind.__name__ in out.error.message
    assert "'search'" in out.error.message


def test_failed_preconditions_block_with_every_reason_and_never_run() -> None:
    flow = build()
    state = flow.start({"query": "beta"})
    result = flow.run_state(state)
    assert result.step("search").status is StepStatus.COMPLETED
    submit = result.step("submit")
    assert submit.status is StepStatus.BLOCKED
    assert submit.blockers == ("too_few_documents",)
    assert state.ran == ["search"]
    assert not state.submitted
    assert result.blockers == ("too_few_documents",)
    assert result.to_step_result().blockers == ("too_few_documents",)


def test_empty_research_never_submits() -> None:
    flow = build()
    state = flow.start({"query": "gamma"})
    result = flow.run_state(state)
    assert result.statuses() == {"search": "empty", "submit": "blocked"}
    assert (result.status, result.stopped_at) == (StepStatus.EMPTY, "search")
    assert "research_evidence_empty" in result.step("submit").blockers
    assert state.ran == ["search"]
    assert not state.submitted


def test_run_if_false_is_ready_without_running() -> None:
    flow = build()
    state = flow.start({"query": "alpha", "confirm": False})
    result = flow.run_state(state)
    assert result.step("submit").status is StepStatus.READY
    assert (result.status, result.stopped_at) == (StepStatus.READY, "submit")
    assert state.ran == ["search"]


def test_after_blocks_on_an_earlier_step_that_did_not_complete() -> None:
    def pipeline(n: int = 0) -> dict[str, int]:
        """Two dependent steps."""
        return {"n": n}

    flow = Workflow(pipeline)
    flow.step(lambda s: StepResult(StepStatus.EMPTY), name="fetch", cap="n")
    flow.step(lambda s: StepResult(StepStatus.COMPLETED), name="use", after=["fetch"])
    assert flow.run({"n": 0}).step("use").blockers == ("fetch_skipped",)
    assert flow.run({"n": 2}).step("use").blockers == ("fetch_empty",)


def test_step_may_report_its_own_status() -> None:
    def single(flag: bool = False) -> dict[str, bool]:
        """A single step that decides for itself."""
        return {"flag": flag}

    flow = Workflow(single)

    @flow.step
    def decide(state: dict[str, bool]) -> StepResult:
        if state["flag"]:
            return StepResult(StepStatus.COMPLETED)
        return StepResult(StepStatus.BLOCKED, blockers=("flag_not_set",))

    assert flow.run().blockers == ("flag_not_set",)
    assert flow.run({"flag": True}).status is StepStatus.COMPLETED


def test_a_step_must_return_a_step_result() -> None:
    def single() -> dict[str, int]:
        """Nothing."""
        return {}

    flow = Workflow(single)
    flow.step(lambda s: True, name="wrong")  # type: ignore[arg-type,return-value]
    with pytest.raises(TypeError, match=r"must return a toolfoundry\.spec\.StepResult"):
        flow.run()


def test_success_condition_decides_completed() -> None:
    def pair() -> dict[str, bool]:
        """Two steps; the goal is the second."""
        return {"goal": False}

    def reach(state: dict[str, bool]) -> StepResult:
        state["goal"] = True
        return StepResult(StepStatus.COMPLETED)

    flow = Workflow(pair, done=lambda s: s["goal"])
    flow.step(lambda s: StepResult(StepStatus.UNAVAILABLE, message="optional"), name="extra")
    flow.step(reach)
    result = flow.run()
    assert result.status is StepStatus.COMPLETED
    assert result.step("extra").status is StepStatus.UNAVAILABLE


def test_runs_are_deterministic() -> None:
    for args in ({"query": "alpha"}, {"query": "gamma"}, {"query": "beta", "session": None}):
        first, second = build().run(args).to_dict(), build().run(args).to_dict()
        assert first == second
        assert WorkflowResult.from_dict(first).to_dict() == first


def test_result_parsing_refuses_inconsistent_shapes() -> None:
    good = build().run({"query": "beta"}).to_dict()
    with pytest.raises(ValueError, match="blockers"):
        WorkflowResult.from_dict({**good, "blockers": ["something_else"]})
    with pytest.raises(ValueError, match=r"steps\.submit"):
        WorkflowResult.from_dict({**good, "steps": {"submit": {"status": "blocked"}}})
    with pytest.raises(ValueError, match="not a valid StepStatus"):
        WorkflowResult.from_dict({**good, "status": "failed"})
    with pytest.raises(ValueError, match="non-empty 'steps'"):
        WorkflowResult.from_dict({"workflow": "x", "status": "completed"})


def test_workflow_is_a_declared_tool_of_level_workflow() -> None:
    flow = build()
    assert isinstance(flow, DeclaredTool)
    spec = flow.spec
    assert spec.level is Level.WORKFLOW
    assert spec.name == "research_job"
    assert [(p.name, p.required) for p in spec.params] == [
        ("query", True),
        ("cap", False),
        ("session", False),
        ("confirm", False),
    ]
    assert spec.parameters["properties"]["cap"]["description"].startswith("documents to use")
    assert spec.description == (
        "Find documents, check them, submit a job built from them.\n\n"
        "Steps, in order: search (skipped when cap is 0); submit (needs platform_session; "
        "blocked by research_evidence_empty, too_few_documents; ready until asked to run)."
    )
    skill = skill_markdown([spec])
    workflows = skill.split("## Workflows (1)")[1]
    assert "### `research_job`" in workflows
    assert "## Primitives (0)" in skill
    assert describe([spec])["workflow_count"] == 1


def test_call_returns_the_result_and_structured_argument_errors() -> None:
    flow = build()
    out = flow.call({"query": "alpha"})
    assert out.ok
    assert out.value["status"] == "completed"
    assert out.value["steps"]["submit"] == {"status": "completed", "data": {"job": "j-1"}}
    bad = flow.call({"cap": "many"})
    assert bad.error is not None
    assert bad.error.kind is ErrorKind.INVALID_ARGUMENTS
    assert "query" in bad.error.message
    assert "cap" in bad.error.message
    with pytest.raises(WorkflowArgumentsError) as info:
        flow.run({"query": 3})
    assert info.value.problems
    assert asyncio.run(flow.acall({"query": "alpha"})).value == out.value


def test_declaration_errors_are_clear() -> None:
    flow = build()
    with pytest.raises(WorkflowDeclarationError, match="declared twice"):
        flow.step(lambda s: StepResult(StepStatus.COMPLETED), name="search")
    with pytest.raises(WorkflowDeclarationError, match="not declared before it"):
        flow.step(lambda s: StepResult(StepStatus.COMPLETED), name="late", after=["publish"])
    with pytest.raises(WorkflowDeclarationError, match="step name"):
        flow.step(lambda s: StepResult(StepStatus.COMPLETED), name="has space")
    with pytest.raises(WorkflowDeclarationError, match="exception classes"):
        Workflow(build, unavailable_on=(ValueError, "oops"))  # type: ignore[arg-type]

    @workflow
    def empty_flow() -> dict[str, int]:
        """No steps at all."""
        return {}

    with pytest.raises(WorkflowDeclarationError, match="at least one step"):
        empty_flow.run()


def test_outputs_must_be_an_object() -> None:
    @workflow(outputs=lambda s: [1, 2])  # type: ignore[arg-type,return-value]
    def listy() -> dict[str, int]:
        """Outputs of the wrong shape."""
        return {}

    listy.step(lambda s: StepResult(StepStatus.COMPLETED), name="go")
    with pytest.raises(TypeError, match="outputs must be an object"):
        listy.run()
    assert listy.call({}).error is not None
