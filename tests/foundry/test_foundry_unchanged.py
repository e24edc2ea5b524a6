"""An identical resubmission creates nothing and answers with the existing version."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from click.testing import CliRunner

from toolfoundry import Foundry
from toolfoundry.cli import main

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit


def test_identical_resubmission_is_unchanged_and_stores_nothing(
    fd: Foundry, kit: type[Kit]
) -> None:
    first = fd.create_tool(kit.slugify())
    assert (first.status, first.version, first.unchanged) == ("active", 1, False)
    before = kit.snapshot(fd)
    # key order, the author and changes_tests are not part of a version's identity
    again = kit.slugify(author="someone else")
    again = dict(reversed(list(again.items())))
    second = fd.create_tool(json.dumps(again))
    assert (second.status, second.name, second.version) == ("active", "slugify", 1)
    assert second.unchanged is True
    assert second.to_dict()["unchanged"] is True
    assert "identical to slugify v1" in second.step.message
    assert kit.snapshot(fd) == before
    assert [v.version for v in fd.registry.history("slugify")] == [1]


def test_any_difference_is_a_new_version(fd: Foundry, kit: type[Kit]) -> None:
    fd.create_tool(kit.slugify())
    changed = fd.create_tool(kit.slugify(description="Turn text into a URL slug, again"))
    assert (changed.version, changed.unchanged) == (2, False)
    # v1 is superseded: resubmitting it is a change like any other, not "unchanged"
    back = fd.create_tool(kit.slugify())
    assert (back.version, back.unchanged) == (3, False)


def test_identical_network_tool_stays_pending_once(
    fd: Foundry, kit: type[Kit], weather_server: str
) -> None:
    fd = Foundry(fd.registry, kit.loopback(weather_server))
    first = fd.create_tool(kit.weather(weather_server))
    assert (first.status, first.version) == ("pending_approval", 1)
    before = kit.snapshot(fd)
    second = fd.create_tool(kit.weather(weather_server))
    assert (second.status, second.version, second.unchanged) == ("pending_approval", 1, True)
    assert kit.snapshot(fd) == before
    assert [v.version for v in fd.registry.pending()] == [1]
    fd.approve("weather", by="alice", reason="fine")
    third = fd.create_tool(kit.weather(weather_server))
    assert (third.status, third.version, third.unchanged) == ("active", 1, True)
    assert fd.registry.pending() == []


def test_cli_create_says_unchanged(db_url: str, kit: type[Kit]) -> None:
    runner = CliRunner()
    path = str(kit.slugify_path)
    assert runner.invoke(main, ["create", path, "--db", db_url]).exit_code == 0
    body = json.loads(runner.invoke(main, ["create", path, "--json", "--db", db_url]).stdout)
    assert (body["status"], body["version"], body["unchanged"]) == ("active", 1, True)
    text = runner.invoke(main, ["create", path, "--db", db_url])
    assert text.exit_code == 0
    assert "slugify v1: active" in text.stdout
    assert "identical to slugify v1 (active): nothing was created" in text.stdout
