"""``toolfoundry js run`` through click's CliRunner and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from toolfoundry.cli import main


def write(tmp_path: Path, code: str) -> str:
    path = tmp_path / "tool.js"
    path.write_text(code, encoding="utf-8")
    return str(path)


def test_run_prints_the_value_and_exits_0(tmp_path: Path) -> None:
    file = write(
        tmp_path, "console.log('hi'); export const handler = ({ n }) => ({ twice: n * 2 })"
    )
    result = CliRunner().invoke(main, ["js", "run", file, "--args", '{"n": 21}'])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"twice": 42}
    assert "hi" in result.stderr


def test_json_output_has_the_call_result_shape(tmp_path: Path) -> None:
    file = write(tmp_path, "export default await Promise.resolve([1, 2])")
    result = CliRunner().invoke(main, ["js", "run", file, "--json"])
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    assert set(data) == {"ok", "value", "error", "logs", "duration_ms"}
    assert data["ok"] is True
    assert data["value"] == [1, 2]


def test_failed_script_exits_1_with_kind(tmp_path: Path) -> None:
    file = write(tmp_path, "while (true) {}")
    result = CliRunner().invoke(main, ["js", "run", file, "--timeout", "0.2", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["kind"] == "timeout"
    plain = CliRunner().invoke(main, ["js", "run", file, "--timeout", "0.2"])
    assert plain.exit_code == 1
    assert "error (timeout)" in plain.stderr


def test_memory_flag_caps_memory(tmp_path: Path) -> None:
    file = write(tmp_path, "const a = []; while (true) a.push(new ArrayBuffer(1 << 20))")
    result = CliRunner().invoke(main, ["js", "run", file, "--memory", "16", "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["kind"] == "memory_limit"


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    file = write(tmp_path, "export default 1")
    runner = CliRunner()
    assert runner.invoke(main, ["js", "run", file, "--args", "{bad"]).exit_code == 2
    assert runner.invoke(main, ["js", "run", str(tmp_path / "missing.js")]).exit_code == 2
    assert runner.invoke(main, ["js", "run", file, "--timeout", "0"]).exit_code == 2
    assert runner.invoke(main, ["js", "run", file, "--memory", "1"]).exit_code == 2
    assert runner.invoke(main, ["js", "run", file, "--credential", "nocolons"]).exit_code == 2


def test_fetch_is_denied_without_allow_host(tmp_path: Path) -> None:
    file = write(tmp_path, "export default await fetch('https://example.com/')")
    result = CliRunner().invoke(main, ["js", "run", file, "--json"])
    assert result.exit_code == 1
    assert json.loads(result.stdout)["error"]["kind"] == "capability_denied"


def test_localstorage_works_within_one_run(tmp_path: Path) -> None:
    file = write(tmp_path, "localStorage.setItem('a', 1); export default localStorage.getItem('a')")
    result = CliRunner().invoke(main, ["js", "run", file])
    assert result.exit_code == 0
    assert json.loads(result.stdout) == "1"


def test_real_subprocess(tmp_path: Path) -> None:
    file = write(tmp_path, "export function handler(a) { return a.s.length }")
    exe = Path(sys.executable).parent / "toolfoundry"
    proc = subprocess.run(
        [str(exe), "js", "run", file, "--args", '{"s": "abc"}'],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == 3
