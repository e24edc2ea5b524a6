"""The commit-msg hook (scripts/commit_subject.py) refuses long, empty and issue-numbered
subjects, as git runs it: a real repository whose commit-msg hook is the script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parents[2]
SCRIPT = ROOT / "scripts" / "commit_subject.py"


def check(message: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "COMMIT_EDITMSG"
    path.write_text(message, encoding="utf-8")
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(
    "message",
    [
        "x" * 72,
        "registry: one stored-status lookup\n\nA body of any length " + "y" * 300,
        "# Please enter the commit message\n\nsandbox: run_js moves to js/run.py\n",
        "tests: fixtures shared\n# " + "z" * 200,
    ],
)
def test_a_short_subject_passes(message: str, tmp_path: Path) -> None:
    done = check(message, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ("x" * 73, "73 characters, at most 72"),
        ("registry: " + "a very long subject " * 10 + "\n\nbody", "at most 72"),
        ("", "empty"),
        ("# only comments\n\n   \n", "empty"),
        ("sandbox: fixes issue 26", "issue number"),
        ("forge: as Issue #12 asked", "issue number"),
    ],
)
def test_a_bad_subject_is_refused_with_the_reason(message: str, words: str, tmp_path: Path) -> None:
    done = check(message, tmp_path)
    assert done.returncode == 1
    assert words in done.stderr


def test_git_runs_it_as_the_commit_msg_hook(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    hook = repo / ".git" / "hooks" / "commit-msg"
    hook.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SCRIPT}" "$1"\n')
    hook.chmod(0o755)
    (repo / "f").write_text("1")
    subprocess.run([*git, "add", "f"], check=True)
    refused = subprocess.run(
        [*git, "commit", "-q", "-m", "s" * 80], capture_output=True, text=True, check=False
    )
    assert refused.returncode != 0
    assert "at most 72" in refused.stderr
    kept = subprocess.run(
        [*git, "commit", "-q", "-m", "f: the first line", "-m", "b" * 200],
        capture_output=True,
        text=True,
        check=False,
    )
    assert kept.returncode == 0, kept.stderr


def test_pre_commit_runs_it_at_the_commit_msg_stage() -> None:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    assert "commit-msg" in config["default_install_hook_types"]
    assert config["default_stages"] == ["pre-commit"]
    hooks = {h["id"]: h for repo in config["repos"] for h in repo["hooks"]}
    hook = hooks["commit-subject"]
    assert hook["stages"] == ["commit-msg"]
    assert "scripts/commit_subject.py" in hook["entry"]
