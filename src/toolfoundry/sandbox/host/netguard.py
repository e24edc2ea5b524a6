"""Network guard for the fetch capability: one URL parse, host canonicalisation, address checks.

Everything a script sends is untrusted. The URL is parsed here exactly once and the parsed parts
(never the original string) are what the connection uses, so no second parser can disagree.
Host names are canonicalised (percent-decoding, IDNA/UTS 46, lowercase, trailing dot) and any
numeric host that is not a plain dotted quad (``2130706433``, ``0x7f000001``, ``0177.0.0.1``,
``127.1``) is refused before it can reach a resolver or a socket.
"""

from __future__ import annotations

import ipaddress
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote_to_bytes

import idna

from toolfoundry.base.json_gate import lone_surrogate_at

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Resolver = Callable[[str], Sequence[str]]
"""Maps a canonical host name to its IP addresses (as strings), in preference order."""

MAX_URL_LENGTH = 8192
DEFAULT_PORTS = {"https": 443, "http": 80}


class FetchError(Exception):
    """A fetch refused or failed, with the error kind the script sees.

    Args:
        kind: ``capability_denied``, ``timeout`` or ``runtime_error``.
        message: readable text for the script; never contains a credential.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def denied(message: str) -> FetchError:
    """A policy refusal (``capability_denied``)."""
    return FetchError("capability_denied", message)


@dataclass(frozen=True)
class ParsedURL:
    """The host's single parse of a request URL.

    Attributes:
        scheme: ``http`` or ``https`` (lowercase).
        host: canonical host: ASCII lowercase name, dotted-quad IPv4, or compressed IPv6
            without brackets.
        port: explicit or default port.
        target: the request target sent on the wire: path plus ``?query``, always starting
            with ``/``; the fragment is dropped.
        ip: the address when the host is an IP literal, else None.
    """

    scheme: str
    host: str
    port: int
    target: str
    ip: IPAddress | None

    @property
    def authority(self) -> str:
        """``host[:port]`` as written in a Host header (port omitted when it is the default)."""
        host = f"[{self.host}]" if isinstance(self.ip, ipaddress.IPv6Address) else self.host
        if self.port == DEFAULT_PORTS[self.scheme]:
            return host
        return f"{host}:{self.port}"

    def __str__(self) -> str:
        return f"{self.scheme}://{self.authority}{self.target}"


_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_\-]{0,61}[a-z0-9_])?")
_DOTTED_QUAD = re.compile(
    r"(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
)
_NUMERIC_LABEL = re.compile(r"[0-9]+|0[xX][0-9A-Fa-f]*")
# Printable ASCII that may appear unescaped in a request target; anything else is
# percent-encoded (non-ASCII, space-like punctuation) or refused (controls, backslash).
_TARGET_SAFE = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$&'()*+,;=:@/?%[]"
)


def parse_url(url: object) -> ParsedURL:
    """Parse and canonicalise a script's URL, refusing anything ambiguous.

    Args:
        url: the URL string from the script.

    Returns:
        The parsed URL; only ``http`` and ``https`` schemes come back (whether plain http is
        allowed for the host is the policy's decision).

    Raises:
        FetchError: ``capability_denied`` for a forbidden scheme, userinfo, a non-canonical
            IP literal or a malformed URL.
    """
    if not isinstance(url, str):
        raise FetchError("runtime_error", "fetch URL must be a string")
    if len(url) > MAX_URL_LENGTH:
        raise denied(f"URL is longer than {MAX_URL_LENGTH} characters")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in url):
        raise denied("URL contains control characters (CR, LF, TAB, NUL...)")
    at = lone_surrogate_at(url)
    if at is not None:  # not text: it has no UTF-8 form to percent-encode
        raise denied(f"URL is not valid Unicode: a lone surrogate at character {at}")
    if "\\" in url:
        raise denied("URL contains a backslash")
    match = _SCHEME.match(url)
    if match is None:
        raise denied("URL must be absolute (https://host/path)")
    scheme = match.group(1).lower()
    if scheme not in DEFAULT_PORTS:
        raise denied(f"scheme {scheme!r} is not allowed; only https (and http where allowed)")
    rest = url[match.end() :]
    if not rest.startswith("//"):
        raise denied("URL must have the form scheme://host/path")
    rest = rest[2:]
    end = len(rest)
    for stop in "/?#":
        index = rest.find(stop)
        if index != -1:
            end = min(end, index)
    authority, tail = rest[:end], rest[end:]
    if "@" in authority:
        raise denied("URLs with credentials (user:password@) are not allowed")
    if " " in authority:
        raise denied("URL host contains a space")
    host, port = _split_authority(authority, scheme)
    ip, host = canonical_host_and_ip(host)
    return ParsedURL(scheme=scheme, host=host, port=port, target=_target(tail), ip=ip)


def _split_authority(authority: str, scheme: str) -> tuple[str, int]:
    port_text: str | None = None
    if authority.startswith("["):
        close = authority.find("]")
        if close == -1:
            raise denied("unterminated IPv6 address in URL")
        host, after = authority[: close + 1], authority[close + 1 :]
        if after:
            if not after.startswith(":"):
                raise denied("unexpected text after IPv6 address in URL")
            port_text = after[1:]
    elif ":" in authority:
        host, port_text = authority.split(":", 1)
    else:
        host = authority
    if not host:
        raise denied("URL has no host")
    if port_text is None:
        return host, DEFAULT_PORTS[scheme]
    return host, parse_port(port_text)


def parse_port(text: str) -> int:
    """A port in 1..65535 written as plain decimal digits."""
    if not text.isascii() or not text.isdigit() or len(text) > 5:
        raise denied(f"invalid port {text[:20]!r}")
    port = int(text)
    if not 0 < port < 65536:
        raise denied(f"port {port} is out of range")
    return port


def _target(tail: str) -> str:
    tail = tail.split("#", 1)[0]
    if not tail.startswith("/"):
        tail = "/" + tail
    out = []
    for char in tail:
        if char in _TARGET_SAFE:
            out.append(char)
        else:
            out.extend(f"%{byte:02X}" for byte in char.encode("utf-8"))
    return "".join(out)


def canonical_host(text: str) -> str:
    """Canonicalise a host name or IP literal (as in a URL, an allowlist or a credential).

    Raises:
        FetchError: ``capability_denied`` when the host is malformed or a non-canonical IP.
    """
    return canonical_host_and_ip(text)[1]


def canonical_host_and_ip(text: str) -> tuple[IPAddress | None, str]:
    """Like :func:`canonical_host`, also returning the address when the host is an IP literal."""
    if text.startswith("["):
        if not text.endswith("]") or "%" in text:
            raise denied("malformed IPv6 address (zone identifiers are not allowed)")
        try:
            v6 = ipaddress.IPv6Address(text[1:-1])
        except ValueError:
            raise denied(f"malformed IPv6 address {text[:60]!r}") from None
        return v6, v6.compressed
    if "%" in text:
        try:
            text = unquote_to_bytes(text).decode("utf-8")
        except UnicodeDecodeError:
            raise denied("host is not valid percent-encoded UTF-8") from None
        if "%" in text:
            raise denied("host is percent-encoded more than once")
    if not text.isascii():
        try:
            text = idna.uts46_remap(text, std3_rules=False, transitional=False)
        except (idna.IDNAError, ValueError):
            raise denied("host is not a valid internationalised domain name") from None
    text = text.lower()
    if text.endswith("."):
        text = text[:-1]
    labels = text.split(".")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        # A browser would read this host as an IPv4 number; only the plain form may pass.
        if _DOTTED_QUAD.fullmatch(text) is None:
            raise denied(
                f"host {text[:60]!r} is a numeric IP address in a non-canonical form "
                "(only dotted-quad a.b.c.d is accepted)"
            )
        v4 = ipaddress.IPv4Address(text)
        return v4, str(v4)
    ascii_labels = [_ascii_label(label) for label in labels]
    host = ".".join(ascii_labels)
    if len(host) > 253:
        raise denied("host name is longer than 253 characters")
    return None, host


def _ascii_label(label: str) -> str:
    if not label:
        raise denied("host name has an empty label")
    if not label.isascii() or label.startswith("xn--"):
        try:
            encoded = idna.encode(label, uts46=True).decode("ascii")
            idna.decode(encoded)
        except (idna.IDNAError, UnicodeError, ValueError):
            raise denied(f"host label {label[:63]!r} is not a valid IDNA label") from None
        label = encoded
    if _LABEL.fullmatch(label) is None:
        raise denied(f"host label {label[:63]!r} contains characters not allowed in a host name")
    return label


# --- address classification -------------------------------------------------------------------

_V4_DENIED = [
    (ipaddress.IPv4Network(net), reason)
    for net, reason in (
        ("0.0.0.0/8", "unspecified ('this network')"),
        ("10.0.0.0/8", "private (RFC 1918)"),
        ("100.64.0.0/10", "carrier-grade NAT (RFC 6598)"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local (includes cloud metadata 169.254.169.254)"),
        ("172.16.0.0/12", "private (RFC 1918)"),
        ("192.0.0.0/24", "IETF protocol assignments"),
        ("192.0.2.0/24", "documentation"),
        ("192.88.99.0/24", "6to4 relay anycast"),
        ("192.168.0.0/16", "private (RFC 1918)"),
        ("198.18.0.0/15", "benchmarking"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
    )
]
_V6_DENIED = [
    (ipaddress.IPv6Network(net), reason)
    for net, reason in (
        ("::/128", "unspecified"),
        ("::1/128", "loopback"),
        ("::/96", "IPv4-compatible IPv6 (embeds an IPv4 address)"),
        ("::ffff:0:0:0/96", "IPv4-translated IPv6 (embeds an IPv4 address)"),
        ("64:ff9b::/96", "NAT64 (embeds an IPv4 address)"),
        ("64:ff9b:1::/48", "local-use NAT64 (embeds an IPv4 address)"),
        ("100::/64", "discard-only"),
        ("2001::/32", "Teredo (embeds an IPv4 address)"),
        ("2001:db8::/32", "documentation"),
        ("2002::/16", "6to4 (embeds an IPv4 address)"),
        ("3fff::/20", "documentation"),
        ("fc00::/7", "unique local (ULA)"),
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
    )
]
_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")


def address_problem(ip: IPAddress) -> str | None:
    """Why an address is not public (``"loopback"``, ``"private (RFC 1918)"``...), or None.

    IPv4-mapped IPv6 (``::ffff:a.b.c.d``) is judged as the IPv4 address it maps; the other
    IPv6 forms that embed an IPv4 address are never public.
    """
    if isinstance(ip, ipaddress.IPv6Address):
        mapped = ip.ipv4_mapped
        if mapped is not None:
            inner = address_problem(mapped)
            return None if inner is None else f"IPv4-mapped {mapped}: {inner}"
        for net6, reason in _V6_DENIED:
            if ip in net6:
                return reason
        if ip not in _V6_GLOBAL_UNICAST or not ip.is_global:
            return "reserved"
        return None
    for net4, reason in _V4_DENIED:
        if ip in net4:
            return reason
    return None if ip.is_global else "reserved"


def effective_address(ip: IPAddress) -> IPAddress:
    """The address a connection really reaches: the IPv4 inside an IPv4-mapped IPv6."""
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    return ip


def parse_address(text: object) -> IPAddress:
    """Parse one address a resolver returned; a resolver is trusted no more than a script."""
    if not isinstance(text, str):
        raise FetchError("runtime_error", "resolver returned a non-string address")
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        raise FetchError(
            "runtime_error", f"resolver returned an invalid address {text[:60]!r}"
        ) from None


_LOCAL_CACHE: tuple[float, frozenset[IPAddress]] = (0.0, frozenset())
_LOCAL_TTL = 30.0


def local_addresses() -> frozenset[IPAddress]:
    """This machine's own interface addresses (Linux; empty elsewhere), cached for 30 s."""
    global _LOCAL_CACHE
    now = time.monotonic()
    if now - _LOCAL_CACHE[0] < _LOCAL_TTL:
        return _LOCAL_CACHE[1]
    found: set[IPAddress] = set()
    try:
        import fcntl
        import socket
        import struct

        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            for _, name in socket.if_nameindex():
                try:
                    packed = fcntl.ioctl(
                        probe.fileno(), 0x8915, struct.pack("256s", name[:15].encode())
                    )  # SIOCGIFADDR
                except OSError:
                    continue
                found.add(ipaddress.IPv4Address(packed[20:24]))
    except (ImportError, OSError):
        pass
    try:
        for line in Path("/proc/net/if_inet6").read_text().splitlines():
            hexaddr = line.split()[0]
            found.add(ipaddress.IPv6Address(int(hexaddr, 16)))
    except (OSError, ValueError, IndexError):
        pass
    _LOCAL_CACHE = (now, frozenset(found))
    return _LOCAL_CACHE[1]


# --- resolution ---------------------------------------------------------------------------------


def system_resolver(host: str) -> list[str]:
    """Resolve with the operating system (getaddrinfo), keeping its order, without duplicates."""
    import socket  # here, not at the top: reading host patterns (config, calls) needs none of it

    infos = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    seen: list[str] = []
    for info in infos:
        address = str(info[4][0])
        if address not in seen:
            seen.append(address)
    return seen


def resolve(resolver: Resolver, host: str, timeout: float) -> list[IPAddress]:
    """Call ``resolver(host)`` within ``timeout`` seconds and parse every address.

    The lookup runs in a daemon thread so a hung resolver never holds up the call or the exit.

    Raises:
        FetchError: ``timeout`` when the resolver is too slow, ``runtime_error`` when it fails
            or answers nothing usable.
    """
    box: list[object] = []
    done = threading.Event()

    def run() -> None:
        try:
            box.append(list(resolver(host)))
        except Exception as exc:  # the resolver's failure becomes the script's error
            box.append(exc)
        done.set()

    threading.Thread(target=run, name="toolfoundry-dns", daemon=True).start()
    if not done.wait(max(timeout, 0.0)):
        raise FetchError("timeout", f"resolving {host} took longer than {timeout:.2f}s")
    answer = box[0]
    if isinstance(answer, Exception):
        raise FetchError("runtime_error", f"could not resolve {host}")
    assert isinstance(answer, list)
    if not answer:
        raise FetchError("runtime_error", f"{host} has no addresses")
    return [parse_address(item) for item in answer]
