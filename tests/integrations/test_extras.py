"""Each adapter without its framework: a one-line ImportError naming the extra to install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# adapter module, the framework's top-level module, its distribution, the extra
ADAPTERS = [
    ("pydantic_ai", "pydantic_ai", "pydantic-ai-slim", "pydantic-ai"),
    ("openai_agents", "agents", "openai-agents", "openai-agents"),
    ("langchain", "langchain", "langchain", "langchain"),
    ("smolagents", "smolagents", "smolagents", "smolagents"),
]


@pytest.mark.parametrize(("module", "framework", "distribution", "extra"), ADAPTERS)
def test_a_missing_framework_names_its_extra(
    module: str, framework: str, distribution: str, extra: str
) -> None:
    # As if the framework were not installed: its module cannot be imported and its
    # distribution has no metadata (the extra's check asks for both).
    script = (
        "import sys\n"
        "from importlib import metadata\n"
        f"sys.modules[{framework!r}] = None\n"
        "real = metadata.version\n"
        "def version(name):\n"
        f"    if name == {distribution!r}:\n"
        "        raise metadata.PackageNotFoundError(name)\n"
        "    return real(name)\n"
        "metadata.version = version\n"
        "try:\n"
        f"    import toolfoundry.integrations.{module}\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
        "else:\n"
        "    print('imported')\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    (line,) = out.stdout.splitlines()
    assert f"install toolfoundry[{extra}]" in line


def test_the_package_imports_no_framework() -> None:
    script = (
        "import sys, toolfoundry.integrations, toolfoundry.integrations.bridge\n"
        "heavy = {'pydantic_ai', 'agents', 'langchain_core', 'langgraph', 'smolagents'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
