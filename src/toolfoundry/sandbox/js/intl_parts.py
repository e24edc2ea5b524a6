"""The parts of the sandbox's ``Intl``, served to the guest by name when a call first uses them.

The manifest's ``intl`` entry (written by ``jsbuild/intl.mjs``) lists code chunks
(``intl-<chunk>.js``, evaluated by the prelude's loader) and data files
(``intl-<feature>.jsonl``: one ``["<feature>/<locale>", value]`` line per part, the time zones
as ``tz`` and ``tz/<IANA name>``). A data file is indexed on first use by reading each line's
name only; a part is then the rest of its line, handed over as JSON text without re-encoding.
"""

from __future__ import annotations

import json
import re
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


# Regions whose language CLDR writes in another script by default (jsbuild/intl/runtime.js
# has the same table, for the same lookup).
_SCRIPT_OF_REGION = {"zh-TW": "zh-Hant", "zh-HK": "zh-Hant", "zh-MO": "zh-Hant"}
_EXTENSION = re.compile(r"-(?:[0-9a-wy-z]|x)-")


class IntlLocales:
    """The locales the sandbox's ``Intl`` has data for: the manifest's ``intl.locales`` (per
    feature, written by jsbuild/intl.mjs). A locale without data formats as ``en-US`` (the
    default, as ICU falls back); ``supportedLocalesOf`` leaves it out."""

    def __init__(self, by_feature: dict[str, tuple[str, ...]]) -> None:
        self.by_feature = by_feature

    @classmethod
    def read(cls, manifest: Path) -> IntlLocales:
        """From a manifest file (none: no locale has data)."""
        try:
            data = json.loads(manifest.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return cls({})
        shipped = dict(dict(data.get("intl", {})).get("locales", {}))
        return cls({str(f): tuple(str(t) for t in tags) for f, tags in shipped.items()})

    def names(self) -> list[str]:
        """Every locale some feature has data for, in the manifest's order."""
        return list(dict.fromkeys(t for tags in self.by_feature.values() for t in tags))

    def served(self, tag: str, feature: str | None = None) -> bool:
        """Whether ``tag`` (a BCP 47 tag) is served by shipped data, as the runtime's lookup
        does (``de-LU`` by ``de``, ``zh-TW`` by ``zh-Hant``): for ``feature``, or any."""
        features = [feature] if feature else list(self.by_feature)
        return any(_lookup(tag, self.by_feature.get(f, ())) is not None for f in features)


def _lookup(tag: str, have: tuple[str, ...]) -> str | None:
    lang, *rest = _EXTENSION.split(tag, maxsplit=1)[0].split("-")
    script = next((s.title() for s in rest if len(s) == 4 and s.isalpha()), None)
    region = next(
        (s.upper() for s in rest if (len(s) == 2 and s.isalpha()) or (len(s) == 3 and s.isdigit())),
        None,
    )
    lang = lang.lower()
    candidates = []
    if script and region:
        candidates.append(f"{lang}-{script}-{region}")
    if region:
        candidates.append(f"{lang}-{region}")
    if script:
        candidates.append(f"{lang}-{script}")
    scripted = _SCRIPT_OF_REGION.get(f"{lang}-{region}")
    if scripted:
        candidates += [f"{scripted}-{region}", scripted]
    candidates.append(lang)
    return next((c for c in candidates if c in have), None)
