"""docs/examples/announce_workflow.py runs through every status path, as code and as a script."""

from __future__ import annotations

import importlib.util
import json
import shlex
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from toolfoundry.spec import Level
from toolfoundry.workflow import WorkflowResult

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "announce_workflow.py"


@pytest.fixture(scope="module")
def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("announce_workflow", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve their annotations through it
    spec.loader.exec_module(module)
    return module


def run(
    example: ModuleType, args: dict[str, Any], *, feed_down: bool = False, token: str | None = "t"
) -> tuple[WorkflowResult, Any]:
    board = example.Board(token=token)
    flow = example.build_announce(example.ARCHIVE, example.Feed(example.FEED, not feed_down), board)
    return flow.run(args), board


def test_completed_publishes_once(example: ModuleType) -> None:
    result, board = run(example, {"topic": "sandbox", "publish": True})
    assert result.status.value == "completed"
    assert set(result.statuses().values()) == {"completed"}
    assert result.outputs["url"] == "https://board.example/posts/1"
    assert len(board.posts) == 1
    assert "QuickJS sandbox" in board.posts[0]["body"]


def test_ready_is_a_preview_that_posts_nothing(example: ModuleType) -> None:
    result, board = run(example, {"topic": "sandbox"})
    assert result.step("publish_post").status.value == "ready"
    assert (result.status.value, result.stopped_at) == ("ready", "publish_post")
    assert result.outputs["draft"].startswith("# News about sandbox")
    assert board.posts == []


def test_cap_zero_skips_the_feed_and_still_succeeds(example: ModuleType) -> None:
    result, board = run(example, {"topic": "sandbox", "max_feed_items": 0, "publish": True})
    assert result.step("search_feed").status.value == "skipped"
    assert result.status.value == "completed"
    assert all(e["source"] == "archive" for e in result.outputs["evidence"])
    assert len(board.posts) == 1


def test_feed_down_is_unavailable_and_routed_around(example: ModuleType) -> None:
    result, board = run(example, {"topic": "sandbox", "publish": True}, feed_down=True)
    feed = result.step("search_feed")
    assert feed.status.value == "unavailable"
    assert "503" in feed.message
    assert result.status.value == "completed"  # the post went out on archive evidence alone
    assert len(board.posts) == 1


def test_no_session_is_unavailable_and_posts_nothing(example: ModuleType) -> None:
    result, board = run(example, {"topic": "sandbox", "publish": True}, token=None)
    publish = result.step("publish_post")
    assert publish.status.value == "unavailable"
    assert publish.details["missing"] == ["board_session"]
    assert (result.status.value, result.stopped_at) == ("unavailable", "publish_post")
    assert board.posts == []


def test_no_evidence_blocks_draft_and_publish(example: ModuleType) -> None:
    args = {"topic": "sandbox", "max_notes": 0, "max_feed_items": 0, "publish": True}
    result, board = run(example, args)
    assert result.statuses() == {
        "search_archive": "skipped",
        "search_feed": "skipped",
        "draft_post": "blocked",
        "publish_post": "blocked",
    }
    assert result.step("draft_post").blockers == ("research_evidence_empty",)
    assert result.step("publish_post").blockers == ("draft_post_blocked",)
    assert (result.status.value, result.stopped_at) == ("blocked", "draft_post")
    assert result.outputs["draft"] is None
    assert board.posts == []


def test_empty_research_is_the_root_cause(example: ModuleType) -> None:
    result, board = run(example, {"topic": "gardening", "publish": True})
    assert result.step("search_archive").status.value == "empty"
    assert result.step("search_feed").status.value == "empty"
    assert (result.status.value, result.stopped_at) == ("empty", "search_archive")
    assert "research_evidence_empty" in result.blockers
    assert board.posts == []


def test_long_draft_is_blocked_by_the_board_limit(example: ModuleType) -> None:
    archive = [{"title": f"sandbox note {i} " + "x" * 80, "body": ""} for i in range(10)]
    board = example.Board(token="t")
    flow = example.build_announce(archive, example.Feed([]), board)
    result = flow.run({"topic": "sandbox", "max_notes": 10, "publish": True})
    assert result.step("publish_post").blockers == ("draft_over_board_limit",)
    assert board.posts == []


def test_example_is_a_workflow_tool_in_its_skill_section(example: ModuleType) -> None:
    flow = example.build_announce(example.ARCHIVE, example.Feed(example.FEED), example.Board("t"))
    assert flow.spec.level is Level.WORKFLOW
    assert flow.spec.capabilities.network == ("board.example", "partner.example")
    assert [p.name for p in flow.spec.params] == ["topic", "max_notes", "max_feed_items", "publish"]


README = EXAMPLE.parent / "README.md"


def readme_commands() -> list[tuple[list[str], str]]:
    """Each ``python docs/examples/announce_workflow.py ...  # status ...`` line of the README."""
    out = []
    for line in README.read_text(encoding="utf-8").splitlines():
        if (
            line.strip().startswith("python docs/examples/announce_workflow.py")
            and "--skill" not in line
        ):
            command, _, comment = line.partition("#")
            out.append((shlex.split(command)[2:], comment.split()[0]))
    return out


def test_readme_lists_every_status() -> None:
    assert {status for _, status in readme_commands()} == {
        "completed",
        "ready",
        "skipped",
        "unavailable",
        "blocked",
        "empty",
    }


@pytest.mark.parametrize(("flags", "status"), readme_commands())
def test_readme_commands_run(flags: list[str], status: str) -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), *flags], capture_output=True, text=True, check=True
    )
    value = json.loads(done.stdout)["value"]
    assert status == value["status"] or status in {s["status"] for s in value["steps"].values()}


def test_script_prints_the_skill() -> None:
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--skill"], capture_output=True, text=True, check=True
    )
    assert "## Workflows (1)" in done.stdout
    assert "### `announce`" in done.stdout.split("## Workflows (1)")[1]
