"""A draft that gives ``base_version`` and ``patch`` in place of ``code``.

The base version's code is read from the registry and the patch applied to it
(forge/patch.py) before the forge parses the draft, which then is an ordinary draft with that
code: checked, tested and gated like any other. Every reason it cannot be is a located problem
(``$.base_version``, ``$.patch`` naming the hunk), as for any other field.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from toolfoundry.forge.draft_fields import DraftError
from toolfoundry.forge.patch import PatchProblem, apply_patch
from toolfoundry.registry import Registry, RegistryError
from toolfoundry.spec import Problem

PATCH_KEYS = ("base_version", "patch")


def gives_patch(draft: Mapping[str, Any]) -> bool:
    """Whether the draft gives a patch or a base version (either asks for this path)."""
    return any(draft.get(key) is not None for key in PATCH_KEYS)


def draft_from_patch(registry: Registry, draft: Mapping[str, Any]) -> dict[str, object]:
    """``draft`` with ``code`` made from ``base_version``'s code and ``patch``.

    Raises:
        DraftError: every problem found, located (``$.patch`` names the hunk that does not
            apply).
    """
    problems: list[Problem] = []
    name, base, patch = draft.get("name"), draft.get("base_version"), draft.get("patch")
    for other in ("code", "from_run"):
        if draft.get(other) is not None:
            problems.append(Problem("$.patch", f"give {other} or a patch, not both"))
    if not isinstance(patch, str) or not patch.strip():
        what = "missing" if patch is None else "must be a non-empty string"
        problems.append(Problem("$.patch", f"{what}: a unified diff against base_version's code"))
    if base is None:
        problems.append(
            Problem(
                "$.base_version",
                "missing: the version whose code the patch is against (see tool_history)",
            )
        )
    elif isinstance(base, bool) or not isinstance(base, int) or base < 1:
        problems.append(Problem("$.base_version", "must be a version number (1, 2, ...)"))
    if problems:
        raise DraftError(problems)
    if not isinstance(name, str):
        return dict(draft)  # the forge's parse reports the name, and the patch it could not use
    assert isinstance(base, int)
    assert isinstance(patch, str)
    try:
        code = registry.get(name, base).code
    except RegistryError:
        message = f"{name!r} has no version {base} (tool_history lists its versions)"
        raise DraftError([Problem("$.base_version", message)]) from None
    try:
        patched = apply_patch(code, patch)
    except PatchProblem as exc:
        message = f"{exc} (the base is v{base} of {name!r}; show_tool gives its code)"
        raise DraftError([Problem("$.patch", message)]) from None
    out = {k: v for k, v in draft.items() if k not in PATCH_KEYS}
    out["code"] = patched
    return out
