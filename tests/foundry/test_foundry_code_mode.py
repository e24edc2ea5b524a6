"""Code mode through the foundry: a snippet or a tool's code calls registry tools, each a real
call (the callee's schema and own capabilities, usage and audit naming the caller), bounded
in time, depth and count; runs are kept.

Tools whose code calls tools are registered here through the registry's API (the forge's side
of tools that use tools, their dependencies and dependents' suites, is tested with it).
"""

from __future__ import annotations

import dataclasses
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler
from typing import Any

import pytest
from tests.factories import error_of
from tests.shared_drafts import word_count_draft

from toolfoundry import Foundry
from toolfoundry.config import parse_config
from toolfoundry.registry import NewVersion, VersionStatus
from toolfoundry.registry.code_runs import CodeRunRow
from toolfoundry.spec import Capabilities, ErrorKind, StorageScope
from toolfoundry.spec.limits import MIB

SECRET = "Bearer tf-secret-9c1d2e7a41b0"
OBJECT = {"type": "object"}


class Weather(BaseHTTPRequestHandler):
    """Answers ``{"city", "temp"}`` only with the credential, and reflects it back (the
    redactor must take it out before the script sees it)."""

    seen: list[str | None] = []

    def do_GET(self) -> None:
        auth = self.headers.get("Authorization")
        self.seen.append(auth)
        city = self.path.rpartition("=")[2]
        status, body = (200, {"city": city, "temp": len(city), "echo": auth})
        if auth != SECRET:
            status, body = 401, {"error": "no credential"}
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server(loopback_http: Callable[[type[BaseHTTPRequestHandler]], str]) -> str:
    return loopback_http(type("W", (Weather,), {"seen": []}))


def weather_draft(host: str) -> dict[str, Any]:
    return {
        "name": "weather",
        "description": "Current temperature of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
        "code": (
            "export async function handler({ city }) {\n"
            f"  const r = await fetch('http://{host}/w?city=' + city);\n"
            "  const body = await r.json();\n"
            "  if (!r.ok) throw new Error(body.error);\n"
            "  return { temp: body.temp, echo: body.echo };\n"
            "}\n"
        ),
        "capabilities": {"network": [host], "credentials": [host]},
        "fixtures": [{"url": f"http://{host}/w?city=Oslo", "body": {"temp": 4, "echo": None}}],
        "tests": [{"input": {"city": "Oslo"}, "expected": {"temp": 4, "echo": None}}],
    }


def config_for(host: str, **limits: Any) -> Any:
    table: dict[str, Any] = {
        "fetch": {
            "allow_http": [host],
            "allow_private": ["127.0.0.1"],
            "credentials": [{"host": host, "header": "Authorization", "env": "TF_TEST_TOKEN"}],
        }
    }
    if limits:
        table["limits"] = limits
    return parse_config(table)


@pytest.fixture
def code_fd(
    db_url: str, server: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Foundry, str]]:
    monkeypatch.setenv("TF_TEST_TOKEN", SECRET)
    foundry = Foundry.open(db_url, config=config_for(server))
    assert foundry.create_tool(word_count_draft()).status == "active"
    shout = {
        **word_count_draft(),
        "name": "shout",
        "description": "Upper-case a text.",
        "code": "export function handler({ text }) { return text.toUpperCase(); }",
        "tests": [{"input": {"text": "hi"}, "expected": "HI"}],
    }
    assert foundry.create_tool(shout).status == "active"
    assert foundry.create_tool(weather_draft(server)).status == "pending_approval"
    assert foundry.approve("weather", by="alice").status == "active"
    yield foundry, server
    foundry.close()


def register(
    fd: Foundry,
    name: str,
    code: str,
    *,
    status: VersionStatus = VersionStatus.ACTIVE,
    capabilities: Capabilities | None = None,
) -> None:
    """A tool whose code may call tools, registered through the registry's API."""
    fd.registry.add_version(
        NewVersion(
            name=name,
            code=code,
            description=f"{name}, a tool calling tools",
            parameters=OBJECT,
            status=status,
            capabilities=capabilities or Capabilities(),
            test_results=[{"name": "#0", "passed": True}],
        )
    )


THREE = """
export async function handler({ text, city }) {
  const words = await tools.word_count({ text });
  const loud = await tools.shout({ text });
  const { temp, echo } = await tools.weather({ city });
  return { words, loud, temp, echo };
}
"""


def test_a_snippet_calls_three_tools_and_returns_one_aggregate(
    code_fd: tuple[Foundry, str],
) -> None:
    fd, _ = code_fd
    out = fd.run_js(THREE, {"text": "tools that last", "city": "Oslo"})
    assert out.ok, out.error
    # the network tool ran with its own credential; the server reflected it, the redactor
    # took it out before any script saw it
    assert out.value == {"words": 3, "loud": "TOOLS THAT LAST", "temp": 4, "echo": "[redacted]"}
    assert SECRET not in json.dumps(out.to_dict())
    run_id = out.details["run_id"]
    assert out.details["inner_calls"] == 3
    for name in ("word_count", "shout", "weather"):
        [row] = [a for a in fd.audit(name) if a.event.value == "called"]
        assert (row.caller, row.actor) == (f"run:{run_id}", "agent")
        assert fd.usage(name).callers == {"run_js": 1}
    run = fd.registry.code_run(run_id)
    assert run is not None
    assert (run.ok, run.inner_calls, run.code) == (True, 3, THREE)
    assert run.recording is not None
    assert [c["tool"] for c in run.recording["calls"]] == ["word_count", "shout", "weather"]
    assert SECRET not in json.dumps(run.recording)


def test_a_tool_calling_tools_is_audited_as_name_at_version(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    register(fd, "report", THREE)
    out = fd.call("report", {"text": "a b", "city": "Rome"})
    assert out.ok, out.error
    assert out.value["temp"] == 4
    [row] = [a for a in fd.audit("weather") if a.event.value == "called"]
    assert row.caller == "report@1"
    assert fd.usage("weather").callers == {"report": 1}
    assert fd.usage("report").callers == {}  # called directly


def test_a_pending_tool_is_a_catchable_not_active(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    register(fd, "later", "export default 1;", status=VersionStatus.PENDING_APPROVAL)
    out = fd.run_js(
        """export default await tools.later({}).then(
             () => "ran", (e) => [e instanceof ToolError, e.kind, e.tool, e.message]);"""
    )
    assert out.ok, out.error
    is_tool_error, kind, tool, message = out.value
    assert (is_tool_error, kind, tool) == (True, "not_active", "later")
    assert "pending_approval" in message
    missing = fd.run_js("export default await tools.nothing({}).catch((e) => e.kind);")
    assert missing.value == "not_found"


def test_a_cycle_ends_at_the_depth_limit_with_its_kind(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    register(fd, "ping", "export default async (a) => tools.pong(a);")
    register(fd, "pong", "export default async (a) => tools.ping(a);")
    started = time.monotonic()
    out = fd.run_js("export default await tools.ping({});")
    assert out.error is not None
    assert error_of(out).kind is ErrorKind.DEPTH_LIMIT
    assert "inner_call_depth" in error_of(out).message
    assert time.monotonic() - started < 2.0
    # depth 1..4 ran (ping, pong, ping, pong), the fifth was refused
    assert fd.usage("ping").calls + fd.usage("pong").calls == 4
    direct = fd.call("ping", {})
    assert direct.error is not None
    assert error_of(direct).kind is ErrorKind.DEPTH_LIMIT


def test_a_runaway_loop_ends_with_call_limit_within_the_budget(db_url: str) -> None:
    with Foundry.open(db_url, config=parse_config({"limits": {"inner_calls": 50}})) as fd:
        assert fd.create_tool(word_count_draft()).status == "active"
        started = time.monotonic()
        out = fd.run_js("for (;;) await tools.word_count({ text: 'a' });")
        assert out.error is not None
        assert error_of(out).kind is ErrorKind.CALL_LIMIT
        assert fd.usage("word_count").calls == 50
        # a loop that catches the refusal spins until the outer deadline: timeout
        caught = fd.run_js("for (;;) { try { await tools.word_count({ text: 'a' }); } catch {} }")
        assert caught.error is not None
        assert error_of(caught).kind is ErrorKind.TIMEOUT
        assert time.monotonic() - started < 2 * fd.config.limits.timeout_s + 2
        assert fd.usage("word_count").calls == 100
        assert fd.run_js("export default 1;").ok  # the process carries on


def test_depth_zero_forbids_inner_calls(db_url: str) -> None:
    with Foundry.open(db_url, config=parse_config({"limits": {"inner_call_depth": 0}})) as fd:
        fd.create_tool(word_count_draft())
        out = fd.run_js("export default await tools.word_count({ text: 'a' });")
        assert out.error is not None
        assert error_of(out).kind is ErrorKind.DEPTH_LIMIT
        assert fd.usage("word_count").calls == 0


def test_the_outer_deadline_bounds_a_callee_that_never_ends(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    register(fd, "forever", "export default () => { for (;;) {} };")
    started = time.monotonic()
    out = fd.run_js("export default await tools.forever({}).catch((e) => e.kind);")
    assert out.error is not None
    assert error_of(out).kind is ErrorKind.TIMEOUT
    assert time.monotonic() - started < fd.config.limits.timeout_s + 1.5
    [row] = [a for a in fd.audit("forever") if a.event.value == "called"]
    assert row.detail["error"] == "timeout"


def test_inner_arguments_are_validated_against_the_callees_schema(
    code_fd: tuple[Foundry, str],
) -> None:
    fd, _ = code_fd
    out = fd.run_js(
        "export default await tools.word_count({ text: 42 }).catch((e) => [e.kind, e.message]);"
    )
    assert out.ok, out.error
    assert out.value[0] == "invalid_arguments"
    assert "word_count" in out.value[1]


def test_eight_mib_of_arguments_never_reach_the_callee(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    out = fd.run_js(
        """export default await tools.word_count({ text: "x ".repeat(4 * 1024 * 1024) })
             .catch((e) => e.kind);""",
        policy=_big_policy(fd),
    )
    assert out.ok, out.error
    assert out.value == "invalid_arguments"
    assert fd.usage("word_count").calls == 0


def _big_policy(fd: Foundry) -> Any:
    from toolfoundry.sandbox import SandboxPolicy

    return SandboxPolicy(timeout_s=10, memory_bytes=256 * MIB)


def test_a_callee_returning_hostile_values(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    register(fd, "raw", "export default () => JSON.rawJSON('1e999');")
    register(fd, "huge", "export default () => 'x'.repeat(2 * 1024 * 1024);")
    register(fd, "lone", "export default () => '\\ud800';")
    register(
        fd,
        "thrower",
        "export default () => { throw new ToolError('forged', 'capability_denied', 'weather'); };",
    )
    out = fd.run_js(
        """const kinds = [];
           for (const name of ["raw", "huge", "lone", "thrower"])
             kinds.push(await tools.call(name, {}).then(() => "ok", (e) => e.kind));
           export default kinds;"""
    )
    assert out.ok, out.error
    # a forged ToolError inside a callee is that callee's runtime_error, not the kind it names
    assert out.value == ["invalid_output", "output_too_large", "invalid_output", "runtime_error"]


def test_a_dependent_cannot_reach_its_callees_credential_or_storage(
    code_fd: tuple[Foundry, str],
) -> None:
    fd, server = code_fd
    keeper = (
        "export default ({ op }) => op === 'set' ? (localStorage.setItem('k', 'callee-secret'), 1)"
        " : localStorage.getItem('k');"
    )
    register(fd, "keeper", keeper, capabilities=Capabilities(storage=StorageScope.TOOL))
    snoop = f"""export default async () => {{
      const out = {{}};
      out.set = await tools.keeper({{ op: 'set' }});
      out.viaCallee = await tools.keeper({{ op: 'get' }});
      // its own storage namespace is not the callee's
      out.own = localStorage.getItem('k');
      // its own fetch of the callee's host is refused: the callee's allowlist is not its own
      out.fetch = await fetch('http://{server}/w?city=x').then(() => 'reached', (e) => e.message);
      return out;
    }};"""
    register(fd, "snoop", snoop, capabilities=Capabilities(storage=StorageScope.TOOL))
    out = fd.call("snoop", {})
    assert out.ok, out.error
    assert out.value["set"] == 1
    assert out.value["viaCallee"] == "callee-secret"  # through the callee, as the callee
    assert out.value["own"] is None
    assert "reached" not in out.value["fetch"]
    assert SECRET not in json.dumps(out.to_dict())
    # a snippet has no storage or network of its own at all
    bare = fd.run_js(
        f"""export default [
              await fetch('http://{server}/w?city=x').then(() => 'reached', (e) => e.name),
              (() => {{ try {{ return localStorage.getItem('k'); }}
                        catch (e) {{ return e.name; }} }})()];"""
    )
    assert bare.ok, bare.error
    assert "reached" not in bare.value[0]


def test_inner_calls_after_the_answer_are_refused_and_not_recorded(
    code_fd: tuple[Foundry, str],
) -> None:
    fd, _ = code_fd
    out = fd.run_js(
        """export async function handler() {
             (async () => { for (let i = 0; i < 30; i++) await null;
                            await tools.shout({ text: "late" }); })();
             return await tools.word_count({ text: "on time" });
           }"""
    )
    assert out.ok, out.error
    assert out.value == 2
    assert fd.usage("shout").calls == 0
    assert fd.usage("word_count").calls == 1


def test_the_call_path_is_the_same_as_foundry_call(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    fd.disable("shout", by="alice")
    out = fd.run_js("export default await tools.shout({ text: 'x' }).catch((e) => e.message);")
    assert "'shout' is disabled" in out.value
    version = fd.run_js(
        "export default await tools.call('word_count', { text: 'a b' }, { version: 7 })"
        ".catch((e) => e.kind);"
    )
    assert version.value == "not_found"
    pinned = fd.run_js(
        "export default await tools.call('word_count', { text: 'a b' }, { version: 1 });"
    )
    assert pinned.value == 2


@pytest.mark.parametrize("by", ["this foundry", "another connection"])
def test_a_tool_disabled_during_a_snippet_is_refused_from_its_next_inner_call(
    db_url: str, loopback_http: Callable[[type[BaseHTTPRequestHandler]], str], by: str
) -> None:
    """A callee's resolution is read once per outer call while nothing commits (call.py):
    a disable committed between two inner calls still refuses the second."""
    from toolfoundry.sandbox import SandboxPolicy
    from toolfoundry.sandbox.host.fetch import FetchPolicy

    with Foundry.open(db_url) as fd:
        assert fd.create_tool(word_count_draft()).status == "active"
        disabled: list[str] = []

        class Disable(BaseHTTPRequestHandler):
            # the snippet's fetch between its calls: answered once the tool is disabled
            def do_GET(self) -> None:
                if by == "this foundry":
                    fd.disable("word_count", by="alice")
                else:  # as another process would: connections of its own
                    with Foundry.open(db_url) as other:
                        other.disable("word_count", by="alice")
                disabled.append(self.path)
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        host = loopback_http(Disable)
        fetch = FetchPolicy(allow=(host,), allow_http=(host,), allow_private=("127.0.0.1",))
        out = fd.run_js(
            f"""const before = [];
               for (let i = 0; i < 3; i++) before.push(await tools.word_count({{ text: 'a b' }}));
               await fetch('http://{host}/disable');
               const after = await tools.word_count({{ text: 'a b' }}).catch((e) => e.kind);
               export default {{ before, after }};""",
            policy=SandboxPolicy.under(fd.config.limits, fetch=fetch),
        )
        assert out.ok, out.error
        assert disabled == ["/disable"]
        assert out.value == {"before": [2, 2, 2], "after": "not_active"}
        assert fd.usage("word_count").calls == 4  # the refused call is counted too


def test_the_actor_of_inner_calls_is_the_runs(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    out = fd.run_js("export default await tools.word_count({ text: 'a' });", by="carol")
    assert out.ok, out.error
    [row] = [a for a in fd.audit("word_count") if a.event.value == "called"]
    assert (row.actor, row.caller) == ("carol", f"run:{out.details['run_id']}")


def test_concurrent_snippets_each_get_their_own_chain(code_fd: tuple[Foundry, str]) -> None:
    fd, _ = code_fd
    results: list[Any] = []
    lock = threading.Lock()

    def one(i: int) -> None:
        r = fd.run_js(
            "let n = 0; for (let i = 0; i < 5; i++) n += await tools.word_count({ text: 'a b' });"
            " export default n;"
        )
        with lock:
            results.append(r)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.value for r in results] == [10] * 6
    assert fd.usage("word_count").calls == 30
    assert fd.usage("word_count").callers == {"run_js": 30}


def test_runs_are_kept_bounded_in_count_and_age(fd: Foundry) -> None:
    from datetime import timedelta

    from toolfoundry.registry import kept_runs
    from toolfoundry.registry.codecs import now
    from toolfoundry.registry.schema import code_runs as code_runs_table

    ids = [fd.run_js(f"export default {i};").details["run_id"] for i in range(3)]
    assert all(fd.registry.code_run(i) is not None for i in ids)
    old = CodeRunRow(
        id="old",
        started_at=now() - kept_runs.RUN_MAX_AGE - timedelta(minutes=1),
        actor="agent",
        ok=True,
        error_kind=None,
        duration_ms=1.0,
        inner_calls=0,
        code="export default 0;",
        recording=None,
    )
    with fd.registry.engine.begin() as conn:  # written straight, as a week-old process did
        conn.execute(code_runs_table.insert().values(**dataclasses.asdict(old)))
    assert fd.registry.code_run("old") is not None
    fd.run_js("export default 'newest';")
    assert fd.registry.code_run("old") is None  # past the age kept
    fd.registry.calls.record_all([], run=dataclasses.replace(old, id="x", started_at=now()), kept=2)
    kept = [i for i in ids if fd.registry.code_run(i) is not None]
    assert kept == []  # only the newest two are kept
    assert fd.registry.code_run("x") is not None


NAP = {
    "name": "nap",
    "description": "Sleeps for a while, then says how long.",
    "language": "python",
    "parameters": {"type": "object", "properties": {"s": {"type": "number"}}},
    "code": "import time\n\ndef handler(args):\n    time.sleep(args['s'])\n    return args['s']\n",
    "tests": [{"input": {"s": 0}, "expected": 0}],
}


def python_fd(db_url: str, **limits: Any) -> Foundry:
    fd = Foundry.open(db_url, config=parse_config({"limits": limits} if limits else {}))
    if fd.python_executor() is None:
        fd.close()
        pytest.skip("the Python tier is not available here")
    created = fd.create_tool(json.loads(json.dumps(NAP)))
    assert created.status == "pending_approval", created.to_dict()
    fd.approve("nap", by="alice")
    return fd


def test_a_python_tool_is_called_from_a_snippet(db_url: str) -> None:
    with python_fd(db_url) as fd:
        out = fd.run_js("export default [await tools.nap({ s: 0 }), await tools.nap({ s: 0.01 })];")
        assert out.ok, out.error
        assert out.value == [0, 0.01]
        assert fd.usage("nap").callers == {"run_js": 2}


@pytest.mark.slow
def test_an_inner_python_call_waits_in_line_no_longer_than_the_outer_deadline(db_url: str) -> None:
    # one call at 512 MiB holds the whole 512 MiB total; two holders, one after the other,
    # hold it for twice the budget, and the queue alone would wait 30 s
    with python_fd(db_url, python_total_mib=512, python_queue_s=30, timeout_s=1.5) as fd:
        holders = [threading.Thread(target=fd.call, args=("nap", {"s": 1.3})) for _ in range(2)]
        for holder in holders:
            holder.start()
            time.sleep(0.2)
        started = time.monotonic()
        out = fd.run_js("export default await tools.nap({ s: 0 }).catch((e) => e.kind);")
        elapsed = time.monotonic() - started
        for holder in holders:
            holder.join()
        assert elapsed < 1.5 + 1.0
        # the wait ended at the deadline: refused as overloaded, and the snippet is out of time
        assert out.error is not None or out.value == "overloaded", out.to_dict()
