"""What the model is told is projected from the rules that apply: the server's instructions
state the approval rule the capability policy applies (tool-private storage activates at
once), and, where the Python tier is available, create_tool describes its form, its allowed
imports and its approval rule from the tier's own allowlist and the policy."""

from __future__ import annotations

from pathlib import Path

import anyio
from tests.factories import McpSessionFactory

from toolfoundry import Foundry
from toolfoundry.forge.policy import CapabilityPolicy
from toolfoundry.foundry.create_tool_text import python_section
from toolfoundry.foundry.meta_tools import builtin_specs, builtin_tools
from toolfoundry.sandbox.process import find_bwrap
from toolfoundry.sandbox.process.allowlist import ALLOWED_MODULES
from toolfoundry.server.mcp.server import instructions


def test_the_instructions_state_the_policy_s_storage_rule() -> None:
    told = instructions(CapabilityPolicy())
    at_once, waits = told.split(" activates as soon as its tests pass; ")
    assert 'uses its own storage (storage: "tool")' in at_once
    assert "shares storage with other tools" in waits
    assert "needs network" in waits
    assert "shares storage" not in at_once
    strict = instructions(CapabilityPolicy(approve="all"))
    assert "activates as soon as" not in strict
    loose = instructions(CapabilityPolicy(auto_approve_shared_storage=True))
    assert "shares storage with other tools activates" in loose.replace(" or ", ", ")
    assert "compact" not in told
    assert "lists only its meta-tools" in instructions(CapabilityPolicy(), compact=True)


def test_the_server_sends_them(tmp_path: Path, mcp_session: McpSessionFactory) -> None:
    async def run() -> None:
        async with mcp_session(f"sqlite:///{tmp_path / 'r.db'}", tmp_path) as (_, notes):
            assert notes.initialized is not None  # the answer to initialize
            assert notes.initialized.instructions == instructions(CapabilityPolicy())

    anyio.run(run)


def test_the_python_tier_is_described_from_its_own_rules() -> None:
    text = python_section(CapabilityPolicy(python_packages=("numpy",)))
    listed = text.split("it may import only: ")[1].split(". ")[0].split(", ")
    assert listed == sorted(ALLOWED_MODULES | {"numpy"})
    assert "handler(args)" in text
    assert "Every version waits for a human's approval." in text
    assert "activates as soon as its tests pass" in python_section(
        CapabilityPolicy(auto_approve_python=True)
    )


def test_create_tool_tells_of_the_python_tier_only_where_it_is(tmp_path: Path) -> None:
    unbound = next(s for s in builtin_specs() if s.name == "create_tool")
    assert "Python tier (language" not in unbound.description  # docs/catalog.json: stable
    with Foundry.open(f"sqlite:///{tmp_path / 'r.db'}") as fd:
        bound = next(t.spec for t in builtin_tools(fd) if t.spec.name == "create_tool")
    told = "Python tier (language" in bound.description
    assert told == (find_bwrap() is not None)
