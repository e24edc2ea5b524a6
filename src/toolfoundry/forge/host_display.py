"""How a host is shown to a person: both its Unicode and its punycode form, and a warning
when it mixes scripts or passes for an ASCII host.

A draft may ask for ``api.gіthub.com`` (a Cyrillic ``і``): the fetch goes to its punycode form
``api.xn--gthub-n2e.com``, which is not github.com. Every place a reviewer reads a host (the
review page, ``approvals show``/``list``, ``tools show``, :func:`explain_capabilities`) shows
:func:`host_label`, so the two forms and the warning are always seen together.
"""

from __future__ import annotations

from dataclasses import dataclass

import idna

from toolfoundry.base.confusables import mixed_scripts, skeleton
from toolfoundry.sandbox.host.hosts import HostPattern, HostPatternError
from toolfoundry.spec import Capabilities, StorageScope


@dataclass(frozen=True)
class HostView:
    """One host pattern as a person should see it.

    Attributes:
        unicode: the pattern with its labels in Unicode (as a browser's address bar would).
        ascii: the punycode (``xn--``) pattern the fetch uses; None when it cannot be parsed.
        warning: why this host may not be the one it looks like, or None.
    """

    unicode: str
    ascii: str | None
    warning: str | None

    def to_dict(self) -> dict[str, str | None]:
        return {"unicode": self.unicode, "ascii": self.ascii, "warning": self.warning}


def _unicode_label(label: str) -> str:
    try:
        return idna.decode(label) if label.startswith("xn--") else label
    except (idna.IDNAError, UnicodeError, ValueError):
        return label


def host_view(text: str) -> HostView:
    """Both forms of a host pattern and, for a lookalike, the warning."""
    try:
        pattern = HostPattern.parse(text)
    except HostPatternError:
        return HostView(text, None, "not a valid host name")
    ascii_form = str(pattern)  # HostPattern's own spelling: brackets around an IPv6 host
    labels = [_unicode_label(label) for label in pattern.host.split(".")]
    unicode_form = ascii_form.replace(pattern.host, ".".join(labels), 1)
    problems = []
    for label in labels:
        mixed = mixed_scripts(label)
        if mixed:
            names = " and ".join(sorted(s.title() for s in mixed))
            problems.append(f"{label!r} mixes {names} letters")
    if not unicode_form.isascii():
        lookalike = skeleton(unicode_form)
        if lookalike.isascii() and lookalike != unicode_form:
            problems.append(f"looks like {lookalike} but is not that host")
    return HostView(unicode_form, ascii_form, "; ".join(problems) or None)


def host_label(text: str) -> str:
    """One line for a person: ``api.gіthub.com (punycode api.xn--gthub-n2e.com) WARNING: ...``;
    a plain ASCII host is itself."""
    view = host_view(text)
    shown = view.unicode
    if view.ascii is not None and view.ascii != view.unicode:
        shown += f" (punycode {view.ascii})"
    if view.warning:
        shown += f" WARNING: {view.warning}"
    return shown


def capabilities_text(capabilities: Capabilities) -> str:
    """A capability set in one line for a person, every host as :func:`host_label` shows it."""
    parts = []
    if capabilities.network:
        parts.append("network: " + ", ".join(host_label(h) for h in capabilities.network))
    if capabilities.credentials:
        parts.append("credentials: " + ", ".join(host_label(h) for h in capabilities.credentials))
    if capabilities.storage is not StorageScope.NONE:
        parts.append(f"storage: {capabilities.storage.value}")
    if capabilities.system:
        parts.append("system")
    return "; ".join(parts) or "pure"
