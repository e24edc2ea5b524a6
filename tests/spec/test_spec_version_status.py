"""One VersionStatus: the forge's verdict is the very value the registry stores and returns."""

from __future__ import annotations

from pathlib import Path

import toolfoundry.forge
import toolfoundry.registry
from toolfoundry import Foundry
from toolfoundry.forge import forge_draft
from toolfoundry.spec import VersionStatus

SLUGIFY = {
    "name": "slugify",
    "description": "Turn a title into a URL slug.",
    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
    "code": "export function handler({ text }) { return text.toLowerCase().replace(/ /g, '-'); }",
    "tests": [{"input": {"text": "Hello World"}, "expected": "hello-world"}],
}


def test_every_layer_names_the_same_enum() -> None:
    assert toolfoundry.forge.VersionStatus is VersionStatus
    assert toolfoundry.registry.VersionStatus is VersionStatus
    assert [s.value for s in VersionStatus] == [
        "pending_approval",
        "active",
        "rejected",
        "disabled",
    ]


def test_the_forge_verdict_is_the_stored_status(tmp_path: Path) -> None:
    report = forge_draft(SLUGIFY)
    assert report.status is VersionStatus.ACTIVE
    with Foundry.open(f"sqlite:///{tmp_path / 'registry.db'}") as fd:
        assert fd.create_tool(SLUGIFY).status == "active"
        assert fd.show("slugify").status is report.status
