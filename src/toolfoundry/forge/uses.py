"""The tools a draft's code calls (code mode): read from the code, and named in ``uses``.

A dependency the forge cannot see is one whose changes would break the tool silently: a new
version of a callee runs the suites of the tools that use it (foundry/dependents.py), and only
the recorded ones. So a site that calls a tool by a name computed as the code runs
(``tools[name](...)``) is an error unless the draft lists in ``uses`` the tools it may call,
and while the draft's tests run, its code's calls of any tool outside what it declared are
refused (forge/tool_fixtures.py), naming the tool to add. A declaration named ``tools`` hides
the global and the calls both: it is an error too.
"""

from __future__ import annotations

from dataclasses import dataclass

from toolfoundry.forge.checks.js_tools import ToolCalls, tool_calls
from toolfoundry.forge.draft import Draft, Language
from toolfoundry.forge.findings import Finding, Severity

CODE, USES = "code", "uses"


@dataclass(frozen=True)
class Use:
    """One tool a draft's code calls, and where the draft says so.

    Attributes:
        name: the tool (a registry tool's name, or ``UPSTREAM.TOOL``).
        found: ``code`` (read from the code) or ``uses`` (named in the draft's ``uses``).
        path: ``$.code``, or ``$.uses[i]``.
        line: the first call site's line, when found in the code.
        column: its column.
    """

    name: str
    found: str
    path: str
    line: int | None = None
    column: int | None = None

    def finding(self, rule: str, message: str) -> Finding:
        """An error about this use, located where the draft names the tool."""
        return Finding(rule, Severity.ERROR, message, self.line, self.column, self.path)


def draft_uses(draft: Draft) -> tuple[Use, ...]:
    """Every tool the draft's code may call: those its code names, then those only ``uses``
    names (a Python tool calls none)."""
    if draft.language is not Language.JAVASCRIPT:
        return ()
    calls = tool_calls(draft.code)
    out: list[Use] = []
    for name in calls.names:
        site = calls.first_site(name)
        assert site is not None
        out.append(Use(name, CODE, "$.code", site.line, site.column))
    named = set(calls.names)
    out += [Use(n, USES, f"$.uses[{i}]") for i, n in enumerate(draft.uses) if n not in named]
    return tuple(out)


def use_findings(draft: Draft) -> list[Finding]:
    """The static check's errors about ``tools``: a binding that hides it, and a computed call
    when the draft's ``uses`` names no tool."""
    if draft.language is not Language.JAVASCRIPT or "tools" not in draft.code:
        return []
    calls: ToolCalls = tool_calls(draft.code)
    out = [
        Finding(
            "tools_shadowed",
            Severity.ERROR,
            "`tools` is code mode's global (the registry's tools); declaring a variable, "
            "parameter or import of that name hides it, and hides from the forge which tools "
            "the code calls: name it otherwise",
            site.line,
            site.column,
        )
        for site in calls.shadowed
    ]
    if not out and not draft.uses:  # a shadowed `tools` makes every other site moot
        out += [
            Finding(
                "computed_tool_call",
                Severity.ERROR,
                f"`{site.form}` reaches tools by a name computed as the code runs, so the forge "
                "cannot see which tool it calls: name each tool it may call in the draft's "
                '`uses` (["word_count", ...]); the tests then refuse a call of any other',
                site.line,
                site.column,
            )
            for site in calls.computed
        ]
    return out
