"""forge/patch.py: a unified diff applied strictly, or refused naming the hunk."""

from __future__ import annotations

import difflib

import pytest

from toolfoundry.forge.patch import PatchProblem, apply_patch

BASE = (
    "export function handler({ text }) {\n"
    "  const t = text.trim();\n"
    "  return t.toUpperCase();\n"
    "}\n"
    "\n"
    "function unused() {\n"
    "  return 1;\n"
    "}\n"
)


def unified(old: str, new: str, context: int = 1) -> str:
    lines = difflib.unified_diff(
        old.splitlines(True), new.splitlines(True), "a/handler.js", "b/handler.js", n=context
    )
    return "".join(lines)


def test_a_diff_as_diff_u_writes_it_applies() -> None:
    new = BASE.replace("toUpperCase", "toLowerCase").replace("return 1;", "return 2;")
    assert apply_patch(BASE, unified(BASE, new)) == new
    assert apply_patch(BASE, unified(BASE, new, context=3)) == new


def test_hunks_without_file_headers_apply() -> None:
    patch = "@@ -3,1 +3,1 @@\n-  return t.toUpperCase();\n+  return t.toLowerCase();\n"
    assert apply_patch(BASE, patch) == BASE.replace("toUpperCase", "toLowerCase")


def test_a_base_without_a_final_newline_keeps_none() -> None:
    base = "export default 1;\nexport const two = 2;"
    patch = "@@ -1,1 +1,1 @@\n-export default 1;\n+export default 3;\n"
    assert apply_patch(base, patch) == "export default 3;\nexport const two = 2;"


def test_a_hunk_that_does_not_match_is_named_with_the_line() -> None:
    new = BASE.replace("toUpperCase", "toLowerCase").replace("return 1;", "return 2;")
    stale = unified(BASE, new).replace("-  return 1;", "-  return 9;")
    with pytest.raises(PatchProblem) as err:
        apply_patch(BASE, stale)
    assert err.value.hunk == 2
    assert str(err.value).startswith("hunk #2 does not apply to the base code: ")
    assert '"  return 1;"' in str(err.value)


def test_a_hunk_past_the_end_is_refused() -> None:
    with pytest.raises(PatchProblem) as err:
        apply_patch(BASE, "@@ -100,1 +100,1 @@\n-a\n+b\n")
    assert err.value.hunk == 1
    assert "does not exist" in str(err.value)


@pytest.mark.parametrize("patch", ["", "make it lower case", "--- a/x\n+++ b/x\n"])
def test_text_that_is_not_a_diff_is_refused(patch: str) -> None:
    with pytest.raises(PatchProblem) as err:
        apply_patch(BASE, patch)
    assert err.value.hunk is None
    assert str(err.value).startswith("not a unified diff")


def test_a_patch_of_two_files_is_refused() -> None:
    one = unified(BASE, BASE.replace("toUpperCase", "toLowerCase"))
    two = one.replace("handler.js", "other.js")
    with pytest.raises(PatchProblem) as err:
        apply_patch(BASE, one + two)
    assert "2 files" in str(err.value)
