"""Property tests of the one URL parse: whatever a script sends, the parser either refuses it
with a structured error or yields parts that are canonical, stable and safe on the wire."""

from __future__ import annotations

import ipaddress
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolfoundry.sandbox.host.netguard import FetchError, parse_url

ALPHABET = st.sampled_from(
    [
        *"abcxyzABC0123456789.-_~:/?#[]@!$&'()*+,;=%",
        *(" ", "\t", "\r", "\n", "\0", "\\"),
        *("ü", "。", "１", "\u200b", "\ufeff", "ß"),
    ]
)
HOSTISH = st.text(ALPHABET, max_size=40)
SCHEMES = st.sampled_from(["http", "https", "HTTPS", "file", "ftp", "ws", "javascript", ""])
SAFE_TARGET = re.compile(r"/[A-Za-z0-9\-._~!$&'()*+,;=:@/?%\[\]]*")


@settings(max_examples=300, deadline=None)
@given(scheme=SCHEMES, rest=HOSTISH, tail=st.text(ALPHABET, max_size=30))
def test_parse_refuses_cleanly_or_yields_canonical_parts(scheme: str, rest: str, tail: str) -> None:
    raw = f"{scheme}://{rest}{tail}" if scheme else rest + tail
    try:
        url = parse_url(raw)
    except FetchError as exc:
        refusal = (exc.kind, bool(exc.message))
        assert refusal == ("capability_denied", True)
        return
    assert url.scheme in ("http", "https")
    assert 0 < url.port < 65536
    assert SAFE_TARGET.fullmatch(url.target), url.target
    assert url.host == url.host.lower()
    assert url.host.isascii()
    assert not url.host.endswith(".")
    if url.ip is None:
        # A name never looks like an IPv4 number a browser or resolver would read differently.
        last = url.host.rsplit(".", 1)[-1]
        assert not re.fullmatch(r"[0-9]+|0x[0-9a-f]*", last)
    else:
        assert url.host == str(ipaddress.ip_address(url.host))
    again = parse_url(str(url))
    assert again == url  # canonical form is a fixed point


@settings(max_examples=100, deadline=None)
@given(st.integers(min_value=0, max_value=2**32 - 1), st.sampled_from(["{}", "0x{:x}", "0{:o}"]))
def test_no_single_number_host_is_ever_accepted(number: int, form: str) -> None:
    with pytest.raises(FetchError) as refused:
        parse_url(f"https://{form.format(number)}/")
    assert refused.value.kind == "capability_denied"
