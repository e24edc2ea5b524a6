"""Hostile JSON for every generated field: lone surrogates, deep nesting, numbers no double holds.

Hypothesis's ``st.text()`` never draws a surrogate (category Cs), so each strategy here mixes
them in explicitly; the JSON gate (base/json_gate.py) must refuse or show every one of them.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

LONE_SURROGATES = st.sampled_from(["\ud800", "\udfff", "a\udc00b", "\ud83d", "x\ude00"])


def hostile_text(max_size: int = 12) -> st.SearchStrategy[str]:
    """Text, often with a lone surrogate or a control character in it."""
    mixed = st.text(
        alphabet=st.characters(categories=["Cs", "Cc", "Ll", "So", "Zs"]), max_size=max_size
    )
    return st.text(max_size=max_size) | mixed | LONE_SURROGATES


def nest(depth: int, leaf: Any = 0) -> Any:
    """``leaf`` inside ``depth`` arrays, built without recursion."""
    value = leaf
    for _ in range(depth):
        value = [value]
    return value


# Deep enough to pass any gate limit, shallow enough for json.dumps in the harness itself.
DEEP = st.sampled_from([129, 200, 600]).map(nest)
# Python's int->str limit is 4300 digits: the harness can still write these as JSON text.
HUGE_NUMBERS = st.sampled_from([10**309, -(10**400), 10**4000, float("inf"), float("nan")])
# What only JSON text can carry (the harness splices it in as written).
HOSTILE_LITERALS = [
    "1" * 5000,
    "1e999",
    "-1e999",
    "NaN",
    "Infinity",
    '"\\ud800"',
    '"\\udfff\\ud800"',
    "[" * 1100 + "]" * 1100,
]
