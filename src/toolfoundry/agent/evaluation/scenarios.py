"""Degradation scenarios: a catalog, a workflow response, and the next actions that are right.

Scenario files are JSON in ``scenarios/`` next to this module, one file per domain::

    {"domain": "...", "catalog": [ToolSpec dicts],
     "scenarios": [{"id": "...", "status": "blocked", "task": "...",
                    "response": {WorkflowResult dict}, "expected": "gather_input",
                    "accept": [{"action": "gather_input",
                                "arguments": {"blocker": ["research_evidence_empty"]}}],
                    "why": "..."}]}

Every file is checked on load, beyond its JSON Schema: the catalog must build ToolSpecs, the
response must parse as a WorkflowResult of a workflow in the catalog and contain the status
under test, and each accepted action must exist and name only steps, blockers and tools that
the scenario actually shows. A scenario that could not be answered correctly never loads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from toolfoundry.agent.evaluation.actions import ACTIONS, action_parameters
from toolfoundry.spec import Level, StepStatus, ToolSpec
from toolfoundry.workflow import WorkflowResult

SCORED_STATUSES = ("blocked", "skipped", "unavailable", "empty")

_STRINGS = {"type": "array", "items": {"type": "string", "minLength": 1}, "minItems": 1}
FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["domain", "catalog", "scenarios"],
    "additionalProperties": False,
    "properties": {
        "domain": {"type": "string", "minLength": 1},
        "catalog": {"type": "array", "items": {"type": "object"}, "minItems": 1},
        "scenarios": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["id", "status", "task", "response", "expected", "accept", "why"],
                "additionalProperties": False,
                "properties": {
                    "id": {"type": "string", "pattern": "^[a-z0-9][a-z0-9_-]*$"},
                    "status": {"enum": list(SCORED_STATUSES)},
                    "task": {"type": "string", "minLength": 1},
                    "response": {"type": "object"},
                    "expected": {"enum": sorted(ACTIONS)},
                    "why": {"type": "string", "minLength": 1},
                    "accept": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": ["action"],
                            "additionalProperties": False,
                            "properties": {
                                "action": {"enum": sorted(ACTIONS)},
                                "arguments": {
                                    "type": "object",
                                    "additionalProperties": _STRINGS,
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


class ScenarioError(ValueError):
    """A scenario file that is malformed or inconsistent; the message names file and field."""


@dataclass(frozen=True)
class AcceptRule:
    """One right answer: an action, and for some of its arguments the values allowed."""

    action: str
    arguments: Mapping[str, tuple[str, ...]]

    def matches(self, action: str, arguments: Mapping[str, Any]) -> bool:
        """Whether a call of ``action`` with ``arguments`` is this right answer.

        Values compare after trimming and case folding; unconstrained arguments are free.
        """
        if action != self.action:
            return False
        for name, allowed in self.arguments.items():
            value = arguments.get(name)
            if not isinstance(value, str):
                return False
            if _norm(value) not in {_norm(a) for a in allowed}:
                return False
        return True

    def to_dict(self) -> dict[str, Any]:
        return {"action": self.action, "arguments": {k: list(v) for k, v in self.arguments.items()}}


@dataclass(frozen=True)
class Scenario:
    """One decision to score.

    Attributes:
        id: unique across all files.
        domain: the file's domain.
        status: the step status under test (blocked, skipped, unavailable or empty).
        task: what the user asked for.
        catalog: the tools the model can see (the workflow among them).
        response: the workflow's response the model must react to.
        expected: the action class a good orchestrator takes.
        accept: every answer counted correct.
        why: the reasoning, for people reading a failure.
    """

    id: str
    domain: str
    status: StepStatus
    task: str
    catalog: tuple[ToolSpec, ...]
    response: WorkflowResult
    expected: str
    accept: tuple[AcceptRule, ...]
    why: str

    def accepts(self, action: str, arguments: Mapping[str, Any]) -> bool:
        """Whether the call is one of the right answers."""
        return any(rule.matches(action, arguments) for rule in self.accept)


def scenario_files() -> list[Path]:
    """The scenario files shipped in the package, sorted by name."""
    folder = resources.files("toolfoundry.agent.evaluation") / "scenarios"
    return sorted(Path(str(p)) for p in folder.iterdir() if p.name.endswith(".json"))


def load_scenarios(paths: Iterable[Path] | None = None) -> list[Scenario]:
    """Load and check scenario files (default: the shipped ones), in file then list order.

    Raises:
        ScenarioError: a file is not valid JSON, breaks the schema, is inconsistent, or
            repeats an id.
    """
    scenarios: list[Scenario] = []
    for path in scenario_files() if paths is None else sorted(paths):
        scenarios += load_file(path)
    seen: set[str] = set()
    for scenario in scenarios:
        if scenario.id in seen:
            raise ScenarioError(f"scenario id {scenario.id!r} appears more than once")
        seen.add(scenario.id)
    return scenarios


def load_file(path: Path) -> list[Scenario]:
    """Load and check one scenario file."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ScenarioError(f"{path.name}: cannot read it as JSON: {exc}") from exc
    return parse_file(data, path.name)


def parse_file(data: Any, source: str) -> list[Scenario]:
    """Check one file's parsed JSON; ``source`` names it in errors."""
    problems = sorted(jsonschema.Draft202012Validator(FILE_SCHEMA).iter_errors(data), key=str)
    if problems:
        first = problems[0]
        where = "/".join(str(p) for p in first.absolute_path) or "(top)"
        raise ScenarioError(f"{source}: {where}: {first.message}")
    try:
        catalog = tuple(_spec(item) for item in data["catalog"])
    except (TypeError, ValueError) as exc:
        raise ScenarioError(f"{source}: catalog: {exc}") from exc
    return [_scenario(item, data["domain"], catalog, source) for item in data["scenarios"]]


def _spec(item: Mapping[str, Any]) -> ToolSpec:
    return ToolSpec(
        item["name"],
        item["description"],
        item.get("parameters"),
        level=item.get("level", Level.PRIMITIVE),
        group=item.get("group"),
    )


def _scenario(
    item: Mapping[str, Any], domain: str, catalog: tuple[ToolSpec, ...], source: str
) -> Scenario:
    where = f"{source}: {item['id']}"
    try:
        response = WorkflowResult.from_dict(item["response"])
    except ValueError as exc:
        raise ScenarioError(f"{where}: response: {exc}") from exc
    workflows = {s.name for s in catalog if s.level is Level.WORKFLOW}
    if response.workflow not in workflows:
        raise ScenarioError(
            f"{where}: response.workflow {response.workflow!r} is not a workflow of the "
            f"catalog ({sorted(workflows)})"
        )
    status = StepStatus(item["status"])
    if all(r.status is not status for r in response.steps.values()):
        raise ScenarioError(f"{where}: no step of the response is {status.value}")
    known = {
        "step": set(response.steps),
        "blocker": set(response.blockers),
        "via": {s.name for s in catalog} - {response.workflow},
    }
    rules = []
    for rule in item["accept"]:
        arguments = {k: tuple(v) for k, v in rule.get("arguments", {}).items()}
        params = action_parameters(rule["action"])
        for name, values in arguments.items():
            if name not in params:
                raise ScenarioError(
                    f"{where}: accept {rule['action']} has no argument {name!r} ({list(params)})"
                )
            stray = sorted(set(values) - known[name]) if name in known else []
            if stray:
                raise ScenarioError(
                    f"{where}: accept {rule['action']}.{name} names {stray}, which the "
                    f"scenario does not show (known: {sorted(known[name])})"
                )
        rules.append(AcceptRule(rule["action"], arguments))
    if item["expected"] not in {r.action for r in rules}:
        raise ScenarioError(f"{where}: expected {item['expected']!r} is not an accepted action")
    return Scenario(
        id=item["id"],
        domain=domain,
        status=status,
        task=item["task"],
        catalog=catalog,
        response=response,
        expected=item["expected"],
        accept=tuple(rules),
        why=item["why"],
    )


def _norm(value: str) -> str:
    return value.strip().casefold()
