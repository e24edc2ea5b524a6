"""The two hashes an approval is bound to: the code's and the capability set's.

These are the only implementations; the forge's report, the registry's rows and the approval
check all call them, so a hash computed at create time is the one checked at approve time.

Lone surrogates (``"\\ud800"`` as a character, not as a JavaScript escape) cannot be stored as
text by SQLite or PostgreSQL, so :func:`lone_surrogate_at` lets the draft parser refuse them
with a located problem. :func:`code_sha256` still never raises: it encodes a lone surrogate as
its three UTF-8-style bytes (``surrogatepass``), which for every other string is exactly UTF-8,
so hashes stored before this rule existed keep matching.
"""

from __future__ import annotations

import hashlib
import json

from toolfoundry.spec.capabilities import Capabilities

# Bump when the canonical capability-set form changes; stored hashes then need a migration.
CAPABILITY_SET_VERSION = 1


def code_sha256(code: str) -> str:
    """Hex SHA-256 of the code's UTF-8 bytes (what approvals and duplicate detection bind)."""
    return hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()


def capabilities_hash(capabilities: Capabilities, language: str = "javascript") -> str:
    """Hex SHA-256 of the canonical capability set (every field explicit, sorted).

    The language is part of the set: the Python tier is itself a capability.
    """
    canonical = {
        "v": CAPABILITY_SET_VERSION,
        "language": language,
        "network": sorted(capabilities.network),
        "credentials": sorted(capabilities.credentials),
        "storage": capabilities.storage.value,
        "system": capabilities.system,
    }
    # ensure_ascii (the default) escapes every non-ASCII character: the text is plain ASCII
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def lone_surrogate_at(text: str) -> int | None:
    """The index of the first lone surrogate in ``text`` (which UTF-8 cannot encode), or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None
