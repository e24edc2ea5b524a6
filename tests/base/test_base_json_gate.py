"""The JSON gate: one decoder and one encoder, hostile input refused with a located error."""

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfoundry.base.display import visible, visible_line
from toolfoundry.base.json_gate import (
    InvalidJson,
    JsonLimits,
    check,
    decode,
    encode,
    encode_checked,
    gated,
    json_path,
    lone_surrogate_at,
    well_formed,
)


def nested(depth: int, inner: str = "1") -> bytes:
    """JSON text nested ``depth`` arrays deep, built as text (json.dumps would recurse)."""
    return ("[" * depth + inner + "]" * depth).encode()


@pytest.mark.parametrize(
    ("data", "reason", "path"),
    [
        (b'"\\ud800"', "unicode", "$"),  # a lone surrogate as a JSON escape
        ('{"a": "x\ud800"}', "unicode", "$.a"),  # ... as a character of the text
        (b'{"a": "\xed\xa0\x80"}', "encoding", "$"),  # ... as CESU-8 bytes: not UTF-8
        (b'{"t": ["ok", "\\udc00"]}', "unicode", "$.t[1]"),  # a low half alone
        (b'{"\\ud800": 1}', "unicode", "$"),  # in a key: located at the object
        (b'"\\ud83d\\ude00\\ud83d"', "unicode", "$"),  # a pair, then a high half alone
        (b'"\\\\ud800\\udc00"', "unicode", "$"),  # "\\" + text, then a lone low half
        (b"\xff{}", "encoding", "$"),
        (nested(1100), "too_deep", "$"),
        (nested(129), "too_deep", "$"),
        (b'{"a":' * 5000 + b"1" + b"}" * 5000, "too_deep", "$"),
        (b'{"v": ' + b"1" * 5000 + b"}", "number", "$.v"),  # was Python's 4300-digit ValueError
        (b'{"v": [1e999]}', "number", "$.v[0]"),  # was Infinity
        (b'{"v": -1e999}', "number", "$.v"),
        (b"[NaN]", "number", "$[0]"),
        (b'{"a b": Infinity}', "number", '$["a b"]'),
        (b'{"v": ' + b"9" * 309 + b"}", "number", "$.v"),  # beyond 1.8e308
        (b"{", "syntax", "$"),
        (b'"\x01"', "syntax", "$"),  # a raw control character inside a string
        (b"", "syntax", "$"),
    ],
)
def test_hostile_documents_are_refused_located(data: bytes | str, reason: str, path: str) -> None:
    with pytest.raises(InvalidJson) as caught:
        decode(data)
    assert caught.value.reason == reason
    assert caught.value.problems[0].path == path
    assert isinstance(caught.value, ValueError)  # existing `except ValueError` still holds


def test_limits_are_explicit() -> None:
    assert decode(nested(128)) is not None  # exactly at the default depth
    assert decode(nested(3), JsonLimits(max_depth=3)) == [[[1]]]
    with pytest.raises(InvalidJson, match="deeper than 2 levels"):
        decode(nested(3), JsonLimits(max_depth=2))
    with pytest.raises(InvalidJson) as caught:
        decode(b"[1, 2, 3]", JsonLimits(max_bytes=5))
    assert caught.value.reason == "too_large"
    assert decode(nested(5), JsonLimits(max_depth=4).enclosing()) is not None


def test_depth_ignores_brackets_inside_strings() -> None:
    text = json.dumps({"md": "[" * 5000, "esc": '\\"[[[[', "q": ['"' * 300]})
    assert decode(text)["md"] == "[" * 5000


def test_what_every_peer_accepts_is_kept() -> None:
    assert decode(b'"\\ud83d\\ude00"') == "😀"  # a pair is one character
    assert decode(b'"\\\\ud800"') == "\\ud800"  # an escaped backslash, then text
    assert decode(b"[" + b"9" * 308 + b"]") == [int("9" * 308)]  # exact, not a float
    assert decode(b"[1e308, -0, 1e-400]") == [1e308, 0, 0.0]
    assert decode('{"a": 1, "a": 2}') == {"a": 2}  # the last duplicate wins, as in JSON.parse
    assert decode(b' {"x": [true, null, "\xc3\xa9"]} ') == {"x": [True, None, "é"]}


def test_many_problems_are_reported_together() -> None:
    with pytest.raises(InvalidJson) as caught:
        decode(b'{"a": "\\ud800", "b": [NaN, 1e999], "c": "\\udfff"}')
    assert [p.path for p in caught.value.problems] == ["$.a", "$.b[0]", "$.b[1]", "$.c"]
    assert caught.value.located("$.tests[0].input").problems[0].path == "$.tests[0].input.a"


def test_check_holds_python_values_to_the_same_rules() -> None:
    check({"a": [1, 2.5, "é", None, True], "b": {"c": (1, 2)}, "k": {1: "one"}})
    check({"exact": 10**308})  # 309 digits, still a finite double: walked, then accepted
    with pytest.raises(InvalidJson) as caught:
        check(["x" * 100], JsonLimits(max_bytes=50))
    assert caught.value.reason == "too_large"
    deep: list[Any] = []
    for _ in range(200):
        deep = [deep]
    cases: list[tuple[Any, str, str]] = [
        ({"t": "\ud800"}, "unicode", "$.t"),
        ({"n": 10**5000}, "number", "$.n"),  # no int->str conversion is attempted
        ({"n": float("inf")}, "number", "$.n"),
        ({"n": float("nan")}, "number", "$.n"),
        ({(1, 2): "x"}, "type", "$"),  # a key json.dumps cannot write
        ({"n": {7: [10**400]}}, "number", '$.n["7"][0]'),  # an int key is its digits
        ({"s": {1, 2}}, "type", "$.s"),
        ({"d": deep}, "too_deep", "$.d[0][0][0][0]...(118 more)[0][0][0][0][0]"),
    ]
    for value, reason, path in cases:
        with pytest.raises(InvalidJson) as caught:
            check(value)
        assert (caught.value.reason, caught.value.problems[0].path) == (reason, path)
    cycle: list[Any] = []
    cycle.append(cycle)
    with pytest.raises(InvalidJson, match="deeper"):
        check(cycle)


def test_encode_is_strict_json_and_terminal_safe() -> None:
    text = encode({"a": "\x1b]52;c;SGVsbG8=\x07 \u202e \x85 \u2028 é \n", "n": [1, 2.5]})
    assert text.isprintable()  # no raw control, C1, bidi or separator character left
    assert "é" in text  # other text stays readable
    assert json.loads(text)["a"] == "\x1b]52;c;SGVsbG8=\x07 \u202e \x85 \u2028 é \n"  # lossless
    assert encode({"a": [1]}, indent=2) == '{\n  "a": [\n    1\n  ]\n}'
    # a lone surrogate never leaves as one: it is written as visible text
    assert json.loads(encode({"t": "x\ud800"})) == {"t": "x\\ud800"}
    encode({"t": "x\ud800"}).encode("utf-8")  # and the text is valid UTF-8
    for bad, reason in [(float("nan"), "number"), (object(), "type"), (10**5000, "number")]:
        with pytest.raises(InvalidJson) as caught:
            encode({"v": bad})
        assert caught.value.reason == reason
        assert caught.value.problems[0].path == "$.v"


def test_paths_and_surrogate_positions() -> None:
    assert json_path(["items", 2, "id"]) == "$.items[2].id"
    assert json_path(["a b", "$ok"]) == '$["a b"].$ok'
    assert lone_surrogate_at("ab\udc00") == 2
    assert lone_surrogate_at("a😀") is None
    assert well_formed("log \ud800 line") == "log \\ud800 line"  # as the encoder shows it
    plain = "plain 😀"
    assert well_formed(plain) is plain


def test_visible_shows_what_a_terminal_would_obey() -> None:
    assert visible("ok\x1b[2K\rhidden") == "ok\\x1b[2K\\x0dhidden"
    assert visible("bidi \u202e and \u2066 and \x9b and \x7f") == (
        "bidi \\u202e and \\u2066 and \\x9b and \\x7f"
    )
    assert visible("lines\n\ttabs stay") == "lines\n\ttabs stay"
    assert visible("\ud800") == "\\ud800"
    plain = "plain text, é, 😀"
    assert visible(plain) is plain
    assert visible_line("a\nb") == "a\\nb"


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**300), max_value=10**300)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(codec="utf-8")),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(alphabet=st.characters(codec="utf-8"), max_size=5), children)
    ),
    max_leaves=30,
)


@settings(max_examples=300, deadline=None)
@given(json_values, st.booleans())
def test_round_trip_agrees_with_the_stdlib(value: Any, ascii_only: bool) -> None:
    for text in (encode(value), json.dumps(value, ensure_ascii=ascii_only)):
        assert decode(text) == json.loads(text) == value


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["[", "]", "{", "}", '"', "\\", "\\u", "d800", "dc00", "1", ",", ":"]),
        max_size=60,
    )
    | st.binary(max_size=60).map(lambda b: b.decode("latin-1"))
)
def test_any_text_decodes_or_is_refused_with_invalid_json(parts: Any) -> None:
    text = "".join(parts)
    for data in (text, text.encode("utf-8", "surrogatepass")):
        try:
            decode(data, JsonLimits(max_depth=4))
            problems: tuple[Any, ...] = ("decoded",)
        except InvalidJson as exc:
            problems = exc.problems  # never empty: every refusal says why
        assert problems


def _depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_depth(v) for v in value.values()), default=0)
    return 0


bracket_text = st.text(alphabet='[]{}"\\:,ab', max_size=6)
bracketed_values = st.recursive(
    bracket_text | st.integers(),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(bracket_text, children, max_size=3)
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(bracketed_values)
def test_the_depth_passes_are_exact_whatever_the_strings_hold(value: Any) -> None:
    depth = _depth(value)
    text = json.dumps(value)
    assert decode(text, JsonLimits(max_depth=max(depth, 1))) == value
    check(value, JsonLimits(max_depth=max(depth, 1)))
    if depth > 1:
        for refuse in (decode, check):
            with pytest.raises(InvalidJson) as caught:
                refuse(text if refuse is decode else value, JsonLimits(max_depth=depth - 1))
            assert caught.value.reason == "too_deep"


def test_a_gated_value_is_encoded_once_and_rechecked_under_other_limits() -> None:
    value = {"a": [[1]], "t": "\u2028"}
    checked = gated(value)
    assert checked.text == encode_checked(value) == '{"a":[[1]],"t":"\\u2028"}'
    assert encode_checked(checked) is checked.text
    with pytest.raises(InvalidJson) as refused:  # stricter limits: the value is checked again
        encode_checked(checked, JsonLimits(max_depth=2))
    assert refused.value.reason == "too_deep"
    with pytest.raises(InvalidJson):
        gated({"x": "\ud800"})
