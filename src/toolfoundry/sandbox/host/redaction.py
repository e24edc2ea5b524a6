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

The search is one pass of an Aho-Corasick automaton (ahocorasick-rs) over the data for the anchor
blocks of every form (any run of at least T characters of a form contains one of its blocks of
(T+1)//2, taken at multiples of that size), then each hit is extended both ways by slice
comparison against the form: O(n) for all secrets and forms together, plus O(log L) per hit.

httpcore's DEBUG trace quotes response headers (a reflected secret included); while a fetch runs
under :func:`redacting_library_logs`, those records pass through the same redactor.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import codecs
import contextlib
import logging
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ahocorasick_rs import BytesAhoCorasick

MARK = b"[redacted]"
MIN_PIECE = 8
"""The shortest piece of a secret (in bytes) that is redacted when the secret is longer."""

# One layer of percent or JSON escapes, decoded into a second view of the data.
_PERCENT = re.compile(rb"%[0-9A-Fa-f]{2}")
_PERCENT_PLUS = re.compile(rb"%[0-9A-Fa-f]{2}|\+")  # only when a secret holds a space
_JSON_ESCAPE = re.compile(rb'\\u[0-9A-Fa-f]{4}|\\[\\/"bfnrt]')
_WINDOW = 64 * 1024  # escaped views are checked, and built exactly, window by window
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

    def extent(self, data: bytes, at: int, offset: int, size: int) -> tuple[int, int] | None:
        """The run around ``data[at:at+size] == text[offset:offset+size]``, if long enough."""
        text = self.text
        left = _common_suffix(data, at, text, offset)
        right = _common_prefix(data, at + size, text, offset + size)
        start, end = at - left, at + size + right
        return (start, end) if end - start >= self.threshold else None


class _Index:
    """Every anchor of a list of forms in one Aho-Corasick automaton: one pass over the data."""

    def __init__(self, forms: list[_Form]) -> None:
        self._anchors = [(form, offset, block) for form in forms for offset, block in form.anchors]
        self._automaton = BytesAhoCorasick([block for _, _, block in self._anchors])

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """Maximal runs of ``data`` that equal a long enough piece of one of the forms."""
        found: list[tuple[int, int]] = []
        covered = (0, 0)
        for index, at, end in self._automaton.find_matches_as_indexes(data, overlapping=True):
            if covered[0] <= at and end <= covered[1]:
                # Inside a copy already found: one verification per copy, not per anchor. A
                # longer match running past it holds a whole anchor of its own further on.
                continue
            form, offset, block = self._anchors[index]
            run = form.extent(data, at, offset, len(block))
            if run is not None:
                found.append(run)
                covered = run
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
    scheme, _, token = value.partition(" ")
    if scheme.lower() == "basic":  # the user:password a Basic credential encodes
        with contextlib.suppress(binascii.Error, ValueError, UnicodeEncodeError):
            decoded = base64.b64decode(token.strip().encode("ascii"), validate=True)
            if len(decoded) >= MIN_PIECE:
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


def _percent_prefilter(data: bytes, plus: bool) -> bytes:
    """Percent-decoded ``data`` at C speed; it drops an invalid ``%zz``'s ``%`` (a superset)."""
    if plus:
        data = data.replace(b"+", b" ")
    escaped = data.replace(b"\\", b"\\\\").replace(b"%", b"\\x")
    return codecs.escape_decode(escaped, "ignore")[0]


def _json_prefilter(data: bytes, plus: bool) -> bytes:
    """JSON's ``\\u00XX`` and ``\\/`` decoded at C speed (enough for ASCII secrets)."""
    escaped = data.replace(b"\\/", b"/").replace(b"\\", b"\\\\")
    return codecs.escape_decode(escaped.replace(b"\\\\u00", b"\\x"), "ignore")[0]


class Redactor:
    """Finds and replaces every covered form of a set of secret values (see the module doc)."""

    def __init__(self, values: tuple[str, ...] = ()) -> None:
        self._values: tuple[str, ...] = ()
        self._plain: list[_Form] = []
        self._hexed: list[_Form] = []
        self._plain_index: _Index | None = None
        self._hexed_index: _Index | None = None
        self._percent = _PERCENT
        self._prefilter = True
        self._longest = 0
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
            self._longest = max(self._longest, len(spelling))
            if b" " in spelling:
                self._percent = _PERCENT_PLUS
            if not spelling.isascii() or any(c in b'%\\"' or c < 0x20 for c in spelling):
                self._prefilter = False  # the approximate views could miss such a secret
        # Rebuilt whole (a new value is rare: once per credential per call); swapped in last so
        # a concurrent search uses either the old index or the new one.
        self._hexed_index = _Index(self._hexed) if self._hexed else None
        self._plain_index = _Index(self._plain)

    def spans(self, data: bytes) -> list[tuple[int, int]]:
        """Merged, sorted spans of ``data`` holding a form of a secret."""
        plain, hexed = self._plain_index, self._hexed_index
        if plain is None:
            return []
        found = plain.spans(data)
        if hexed is not None:
            found += hexed.spans(data.lower())
        views = (
            (self._percent, _percent_decode, _percent_prefilter),
            (_JSON_ESCAPE, _json_decode, _json_prefilter),
        )
        plus = self._percent is _PERCENT_PLUS
        # An escaped copy is at most 6 bytes per secret byte (\\u00XX), so windows overlapping
        # by that much each hold every copy whole.
        overlap = 6 * self._longest + 16
        for pattern, decode, prefilter in views:
            if pattern.search(data) is None:
                continue
            for low in range(0, max(len(data) - overlap, 1), _WINDOW):
                part = data[low : low + _WINDOW + overlap]
                # The exact view (one Python step per escape, with a position map) is built
                # only where a C-speed approximation of it holds a piece of a secret.
                if self._prefilter and not plain.spans(prefilter(part, plus)):
                    continue
                view = _DecodedView(part, list(pattern.finditer(part)), decode)
                for start, end in plain.spans(view.data):
                    start, end = view.to_data(start, end)
                    found.append((low + start, low + end))
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
        if self._plain_index is None:
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
        return bool(self.spans(text.encode("utf-8", "surrogatepass")))


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
