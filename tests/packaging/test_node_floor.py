"""The Node.js floor is one fact: jsbuild/package.json's ``engines``, which every locked package
admits (no ``EBADENGINE`` on ``make setup``) and which the README and scripts/setup.sh name."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = json.loads((ROOT / "jsbuild" / "package.json").read_text(encoding="utf-8"))
LOCK = json.loads((ROOT / "jsbuild" / "package-lock.json").read_text(encoding="utf-8"))
FLOOR = PACKAGE["engines"]["node"].removeprefix(">=").strip()

Version = tuple[int, int, int]


def version(text: str) -> Version:
    major, minor, patch = [*(int(p) for p in re.findall(r"\d+", text)[:3]), 0, 0, 0][:3]
    return major, minor, patch


def admits(node_range: str, at: Version) -> bool:
    """Whether an npm ``engines.node`` range admits ``at`` (the forms npm packages write:
    ``*``, ``>=X``, ``>= X``, ``^X``, ``X - Y``, alternatives with ``||``)."""
    for alternative in node_range.split("||"):
        words = alternative.strip()
        if words in ("*", ""):
            return True
        if words.startswith("^"):
            low = version(words)
            if low <= at and at[0] == low[0]:
                return True
        elif words.startswith(">="):
            if version(words) <= at:
                return True
        elif " - " in words:
            low, high = (version(w) for w in words.split(" - "))
            if low <= at <= high:
                return True
        elif version(words) == at:
            return True
    return False


def test_the_range_reader() -> None:
    assert admits("^22 || ^24 || >=26", (22, 1, 0))
    assert not admits("^22 || ^24 || >=26", (20, 20, 2))
    assert admits("^18 || >=20", (20, 16, 0))
    assert admits(">= 20.16.0", (20, 16, 0))
    assert not admits(">= 20.16.0", (20, 15, 9))
    assert admits("*", (0, 0, 1))


def test_every_locked_package_runs_on_the_floor() -> None:
    floor = version(FLOOR)
    refusing = {
        name: entry["engines"]["node"]
        for name, entry in LOCK["packages"].items()
        if isinstance(entry.get("engines"), dict)
        and "node" in entry["engines"]
        and not admits(entry["engines"]["node"], floor)
    }
    assert refusing == {}, f"these need more than Node.js {FLOOR}: raise the floor or pin them"


def test_the_floor_is_as_high_as_a_locked_package_needs() -> None:
    # the floor is the highest lower bound of the locked packages (not a guess below it)
    bounds = [
        version(entry["engines"]["node"])
        for entry in LOCK["packages"].values()
        if isinstance(entry.get("engines"), dict)
        and ">=" in str(entry["engines"].get("node"))
        and "||" not in entry["engines"]["node"]
    ]
    assert version(FLOOR) == max(bounds)


def test_the_readme_and_setup_say_the_floor() -> None:
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert f"Node.js {FLOOR} or newer" in readme
    setup = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    assert 'require("./jsbuild/package.json").engines.node' in setup  # read, not repeated
