"""OpenTelemetry: spans and metrics of create, call and approval, and nothing without it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("opentelemetry.sdk")

from opentelemetry.trace import StatusCode
from tests.integrations.drafts import BAD_ARGUMENTS, word_count_draft
from tests.integrations.recording import Recorded, attrs
from tests.shared_drafts import network_draft

from toolfoundry import Foundry

ROOT = Path(__file__).resolve().parents[2]


def test_one_create_and_one_call_make_spans_with_the_genai_attributes(
    fd: Foundry, recorded: Recorded
) -> None:
    assert fd.create_tool(word_count_draft()).status == "active"
    assert fd.call("word_count", {"text": "a b"}, call_id="call_1").value == 2

    create, call = recorded.finished()
    assert create.name == "create_tool word_count"
    assert attrs(create)["toolfoundry.create.status"] == "active"
    assert attrs(create)["toolfoundry.tool.version"] == 1
    steps = {e.name: dict(e.attributes or {}) for e in create.events}
    assert list(steps) == ["static_check", "tests", "policy", "registration"]
    assert steps["tests"]["toolfoundry.tests.passed"] == 1
    assert steps["registration"]["toolfoundry.tool.version"] == 1

    assert call.name == "execute_tool word_count"
    assert attrs(call)["gen_ai.operation.name"] == "execute_tool"
    assert attrs(call)["gen_ai.tool.name"] == "word_count"
    assert attrs(call)["gen_ai.tool.call.id"] == "call_1"
    assert attrs(call)["toolfoundry.tool.version"] == 1
    assert "error.type" not in attrs(call)
    assert call.status.status_code is StatusCode.UNSET


def test_a_failed_call_carries_its_kind_as_error_type_and_counts_by_kind(
    fd: Foundry, recorded: Recorded
) -> None:
    fd.create_tool(word_count_draft())
    fd.call("word_count", {"text": "a"})
    fd.call("word_count", BAD_ARGUMENTS)
    fd.call("no_such_tool", {})

    bad, missing = recorded.finished()[-2:]
    assert attrs(bad)["error.type"] == "invalid_arguments"
    assert bad.status.status_code is StatusCode.ERROR
    assert missing.name == "execute_tool no_such_tool"
    assert attrs(missing)["error.type"] == "not_found"
    assert "gen_ai.tool.call.id" not in attrs(missing)  # not known: not made up

    failures = {a["error.type"]: n for a, n in recorded.points("toolfoundry.tool.failures")}
    assert failures == {"invalid_arguments": 1, "not_found": 1}
    calls = sum(n for _, n in recorded.points("toolfoundry.tool.calls"))
    assert calls == 3
    durations = recorded.points("toolfoundry.tool.duration")
    assert sum(n for _, n in durations) == 3  # one histogram sample per call


def test_a_rejected_draft_and_an_approval_have_their_spans(fd: Foundry, recorded: Recorded) -> None:
    broken = word_count_draft()
    broken["tests"] = [{"input": {"text": "a"}, "expected": 2}]
    assert fd.create_tool(broken).status == "rejected"
    assert fd.create_tool(network_draft("weather", "api.example.com")).status == (
        "pending_approval"
    )
    fd.approve("weather", by="alice")

    rejected, pending, approval = recorded.finished()
    assert attrs(rejected)["error.type"] == "tests_failed"
    assert rejected.status.status_code is StatusCode.ERROR
    assert [e.name for e in rejected.events] == ["static_check", "tests"]
    assert attrs(pending)["toolfoundry.create.status"] == "pending_approval"
    policy = next(e for e in pending.events if e.name == "policy")
    assert attrs(policy)["toolfoundry.step.outcome"] == "needs_approval"
    assert approval.name == "approve_tool weather"
    assert attrs(approval)["toolfoundry.approval.by"] == "alice"
    assert attrs(approval)["toolfoundry.tool.status"] == "active"
    statuses = {
        a["toolfoundry.create.status"] for a, _ in recorded.points("toolfoundry.tool.creations")
    }
    assert statuses == {"rejected", "pending_approval"}


def test_without_opentelemetry_nothing_is_traced_and_nothing_is_imported_per_call(
    tmp_path: Path,
) -> None:
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules["opentelemetry"] = None  # as if opentelemetry-api were not installed

        from toolfoundry import Foundry
        from toolfoundry.foundry import telemetry
        assert telemetry.instruments() is None

        class Watch:
            attempts = 0
            def find_spec(self, name, path=None, target=None):
                if name.startswith("opentelemetry"):
                    Watch.attempts += 1
                return None
        sys.meta_path.insert(0, Watch())
        fd = Foundry.open("sqlite:///{tmp_path / "r.db"}")
        draft = {word_count_draft()!r}
        assert fd.create_tool(draft).status == "active"
        assert fd.call("word_count", {{"text": "a b"}}).value == 2
        assert Watch.attempts == 0, Watch.attempts
        try:
            telemetry.configure()
        except ImportError as exc:
            print(exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "install toolfoundry[otel]" in out.stdout


def test_global_providers_set_after_import_receive_the_spans(tmp_path: Path) -> None:
    script = textwrap.dedent(
        f"""
        from toolfoundry import Foundry
        from toolfoundry.foundry import telemetry

        # opentelemetry-api is installed, but nothing in this process uses it yet: it is not
        # even imported, and no operation is traced
        import sys
        assert telemetry.instruments() is None
        fd = Foundry.open("sqlite:///{tmp_path / "r.db"}")
        assert fd.create_tool({word_count_draft()!r}).status == "active"
        assert fd.call("word_count", {{"text": "a"}}).ok
        assert not [m for m in sys.modules if m.startswith("opentelemetry")]
        # imported (by the application, or an SDK such as mcp's) but no provider set: still
        # nothing recorded
        import opentelemetry.trace
        assert telemetry.instruments() is not None
        assert not telemetry.instruments().recording()
        fd.call("word_count", {{"text": "a b"}}, call_id="early")

        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import (
            InMemorySpanExporter,
        )
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        assert telemetry.instruments().recording()
        fd.call("word_count", {{"text": "a b"}}, call_id="late")
        print([s.name for s in exporter.get_finished_spans()])
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['execute_tool word_count']"


def test_a_create_through_an_adapter_nests_in_its_execute_tool_span(
    fd: Foundry, recorded: Recorded
) -> None:
    from toolfoundry.integrations.bridge import FoundryBridge

    FoundryBridge(fd).call("create_tool", word_count_draft(), call_id="m1")
    create, execute = recorded.finished()  # the child ends first
    assert execute.name == "execute_tool create_tool"
    assert attrs(execute)["gen_ai.tool.call.id"] == "m1"
    assert create.name == "create_tool word_count"
    assert create.parent is not None
    assert create.parent.span_id == execute.context.span_id
