"""What a human reviewer is shown about a version: the web page, its API and
``toolfoundry approvals`` all show this one packet."""

from __future__ import annotations

from typing import Any

from toolfoundry.forge import code_diff, explain_capabilities
from toolfoundry.foundry import Foundry
from toolfoundry.registry import RegistryError, ToolVersion


def _current(fd: Foundry, name: str) -> ToolVersion | None:
    try:
        return fd.show(name)
    except RegistryError:
        return None


def version_review(fd: Foundry, name: str, version: int) -> dict[str, Any]:
    """One version in full, plus what a reviewer needs: the diff against the current
    version (for the current version itself: against the version it was made from; for a
    first version: against nothing), what each capability means, and why the policy asked
    for a human.

    Raises:
        RegistryError: ``not_found``.
    """
    v = fd.show(name, version)
    current = _current(fd, name)
    against, base = None, "none"
    if current is not None and current.version != v.version:
        against, base = current, "current"
    elif v.parent_version is not None:
        # The current version itself: show what it changed from the version it was made from.
        against, base = fd.show(name, v.parent_version), "parent"
    policy = v.extra.get("policy") or {}
    return {
        **v.to_dict(),
        "reasons": list(policy.get("reasons", [])),
        "capability_details": explain_capabilities(v.capabilities, v.language),
        "current_version": current.version if current else None,
        "diff_against": against.version if against else None,
        "diff_base": base,
        "diff": code_diff(
            against.code if against else None,
            v.code,
            "handler.py" if v.language == "python" else "handler.js",
        ),
    }


def pending_reviews(fd: Foundry) -> list[dict[str, Any]]:
    """Every version awaiting a human, oldest first, as :func:`version_review` shows it."""
    return [version_review(fd, v.name, v.version) for v in fd.pending()]
