"""A tool's test suite accumulates across versions; retiring a test takes a reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from click.testing import CliRunner, Result

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.spec.gate import Retirement

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit

T1 = {"name": "T1", "input": {"text": "Hello World"}, "expected": "hello-world"}
T2 = {"name": "T2", "input": {"text": "a, b"}, "expected": "a-b"}
T3 = {"name": "T3", "input": {"text": "Hi There"}, "expected": "Hi-There"}
# keeps the case: passes T2 and T3, fails T1
KEEPS_CASE = (
    "export function handler({ text }) {\n  return text.replace(/[^A-Za-z0-9]+/g, '-');\n}\n"
)


def _v1_v2(fd: Foundry, kit: type[Kit]) -> None:
    assert fd.create_tool(kit.slugify(tests=[T1])).version == 1
    # v2 drops T1 from its own tests: the gate still holds v3 to it (v1's promise)
    v2 = fd.create_tool(kit.slugify(tests=[T2], description="Slugify, v2"))
    assert (v2.status, v2.version) == ("active", 2), v2.to_dict()


def test_a_version_must_pass_every_earlier_versions_tests(fd: Foundry, kit: type[Kit]) -> None:
    _v1_v2(fd, kit)
    before = kit.snapshot(fd)
    v3 = fd.create_tool(kit.slugify(code=KEEPS_CASE, tests=[T3]))
    assert v3.status == "rejected"
    assert v3.step.blockers == ("regression",)
    assert "v1:T1" in v3.step.message
    failed = [t.name for t in v3.test_results if not t.passed]
    assert failed == ["v1:T1"]
    assert {t.name for t in v3.test_results if t.regression} == {"v1:T1", "v2:T2"}
    assert kit.snapshot(fd) == before


def test_retiring_with_a_reason_is_accepted_audited_and_stored(fd: Foundry, kit: type[Kit]) -> None:
    _v1_v2(fd, kit)
    change = {"test": "v1:T1", "reason": "slugs keep their case now"}
    v3 = fd.create_tool(kit.slugify(code=KEEPS_CASE, tests=[T3], changes_tests=[change]))
    assert (v3.status, v3.version) == ("active", 3), v3.to_dict()
    rows = [a for a in fd.registry.audit("slugify") if a.event == "tests_retired"]
    assert len(rows) == 1
    assert rows[0].version == 3
    assert rows[0].detail == {"retired": [change]}
    gate = fd.show("slugify").gate
    assert gate.suite is not None
    assert gate.suite.retired == (Retirement(change["test"], change["reason"]),)
    assert [(e.version, e.case["name"]) for e in gate.suite.earlier] == [(2, "T2")]
    assert gate.changes_tests == (Retirement(change["test"], change["reason"]),)
    # stored as it always was: `tools show --json` prints it under "extra"
    stored = fd.show("slugify").to_dict()["extra"]
    assert stored["changes_tests"] == [change]
    assert stored["suite"]["retired"] == [change]
    assert [(e["version"], e["test"]["name"]) for e in stored["suite"]["earlier"]] == [(2, "T2")]
    # v4 is gated by v2:T2 and v3:T3, no longer by the retired v1:T1
    v4 = fd.create_tool(kit.slugify(code=KEEPS_CASE, tests=[T3], description="v4"))
    assert v4.status == "active", v4.to_dict()
    assert {t.name for t in v4.test_results if t.regression} == {"v2:T2", "v3:T3"}


def test_a_bare_name_still_retires_and_a_reasonless_object_is_located(
    fd: Foundry, kit: type[Kit]
) -> None:
    _v1_v2(fd, kit)
    bad = fd.create_tool(kit.slugify(code=KEEPS_CASE, tests=[T3], changes_tests=[{"test": "T1"}]))
    assert bad.status == "rejected"
    assert [f.path for f in bad.findings] == ["$.changes_tests[0].reason"]
    blank = {"test": "T1", "reason": "  "}
    bad = fd.create_tool(kit.slugify(code=KEEPS_CASE, tests=[T3], changes_tests=[blank]))
    assert [f.path for f in bad.findings] == ["$.changes_tests[0].reason"]
    ok = fd.create_tool(kit.slugify(code=KEEPS_CASE, tests=[T3], changes_tests=["T1"]))
    assert ok.status == "active", ok.to_dict()
    suite = fd.show("slugify").gate.suite
    assert suite is not None
    assert suite.retired == (Retirement("v1:T1", "(no reason given)"),)


def test_retiring_a_network_tools_test_needs_a_human(
    fd: Foundry, kit: type[Kit], weather_server: str
) -> None:
    fd = Foundry(fd.registry, kit.loopback(weather_server))
    v1 = kit.weather(weather_server)
    v1["tests"][0]["name"] = "oslo"
    fd.create_tool(v1)
    fd.approve("weather", by="alice", reason="fine")
    v2 = kit.weather(weather_server)
    v2["code"] = v2["code"].replace(").temp;", ").temp + 1;")
    v2["tests"] = [{"name": "oslo_plus", "input": {"city": "Oslo"}, "expected": -2}]
    refused = fd.create_tool(v2)
    assert refused.status == "rejected"
    assert "v1:oslo" in refused.step.message
    v2["changes_tests"] = [{"test": "v1:oslo", "reason": "the offset is deliberate"}]
    result = fd.create_tool(v2)
    assert (result.status, result.version) == ("pending_approval", 2), result.to_dict()
    assert "retires tests: v1:oslo (the offset is deliberate)" in result.step.message


def test_cli_refuses_naming_the_earlier_test_then_accepts_the_retirement(
    db_url: str, kit: type[Kit], tmp_path: Path
) -> None:
    runner = CliRunner()

    def create(draft: dict[str, Any]) -> Result:
        path = tmp_path / "draft.json"
        path.write_text(json.dumps(draft))
        return runner.invoke(main, ["create", str(path), "--json", "--db", db_url])

    assert create(kit.slugify(tests=[T1])).exit_code == 0
    assert create(kit.slugify(tests=[T2], description="v2")).exit_code == 0
    refused = create(kit.slugify(code=KEEPS_CASE, tests=[T3]))
    assert refused.exit_code == 1
    body = json.loads(refused.stdout)
    assert body["step"]["blockers"] == ["regression"]
    assert "v1:T1" in body["step"]["message"]
    change = {"test": "v1:T1", "reason": "keeps case"}
    accepted = create(kit.slugify(code=KEEPS_CASE, tests=[T3], changes_tests=[change]))
    assert accepted.exit_code == 0, accepted.output
    assert json.loads(accepted.stdout)["version"] == 3
