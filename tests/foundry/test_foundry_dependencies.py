"""Tools that use tools, through the Python API: a tool whose code calls another is created
active with tests that reach the real callee; its dependency is stored with the callee version
it was tested against; a new version of the callee runs its dependents' suites and is refused,
naming dependent@version and the test, when it breaks one; unknown and inactive callees and
cycles are located refusals; a disabled callee fails its dependents with
``dependency_unavailable`` and ``tools verify`` reports them; a dependent reaches nothing of its
callee's credential or storage."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from tests.factories import error_of
from tests.foundry.conftest import Kit
from tests.shared_drafts import network_draft, word_count_draft

from toolfoundry import Foundry
from toolfoundry.config import parse_config
from toolfoundry.registry import Dependency, Dependent, VersionStatus
from toolfoundry.spec import ErrorKind

TEXTS = {"type": "object", "properties": {"texts": {"type": "array", "items": {"type": "string"}}}}
TOTAL = """export async function handler({ texts }) {
  let n = 0;
  for (const text of texts) n += await tools.word_count({ text });
  return n;
}"""


def total_words(**fields: Any) -> dict[str, Any]:
    """A tool whose code calls word_count; its test reaches the real callee."""
    return {
        "name": "total_words",
        "description": "Count the words of several texts together.",
        "parameters": TEXTS,
        "code": TOTAL,
        "tests": [{"name": "two texts", "input": {"texts": ["a b", " c "]}, "expected": 3}],
        **fields,
    }


def word_count(code: str, **fields: Any) -> dict[str, Any]:
    """A new version of word_count with ``code``, its test replaced by ``tests``."""
    draft = word_count_draft()
    draft.update(code=code, changes_tests=[{"test": "#0", "reason": "a new behaviour"}])
    draft.update(fields)
    return draft


CHARACTERS = "export function handler({ text }) { return text.length; }"
REPORT = "export default async ({ texts }) => `${await tools.total_words({ texts })} words`;"


@pytest.fixture
def fd(fd: Foundry) -> Foundry:
    """The area's foundry with word_count, and total_words calling it."""
    assert fd.create_tool(word_count_draft()).status == "active"
    made = fd.create_tool(total_words())
    assert made.status == "active", made.to_dict()
    return fd


def test_a_tool_calling_a_tool_is_active_and_its_dependency_kept(fd: Foundry) -> None:
    assert fd.registry.dependencies("total_words") == [Dependency("word_count", 1, None, "code")]
    assert fd.registry.dependents(["word_count"]) == {
        "word_count": [Dependent("total_words", 1, VersionStatus.ACTIVE, True, 1)]
    }
    card = fd.show_tool("word_count")
    assert card["uses"] == []
    assert card["used_by"] == [
        {"name": "total_words", "version": 1, "status": "active", "current": True,
         "tested_against": 1}
    ]  # fmt: skip
    assert fd.show_tool("total_words")["uses"] == [
        {"tool": "word_count", "tested_against": 1, "found": "code", "status": "active",
         "current_version": 1}
    ]  # fmt: skip
    # its test called the callee for real, without counting it as usage
    assert fd.usage("word_count").calls == 0
    assert fd.call("total_words", {"texts": ["x y", "z"]}).value == 3


def test_a_breaking_new_version_of_the_callee_is_refused_naming_the_dependent(
    fd: Foundry, kit: type[Kit]
) -> None:
    before = kit.snapshot(fd)
    refused = fd.create_tool(
        word_count(CHARACTERS, tests=[{"input": {"text": "abc"}, "expected": 3}])
    )
    assert refused.status == "rejected"
    assert refused.step.blockers == ("breaks_dependents",)
    assert "total_words@1" in refused.step.message
    assert "'two texts'" in refused.step.message
    [finding] = [f for f in refused.findings if f.blocking]
    assert finding.rule == "breaks_dependent"
    assert finding.message.startswith("total_words@1 calls 'word_count', and its test 'two texts'")
    assert "the returned value differs from expected (-3 +6)" in finding.message  # what differs
    assert kit.snapshot(fd) == before  # nothing stored
    assert fd.show("word_count").version == 1


def test_a_compatible_new_version_passes_its_dependents_suites(fd: Foundry) -> None:
    trimmed = (
        "export function handler({ text }) {"
        " return text.trim().split(/\\s+/).filter(Boolean).length; }"
    )
    made = fd.create_tool(word_count(trimmed, changes_tests=None))
    assert made.status == "active", made.to_dict()
    assert "the suites of 1 tool(s) that call it pass against it" in made.step.message
    # the dependent keeps the version it was tested against; verify notes the move
    assert fd.registry.dependencies("total_words")[0].version == 1
    [verified] = fd.verify(["total_words"]).tools
    assert verified.outcome == "passed"
    assert "it calls word_count v2 (tested against v1)" in verified.message


def test_the_callers_of_the_callers_are_run_too(fd: Foundry) -> None:
    report = {
        "name": "report",
        "description": "Say how many words several texts have.",
        "parameters": TEXTS,
        "code": REPORT,
        "tests": [{"name": "sentence", "input": {"texts": ["a b c"]}, "expected": "3 words"}],
    }
    assert fd.create_tool(report).status == "active"
    # total_words answers from a fixture here: only report's suite reaches word_count, through it
    fixture = {"tool": "word_count", "args": {"text": "a b"}, "value": 2}
    pinned = total_words(
        tests=[
            {"name": "fixed", "input": {"texts": ["a b"]}, "expected": 2, "fixtures": [fixture]}
        ],
        changes_tests=[{"test": "two texts", "reason": "answered by a fixture"}],
    )
    assert fd.create_tool(pinned).status == "active"
    refused = fd.create_tool(
        word_count(CHARACTERS, tests=[{"input": {"text": "abc"}, "expected": 3}])
    )
    assert refused.status == "rejected"
    assert [f.message.split(" calls ")[0] for f in refused.findings if f.blocking] == ["report@1"]


def test_a_test_failing_before_the_change_is_a_warning_not_a_refusal(fd: Foundry) -> None:
    unique = (
        "export function handler({ text, unique }) { const w = text.split(/\\s+/).filter(Boolean);"
        " return unique ? new Set(w).size : w.length; }"
    )
    properties = {"text": {"type": "string"}, "unique": {"type": "boolean"}}
    parameters = {"type": "object", "properties": properties, "required": ["text"]}
    assert fd.create_tool(word_count(unique, changes_tests=None, parameters=parameters)).status == (
        "active"
    )
    distinct = {
        "name": "distinct_words",
        "description": "How many different words a text has.",
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
        "code": "export default ({ text }) => tools.word_count({ text, unique: true });",
        "tests": [{"name": "repeats", "input": {"text": "a a b"}, "expected": 2}],
    }
    assert fd.create_tool(distinct).status == "active"
    fd.rollback("word_count", 1)  # allowed: distinct_words now fails its test
    assert fd.verify(["distinct_words"]).tools[0].failed == ("repeats",)
    # a new version failing it as the current one does is not refused for it
    same_as_v1 = word_count_draft()["code"] + "\n// the first version again"
    # (distinct_words answers as word_count v1 now: the duplicate check is told they differ)
    twin = {"name": "distinct_words", "why": "counts every word"}
    made = fd.create_tool(word_count(same_as_v1, changes_tests=None, distinct_from=twin))
    assert made.status == "active", made.to_dict()
    [warning] = [f for f in made.findings if f.rule == "dependent_failing"]
    assert warning.message.startswith("distinct_words@1's test 'repeats' fails against the current")


def test_past_the_budget_the_dependents_are_named_and_the_version_registered(
    db_url: str,
) -> None:
    config = parse_config({"limits": {"dependent_tests": 0}})
    with Foundry.open(db_url, config=config) as fd:
        assert fd.create_tool(word_count_draft()).status == "active"
        assert fd.create_tool(total_words()).status == "active"
        made = fd.create_tool(
            word_count(CHARACTERS, tests=[{"input": {"text": "abc"}, "expected": 3}])
        )
        assert made.status == "active", made.to_dict()
        [warning] = [f for f in made.findings if f.rule == "dependents_unchecked"]
        assert "total_words@1" in warning.message
        assert "dependent_tests (0" in warning.message
        # verify runs what create could not
        [verified] = fd.verify(["total_words"]).tools
        assert verified.failed == ("two texts",)


def test_an_unknown_or_inactive_callee_is_a_located_refusal(fd: Foundry, kit: type[Kit]) -> None:
    before = kit.snapshot(fd)
    typo = fd.create_tool(total_words(name="typo", code=TOTAL.replace("word_count", "word_cont")))
    assert typo.status == "rejected"
    assert typo.step.blockers == ("unknown_callee",)
    [finding] = typo.findings
    assert (finding.rule, finding.line, finding.column, finding.path) == (
        "unknown_callee",
        3,
        40,
        "$.code",
    )
    assert "did you mean 'word_count'?" in finding.message
    assert fd.create_tool(network_draft("weather", "api.example.com")).status == (
        "pending_approval"
    )
    code = "export default async ({ n }) => tools[n]({ city: 'Oslo' });"
    waits = fd.create_tool(total_words(name="waits", code=code, uses=["weather"]))
    assert waits.step.blockers == ("inactive_callee",)
    [finding] = waits.findings
    assert finding.path == "$.uses[0]"
    assert "v1 is pending_approval" in finding.message
    assert kit.snapshot(fd) == {**before, **_added_by_weather(kit, fd, before)}


def _added_by_weather(kit: type[Kit], fd: Foundry, before: dict[str, int]) -> dict[str, int]:
    """The rows creating the pending weather tool added (the refusals added none)."""
    return {k: v for k, v in kit.snapshot(fd).items() if v != before[k]}


def test_a_cycle_is_refused_at_create_with_its_path(fd: Foundry) -> None:
    itself = word_count(
        "export default async ({ text }) => text ? 1 + await tools.word_count({ text: '' }) : 0;",
        tests=[{"input": {"text": ""}, "expected": 0}],
    )
    made = fd.create_tool(itself)
    assert made.step.blockers == ("dependency_cycle",)
    assert "the tool itself" in made.findings[0].message
    back = word_count(
        "export default async ({ text }) => text ? await tools.total_words({ texts: [] }) : 0;",
        tests=[{"input": {"text": ""}, "expected": 0}],
    )
    made = fd.create_tool(back)
    assert made.status == "rejected"
    assert made.step.blockers == ("dependency_cycle",)
    [finding] = made.findings
    assert "(word_count -> total_words -> word_count)" in finding.message
    assert (finding.line, finding.path) == (1, "$.code")


def test_a_computed_call_is_recorded_from_uses(fd: Foundry) -> None:
    code = (
        "export default async ({ texts }) => tools['word_' + 'count']({ text: texts.join(' ') });"
    )
    twin = {"name": "total_words", "why": "joins the texts first"}
    made = fd.create_tool(
        total_words(name="joined", code=code, uses=["word_count"], distinct_from=twin)
    )
    assert made.status == "active", made.to_dict()
    assert fd.registry.dependencies("joined") == [Dependency("word_count", 1, None, "uses")]


def test_a_disabled_callee_fails_its_dependents_naming_it(fd: Foundry) -> None:
    fd.disable("word_count", by="alice")
    out = fd.call("total_words", {"texts": ["a"]})
    error = error_of(out)
    assert error.kind is ErrorKind.DEPENDENCY_UNAVAILABLE
    assert error.message.startswith("'total_words' depends on 'word_count'")
    assert "disabled (by 'alice')" in error.message
    assert out.details["callee"] == "word_count"
    assert fd.usage("total_words").failures == {"dependency_unavailable": 1}
    report = fd.verify()
    by_name = {t.name: t for t in report.tools}
    assert by_name["total_words"].outcome == "failed"
    assert "'word_count', which is disabled (v1)" in by_name["total_words"].callees[0].message
    assert not report.ok
    # a snippet calling the disabled tool itself still sees the callee's own kind
    assert error_of(fd.run_js("export default await tools.word_count({ text: 'a' });")).kind == (
        ErrorKind.NOT_ACTIVE
    )
    fd.enable("word_count", by="alice")
    assert fd.call("total_words", {"texts": ["a"]}).value == 1


def test_a_dependent_of_a_dependent_fails_naming_its_own_callee(fd: Foundry) -> None:
    report = {
        "name": "report",
        "description": "Say how many words several texts have.",
        "parameters": TEXTS,
        "code": REPORT,
        "tests": [{"input": {"texts": ["a b c"]}, "expected": "3 words"}],
    }
    assert fd.create_tool(report).status == "active"
    fd.disable("word_count", by="alice")
    error = error_of(fd.call("report", {"texts": ["a"]}))
    assert error.kind is ErrorKind.DEPENDENCY_UNAVAILABLE
    assert error.message.startswith(
        "'report' depends on 'total_words', which cannot be called now (dependency_unavailable):"
        " 'total_words' depends on 'word_count'"
    )


SECRET = "Bearer tf-deps-secret-7f3a9b"


class Keeper(BaseHTTPRequestHandler):
    """Answers only with the credential, and reflects the header it got."""

    seen: list[str | None] = []

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization")
        self.seen.append(auth)
        body = json.dumps({"echo": auth}).encode()
        self.send_response(200 if auth == SECRET else 401)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def test_a_dependent_reaches_nothing_of_its_callees_credential_or_storage(
    db_url: str,
    loopback_http: Callable[[type[BaseHTTPRequestHandler]], str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    handler: type[Keeper] = type("K", (Keeper,), {"seen": []})
    host = loopback_http(handler)
    monkeypatch.setenv("TF_DEPS_TOKEN", SECRET)
    config = parse_config(
        tomllib.loads(
            Kit.loopback_config(host)
            + f'[[fetch.credentials]]\nhost = "{host}"\nheader = "Authorization"\n'
            'env = "TF_DEPS_TOKEN"\n'
        )
    )
    keeper = {
        "name": "keeper",
        "description": "Fetch a status with the host's credential and keep what it answered.",
        "code": f"""export async function handler() {{
  const r = await fetch('http://{host}/status');
  const body = await r.json();
  localStorage.setItem('kept', JSON.stringify(body));
  return {{ status: r.status, echo: body.echo }};
}}""",
        "capabilities": {"network": [host], "credentials": [host], "storage": True},
        "fixtures": [{"url": f"http://{host}/status", "body": {"echo": None}}],
        "tests": [{"input": {}, "expected": {"status": 200, "echo": None}}],
    }
    # it asks for its callee's host too, and its own storage: a person approves both, never
    # the callee's credential or namespace
    snoop = {
        "name": "snoop",
        "description": "Call keeper, then look for what keeper holds.",
        "code": f"""export async function handler() {{
  const viaCallee = await tools.keeper({{}});
  const own = await fetch('http://{host}/status');
  return {{ viaCallee, ownStatus: own.status, ownBody: await own.text(),
           kept: localStorage.getItem('kept'), keys: localStorage.length }};
}}""",
        "capabilities": {"network": [host], "storage": True},
        "fixtures": [{"url": f"http://{host}/status", "status": 401, "body": {"echo": None}}],
        "tests": [
            {
                "input": {},
                "expected": {
                    "viaCallee": {"status": 200, "echo": None},
                    "ownStatus": 401,
                    "ownBody": '{"echo": null}',
                    "kept": None,
                    "keys": 0,
                },
                "fixtures": [
                    {"tool": "keeper", "args": {}, "value": {"status": 200, "echo": None}}
                ],
            }
        ],
    }
    with Foundry.open(db_url, config=config) as fd:
        assert fd.create_tool(keeper).status == "pending_approval"
        assert fd.approve("keeper", by="alice").status == "active"
        made = fd.create_tool(snoop)
        assert made.status == "pending_approval", made.test_results[0].diff
        review = fd.show_tool("keeper")
        assert [d["name"] for d in review["used_by"]] == ["snoop"]  # the reviewer sees it
        assert fd.approve("snoop", by="alice").status == "active"
        out = fd.call("snoop", {})
        assert out.ok, out.error
        # the callee ran with its credential (reflected, then redacted before anyone saw it)
        assert out.value["viaCallee"] == {"status": 200, "echo": "[redacted]"}
        # the dependent's own request to the same host went without it
        assert out.value["ownStatus"] == 401
        assert out.value["ownBody"] == '{"echo": null}'
        # and its storage is its own namespace, not the callee's
        assert (out.value["kept"], out.value["keys"]) == (None, 0)
        assert handler.seen == [SECRET, None]
        assert SECRET not in json.dumps(out.to_dict())
        assert fd.registry.storage.get_item("tool:keeper", "kept") is not None
