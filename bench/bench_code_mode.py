"""Code mode: what a snippet calling the registry's tools costs, and what it saves a model.

    .venv/bin/python bench/bench_code_mode.py [--rounds 15]

Every ratio is measured in one run, the sides interleaved round by round (ABBA), medians:

1. Ten inner calls of a trivial tool from one snippet (``Foundry.run_js``: the snippet, ten
   ``await tools.inc(...)``, the run kept) against ten ``Foundry.call`` of it from Python.
   Goal: <= 0.5x.
2. One inner call of the trivial tool against a bare ``run_js`` of the callee's code: what one
   inner call adds to a snippet (ten inner calls, less a snippet making none, over ten)
   against ``toolfoundry.sandbox.run_js`` of ``inc``'s module. Goal: <= 1.5x. Also the whole
   door: ``Foundry.run_js`` of a snippet making one inner call against one making none.
3. A five-step task done by a scripted client of ``toolfoundry serve`` over stdio (the
   official MCP SDK): five tool calls, each result read and sent on, against one ``run_js``
   snippet doing the same. Counted: calls, and the characters of every result's text the
   client receives (what a model would read). Goal: 5 -> 1 calls, >= 80 % fewer characters.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from harness import (
    RatioTable,
    goal_line,
    interleaved,
    print_load_after,
    print_load_before,
    print_machine,
    seconds,
)
from toolfoundry import Foundry
from toolfoundry.sandbox import SandboxPolicy, run_js

INC = "export function handler({ x }) { return x + 1; }"
NUMBER = {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"]}
TEN = "let x = 0; for (let i = 0; i < 10; i++) x = await tools.inc({ x }); export default x;"
ONE = "export default await tools.inc({ x: 1 });"
BARE = "export default ((x) => x + 1)(1);"  # the callee's work, as a one-off module

TEXT = {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}
# The five-step task's tools: a document, then four steps over it.
TASK_TOOLS: list[dict[str, Any]] = [
    {
        "name": "doc",
        "description": "The text of a stored document, by name.",
        "parameters": {
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"],
        },
        "code": (
            "const W = ['tools', 'code', 'model', 'sandbox', 'registry', 'call', 'test', "
            "'version', 'approval', 'network', 'storage', 'result'];\n"
            "export function handler({ name }) {\n"
            "  const out = [];\n"
            "  for (let i = 0; i < 480; i++) out.push(W[(i * 7 + name.length * 3 + (i >> 3)) % "
            "W.length]);\n"
            "  const text = out.join(' ');\n"
            "  return { name, text: text[0].toUpperCase() + text.slice(1) + '.' };\n"
            "}"
        ),
        # its test (its own output for one name) is added by seed()
    },
    {
        "name": "word_count",
        "description": "Count the words of a text.",
        "parameters": TEXT,
        "code": "export function handler({ text }) { return text.split(/\\s+/).filter(Boolean)"
        ".length; }",
        "tests": [{"input": {"text": "a b"}, "expected": 2}],
    },
    {
        "name": "top_words",
        "description": "The k most frequent words of a text, with their counts.",
        "parameters": {
            "type": "object",
            "properties": {"text": {"type": "string"}, "k": {"type": "integer"}},
            "required": ["text", "k"],
        },
        "code": (
            "export function handler({ text, k }) {\n"
            "  const n = new Map();\n"
            "  for (const w of text.toLowerCase().match(/[a-z]+/g) || [])\n"
            "    n.set(w, (n.get(w) || 0) + 1);\n"
            "  return [...n].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, k);\n"
            "}"
        ),
        "tests": [{"input": {"text": "a b a", "k": 1}, "expected": [["a", 2]]}],
    },
    {
        "name": "shout",
        "description": "Upper-case a text.",
        "parameters": TEXT,
        "code": "export function handler({ text }) { return text.toUpperCase(); }",
        "tests": [{"input": {"text": "hi"}, "expected": "HI"}],
    },
    {
        "name": "summary",
        "description": "One line summing up a document's facts.",
        "parameters": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "words": {"type": "integer"},
                "top": {"type": "array"},
                "title": {"type": "string"},
            },
            "required": ["name", "words", "top", "title"],
        },
        "code": (
            "export function handler({ name, words, top, title }) {\n"
            "  return `${name}: ${words} words, mostly ${top.map((t) => t[0]).join(', ')}; "
            "${title.slice(0, 40)}`;\n"
            "}"
        ),
        "tests": [
            {
                "input": {"name": "n", "words": 2, "top": [["a", 2]], "title": "T"},
                "expected": "n: 2 words, mostly a; T",
            }
        ],
    },
]
TASK_SNIPPET = """export async function handler({ name }) {
  const { text } = await tools.doc({ name });
  const words = await tools.word_count({ text });
  const top = await tools.top_words({ text, k: 3 });
  const title = await tools.shout({ text: text.slice(0, 60) });
  return await tools.summary({ name, words, top, title });
}"""


def seed(fd: Foundry) -> None:
    made = fd.create_tool(
        {
            "name": "inc",
            "description": "x + 1.",
            "parameters": NUMBER,
            "code": INC,
            "tests": [{"input": {"x": 1}, "expected": 2}],
        }
    )
    assert made.status == "active", made.to_dict()
    doc = TASK_TOOLS[0]
    expected = fd.run_js(doc["code"], {"name": ""}).value  # its own output is its test
    TASK_TOOLS[0] = {**doc, "tests": [{"input": {"name": ""}, "expected": expected}]}
    for draft in TASK_TOOLS:
        made = fd.create_tool(draft)
        assert made.status == "active", made.to_dict()


class MsTable(RatioTable):
    """A RatioTable in milliseconds (these calls take one or a few)."""

    def head(self) -> None:
        print(f"{'measure':{self.width}} {'ours':>9} {'baseline':>9} {'ratio':>7}  baseline")

    def line(self, name: str, ours: float, base: float, what: str) -> None:
        ms = f"{ours * 1e3:7.3f}ms {base * 1e3:7.3f}ms"
        print(f"{name:{self.width}} {ms} {ours / base:6.2f}x  {what}")


def call_ratios(fd: Foundry, rounds: int) -> None:
    table = MsTable(34)
    table.head()
    policy = SandboxPolicy.under(fd.config.limits)

    def ten_calls() -> None:
        for i in range(10):
            assert fd.call("inc", {"x": i}).ok

    def ten_inner() -> None:
        assert fd.run_js(TEN).value == 10

    got = interleaved(
        {
            "inner": lambda: seconds(ten_inner),
            "calls": lambda: seconds(ten_calls),
            "none": lambda: seconds(lambda: fd.run_js(BARE)),
            "callee": lambda: seconds(lambda: run_js(INC, {"x": 1}, policy)),
        },
        rounds,
        abba=True,
        warm=3,
    )
    table.line("10 inner calls in one snippet", got["inner"], got["calls"], "10 Foundry.call")
    # what one inner call adds to a snippet: (ten inner calls - none) / 10
    marginal = (got["inner"] - got["none"]) / 10
    table.line("one inner call, marginal", marginal, got["callee"], "sandbox.run_js of its code")
    ten = got["inner"] / got["calls"]
    goal_line(
        "10 inner calls in one snippet vs 10 Foundry.call", ten, goal="<= 0.5x", met=ten <= 0.5
    )
    one = marginal / got["callee"]
    goal_line("one inner call vs a bare run_js of the callee", one, goal="<= 1.5x", met=one <= 1.5)

    got = interleaved(
        {
            "one": lambda: seconds(lambda: fd.run_js(ONE)),
            "runjs": lambda: seconds(lambda: fd.run_js(BARE)),
        },
        rounds * 4,
        abba=True,
        warm=5,
    )
    table.line("a snippet making one inner call", got["one"], got["runjs"], "Foundry.run_js, none")


def mcp_task(db: str, cwd: Path) -> None:
    import anyio
    import mcp_types as types
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    def text_of(result: types.CallToolResult) -> str:
        return "".join(b.text for b in result.content if isinstance(b, types.TextContent))

    async def scenario() -> dict[str, tuple[int, int, str]]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "toolfoundry", "serve", "--db", db], cwd=str(cwd)
        )
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            steps: list[str] = []
            # five tool calls: each result comes back to the client, and goes out again
            got = await session.call_tool("doc", {"name": "report"})
            steps.append(text_of(got))
            text = json.loads(steps[-1])["text"]
            got = await session.call_tool("word_count", {"text": text})
            steps.append(text_of(got))
            words = json.loads(steps[-1])
            got = await session.call_tool("top_words", {"text": text, "k": 3})
            steps.append(text_of(got))
            top = json.loads(steps[-1])
            got = await session.call_tool("shout", {"text": text[:60]})
            steps.append(text_of(got))
            title = json.loads(steps[-1])
            args = {"name": "report", "words": words, "top": top, "title": title}
            got = await session.call_tool("summary", args)
            steps.append(text_of(got))
            five = json.loads(steps[-1])
            one = await session.call_tool(
                "run_js", {"code": TASK_SNIPPET, "args": {"name": "report"}}
            )
            code_mode = text_of(one)
            assert json.loads(code_mode)["value"] == five, (code_mode, five)
            return {
                "five tool calls": (5, sum(len(s) for s in steps), five),
                "one run_js": (1, len(code_mode), json.loads(code_mode)["value"]),
            }

    out = anyio.run(scenario)
    calls_5, chars_5, answer = out["five tool calls"]
    calls_1, chars_1, _ = out["one run_js"]
    print(f"five-step task over MCP stdio: {answer!r}")
    print(f"{'way':20} {'calls':>5} {'characters returned':>20}")
    print(f"{'five tool calls':20} {calls_5:>5} {chars_5:>20}")
    print(f"{'one run_js':20} {calls_1:>5} {chars_1:>20}")
    fewer = 100 * (1 - chars_1 / chars_5)
    print(f"calls {calls_5} -> {calls_1}; characters {fewer:.1f} % fewer")
    goal_line(
        "a five-step task: MCP calls, one run_js vs five tool calls",
        calls_1 / calls_5,
        goal="5 -> 1 calls",
        met=calls_1 == 1 and calls_5 == 5,
    )
    goal_line(
        "a five-step task: characters returned, one run_js vs five tool calls",
        chars_1 / chars_5,
        goal="<= 0.2x (>= 80 % fewer)",
        met=fewer >= 80,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    print_machine()
    print_load_before()
    with tempfile.TemporaryDirectory() as tmp:
        db = f"sqlite:///{Path(tmp) / 'registry.db'}"
        with Foundry.open(db) as fd:
            seed(fd)
            call_ratios(fd, args.rounds)
        mcp_task(db, Path(tmp))
    print_load_after()


if __name__ == "__main__":
    main()
