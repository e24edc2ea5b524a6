"""The parts of the sandbox's ``Intl``, served to the guest by name when a call first uses them.

The manifest's ``intl`` entry (written by ``jsbuild/intl.mjs``) lists code chunks
(``intl-<chunk>.js``, evaluated by the prelude's loader) and data files
(``intl-<feature>.jsonl``: one ``["<feature>/<locale>", value]`` line per part, the time zones
as ``tz`` and ``tz/<IANA name>``). A data file is indexed on first use by reading each line's
name only; a part is then the rest of its line, handed over as JSON text without re-encoding.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

_NAME = json.JSONDecoder()


class IntlParts:
    """Code chunks and data parts of ``Intl``, read lazily from files next to the manifest."""

    def __init__(self, directory: Path, entry: dict[str, Any]) -> None:
        self._lock = threading.Lock()
        self._chunks: dict[str, Path] = {}
        self._files: dict[str, Path] = {}
        self._texts: dict[str, str] = {}
        self._indexed: set[str] = set()
        for name, item in dict(entry.get("chunks", {})).items():
            self._chunks[str(name)] = _inside(directory, str(item["file"]))
        for name, item in dict(entry.get("data", {})).items():
            self._files[str(name)] = _inside(directory, str(item["file"]))

    def text(self, name: str) -> str | None:
        """A chunk's source or a data part's JSON text; None for a name that is not bundled."""
        with self._lock:
            known = self._texts.get(name)
            if known is not None:
                return known
            chunk = self._chunks.get(name)
            if chunk is not None:
                return self._texts.setdefault(name, chunk.read_text(encoding="utf-8"))
            group = name.split("/", 1)[0]
            if group in self._files and group not in self._indexed:
                self._index(group)
            return self._texts.get(name)

    def _index(self, group: str) -> None:
        self._indexed.add(group)
        for line in self._files[group].read_text(encoding="utf-8").splitlines():
            # each line is ["<name>",<value>]: decode the name, keep the value as it is
            part, end = _NAME.raw_decode(line, 1)
            if isinstance(part, str) and part.split("/", 1)[0] == group:
                self._texts.setdefault(part, line[end + 1 : -1])


def _inside(directory: Path, file: str) -> Path:
    path = directory / file
    # the manifest is trusted, but a file must stay inside its directory
    if path.resolve().parent != directory.resolve():
        raise ValueError(f"the manifest names a file outside {directory}: {file}")
    return path
