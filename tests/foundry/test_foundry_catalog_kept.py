"""``Foundry.catalog`` keeps its text per format while the active (name, version) set is
unchanged, and renders again as soon as it changes, from this Foundry or another one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolfoundry import Foundry
from toolfoundry.catalog import FORMATS, render
from toolfoundry.catalog.formats import EXAMPLE_FORMATS

if TYPE_CHECKING:
    from tests.foundry.conftest import Kit


def test_the_kept_catalogue_follows_every_change(fd: Foundry, kit: type[Kit], db_url: str) -> None:
    assert fd.create_tool(kit.slugify()).status == "active"
    first = fd.catalog("openai")
    assert fd.catalog("openai") is first  # nothing changed: the kept text
    for format in FORMATS:  # the Anthropic formats show each tool's example arguments
        specs = fd.active_specs(examples=format in EXAMPLE_FORMATS)
        assert fd.catalog(format) == render(format, specs)
    assert '"input_examples"' in fd.catalog("anthropic")
    fd.disable("slugify")
    assert '"slugify"' not in fd.catalog("openai")
    fd.enable("slugify")
    assert fd.catalog("openai") == first
    assert fd.create_tool(kit.slugify(code=kit.better)).status == "active"
    assert '"version": 2' in fd.catalog("json")
    other = Foundry.open(db_url)  # another process's change is seen too
    try:
        other.rollback("slugify", to=1)
        assert '"version": 1' in fd.catalog("json")
        other.disable("slugify")
    finally:
        other.close()
    assert '"slugify"' not in fd.catalog("json")
    assert fd.catalog("json") == render("json", [])
