"""crypto on the host: CSPRNG bytes, digests and HMAC for the prelude's Web Crypto veneer.

Digests and HMAC take bytes as bytes: the prelude hands the guest's hook one ``Uint8Array``,
whose bytes the host reads in place from guest memory, and gets an ``ArrayBuffer`` back (hex
inside JSON once took 2.5 s for a 3 MiB digest and met the JSON gate's 8 MiB at 4 MiB). A
request is a UTF-8 JSON header (through the JSON gate), a NUL, then its byte fields back to
back, their sizes in the header::

    digest  {"alg": "SHA-256", "sizes": [data]}
    hmac    {"hash": "SHA-256", "sizes": [key, data]}              -> the MAC
            {"hash": "SHA-256", "sizes": [key, data, signature]}   -> verified or not

The answer is ``=`` and the digest or MAC (a verification: one byte, 1 or 0), or ``!`` and the
JSON error ``{"error": {"kind", "message"}}``: ``quota`` for a field over ``MAX_INPUT_BYTES``
(16 MiB; a ``QuotaExceededError`` in the script), ``runtime_error`` for anything malformed.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from toolfoundry.base.json_gate import InvalidJson, JsonLimits, decode, encode

MAX_RANDOM_BYTES = 65536  # the Web Crypto limit for one getRandomValues call
MAX_INPUT_BYTES = 16 * 1024 * 1024
HASHES = {"SHA-1": "sha1", "SHA-256": "sha256", "SHA-384": "sha384", "SHA-512": "sha512"}
_HEADER = JsonLimits(max_bytes=1024, max_depth=2)


class _Refused(Exception):
    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _answer(body: bytes) -> bytes:
    return b"=" + body


def _refusal(exc: _Refused) -> bytes:
    return b"!" + encode({"error": {"kind": exc.kind, "message": str(exc)}}).encode("utf-8")


def _request(
    payload: bytes, op: str, key: str, names: tuple[str, ...], optional: int = 0
) -> tuple[str, list[memoryview]]:
    """The hash named by header field ``key`` and the byte fields of a binary request, which
    has ``names`` fields, the last ``optional`` of them optional.

    Raises:
        _Refused: the request is malformed, or a field is over MAX_INPUT_BYTES.
    """
    head, sep, _ = payload[: _HEADER.max_bytes + 1].partition(b"\0")
    malformed = _Refused("runtime_error", f"{op}: malformed host request")
    try:
        header = decode(head, _HEADER) if sep else None
    except InvalidJson as exc:
        raise _Refused("runtime_error", f"{op}: malformed host request: {exc}") from None
    if not isinstance(header, dict):
        raise malformed
    if header.get(key) not in HASHES:
        raise _Refused("runtime_error", f"{op}: {key} must be one of {sorted(HASHES)}")
    sizes = header.get("sizes")
    if (
        not isinstance(sizes, list)
        or not len(names) - optional <= len(sizes) <= len(names)
        or not all(type(n) is int and n >= 0 for n in sizes)
    ):
        raise malformed
    for name, size in zip(names, sizes, strict=False):
        if size > MAX_INPUT_BYTES:
            raise _Refused(
                "quota",
                f"{op}: the {name} is {size} bytes; the limit is {MAX_INPUT_BYTES} (16 MiB)",
            )
    at = len(head) + 1
    if at + sum(sizes) != len(payload):
        raise malformed
    view, fields = memoryview(payload), []
    for size in sizes:
        fields.append(view[at : at + size])
        at += size
    return str(header[key]), fields


def random_bytes(count: int) -> bytes:
    """``count`` CSPRNG bytes; out of range gives b"" (the prelude checks the limit first)."""
    if not 0 <= count <= MAX_RANDOM_BYTES:
        return b""
    return os.urandom(count)


def digest(payload: bytes) -> bytes:
    """A binary digest request (see the module) -> ``=`` + the digest, or ``!`` + the error."""
    try:
        alg, (data,) = _request(payload, "digest", "alg", ("data",))
    except _Refused as exc:
        return _refusal(exc)
    return _answer(hashlib.new(HASHES[alg], data).digest())


def hmac_sign_or_verify(payload: bytes) -> bytes:
    """A binary HMAC request (see the module) -> ``=`` + the MAC, or ``=`` + 1 or 0 when a
    signature was given to verify, or ``!`` + the error."""
    try:
        hash_name, fields = _request(payload, "hmac", "hash", ("key", "data", "signature"), 1)
    except _Refused as exc:
        return _refusal(exc)
    key, data = bytes(fields[0]), fields[1]
    if not key:
        return _refusal(_Refused("runtime_error", "hmac: the key is empty"))
    mac = hmac.new(key, data, HASHES[hash_name]).digest()
    if len(fields) == 2:
        return _answer(mac)
    return _answer(b"\x01" if hmac.compare_digest(mac, bytes(fields[2])) else b"\x00")
