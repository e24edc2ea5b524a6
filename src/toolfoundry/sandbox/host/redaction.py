"""Redaction of credential values from everything a fetch hands back to the script.

A server may reflect the credential it received, on purpose or by accident, in any part of its
answer and in many spellings. :class:`Redactor` is built from the secret values and finds, in one
byte string, every run that is a copy of a long enough piece of the secret in one of these forms:

- the bytes themselves (UTF-8 and Latin-1 spellings, and the decoded user:password of a
  ``Basic`` value);
- hex, in any letter case;
- standard and URL-safe base64, at each of the three alignments the secret can start at within
  a longer encoded stream, padded or not;
- percent-encoding (upper/lower hex, ``+`` for space) and JSON string escapes (``\\uXXXX``,
  ``\\/``...), in any mix with plain characters, also around base64 text.

"Long enough" is :func:`min_piece` bytes of the secret (the whole secret when it is shorter):
splitting the secret into halves or quarters across headers or responses does not get it out.
Every match is replaced by ``[redacted]``.

The search is ``bytes.find`` over the data for a few anchor blocks of each form (any run of at
least T characters of a form contains one of its blocks of T/2), then each hit is extended both
ways by slice comparison: O(n) per anchor, with no per-byte Python loop.

httpcore's DEBUG trace quotes response headers (a reflected secret included); while a fetch runs
under :func:`redacting_library_logs`, those records pass through the same redactor.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

MARK = b"[redacted]"
MIN_PIECE = 8
"""The shortest piece of a secret (in bytes) that is redacted when the secret is longer."""

# One layer of percent or JSON escapes, decoded into a second view of the data.
_PERCENT = re.compile(rb"%[0-9A-Fa-f]{2}")
_PERCENT_PLUS = re.compile(rb"%[0-9A-Fa-f]{2}|\+")  # only when a secret holds a space
_JSON_ESCAPE = re.compile(rb'\\u[0-9A-Fa-f]{4}|\\[\\/"bfnrt]')
_JSON_SIMPLE = {b"b": b"\b", b"f": b"\f", b"n": b"\n", b"r": b"\r", b"t": b"\t"}


def min_piece(length: int) -> int:
    """The shortest run of a ``length``-byte secret that counts as a copy of it.

    A quarter of the secret, and never less than :data:`MIN_PIECE` bytes (shorter runs of a short
    secret are too likely in ordinary data), and the whole secret when it is shorter than that.
    """
    return min(length, max(MIN_PIECE, length // 4))


@dataclass(frozen=True)
class _Form:
    """One spelling of a secret, and the runs of it that count as a copy."""

    text: bytes
    threshold: int
    anchors: tuple[tuple[int, bytes], ...]

    @classmethod
    def of(cls, text: bytes, threshold: int) -> _Form | None:
        threshold = min(threshold, len(text))
        if threshold < 4:
            return None
        # A run of >= threshold characters contains a whole block of (threshold + 1) // 2
        # starting at a multiple of the block size.
        size = (threshold + 1) // 2
        anchors = tuple((o, text[o : o + size]) for o in range(0, len(text) - size + 1, size))
        return cls(text, threshold, anchors)

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """Maximal runs of ``data`` that equal a piece of this form at least ``threshold`` long."""
        found: list[tuple[int, int]] = []
        text = self.text
        for offset, block in self.anchors:
            size = len(block)
            # Copies the earlier anchors found are skipped whole: one hit per copy, not one
            # verification per anchor per copy.
            known = _merge(found)
            starts = [start for start, _ in known]
            at = data.find(block)
            while at != -1:
                inside = bisect.bisect_right(starts, at) - 1
                if inside >= 0 and at + size <= known[inside][1]:
                    at = data.find(block, known[inside][1] - size + 1)
                    continue
                left = _common_suffix(data, at, text, offset)
                right = _common_prefix(data, at + size, text, offset + size)
                start, end = at - left, at + size + right
                if end - start >= self.threshold:
                    found.append((start, end))
                    # A longer match ending beyond ``end`` holds a whole block that starts
                    # after end - size, or is shorter than a piece past the mark.
                    at = data.find(block, max(at + 1, end - size + 1))
                else:
                    at = data.find(block, at + 1)
        return found


def _common_prefix(data: bytes, at: int, text: bytes, offset: int) -> int:
    """How many bytes of data[at:] equal text[offset:] (binary search over slices)."""
    low, high = 0, min(len(data) - at, len(text) - offset)
    while low < high:
        mid = (low + high + 1) // 2
        if data[at : at + mid] == text[offset : offset + mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(data: bytes, at: int, text: bytes, offset: int) -> int:
    """How many bytes of data[:at] equal text[:offset], counted back from the ends."""
    low, high = 0, min(at, offset)
    while low < high:
        mid = (low + high + 1) // 2
        if data[at - mid : at] == text[offset - mid : offset]:
            low = mid
        else:
            high = mid - 1
    return low


def _spellings(value: str) -> list[bytes]:
    """The byte strings a server can reflect for one credential value."""
    out = [value.encode("utf-8", "surrogatepass")]
    with contextlib.suppress(UnicodeEncodeError):
        out.append(value.encode("latin-1"))  # how the header went over the wire
    for token in value.split():
        if len(token) < 12:
            continue
        for altchars in (b"+/", b"-_"):
            try:
                decoded = base64.b64decode(token.encode("ascii"), altchars, validate=True)
            except (binascii.Error, ValueError, UnicodeEncodeError):
                continue
            if len(decoded) >= MIN_PIECE:  # e.g. the user:password of a Basic credential
                out.append(decoded)
    return list(dict.fromkeys(out))


def _forms(secret: bytes) -> tuple[list[_Form], list[_Form]]:
    """(forms searched as they are, hex forms searched in the lower-cased data)."""
    piece = min_piece(len(secret))
    plain = [_Form.of(secret, piece)]
    b64_run = 4 * ((piece - 2) // 3)  # whole base64 groups inside any encoded piece
    for skip in range(3):
        groups = secret[skip : skip + 3 * ((len(secret) - skip) // 3)]
        if not groups:
            continue
        standard = base64.b64encode(groups)
        plain.append(_Form.of(standard, b64_run))
        if standard != (urlsafe := base64.urlsafe_b64encode(groups)):
            plain.append(_Form.of(urlsafe, b64_run))
    hexed = [_Form.of(secret.hex().encode("ascii"), 2 * piece)]
    return [f for f in plain if f], [f for f in hexed if f]


class _DecodedView:
    """``data`` with one layer of escapes decoded, mapping its positions back to ``data``."""

    def __init__(
        self, data: bytes, tokens: list[re.Match[bytes]], decode: Callable[[bytes], bytes]
    ) -> None:
        parts: list[bytes] = []
        self._view_starts: list[int] = []
        self._view_ends: list[int] = []
        self._data_starts: list[int] = []
        self._data_ends: list[int] = []
        last = 0
        size = 0
        for token in tokens:
            parts.append(data[last : token.start()])
            size += token.start() - last
            out = decode(token.group())
            self._view_starts.append(size)
            self._data_starts.append(token.start())
            self._data_ends.append(token.end())
            parts.append(out)
            size += len(out)
            self._view_ends.append(size)
            last = token.end()
        parts.append(data[last:])
        self.data = b"".join(parts)

    def to_data(self, start: int, end: int) -> tuple[int, int]:
        """The span of the original data that decodes to view[start:end]."""
        return self._where(start, True), self._where(end - 1, False)

    def _where(self, at: int, first: bool) -> int:
        i = bisect.bisect_right(self._view_starts, at) - 1
        if i < 0:
            return at if first else at + 1
        if at < self._view_ends[i]:  # inside a decoded escape: take the whole escape
            return self._data_starts[i] if first else self._data_ends[i]
        shifted = self._data_ends[i] + (at - self._view_ends[i])
        return shifted if first else shifted + 1


def _percent_decode(token: bytes) -> bytes:
    return b" " if token == b"+" else bytes([int(token[1:], 16)])


def _json_decode(token: bytes) -> bytes:
    if token[1:2] == b"u":
        return chr(int(token[2:], 16)).encode("utf-8", "surrogatepass")
    return _JSON_SIMPLE.get(token[1:], token[1:])


class Redactor:
    """Finds and replaces every covered form of a set of secret values (see the module doc)."""

    def __init__(self, values: tuple[str, ...] = ()) -> None:
        self._values: tuple[str, ...] = ()
        self._plain: list[_Form] = []
        self._hexed: list[_Form] = []
        self._percent = _PERCENT
        for value in values:
            self.add(value)

    @property
    def values(self) -> tuple[str, ...]:
        """The secret values redacted so far."""
        return self._values

    def add(self, value: str) -> None:
        """Also redact ``value`` (a no-op for a value already known or empty)."""
        if not value or value in self._values:
            return
        self._values += (value,)
        for spelling in _spellings(value):
            plain, hexed = _forms(spelling)
            self._plain += plain
            self._hexed += hexed
            if b" " in spelling:
                self._percent = _PERCENT_PLUS

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """Merged, sorted spans of ``data`` holding a form of a secret."""
        if not self._plain:
            return []
        found: list[tuple[int, int]] = []
        for form in self._plain:
            found += form.spans(data)
        if self._hexed:
            lowered = data.lower()
            for form in self._hexed:
                found += form.spans(lowered)
        for pattern, decode in ((self._percent, _percent_decode), (_JSON_ESCAPE, _json_decode)):
            if pattern.search(data) is None:
                continue
            # Decoded first without positions; the position map is built only on a hit.
            decoded = pattern.sub(lambda m, d=decode: d(m.group()), data)  # type: ignore[misc]
            if not any(form.spans(decoded) for form in self._plain):
                continue
            view = _DecodedView(data, list(pattern.finditer(data)), decode)
            for form in self._plain:
                found += (view.to_data(s, e) for s, e in form.spans(view.data))
        return _merge(found)

    def redact(self, data: bytes) -> bytes:
        """``data`` with every covered form of a secret replaced by ``[redacted]``."""
        spans = self.spans(data)
        if not spans:
            return data
        parts: list[bytes] = []
        last = 0
        for start, end in spans:
            parts += (data[last:start], MARK)
            last = end
        parts.append(data[last:])
        return b"".join(parts)

    def redact_text(self, text: str) -> str:
        """:meth:`redact` for text (a reason phrase, a header, an error message)."""
        if not self._plain:
            return text
        raw = text.encode("utf-8", "surrogatepass")
        cleaned = self.redact(raw)
        if cleaned is raw:
            return text
        try:
            return cleaned.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:  # a match ended inside a multi-byte character
            return cleaned.decode("utf-8", "replace")

    def holds_secret(self, text: str) -> bool:
        """True when ``text`` holds any covered form of a secret."""
        return bool(self._plain) and bool(self.spans(text.encode("utf-8", "surrogatepass")))


def _merge(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


# Loggers of the HTTP library whose DEBUG records quote what the server sent.
_LIBRARY_LOGGERS = ("httpcore.connection", "httpcore.http11", "httpcore.http2", "httpcore.proxy")
_active = threading.local()


class _LibraryLogRedaction(logging.Filter):
    """Rewrites a library record with the redactor of the fetch running on this thread."""

    def filter(self, record: logging.LogRecord) -> bool:
        redactor: Redactor | None = getattr(_active, "redactor", None)
        if redactor is not None:
            record.msg, record.args = redactor.redact_text(record.getMessage()), None
        return True


_FILTER = _LibraryLogRedaction()
for _name in _LIBRARY_LOGGERS:
    logging.getLogger(_name).addFilter(_FILTER)


@contextlib.contextmanager
def redacting_library_logs(redactor: Redactor) -> Iterator[None]:
    """Redact the HTTP library's log records made on this thread while the block runs."""
    previous = getattr(_active, "redactor", None)
    _active.redactor = redactor
    try:
        yield
    finally:
        _active.redactor = previous
