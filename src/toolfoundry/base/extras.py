"""toolfoundry's optional parts (pip extras) and the one message for a missing one.

The extras and what each brings are pyproject.toml's ``[project.optional-dependencies]``; at
run time they are read back from the installed package's metadata, so they have one home.

    with requires_extra("server", "toolfoundry serve"):
        from toolfoundry.server.mcp.server import serve_stdio
    # MissingExtra: toolfoundry serve needs the [server] extra: install toolfoundry[server] ...
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

DISTRIBUTION = "toolfoundry"
# Extras for working on toolfoundry itself rather than using it (tests and linters, benchmark
# baselines, the guest's compiler), and the bundle of the user-facing ones: `doctor` shows
# them only under --all.
DEVELOPER_EXTRAS = ("build", "dev", "bench")
BUNDLE_EXTRAS = ("all",)
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")
_EXTRA_MARKER = re.compile(r"""extra\s*==\s*["']([^"']+)["']""")
_SELF_EXTRAS = re.compile(r"^\s*toolfoundry\s*\[([^\]]*)\]", re.IGNORECASE)


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra that brings it."""

    def __init__(self, extra: str, feature: str, module: str | None = None) -> None:
        missing = f" (module {module!r} is missing)" if module else ""
        super().__init__(
            f"{feature} needs the [{extra}] extra: install toolfoundry[{extra}] "
            f"(pip install 'toolfoundry[{extra}]'){missing}",
            name=module,
        )
        self.extra = extra
        self.feature = feature


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def extras() -> dict[str, list[str]]:
    """Each extra of the installed toolfoundry -> the distributions it requires.

    Extras that name other extras (``all``) are expanded. Empty when the package's metadata is
    not installed (a bare source tree on ``sys.path``).
    """
    from importlib import metadata  # ~50 ms to import: only when an extra is missing

    try:
        requirements = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError:
        return {}
    direct: dict[str, list[str]] = {}
    nested: dict[str, list[str]] = {}
    for requirement in requirements:
        marker = _EXTRA_MARKER.search(requirement)
        if marker is None:
            continue
        extra = marker.group(1)
        self_ref = _SELF_EXTRAS.match(requirement)
        if self_ref is not None:
            nested.setdefault(extra, []).extend(e.strip() for e in self_ref.group(1).split(","))
            continue
        name = _NAME.match(requirement)
        if name is not None:
            direct.setdefault(extra, []).append(name.group(1))
    for _ in nested:  # enough rounds for extras that include extras that include extras
        for extra, included in nested.items():
            expanded = direct.setdefault(extra, [])
            for other in included:
                expanded += [d for d in direct.get(other, []) if d not in expanded]
    return direct


def missing_distributions(extra: str) -> list[str]:
    """The distributions of ``extra`` that are not installed (all present: empty)."""
    from importlib import metadata

    missing = []
    for name in extras().get(extra, []):
        try:
            metadata.version(name)
        except metadata.PackageNotFoundError:
            missing.append(name)
    return missing


@contextmanager
def requires_extra(extra: str, feature: str) -> Iterator[None]:
    """Turn an import that fails because ``extra`` is not (fully) installed into MissingExtra.

    A failing import while the extra *is* installed is a different problem and is re-raised.

    Raises:
        MissingExtra: naming ``extra`` and ``feature``.
    """
    try:
        yield
    except ModuleNotFoundError as exc:
        known = extras()
        if known and extra in known and not missing_distributions(extra):
            raise
        raise MissingExtra(extra, feature, exc.name) from exc
