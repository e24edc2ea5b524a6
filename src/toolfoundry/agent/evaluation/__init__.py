"""Evaluations of the orchestrating model; first of them, the degradation-path evaluation.

from toolfoundry.agent.evaluation import evaluate_degradation, select_model
report = evaluate_degradation(select_model("scripted:correct"))
report.overall.share, report.by_status()["skipped"].share
"""

from toolfoundry.agent.evaluation.actions import ACTIONS, action_specs
from toolfoundry.agent.evaluation.degradation import (
    DegradationReport,
    Share,
    Verdict,
    evaluate_degradation,
    scenario_messages,
    score_turn,
)
from toolfoundry.agent.evaluation.scenarios import (
    Scenario,
    ScenarioError,
    load_file,
    load_scenarios,
    scenario_files,
)
from toolfoundry.agent.evaluation.scripted import ScriptedProvider
from toolfoundry.agent.evaluation.selection import ModelSelectionError, select_model

__all__ = [
    "ACTIONS",
    "DegradationReport",
    "ModelSelectionError",
    "Scenario",
    "ScenarioError",
    "ScriptedProvider",
    "Share",
    "Verdict",
    "action_specs",
    "evaluate_degradation",
    "load_file",
    "load_scenarios",
    "scenario_files",
    "scenario_messages",
    "score_turn",
    "select_model",
]
