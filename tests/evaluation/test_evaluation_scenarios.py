"""The shipped degradation scenarios load, are consistent, and bad files are refused clearly."""

from __future__ import annotations

import copy
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from toolfoundry.agent.evaluation import (
    ScenarioError,
    load_file,
    load_scenarios,
    scenario_files,
)
from toolfoundry.agent.evaluation.scenarios import SCORED_STATUSES
from toolfoundry.spec import Level

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "announce_workflow.py"


def shipped(name: str) -> dict[str, Any]:
    path = next(p for p in scenario_files() if p.name == name)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def write(tmp_path: Path, data: Any, name: str = "case.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_at_least_twelve_scenarios_covering_every_scored_status() -> None:
    scenarios = load_scenarios()
    assert len(scenarios) >= 12
    counts = Counter(s.status.value for s in scenarios)
    assert set(counts) == set(SCORED_STATUSES)
    assert min(counts.values()) >= 3
    assert len({s.id for s in scenarios}) == len(scenarios)
    assert len({s.domain for s in scenarios}) >= 3


def test_every_scenario_is_answerable_and_shows_its_status() -> None:
    for scenario in load_scenarios():
        assert scenario.response.workflow in {
            t.name for t in scenario.catalog if t.level is Level.WORKFLOW
        }
        assert any(r.status is scenario.status for r in scenario.response.steps.values())
        assert scenario.expected in {rule.action for rule in scenario.accept}
        # a retry of the step in question is never a right answer in these scenarios
        assert not scenario.accepts("retry_step", {"step": scenario.response.stopped_at or ""})


def test_example_scenarios_are_what_the_example_workflow_really_returns() -> None:
    spec = importlib.util.spec_from_file_location("announce_workflow_eval", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = example
    spec.loader.exec_module(example)

    def run(args: dict[str, Any], feed_down: bool = False) -> dict[str, Any]:
        feed = example.Feed(example.FEED, online=not feed_down)
        flow = example.build_announce(example.ARCHIVE, feed, example.Board("t"))
        result: dict[str, Any] = flow.run(args).to_dict()
        return result

    data = shipped("announce.json")
    by_id = {s["id"]: s["response"] for s in data["scenarios"]}
    assert by_id["announce-skipped-feed"] == run(
        {"topic": "sandbox", "max_feed_items": 0, "publish": True}
    )
    assert by_id["announce-unavailable-feed-goal-met"] == run(
        {"topic": "sandbox", "publish": True}, feed_down=True
    )
    assert by_id["announce-empty-topic"] == run({"topic": "gardening", "publish": True})
    flow = example.build_announce(example.ARCHIVE, example.Feed([]), example.Board("t"))
    assert data["catalog"][0]["parameters"] == flow.spec.parameters
    assert data["catalog"][0]["description"] == flow.spec.description


def broken(change: Any) -> dict[str, Any]:
    data = copy.deepcopy(shipped("reconcile_month.json"))
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.pop("catalog"), "'catalog' is a required property"),
        (lambda d: d["scenarios"][0].update(status="ready"), "is not one of"),
        (lambda d: d["scenarios"][0].update(expected="panic"), "is not one of"),
        (lambda d: d["scenarios"][0].update(extra=1), "Additional properties"),
        (
            lambda d: d["scenarios"][0]["accept"][0]["arguments"].update(blocker=["fx_rate"]),
            "names ['fx_rate'], which the scenario does not show",
        ),
        (
            lambda d: d["scenarios"][2]["accept"][0]["arguments"].update(via=["reconcile_month"]),
            "names ['reconcile_month']",
        ),
        (
            lambda d: d["scenarios"][1]["accept"][0]["arguments"].update(step=["export"]),
            "names ['export']",
        ),
        (
            lambda d: d["scenarios"][0]["accept"][0]["arguments"].update(query=["x"]),
            "has no argument 'query'",
        ),
        (lambda d: d["scenarios"][0].update(expected="stop"), "is not an accepted action"),
        (lambda d: d["scenarios"][0].update(status="skipped"), "no step of the response is"),
        (
            lambda d: d["scenarios"][0]["response"].update(workflow="close_books"),
            "is not a workflow of the catalog",
        ),
        (
            lambda d: d["scenarios"][0]["response"]["steps"]["match_payments"].pop("blockers"),
            "a blocked step must name at least one blocker",
        ),
        (lambda d: d["catalog"][1].update(name="bad name"), "invalid tool name"),
    ],
)
def test_inconsistent_files_are_refused(tmp_path: Path, change: Any, message: str) -> None:
    with pytest.raises(ScenarioError, match=r"case\.json") as info:
        load_file(write(tmp_path, broken(change)))
    assert message in str(info.value)


def test_unreadable_and_duplicate_files(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.json: cannot read it as JSON"):
        load_file(bad)
    one = write(tmp_path, shipped("review_papers.json"), "one.json")
    two = write(tmp_path, shipped("review_papers.json"), "two.json")
    with pytest.raises(ScenarioError, match="appears more than once"):
        load_scenarios([one, two])
    assert [s.id for s in load_scenarios([one])] == [
        s["id"] for s in shipped("review_papers.json")["scenarios"]
    ]
