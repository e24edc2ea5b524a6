"""Read a tool's description and its parameters' descriptions from a docstring.

Google, NumPy and Sphinx/reST docstrings are parsed with ``docstring_parser``; the style
that finds the most sections wins (Google on a tie). Google's ``Keyword Args`` /
``Keyword Arguments`` sections count as parameters.

The tool description is *all* the free text before the first section, every paragraph of
it: a summary line is often followed by "use this when..." guidance that a model needs.
Lines inside a paragraph are joined with spaces; paragraphs stay separated by a blank line.
"""

from __future__ import annotations

import inspect
import re
import textwrap
from dataclasses import dataclass, field

from docstring_parser import Docstring, ParseError
from docstring_parser.google import DEFAULT_SECTIONS, GoogleParser, Section, SectionType
from docstring_parser.numpydoc import NumpydocParser
from docstring_parser.rest import parse as parse_rest

_GOOGLE = GoogleParser(
    sections=[
        *DEFAULT_SECTIONS,
        Section("Keyword Args", "param", SectionType.MULTIPLE),
        Section("Keyword Arguments", "param", SectionType.MULTIPLE),
        Section("Kwargs", "param", SectionType.MULTIPLE),
        Section("Return", "returns", SectionType.SINGULAR_OR_MULTIPLE),
    ]
)
_SECTION_HEADER = re.compile(
    r"^\s*(Args|Arguments|Parameters|Params|Keyword Args|Keyword Arguments|Kwargs|Returns?|"
    r"Yields|Raises|Exceptions|Attributes|Examples?|Notes?)\s*:\s*$"
)


@dataclass(frozen=True)
class DocInfo:
    """What a docstring says about a function.

    Attributes:
        description: the free text before the first section, or None when there is none.
        params: parameter name -> its description, in the order the docstring lists them.
        returns: the description of the return value, when the docstring has one.
    """

    description: str | None
    params: dict[str, str] = field(default_factory=dict)
    returns: str | None = None


def parse_docstring(doc: str | None) -> DocInfo:
    """Parse ``doc`` (a raw ``__doc__``) into a :class:`DocInfo`.

    Args:
        doc: the docstring as written, or None.

    Returns:
        The description, parameter descriptions and return description it holds.
    """
    if doc is None or not doc.strip():
        return DocInfo(description=None)
    text = _dedent(doc)
    parsed = _best_parse(text)
    if parsed is None:
        return DocInfo(description=_tidy(text))
    params: dict[str, str] = {}
    for param in parsed.params:
        if param.args and param.args[0] == "attribute":
            continue  # a callable object's documented attributes are not its parameters
        name = param.arg_name.split()[-1].lstrip("*")
        if param.description:
            params[name] = _tidy(param.description) or ""
    returns = parsed.returns.description if parsed.returns else None
    return DocInfo(
        description=_tidy(_free_text(parsed)),
        params=params,
        returns=_tidy(returns) if returns else None,
    )


def _dedent(doc: str) -> str:
    """cleandoc, except when the first line is a section header such as ``Args:``.

    cleandoc never indents the first line, so a docstring that opens with ``Args:`` would
    lose the indentation that tells its items from the header.
    """
    lines = doc.expandtabs().splitlines()
    first = lines[0].strip()
    if not _SECTION_HEADER.match(first) or len(lines) < 2:
        return inspect.cleandoc(doc)
    rest = [line for line in lines[1:] if line.strip()]
    headers = [line for line in rest if _SECTION_HEADER.match(line)]
    indents = [len(line) - len(line.lstrip()) for line in (headers or rest)]
    indent = min(indents) if headers else max(min(indents) - 4, 0)
    # The leading newline sidesteps a docstring_parser bug with a header on the first line.
    return "\n" + textwrap.dedent("\n".join([" " * indent + first, *lines[1:]])).strip()


def _best_parse(text: str) -> Docstring | None:
    best: Docstring | None = None
    for parse in (_GOOGLE.parse, NumpydocParser().parse, parse_rest):
        try:
            candidate = parse(text)
        except ParseError:
            continue
        if best is None or len(candidate.meta) > len(best.meta):
            best = candidate
    return best


def _free_text(parsed: Docstring) -> str:
    short = parsed.short_description or ""
    long = parsed.long_description or ""
    if short and long:
        return short + ("\n\n" if parsed.blank_after_short_description else "\n") + long
    return short or long


def _tidy(text: str | None) -> str | None:
    """Join wrapped lines into paragraphs; None for empty text."""
    if text is None:
        return None
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text.strip())]
    joined = "\n\n".join(p for p in paragraphs if p)
    return joined or None
