"""What cannot be described honestly is refused with a message that says how to fix it."""

from __future__ import annotations

import typing
from collections.abc import Callable
from typing import Any

import pytest

from toolfoundry.declare import DeclarationError, from_function, tool


class Opaque:
    """A plain class pydantic has no schema for."""


def unannotated(x) -> None:  # type: ignore[no-untyped-def]
    """Doc."""


def star_args(*items: str) -> None:
    """Doc."""


def star_kwargs(**opts: str) -> None:
    """Doc."""


def positional_only(x: int, /) -> None:
    """Doc."""


def no_docstring(x: int) -> None:
    pass


def blank_docstring(x: int) -> None:
    """ """


def opaque_type(x: Opaque) -> None:
    """Doc."""


def callable_type(fn: Callable[[int], int]) -> None:
    """Doc."""


def typing_typeddict(x: typing.TypedDict("T", {"a": int})) -> None:  # type: ignore[valid-type]
    """Doc."""


def default_against_type(x: int = None) -> None:  # type: ignore[assignment]  # noqa: RUF013
    """Doc."""


def docstring_drift(x: int) -> None:
    """Doc.

    Args:
        x: Still here.
        y: Removed from the signature long ago.
    """


def unresolvable(x: NotDefinedAnywhere) -> None:  # type: ignore[name-defined]  # noqa: F821
    """Doc."""


def field_as_default(x: int = __import__("pydantic").Field(3)) -> None:
    """Doc."""


REFUSALS: list[tuple[Callable[..., Any], str]] = [
    (unannotated, r"unannotated: parameter 'x' has no type annotation; annotate it"),
    (star_args, r"star_args: parameter 'items': \*args .* named list parameter"),
    (star_kwargs, r"star_kwargs: parameter 'opts': \*\*kwargs .* named parameters"),
    (positional_only, r"positional_only: parameter 'x': positional-only .* remove the '/'"),
    (no_docstring, r"no_docstring: a tool needs a description; .* description=\.\.\."),
    (blank_docstring, r"blank_docstring: a tool needs a description"),
    (opaque_type, r"opaque_type: parameter 'x' has type Opaque, which cannot be described"),
    (callable_type, r"callable_type: parameter 'fn' has type .* cannot be described as JSON"),
    (typing_typeddict, r"parameter 'x' .*`typing_extensions.TypedDict`"),
    (default_against_type, r"parameter 'x' has default None, which its own type rejects"),
    (docstring_drift, r"docstring_drift: the docstring documents \['y'\]"),
    (unresolvable, r"unresolvable: cannot resolve the type annotations .*NotDefinedAnywhere"),
    (field_as_default, r"field_as_default: parameter 'x': a pydantic Field\(\) as the default"),
    (lambda x: x, r"invalid tool name '<lambda>'.*pass name=\.\.\."),
]


@pytest.mark.parametrize(("fn", "message"), REFUSALS, ids=[f.__name__ for f, _ in REFUSALS])
def test_refused(fn: Callable[..., Any], message: str) -> None:
    with pytest.raises(DeclarationError, match=message):
        from_function(fn)


def test_decorator_refuses_at_definition_time() -> None:
    with pytest.raises(DeclarationError, match="has no type annotation"):

        @tool
        def bad(x):  # type: ignore[no-untyped-def]
            """Doc."""


def test_declaration_error_is_a_type_error() -> None:
    # Callers that guard with `except TypeError` around decoration keep working.
    assert issubclass(DeclarationError, TypeError)


def test_bad_level_and_capabilities_are_declaration_errors() -> None:
    def fine(x: int) -> int:
        """Doc."""
        return x

    with pytest.raises(DeclarationError, match="fine"):
        from_function(fine, level="epic")
    with pytest.raises(DeclarationError, match="unknown capabilities"):
        from_function(fine, capabilities={"teleport": True})
    with pytest.raises(DeclarationError, match="invalid tool name 'no spaces'"):
        from_function(fine, name="no spaces")
