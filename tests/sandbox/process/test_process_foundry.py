"""Python drafts through the Foundry: forge (static check, jailed tests, policy), registry,
approval, catalog and the call path, with a real SQLite registry and real jails."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.factories import error_of

from toolfoundry import Foundry
from toolfoundry.config import Config
from toolfoundry.forge import CapabilityPolicy

from .conftest import SECRET

STATS = {
    "name": "csv_stats",
    "description": "Mean and maximum of a numeric column of CSV text.",
    "language": "python",
    "parameters": {
        "type": "object",
        "properties": {"csv": {"type": "string"}, "column": {"type": "string"}},
        "required": ["csv", "column"],
    },
    "code": (
        "import csv, io, statistics\n\n"
        "def handler(args):\n"
        "    rows = csv.DictReader(io.StringIO(args['csv']))\n"
        "    values = [float(r[args['column']]) for r in rows]\n"
        "    if not values:\n"
        "        raise ValueError('no rows')\n"
        "    return {'mean': statistics.mean(values), 'max': max(values)}\n"
    ),
    "tests": [
        {"input": {"csv": "a,b\n1,2\n3,4\n", "column": "b"}, "expected": {"mean": 3, "max": 4}},
        {"input": {"csv": "a\n", "column": "a"}, "error": "no rows"},
    ],
}


def draft(**changes: Any) -> dict[str, Any]:
    return {**json.loads(json.dumps(STATS)), **changes}


def test_python_tool_waits_for_approval_then_runs(foundry: Foundry) -> None:
    created = foundry.create_tool(draft())
    assert created.status == "pending_approval", created.to_dict()
    assert created.step.blockers == ("awaiting_approval",)
    assert "python" in created.step.message
    assert [t.passed for t in created.test_results] == [True, True]

    early = foundry.call("csv_stats", {"csv": "x\n5\n", "column": "x"})
    assert early.error is not None
    assert error_of(early).kind.value == "not_active"

    decided = foundry.approve("csv_stats", created.version, by="alice")
    assert decided.status == "active"
    out = foundry.call("csv_stats", {"csv": "x\n5\n7\n", "column": "x"})
    assert out.ok, out
    assert out.value == {"mean": 6, "max": 7}
    assert out.details["step"]["status"] == "completed"

    bad = foundry.call("csv_stats", {"csv": 5})
    assert bad.error is not None
    assert error_of(bad).kind.value == "invalid_arguments"
    failing = foundry.call("csv_stats", {"csv": "x\n", "column": "x"})
    assert failing.error is not None
    assert error_of(failing).kind.value == "runtime_error"
    assert "no rows" in error_of(failing).message

    assert [s.name for s in foundry.active_specs()] == ["csv_stats"]
    assert "csv_stats" in foundry.catalog("openai")
    usage = foundry.usage("csv_stats")
    assert usage.calls >= 3


def test_static_check_refuses_before_running(foundry: Foundry) -> None:
    code = "import subprocess\n\ndef handler(args):\n    return eval(args['csv'])\n"
    created = foundry.create_tool(draft(code=code))
    assert created.status == "rejected"
    assert created.step.blockers == ("static_check_failed",)
    found = {(f.rule, f.line) for f in created.findings}
    assert {("import_not_allowed", 1), ("no_eval", 4)} <= found
    assert created.test_results == ()
    assert foundry.tools() == []


def test_failing_tests_reject(foundry: Foundry) -> None:
    code = str(STATS["code"]).replace("max(values)", "min(values)")
    created = foundry.create_tool(draft(code=code))
    assert created.status == "rejected"
    assert created.step.blockers == ("tests_failed",)
    assert created.test_results[0].diff


def test_network_tests_need_fixtures(foundry: Foundry) -> None:
    code = "def handler(args):\n    return fetch('https://api.example.com/rates').json()\n"
    created = foundry.create_tool(
        draft(
            code=code,
            capabilities={"network": ["api.example.com"]},
            tests=[{"input": {"csv": "", "column": "a"}, "expected": {"eur": 1}}],
        )
    )
    assert created.status == "rejected"
    assert created.step.blockers == ("tests_failed",)
    failed = created.test_results[0].error
    assert failed is not None
    assert failed.kind == "capability_denied"


def test_a_hostile_draft_is_contained_during_its_tests(foundry: Foundry, tmp_path: Path) -> None:
    # reading a file passes the static check; the jail is what keeps the registry out of reach
    code = "import json\n\ndef handler(args):\n    return open(args['path']).read()\n"
    path = tmp_path / "registry.db"
    created = foundry.create_tool(
        draft(
            code=code,
            parameters={"type": "object", "properties": {"path": {"type": "string"}}},
            tests=[{"input": {"path": str(path)}, "expected": SECRET}],
        )
    )
    assert created.status == "rejected"
    assert "FileNotFoundError" in json.dumps([t.to_dict() for t in created.test_results])
    assert SECRET not in json.dumps(created.to_dict())


def test_policy_packages_and_auto_approval(tmp_path: Path) -> None:
    config = Config(policy=CapabilityPolicy(python_packages=("yaml",), auto_approve_python=True))
    code = "import yaml\n\ndef handler(args):\n    return yaml.safe_load(args['doc'])\n"
    yaml_draft = draft(
        name="read_yaml",
        code=code,
        parameters={"type": "object", "properties": {"doc": {"type": "string"}}},
        tests=[{"input": {"doc": "a: 1"}, "expected": {"a": 1}}],
    )
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}", config=config) as fd:
        created = fd.create_tool(yaml_draft)
        assert created.status == "active", created.to_dict()
        out = fd.call("read_yaml", {"doc": "k: [x, y]"})
        assert out.ok
        assert out.value == {"k": ["x", "y"]}
    with Foundry.open(f"sqlite:///{tmp_path / 'r2.db'}", config=Config()) as strict:
        refused = strict.create_tool(yaml_draft)
        assert refused.status == "rejected"
        assert refused.findings[0].rule == "import_not_allowed"
