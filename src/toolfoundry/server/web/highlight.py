"""Server-side syntax highlighting of tool code and diffs with Pygments (no JavaScript)."""

from __future__ import annotations

from functools import lru_cache

from markupsafe import Markup
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import DiffLexer, JavascriptLexer, PythonLexer, TextLexer

from toolfoundry.base.display import visible

_CSS_CLASS = "hl"
_LEXERS: dict[str, type[Lexer]] = {
    "javascript": JavascriptLexer,
    "python": PythonLexer,
    "diff": DiffLexer,
}


def highlighted(source: str, language: str, *, line_numbers: bool = False) -> Markup:
    """``source`` as highlighted HTML (Pygments escapes it; unknown languages stay plain).

    Control characters and bidi overrides are shown as their escapes first (``\\u202e``): a
    reviewer must see the code the engine runs, not a reordering of it (Trojan Source).
    """
    lexer = _LEXERS.get(language, TextLexer)()
    formatter = HtmlFormatter(cssclass=_CSS_CLASS, linenos="table" if line_numbers else False)
    return Markup(highlight(visible(source), lexer, formatter))


@lru_cache(maxsize=1)
def stylesheet() -> str:
    """The CSS for the highlighted blocks."""
    formatter = HtmlFormatter(style="friendly", cssclass=_CSS_CLASS)
    return str(formatter.get_style_defs(f".{_CSS_CLASS}"))  # type: ignore[no-untyped-call]
