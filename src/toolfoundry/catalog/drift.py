"""The drift check: committed catalogue files must equal what the code renders, byte for byte."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from toolfoundry.catalog.formats import FORMATS, SUFFIX_FORMATS, UnknownFormat, render
from toolfoundry.catalog.skill import DEFAULT_SKILL_NAME, SKILL_NAME_PATTERN
from toolfoundry.spec import ToolSpec

OUT_OF_SYNC = "{path} is out of sync with the code; run 'toolfoundry catalog write'"


@dataclass(frozen=True)
class Artifact:
    """One committed catalogue file: where it lives and which format it holds.

    A ``skill`` file's name is ``skill_name`` when given, else its folder's name (the Agent
    Skills rule) when that is a valid skill name, else ``toolfoundry``.
    """

    path: Path
    format: str
    skill_name: str | None = None

    def __post_init__(self) -> None:
        if self.format not in FORMATS:
            raise UnknownFormat(f"unknown catalogue format {self.format!r}")

    def render(self, specs: Iterable[ToolSpec]) -> str:
        """The text this file must contain for ``specs``."""
        if self.format != "skill":
            return render(self.format, specs)
        name = self.skill_name
        if name is None:
            folder = self.path.resolve().parent.name
            name = folder if re.fullmatch(SKILL_NAME_PATTERN, folder) else DEFAULT_SKILL_NAME
        return render("skill", specs, skill_name=name)


def default_artifacts(skill_name: str = DEFAULT_SKILL_NAME) -> tuple[Artifact, ...]:
    """The committed set: docs/catalog.json, docs/SKILL.md and docs/skills/<skill_name>/SKILL.md.

    Not ``typescript``: code mode's ``tools`` reaches a registry's tools, none of which a
    project declares (and never the meta-tools), so its types are served with the registry
    (``toolfoundry://types/tools.d.ts``); a file of them is an explicit artifact
    (``[catalog] out``, ``catalog write --out docs/tools.d.ts``).
    """
    # docs/SKILL.md is the copy people read; docs/skills/<name>/ is an installable skill
    # folder (its name must equal the folder's), e.g. for ~/.claude/skills/.
    return (
        Artifact(Path("docs/catalog.json"), "json"),
        Artifact(Path("docs/SKILL.md"), "skill", skill_name),
        Artifact(Path("docs/skills") / skill_name / "SKILL.md", "skill"),
    )


DEFAULT_ARTIFACTS: tuple[Artifact, ...] = default_artifacts()


def artifact_for(path: Path, format: str | None = None) -> Artifact:
    """An artifact at ``path``; the format is inferred from the name unless given.

    ``SKILL.md`` (or any ``.md``) holds ``skill``, ``*.json`` holds ``json``, ``*.ts``
    (``tools.d.ts``) holds ``typescript``.

    Raises:
        UnknownFormat: no format given and none can be inferred.
    """
    if format is None:
        format = SUFFIX_FORMATS.get(path.suffix.lower())
        if format is None:
            raise UnknownFormat(f"cannot tell the format of {path}; pass --format")
    return Artifact(path, format)


def write(artifacts: Sequence[Artifact], specs: Sequence[ToolSpec]) -> list[Path]:
    """Write every artifact (creating folders); return the paths whose bytes changed."""
    changed = []
    for artifact in artifacts:
        data = artifact.render(specs).encode("utf-8")
        path = artifact.path
        if not path.is_file() or path.read_bytes() != data:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            changed.append(path)
    return changed


def out_of_sync(artifacts: Sequence[Artifact], specs: Sequence[ToolSpec]) -> list[Path]:
    """Paths of artifacts that are missing or differ from the rendering by any byte."""
    stale = []
    for artifact in artifacts:
        data = artifact.render(specs).encode("utf-8")
        if not artifact.path.is_file() or artifact.path.read_bytes() != data:
            stale.append(artifact.path)
    return stale
