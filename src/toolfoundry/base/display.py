"""Text that reaches a person: control characters are shown, never obeyed.

Tool code, descriptions, outputs and logs are written by models and tools. Printed raw, an
ESC byte starts a terminal control sequence (erase a line to hide the one above it, OSC 52 to
write the clipboard) and a bidi override reorders what a reviewer reads (Trojan Source,
CVE-2021-42574). :func:`visible` turns each such character into its escape, written out
(``\\x1b``, ``\\u202e``), so the reader sees that it is there and nothing acts on it.

What is escaped (:data:`UNSAFE_CHARACTERS`): C0 controls except newline and tab, DEL, C1
controls, the bidi embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069), the
Unicode line and paragraph separators (U+2028, U+2029), and lone surrogates (which are not
text; the JSON gate refuses them on the way in, see :mod:`toolfoundry.base.json_gate`).
"""

from __future__ import annotations

import re

# One character class, also used by the JSON encoder (which escapes the same characters as
# JSON \\u escapes, losslessly). \n and \t are layout, not control, and stay.
SURROGATES = "\ud800-\udfff"  # a character class range: lone surrogates, not valid Unicode
UNSAFE_CHARACTERS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069" + SURROGATES
_UNSAFE = re.compile(f"[{UNSAFE_CHARACTERS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control, bidi and lone-surrogate character written as its escape.

    Newlines and tabs are kept; everything else in :data:`UNSAFE_CHARACTERS` becomes
    ``\\xNN`` (below U+0100) or ``\\uNNNN``. Plain text comes back unchanged (the same object).

    Example:
        ``visible("ok\\x1b[2K")`` is ``"ok\\\\x1b[2K"``: the six characters ``\\x1b[2K`` show.
    """
    if _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(_escape, text)


def visible_line(text: str) -> str:
    """:func:`visible`, with newlines also escaped (``\\n``): for one table cell or log line."""
    return visible(text).replace("\n", "\\n")


def visible_lines(texts: list[str]) -> list[str]:
    """:func:`visible_line` of each text, with one scan of them all when none needs escaping
    (the usual case for a listing's 10 000 names or descriptions): then ``texts`` itself."""
    joined = "".join(texts)
    if "\n" not in joined and _UNSAFE.search(joined) is None:
        return texts
    return [visible_line(t) for t in texts]
