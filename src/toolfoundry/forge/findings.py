"""Findings: what the forge tells a model about its draft, located and actionable."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import NotRequired

from typing_extensions import TypedDict


class Severity(StrEnum):
    """Errors block a version; warnings only inform."""

    ERROR = "error"
    WARNING = "warning"


class FindingJson(TypedDict):
    """A finding's JSON form; the location keys appear only when known."""

    rule: str
    severity: str
    message: str
    line: NotRequired[int]
    column: NotRequired[int | None]
    path: NotRequired[str]


@dataclass(frozen=True)
class Finding:
    """One thing the forge noticed about a draft.

    Attributes:
        rule: a stable rule id a model can branch on (``no_eval``, ``syntax_error``, ...).
        severity: ``error`` blocks the version, ``warning`` informs.
        message: what is wrong and how to fix it, written for the model that wrote the code.
        line: 1-based line in the code, for findings about code.
        column: 1-based column (in characters) in the code, for findings about code.
        path: a JSON path into the draft (``$.tests[2].input``), for findings about fields.
    """

    rule: str
    severity: Severity
    message: str
    line: int | None = None
    column: int | None = None
    path: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "severity", Severity(self.severity))

    @property
    def blocking(self) -> bool:
        """True for errors."""
        return self.severity is Severity.ERROR

    def to_dict(self) -> FindingJson:
        """JSON-ready form; location keys appear only when known."""
        out: FindingJson = {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
        }
        if self.line is not None:
            out["line"] = self.line
            out["column"] = self.column
        if self.path is not None:
            out["path"] = self.path
        return out
