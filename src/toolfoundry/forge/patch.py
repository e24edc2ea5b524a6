"""A draft's code as a unified diff against an earlier version's: applied strictly, or refused
with the hunk that does not apply.

A model improving a tool sends ``base_version`` and ``patch`` instead of the whole code again;
the foundry reads the base version's code and calls :func:`apply_patch`. Parsing and applying
are whatthepatch's (one file, every hunk at the line its header names, every context and
removed line matching exactly: no fuzz, so what is tested is what the model meant).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import whatthepatch
from whatthepatch.exceptions import HunkApplyException, WhatThePatchException

# A file's header: "--- old" then "+++ new". (A hunk removing a line that starts with "-- " right
# before adding one that starts with "++ " reads the same; that rare patch is refused too.)
_FILE_HEADER = re.compile(r"^--- [^\n]*\n\+\+\+ ", re.MULTILINE)


@dataclass(frozen=True)
class PatchProblem(Exception):
    """Why a patch does not apply; ``hunk`` is its 1-based number when one hunk is at fault."""

    message: str
    hunk: int | None = None

    def __str__(self) -> str:
        return self.message


def apply_patch(base: str, patch: str) -> str:
    """``base`` with ``patch`` (a unified diff of one file) applied.

    Raises:
        PatchProblem: the patch is not a unified diff of one file, or a hunk does not apply
            (its number and the first line that differs).
    """
    files = len(_FILE_HEADER.findall(patch))
    if files > 1:  # the parser would read a second file's hunks as the first one's
        raise PatchProblem(f"the patch changes {files} files; a tool's code is one file")
    try:
        diffs = [d for d in whatthepatch.parse_patch(patch) if d.changes]
    except WhatThePatchException as exc:
        raise PatchProblem(f"not a unified diff: {exc}") from None
    if not diffs:
        raise PatchProblem(
            "not a unified diff: no hunk found (give lines such as '@@ -3,2 +3,2 @@' followed "
            "by ' ' context, '-' removed and '+' added lines)"
        )
    if len(diffs) > 1:
        raise PatchProblem(f"the patch changes {len(diffs)} files; a tool's code is one file")
    try:
        lines = whatthepatch.apply_diff(diffs[0], base.splitlines())
    except HunkApplyException as exc:
        hunk = exc.hunk if isinstance(exc.hunk, int) else None
        detail = str(exc).removesuffix(f", in hunk #{hunk}")
        where = f"hunk #{hunk}" if hunk is not None else "a hunk"
        raise PatchProblem(f"{where} does not apply to the base code: {detail}", hunk) from None
    except WhatThePatchException as exc:
        raise PatchProblem(f"does not apply to the base code: {exc}") from None
    text = "\n".join(lines)
    return text + "\n" if text and (base.endswith("\n") or not base) else text
