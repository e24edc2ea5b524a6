"""Approvals and lifecycle under hostile timing and hostile drafts, through the
Python API and the CLI: an approval binds the version the reviewer saw."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from click.testing import CliRunner
from tests.factories import error_of
from tests.shared_drafts import network_draft

from toolfoundry import Foundry
from toolfoundry.cli import main
from toolfoundry.registry import AGENT_ACTOR, RegistryError, VersionStatus

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit


def _two_pending(fd: Foundry) -> None:
    """weather v1 and v2 both waiting (v2 arrived after a reviewer may have looked at v1)."""
    first = network_draft("weather", "api.example.com")
    assert fd.create_tool(first).status == "pending_approval"
    later = {**first, "description": "Temperature, now from somewhere else"}
    assert fd.create_tool(later).status == "pending_approval"


def _statuses(fd: Foundry, name: str) -> list[str]:
    return [v.status.value for v in fd.history(name)]


def test_approve_without_version_refuses_when_several_are_pending(fd: Foundry) -> None:
    _two_pending(fd)
    decision = fd.approve("weather", by="alice")
    assert decision.step.blockers == ("ambiguous_version",)
    assert "v1, v2" in decision.step.message
    assert "weather@VERSION" in decision.step.message
    assert decision.step.details["pending_versions"] == [1, 2]
    assert (decision.version, decision.status) == (None, None)
    assert fd.reject("weather", by="alice", reason="no").step.blockers == ("ambiguous_version",)
    assert _statuses(fd, "weather") == ["pending_approval", "pending_approval"]
    with pytest.raises(RegistryError) as raised:  # the registry holds the same rule itself
        fd.registry.decide("weather", None, approve=True, by="alice", reason="")
    assert raised.value.kind == "ambiguous_version"
    assert _statuses(fd, "weather") == ["pending_approval", "pending_approval"]

    # v1 first: once v2 is active, v1 is superseded (tests/foundry/test_foundry_stale_approvals.py)
    assert fd.approve("weather", 1, by="alice").status == "active"
    single = fd.approve("weather", by="alice")  # one pending left: allowed, and named
    assert (single.version, single.status) == (2, "active")
    assert single.step.message == "weather v2 approved and active"
    assert [e.event.value for e in fd.audit("weather")].count("approved") == 2


def test_cli_approve_names_the_version_it_approved(db_url: str) -> None:
    runner = CliRunner()

    def cli(*args: str):  # type: ignore[no-untyped-def]
        return runner.invoke(main, [*args, "--db", db_url])

    fd = Foundry.open(db_url)
    _two_pending(fd)
    shown = cli("approvals", "show", "weather")
    assert shown.exit_code == 0
    assert "2 versions await approval (v1, v2); approve NAME@VERSION" in shown.stdout
    refused = cli("approvals", "approve", "weather", "--by", "alice")
    assert refused.exit_code == 1
    assert "ambiguous_version" in refused.stderr
    assert "v1, v2" in refused.stderr
    as_json = cli("approvals", "approve", "weather", "--json")
    assert json.loads(as_json.stdout)["step"]["details"]["pending_versions"] == [1, 2]
    assert _statuses(fd, "weather") == ["pending_approval", "pending_approval"]

    assert cli("approvals", "reject", "weather@1", "--reason", "old", "--by", "bob").exit_code == 0
    approved = cli("approvals", "approve", "weather", "--by", "alice")
    assert approved.exit_code == 0
    assert "weather v2 approved and active" in approved.stdout
    assert fd.show("weather").status is VersionStatus.ACTIVE
    fd.close()


def _disabled_slugify(fd: Foundry, kit) -> None:  # type: ignore[no-untyped-def]
    """slugify v1 and v2 both active, v2 current, then disabled by alice."""
    assert fd.create_tool(kit.slugify()).status == "active"
    assert fd.create_tool(kit.slugify(code=kit.better)).version == 2
    assert fd.disable("slugify", by="alice").status is VersionStatus.DISABLED


def test_a_disabled_tool_runs_at_no_version_and_an_agent_cannot_switch_it_on(
    fd: Foundry, kit: type[Kit]
) -> None:
    _disabled_slugify(fd, kit)
    for version in (None, 1, 2):
        out = fd.call("slugify", {"text": "A b"}, version=version)
        assert out.error is not None
        assert error_of(out).kind.value == "not_active"
        assert "disabled (by 'alice')" in error_of(out).message
    with pytest.raises(RegistryError) as raised:
        fd.rollback("slugify", 1, by=AGENT_ACTOR)
    assert raised.value.kind == "disabled"
    assert "'alice'" in raised.value.message
    assert fd.show("slugify").version == 2  # the pointer did not move

    # a new version would switch it on as well: refused, located, nothing stored
    again = fd.create_tool(kit.slugify(description="Slugs again"))
    assert again.status == "rejected"
    assert again.findings[0].path == "$.name"
    assert "disabled (by 'alice')" in again.findings[0].message
    assert [v.version for v in fd.history("slugify")] == [1, 2]

    # a person still can: rollback by a person, or enable
    assert fd.rollback("slugify", 1, by="bob").version == 1
    assert fd.call("slugify", {"text": "A b"}).value == "a-b"
    pinned = fd.call("slugify", {"text": "A b"}, version=2)  # the version alice disabled
    assert pinned.error is not None
    assert error_of(pinned).message == "'slugify' version 2 is disabled; only active versions run"
    fd.disable("slugify", by="alice")
    assert fd.call("slugify", {"text": "x"}, version=1).error is not None
    assert fd.enable("slugify", by="carol").status is VersionStatus.ACTIVE
    assert fd.call("slugify", {"text": "x"}, version=1).ok
    actors = [(e.event.value, e.actor) for e in fd.audit("slugify")]
    assert ("rolled_back", "bob") in actors
    assert ("enabled", "carol") in actors
    assert ("rolled_back", AGENT_ACTOR) not in actors


def test_cli_disabled_tool_pinned_call_is_refused(db_url: str, kit) -> None:  # type: ignore[no-untyped-def]
    runner = CliRunner()
    fd = Foundry.open(db_url)
    assert fd.create_tool(kit.slugify()).status == "active"
    assert fd.create_tool(kit.slugify(code=kit.better)).version == 2
    disabled = runner.invoke(main, ["tools", "disable", "slugify", "--db", db_url])
    assert disabled.exit_code == 0
    pinned = runner.invoke(
        main,
        ["call", "slugify", "--version", "1", "--args", '{"text": "a"}', "--json", "--db", db_url],
    )
    assert pinned.exit_code == 1
    error = json.loads(pinned.stdout)["error"]
    assert error["kind"] == "not_active"
    assert "disabled (by" in error["message"]
    back = runner.invoke(main, ["tools", "rollback", "slugify", "1", "--db", db_url])
    assert back.exit_code == 0  # the CLI user is a person
    assert fd.call("slugify", {"text": "A b"}).value == "a-b"
    fd.close()


def test_the_audit_actor_is_who_acted_and_the_author_a_field(fd: Foundry, kit) -> None:  # type: ignore[no-untyped-def]
    claimed = kit.slugify(author="security-team")  # what the draft says of itself
    assert fd.create_tool(claimed, by="alice").status == "active"
    rows = [e for e in fd.audit("slugify") if e.event.value in {"created", "tested", "activated"}]
    assert {e.actor for e in rows} == {"alice"}
    assert rows[0].detail["author"] == "security-team"
    assert fd.show("slugify").author == "security-team"
    # the Python API's default actor is its user, never the draft's claim
    fd.create_tool(kit.slugify(code=kit.better, author="security-team"))
    assert fd.audit("slugify")[-1].actor == "user"


def test_cli_create_audits_the_login_name(db_url: str, kit, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import getpass

    draft = tmp_path / "slugify.json"
    draft.write_text(json.dumps(kit.slugify(author="root")))
    created = CliRunner().invoke(main, ["create", str(draft), "--db", db_url])
    assert created.exit_code == 0, created.output
    with Foundry.open(db_url) as fd:
        assert {e.actor for e in fd.audit("slugify")} == {getpass.getuser()}
        assert fd.show("slugify").author == "root"
        disabled = CliRunner().invoke(main, ["tools", "disable", "slugify", "--db", db_url])
        assert disabled.exit_code == 0
        assert fd.audit("slugify")[-1].actor == getpass.getuser()


@pytest.mark.parametrize(
    ("name", "meta"),
    [
        ("create-tool", "create_tool"),
        ("Create_Tool", "create_tool"),
        ("run-js", "run_js"),
        ("RUN_JS", "run_js"),
        ("create_tooI", "create_tool"),  # capital i for the l
        ("search_t0ols", "search_tools"),  # zero for the o
        ("rollback-tool", "rollback_tool"),
    ],
)
def test_names_that_pass_for_a_meta_tool_are_refused(fd: Foundry, kit, name, meta) -> None:  # type: ignore[no-untyped-def]
    made = fd.create_tool(kit.slugify(name=name))
    assert made.status == "rejected"
    problem = next(f for f in made.findings if f.path == "$.name")
    assert f"looks like the meta-tool {meta!r}" in problem.message
    assert fd.tools() == []


def test_a_new_name_that_passes_for_an_existing_tool_is_refused(fd: Foundry, kit) -> None:  # type: ignore[no-untyped-def]
    assert fd.create_tool(kit.slugify()).status == "active"
    for lookalike in ("Slugify", "s1ugify", "SLUGIFY", "sIugify"):
        made = fd.create_tool(kit.slugify(name=lookalike))
        assert made.status == "rejected", lookalike
        problem = next(f for f in made.findings if f.path == "$.name")
        assert "looks like the existing tool 'slugify'" in problem.message
    assert fd.create_tool(kit.slugify(name="tf-slugify")).status == "rejected"  # reserved prefix
    assert [t.name for t in fd.tools()] == ["slugify"]
    # the same name is the next version, and a distinct name is a new tool
    assert fd.create_tool(kit.slugify(code=kit.better)).version == 2
    # a new tool that slugify's tests-passing code already does is its duplicate, unless said
    again = kit.slugify(name="slugify_words")
    assert fd.create_tool(again).duplicate_of == "slugify"
    why = {"name": "slugify", "why": "keeps word boundaries of other scripts"}
    assert fd.create_tool({**again, "distinct_from": why}).status == "active"


def test_cli_create_refuses_run_js_as_a_name(db_url: str, kit, tmp_path) -> None:  # type: ignore[no-untyped-def]
    draft = tmp_path / "run-js.json"
    draft.write_text(json.dumps(kit.slugify(name="run-js")))
    made = CliRunner().invoke(main, ["create", str(draft), "--json", "--db", db_url])
    assert made.exit_code == 1
    finding = json.loads(made.stdout)["findings"][0]
    assert finding["path"] == "$.name"
    assert "looks like the meta-tool 'run_js'" in finding["message"]


LOOKALIKE = "api.g\u0456thub.com"  # a Cyrillic i: the fetch would go to api.xn--gthub-n2e.com
PUNYCODE = "api.xn--gthub-n2e.com"


def test_a_lookalike_host_is_shown_in_both_forms_with_a_warning(db_url: str) -> None:
    from toolfoundry.foundry.review import version_review

    runner = CliRunner()
    with Foundry.open(db_url) as fd:
        made = fd.create_tool(network_draft("weather", LOOKALIKE))
        assert made.status == "pending_approval", made.to_dict()
        detail = version_review(fd, "weather", 1)["capability_details"][0]
    assert detail["value"] == LOOKALIKE
    assert detail["host"]["unicode"] == LOOKALIKE
    assert detail["host"]["ascii"] == PUNYCODE
    assert "mixes Cyrillic and Latin" in detail["host"]["warning"]
    assert "looks like api.github.com" in detail["host"]["warning"]
    assert PUNYCODE in detail["meaning"]
    assert "WARNING" in detail["meaning"]

    for command in (["approvals", "show", "weather"], ["tools", "show", "weather"]):
        out = runner.invoke(main, [*command, "--db", db_url])
        assert out.exit_code == 0, out.output
        flat = " ".join(out.stdout.split())
        assert LOOKALIKE in flat, command
        assert f"(punycode {PUNYCODE}) WARNING:" in flat, command
    listed = runner.invoke(main, ["approvals", "list", "--db", db_url], env={"COLUMNS": "400"})
    assert f"{LOOKALIKE} (punycode {PUNYCODE}) WARNING" in listed.stdout


def test_an_ascii_host_is_shown_as_it_is(db_url: str) -> None:
    from toolfoundry.forge import explain_capabilities
    from toolfoundry.spec import Capabilities

    detail = explain_capabilities(Capabilities.from_dict({"network": ["api.github.com"]}))[0]
    assert detail["shown"] == "api.github.com"
    assert detail["host"] == {
        "unicode": "api.github.com",
        "ascii": "api.github.com",
        "warning": None,
    }
    idn = explain_capabilities(Capabilities.from_dict({"network": ["xn--bcher-kva.example"]}))[0]
    assert (
        idn["shown"] == "bücher.example (punycode xn--bcher-kva.example)"
    )  # one script: no warning


@pytest.mark.parametrize(
    ("pattern", "shown"),
    [
        ("[::1]:8080", "[::1]:8080"),
        ("*.example.com", "*.example.com"),
        ("a.test:8443", "a.test:8443"),
    ],
)
def test_a_host_is_shown_as_its_pattern_spells_it(pattern: str, shown: str) -> None:
    from toolfoundry.forge.host_display import host_view

    view = host_view(pattern)
    assert (view.unicode, view.ascii, view.warning) == (shown, shown, None)
