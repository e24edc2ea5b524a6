"""Text that looks like other text: a confusable skeleton and the scripts a label mixes.

Used where a person must tell two names apart: tool names (against the meta-tools and each
other) and the hosts a reviewer approves. The skeleton follows Unicode TS #39 (section 4,
``skeleton(X) = NFD(prototypes(NFD(X)))``) over a subset of ``confusables.txt``: the Cyrillic,
Greek and Latin letters, digits and sequences that pass for basic Latin letters, which is what a
lookalike of an ASCII name or host is made of. Scripts come from ``unicodedata`` character names
(the standard library has no Script property); letters only, digits and punctuation are common.
"""

from __future__ import annotations

import unicodedata

# One prototype per confusable character (confusables.txt, UTS #39), each a basic Latin letter.
_PROTOTYPES = {
    # Cyrillic
    "а": "a", "с": "c", "ԁ": "d", "е": "e", "һ": "h", "і": "i", "ј": "j", "ӏ": "l",
    "о": "o", "р": "p", "ԛ": "q", "ѕ": "s", "ԝ": "w", "х": "x", "у": "y", "ү": "y",
    "А": "A", "В": "B", "С": "C", "Е": "E", "Н": "H", "І": "l", "Ј": "J", "К": "K",
    "М": "M", "О": "O", "Р": "P", "Ѕ": "S", "Т": "T", "Х": "X", "Ү": "Y", "Ԛ": "Q",
    "Ԝ": "W", "Ӏ": "l",
    # Greek
    "α": "a", "ι": "i", "ν": "v", "ο": "o", "ρ": "p", "υ": "u", "γ": "y",
    "Α": "A", "Β": "B", "Ε": "E", "Ζ": "Z", "Η": "H", "Ι": "l", "Κ": "K", "Μ": "M",
    "Ν": "N", "Ο": "O", "Ρ": "P", "Τ": "T", "Υ": "Y", "Χ": "X",
    # Latin letters outside ASCII, and ASCII that passes for other ASCII
    "ı": "i", "ɑ": "a", "ɡ": "g", "ǀ": "l", "0": "O", "1": "l", "I": "l", "|": "l",
}  # fmt: skip
_SEQUENCES = (("rn", "m"), ("vv", "w"))

# Scripts that are written together (UTS #39 "highly restrictive": Han with Japanese kana, or
# with Hangul); every other mix of two scripts in one label is a warning.
_TOGETHER = (
    frozenset({"CJK", "HIRAGANA", "KATAKANA"}),
    frozenset({"CJK", "HANGUL"}),
    frozenset({"CJK", "BOPOMOFO"}),
)


def skeleton(text: str) -> str:
    """The UTS #39 skeleton of ``text`` over this module's table: two strings that look alike
    have the same skeleton (``"gіthub"`` with a Cyrillic ``і`` and ``"github"``)."""
    mapped = "".join(_PROTOTYPES.get(ch, ch) for ch in unicodedata.normalize("NFD", text))
    for sequence, prototype in _SEQUENCES:
        mapped = mapped.replace(sequence, prototype)
    return unicodedata.normalize("NFD", mapped)


def scripts(text: str) -> frozenset[str]:
    """The scripts of the letters in ``text`` (``LATIN``, ``CYRILLIC``, ``GREEK``...)."""
    found = set()
    for ch in text:
        if unicodedata.category(ch).startswith("L"):
            name = unicodedata.name(ch, "")
            found.add(name.split(" ", 1)[0] if name else "UNKNOWN")
    return frozenset(found)


def mixed_scripts(text: str) -> frozenset[str]:
    """The scripts ``text`` mixes, when that mix is not one written together; else empty."""
    found = scripts(text)
    if len(found) < 2 or any(found <= together for together in _TOGETHER):
        return frozenset()
    return found
