"""crypto on the host: CSPRNG bytes, digests and HMAC for the prelude's Web Crypto veneer.

Inputs arrive as JSON from the guest and are validated here; answers are JSON-ready dicts.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from typing import Any

MAX_RANDOM_BYTES = 65536  # the Web Crypto limit for one getRandomValues call
MAX_INPUT_BYTES = 16 * 1024 * 1024
HASHES = {"SHA-1": "sha1", "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512"}


def _error(message: str) -> dict[str, Any]:
    return {"error": {"kind": "runtime_error", "message": message}}


def _hex(value: object, field: str) -> bytes:
    if not isinstance(value, str) or len(value) > 2 * MAX_INPUT_BYTES:
        raise ValueError(f"{field} must be a hex string of at most {MAX_INPUT_BYTES} bytes")
    return bytes.fromhex(value)


def random_hex(count: int) -> str:
    """``count`` CSPRNG bytes as hex; out of range gives "" (the prelude checks the limit first)."""
    if not 0 <= count <= MAX_RANDOM_BYTES:
        return ""
    return os.urandom(count).hex()


def digest(request: object) -> dict[str, Any]:
    """``{"alg": "SHA-256", "data": hex}`` -> ``{"hex": digest}``."""
    if not isinstance(request, Mapping) or request.get("alg") not in HASHES:
        return _error(f"digest: algorithm must be one of {sorted(HASHES)}")
    try:
        data = _hex(request.get("data"), "data")
    except ValueError as exc:
        return _error(f"digest: {exc}")
    return {"hex": hashlib.new(HASHES[str(request["alg"])], data).hexdigest()}


def hmac_sign_or_verify(request: object) -> dict[str, Any]:
    """``{"hash", "key", "data"}`` -> ``{"hex": mac}``; with a signature -> ``{"valid": bool}``."""
    if not isinstance(request, Mapping) or request.get("hash") not in HASHES:
        return _error(f"hmac: hash must be one of {sorted(HASHES)}")
    try:
        key = _hex(request.get("key"), "key")
        data = _hex(request.get("data"), "data")
        raw_signature = request.get("signature")
        signature = None if raw_signature is None else _hex(raw_signature, "signature")
    except ValueError as exc:
        return _error(f"hmac: {exc}")
    if not key:
        return _error("hmac: the key is empty")
    mac = hmac.new(key, data, HASHES[str(request["hash"])]).digest()
    if signature is None:
        return {"hex": mac.hex()}
    return {"valid": hmac.compare_digest(mac, signature)}
