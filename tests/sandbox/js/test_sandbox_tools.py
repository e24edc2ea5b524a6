"""Code mode in the sandbox: the `tools` global, ToolError, the `tool` op and nested engine runs.

The providers here implement the sandbox's seam (sandbox/host/protocols.py) in a few lines,
some by running another real sandboxed call: the foundry's own provider is tested in
tests/foundry/test_foundry_code_mode.py.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest

from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.host.protocols import ToolRequest
from toolfoundry.sandbox.js.nesting import INLINE_STACK_BYTES, thread_stack_bytes
from toolfoundry.spec import CallResult, ErrorKind
from toolfoundry.spec.limits import MIB


class Keeper:
    """Answers every call from a dict of name -> value (or CallResult), and keeps the
    requests it saw."""

    def __init__(self, answers: dict[str, Any] | None = None) -> None:
        self.answers = answers or {}
        self.seen: list[ToolRequest] = []
        self.closed = 0

    def handler(self, *, deadline: float, caller: str | None) -> Keeper:
        return self

    def call(self, request: ToolRequest) -> CallResult:
        self.seen.append(request)
        answer = self.answers.get(request.name, request.args)
        return answer if isinstance(answer, CallResult) else CallResult.success(answer)

    def close(self) -> None:
        self.closed += 1


def run(code: str, keeper: Keeper | None = None, **policy: Any) -> CallResult:
    return run_js(code, {}, SandboxPolicy(tools=keeper, **policy))


def test_tools_name_and_tools_call_reach_the_provider() -> None:
    keeper = Keeper({"word_count": 3})
    r = run(
        """export async function handler() {
             const a = await tools.word_count({ text: "a b c" });
             const b = await tools.call("echo", { y: [1, "z"] }, { version: 2 });
             const c = await tools["hyphen-name"]();
             return [a, b, c];
           }""",
        keeper,
    )
    assert r.ok, r.error
    assert r.value == [3, {"y": [1, "z"]}, {}]
    assert [(q.name, q.args, q.version) for q in keeper.seen] == [
        ("word_count", {"text": "a b c"}, None),
        ("echo", {"y": [1, "z"]}, 2),
        ("hyphen-name", {}, None),
    ]
    assert r.details["inner_calls"] == 3
    assert keeper.closed == 1  # the handler is closed when the call ends


def test_a_failed_inner_call_is_a_tool_error_the_script_can_catch() -> None:
    keeper = Keeper({"pending": CallResult.failure("not_active", "'pending' version 1 is ...")})
    r = run(
        """export async function handler() {
             try { await tools.pending({}); return "no error"; }
             catch (e) { return [e instanceof ToolError, e instanceof Error, e.name, e.kind,
                                 e.tool, e.message]; }
           }""",
        keeper,
    )
    assert r.ok, r.error
    assert r.value == [
        True,
        True,
        "ToolError",
        "not_active",
        "pending",
        "tools.pending: 'pending' version 1 is ...",
    ]


@pytest.mark.parametrize("kind", ["not_active", "not_found", "depth_limit", "invalid_arguments"])
def test_an_uncaught_tool_error_ends_the_call_with_its_kind(kind: str) -> None:
    keeper = Keeper({"x": CallResult.failure(kind, "refused")})
    r = run("export default await tools.x({});", keeper)
    assert r.error is not None
    assert r.error.kind is ErrorKind(kind)
    assert "tools.x: refused" in r.error.message


def test_a_forged_tool_error_does_not_choose_the_kind() -> None:
    # the script builds its own ToolError: the host answered no such kind, so runtime_error
    r = run("throw new ToolError('fake', 'memory_limit', 'x');", Keeper())
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR


def test_without_a_provider_every_call_is_capability_denied() -> None:
    r = run_js("export default await tools.anything({});")
    assert r.error is not None
    assert r.error.kind is ErrorKind.CAPABILITY_DENIED
    assert "without a tool registry" in r.error.message


def test_tools_is_a_namespace_not_an_object_a_script_can_change() -> None:
    r = run(
        """"use strict";
           const out = [typeof tools, typeof tools.then, Object.keys(tools).length,
                        typeof tools.call, typeof tools.anything];
           for (const change of [() => { tools.x = 1 }, () => { delete tools.call },
                                 () => Object.setPrototypeOf(tools, {})]) {
             try { change(); out.push("changed"); } catch (e) { out.push(e.name); }
           }
           out.push(await tools === tools);  // awaiting the namespace calls nothing
           export default out;""",
        Keeper(),
    )
    assert r.ok, r.error
    assert r.value == [
        "object",
        "undefined",
        0,
        "function",
        "function",
        "TypeError",
        "TypeError",
        "TypeError",
        True,
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        ("tools.call(5)", "name must be a string"),
        ("tools.call('x', {}, 2)", "options must be an object"),
        ("tools.x(1n)", "BigInt"),
    ],
)
def test_malformed_calls_fail_in_the_script(call: str, message: str) -> None:
    keeper = Keeper()
    r = run(f"export default await {call};", keeper)
    assert r.error is not None
    assert r.error.kind is ErrorKind.RUNTIME_ERROR
    assert message in r.error.message
    assert keeper.seen == []


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ('{"name": "x", "args": [1]}', "must be a JSON object"),
        ('{"name": "x", "version": 0}', "positive integer"),
        ('{"name": "x", "version": true}', "positive integer"),
        ('{"args": {}}', "name as a string"),
        ('{"name": "x", "args": {"s": "\\ud800"}}', "surrogate"),
    ],
)
def test_the_host_checks_each_request_whatever_the_prelude_sends(
    payload: str, message: str
) -> None:
    # the raw op, as a script that got past the prelude would send it
    from toolfoundry.base.json_gate import decode
    from toolfoundry.sandbox.host.storage import StorageHook
    from toolfoundry.sandbox.js.host_calls import CallHost
    from toolfoundry.sandbox.js.modules import default_catalog
    from toolfoundry.spec.local_storage import StorageQuota

    keeper = Keeper()
    host = CallHost(
        fetch=None,
        storage=StorageHook(None, "t", StorageQuota()),
        libraries=default_catalog(),
        log_lines=1,
        log_bytes=100,
        deadline=time.monotonic() + 5,
        tools=keeper,
    )
    answer = decode(host.answer("tool", payload.encode()))
    assert answer["error"]["kind"] == "invalid_arguments"
    assert message in answer["error"]["message"]
    assert keeper.seen == []


def test_eight_mib_of_arguments_are_refused_before_the_provider() -> None:
    keeper = Keeper()
    r = run(
        """export default await tools.big({ s: "x".repeat(8 * 1024 * 1024) })
             .catch((e) => [e.kind, e.message.slice(0, 60)]);""",
        keeper,
        memory_bytes=128 * MIB,
        timeout_s=10,
    )
    assert r.ok, r.error
    assert r.value[0] == "invalid_arguments"
    assert keeper.seen == []


def test_a_provider_answer_the_gate_refuses_never_reaches_the_script() -> None:
    keeper = Keeper({"lone": "\ud800"})
    nested: Any = 1
    for _ in range(200):
        nested = [nested]
    keeper.answers["deep"] = nested
    r = run(
        """export default [await tools.lone({}).catch((e) => e.kind),
                           await tools.deep({}).catch((e) => e.kind)];""",
        keeper,
    )
    assert r.ok, r.error
    assert r.value == ["invalid_output", "invalid_output"]


def test_a_call_after_the_answer_is_refused() -> None:
    keeper = Keeper()
    r = run(
        """export async function handler() {
             // a detached chain: its later steps run after the handler's value is decided
             (async () => {
               for (let i = 0; i < 20; i++) await null;
               await tools.late({});
             })();
             await tools.early({});
             return "answered";
           }""",
        keeper,
    )
    assert r.ok, r.error
    assert r.value == "answered"
    assert [q.name for q in keeper.seen] == ["early"]


def test_a_raising_provider_is_a_runtime_error_in_the_script() -> None:
    class Broken(Keeper):
        def call(self, request: ToolRequest) -> CallResult:
            raise RuntimeError("provider bug")

    r = run("export default await tools.x({}).catch((e) => [e.kind, e.message]);", Broken())
    assert r.ok, r.error
    assert r.value == ["runtime_error", "tools.x: the inner call failed: provider bug"]


def test_an_inner_call_made_after_the_deadline_is_a_timeout() -> None:
    class Slow(Keeper):
        def call(self, request: ToolRequest) -> CallResult:
            time.sleep(0.3)
            return CallResult.success(1)

    r = run(
        "await tools.a({}); export default await tools.b({}).catch((e) => e.kind);",
        Slow(),
        timeout_s=0.2,
    )
    assert r.error is not None
    assert r.error.kind is ErrorKind.TIMEOUT


# ---- nested engine runs: a callee that is itself a sandboxed call ----

# Recurses as deep as the engine allows (using its native stack), then calls the next level
# from the bottom of that recursion: every level holds the most native stack a call may use.
DEEP = """
function deep(n) { return n === 0 ? 0 : 1 + deep(n - 1); }
function down(n, a) {
  if (n === 0) return tools.next({ level: a.level + 1 }).catch((e) => ({ error: e.kind }));
  return down(n - 1, a);
}
export async function handler(a) {
  let lo = 1, hi = 1 << 20, best = 0;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    try { deep(mid); best = mid; lo = mid + 1; } catch { hi = mid - 1; }
  }
  const inner = a.level < a.last ? await down(Math.floor(best * 0.9), a) : null;
  return { level: a.level, best, inner };
}
"""


class Nested:
    """Each call runs DEEP again, one level down, in a real sandbox."""

    def __init__(self, last: int) -> None:
        self.last = last
        self.threads: set[str] = set()

    def handler(self, *, deadline: float, caller: str | None) -> Nested:
        return self

    def call(self, request: ToolRequest) -> CallResult:
        self.threads.add(threading.current_thread().name)
        args = {**request.args, "last": self.last}
        return run_js(DEEP, args, SandboxPolicy(tools=self, timeout_s=60))

    def close(self) -> None:
        pass


def levels(value: Any) -> list[int]:
    out = []
    while isinstance(value, dict):
        out.append(value["level"])
        value = value.get("inner")
    return out


@pytest.mark.parametrize("on", ["main thread", "worker thread"])
def test_a_chain_of_16_nested_runs_each_deep_in_recursion_does_not_crash(on: str) -> None:
    # Without a stack of its own per level, the 6th store down on one 8 MiB thread dies of
    # SIGSEGV (the process, not the call); here each level runs on a tf-nested worker.
    provider = Nested(last=16)
    box: list[CallResult] = []

    def outer() -> None:
        policy = SandboxPolicy(tools=provider, timeout_s=60)
        box.append(run_js(DEEP, {"level": 0, "last": 16}, policy))

    if on == "main thread":
        outer()
    else:
        thread = threading.Thread(target=outer)
        thread.start()
        thread.join()
    [r] = box
    assert r.ok, r.error
    assert levels(r.value) == list(range(17))
    # the first level stays on the caller's thread (room for two stores), deeper ones do not
    assert "tf-nested" in provider.threads
    assert threading.current_thread().name in provider.threads or on == "worker thread"


def test_a_thread_with_a_small_stack_hands_even_the_first_level_over() -> None:
    provider = Nested(last=2)
    box: list[CallResult] = []

    actual: list[int | None] = []

    def outer() -> None:
        actual.append(thread_stack_bytes())
        policy = SandboxPolicy(tools=provider, timeout_s=60)
        box.append(run_js(DEEP, {"level": 0, "last": 2}, policy))

    previous = threading.stack_size(4 * MIB)  # room for one store, not two
    try:
        thread = threading.Thread(target=outer, name="small-stack")
        thread.start()
    finally:
        threading.stack_size(previous)
    thread.join()
    [r] = box
    assert r.ok, r.error
    assert levels(r.value) == [0, 1, 2]
    # glibc may hand the thread a cached, larger stack: the rule follows the real one
    [size] = actual
    assert size is not None
    roomy = size >= INLINE_STACK_BYTES
    assert ("small-stack" in provider.threads) is roomy, size


def test_nested_runs_share_the_outer_deadline() -> None:
    deadline = time.monotonic() + 0.4

    class Spinner(Keeper):
        def call(self, request: ToolRequest) -> CallResult:
            # the callee loops forever: its deadline is the outer one, not a fresh 5 s
            return run_js("while (true) {}", {}, SandboxPolicy(timeout_s=5, deadline=deadline))

    started = time.monotonic()
    r = run_js(
        "export default await tools.spin({});",
        {},
        SandboxPolicy(tools=Spinner(), timeout_s=0.4),
    )
    assert r.error is not None
    assert r.error.kind is ErrorKind.TIMEOUT
    assert time.monotonic() - started < 1.5


def test_concurrent_outer_calls_each_with_inner_calls() -> None:
    provider = Nested(last=3)
    results: list[CallResult] = []
    lock = threading.Lock()

    def outer() -> None:
        r = run_js(DEEP, {"level": 0, "last": 3}, SandboxPolicy(tools=provider, timeout_s=60))
        with lock:
            results.append(r)

    threads = [threading.Thread(target=outer) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 6
    for r in results:
        assert r.ok, r.error
        assert levels(r.value) == [0, 1, 2, 3]
