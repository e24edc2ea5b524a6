"""The two hashes an approval is bound to (the code's and the capability set's), and a
version's identity (what an identical resubmission shares).

These are the only implementations; the forge's report, the registry's rows and the approval
check all call them, so a hash computed at create time is the one checked at approve time.

Lone surrogates (``"\\ud800"`` as a character, not as a JavaScript escape) cannot be stored as
text by SQLite or PostgreSQL: drafts holding one are refused, located, at parse time (the rule
and its test, ``lone_surrogate_at``, are :mod:`toolfoundry.base.json_gate`'s). :func:`code_sha256`
still never raises: it encodes a lone surrogate as its three UTF-8-style bytes
(``surrogatepass``), which for every other string is exactly UTF-8, so hashes stored before
this rule existed keep matching.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

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


def version_identity(
    *,
    code: str,
    description: str,
    parameters: Mapping[str, Any],
    returns: Mapping[str, Any] | None,
    tests: Sequence[Any],
    fixtures: Sequence[Any],
    capabilities: Capabilities,
    language: str,
) -> str:
    """Hex SHA-256 of what makes two versions the same tool: an identical resubmission.

    Covers the code, description, parameters and returns schemas, tests and fixtures (in their
    stored JSON form, in order) and the capability set (through :func:`capabilities_hash`, so
    the language too). Not the author, nor ``changes_tests``: those say who and why, not what.
    Key order inside JSON objects does not matter (``sort_keys``); list order does.
    """
    canonical = {
        "code": code_sha256(code),
        "description": description,
        "parameters": parameters,
        "returns": returns,
        "tests": list(tests),
        "fixtures": list(fixtures),
        "capabilities": capabilities_hash(capabilities, language),
    }
    text = json.dumps(canonical, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("ascii")).hexdigest()
