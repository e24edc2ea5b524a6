"""``toolfoundry doctor``: every component of the installation, checked for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

import toolfoundry
from toolfoundry import Foundry
from toolfoundry.base.extras import BUNDLE_EXTRAS, DEVELOPER_EXTRAS, extras
from toolfoundry.cli import main

COMPONENTS = {  # the default report's (chromium is under --all)
    "toolfoundry",
    "python",
    "guest",
    "polyfills",
    "libraries",
    "sandbox run",
    "module cache",
    "configuration",
    "database",
    "bubblewrap",
    "extra [server]",
    "extra [agents]",
    "extra [postgres]",
}


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLFOUNDRY_DB", raising=False)
    return tmp_path


def doctor(*args: str) -> tuple[Result, dict[str, dict[str, object]]]:
    result = CliRunner().invoke(main, ["doctor", "--json", *args])
    report = json.loads(result.stdout)
    assert report["ok"] is (result.exit_code == 0)
    return result, {check["name"]: check for check in report["checks"]}


def test_a_healthy_installation_reports_every_component(workdir: Path) -> None:
    result, checks = doctor()
    assert result.exit_code == 0, result.output
    assert set(checks) >= COMPONENTS
    assert checks["sandbox run"]["status"] == "ok"
    assert "decimal.js" in str(checks["libraries"]["detail"])
    assert "does not exist yet" in str(checks["database"]["detail"])
    assert not (workdir / ".toolfoundry").exists()  # doctor creates nothing


def test_an_existing_registry_is_reachable_at_its_schema(workdir: Path) -> None:
    url = f"sqlite:///{workdir / 'r.db'}"
    Foundry.open(url).close()
    result, checks = doctor("--db", url)
    assert result.exit_code == 0
    assert "reachable, schema " in str(checks["database"]["detail"])


def test_a_registry_in_a_missing_directory_fails_the_report(workdir: Path) -> None:
    result, checks = doctor("--db", f"sqlite:///{workdir}/no/such/x.db")
    assert result.exit_code == 1
    assert checks["database"]["status"] == "failed"
    assert "does not exist" in str(checks["database"]["detail"])
    assert not (workdir / "no").exists()


def test_a_bad_configuration_fails_the_report(workdir: Path) -> None:
    (workdir / "toolfoundry.toml").write_text("limits = [")
    result, checks = doctor()
    assert result.exit_code == 1
    assert checks["configuration"]["status"] == "failed"


def test_the_text_report_ends_with_the_verdict(workdir: Path) -> None:
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[-1] == "toolfoundry is ready"
    assert any(line.strip().startswith("ok  guest: ") for line in lines)


def test_an_unreachable_server_fails_without_showing_its_password(workdir: Path) -> None:
    result, checks = doctor("--db", "postgresql+psycopg://someone:s3cret@127.0.0.1:1/x")
    assert result.exit_code == 1
    assert checks["database"]["status"] == "failed"
    assert "someone:***@127.0.0.1:1" in str(checks["database"]["detail"])
    assert "s3cret" not in result.output


DEVELOPER_ROWS = {"chromium", "extra [dev]", "extra [bench]", "extra [build]", "extra [all]"}


def test_the_parts_only_working_on_toolfoundry_needs_are_under_all(workdir: Path) -> None:
    declared = set(extras())
    assert {*DEVELOPER_EXTRAS, *BUNDLE_EXTRAS} <= declared  # the names doctor leaves out exist
    _, default = doctor()
    assert not DEVELOPER_ROWS & set(default)
    assert {f"extra [{e}]" for e in declared - {*DEVELOPER_EXTRAS, *BUNDLE_EXTRAS}} <= set(default)
    _, everything = doctor("--all")
    assert set(everything) >= DEVELOPER_ROWS
    text = CliRunner().invoke(main, ["doctor"]).stdout.splitlines()
    assert text[-2:] == [
        "      (doctor --all also checks chromium and the dev, bench and build extras)",
        "toolfoundry is ready",
    ]


def test_user_extras_not_installed_are_one_quiet_line(workdir: Path) -> None:
    # an installation without the [otel] extra: this virtualenv's packages but opentelemetry's
    site = workdir / "site"
    site.mkdir()
    packages = Path(next(p for p in sys.path if p.endswith("site-packages")))
    for entry in packages.iterdir():
        if not entry.name.startswith("opentelemetry"):
            (site / entry.name).symlink_to(entry)
    src = Path(toolfoundry.__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{site}"}
    out = subprocess.run(
        [sys.executable, "-S", "-m", "toolfoundry", "doctor"],
        capture_output=True,
        text=True,
        env=env,
        cwd=workdir,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert (
        "  --  extras not installed: [otel] (optional: a command that needs one says which)"
        in lines
    )
    assert not any(line.strip().startswith("fix:") for line in lines)  # nothing to fix
