"""What create_tool's description says the sandbox offers, against the sandbox itself.

The description is projected from the library manifest, the prelude and the polyfill bundle
(sandbox/js/surface.py, foundry/create_tool_text.py): these tests check the projection follows
a changed manifest, and that every global it names exists in a live sandbox and every web API a
live sandbox has (beyond what a bare Node context has) is named.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from toolfoundry.foundry.create_tool_text import sandbox_section
from toolfoundry.foundry.meta_tools import builtin_specs
from toolfoundry.sandbox import SandboxPolicy, run_js
from toolfoundry.sandbox.js import surface
from toolfoundry.sandbox.js.modules import MANIFEST, POLYFILLS


def _manifest(tmp_path: Path, version: str) -> Path:
    libs = {"tiny": {"file": "tiny.mjs", "version": version, "sha256": "0", "exports": []}}
    for plugin in ("a", "b", "c"):
        libs[f"tiny/plugin/{plugin}"] = {"file": f"p{plugin}.mjs", "version": version}
    aliases = {"tiny/esm": "tiny", "tiny/tiny.min.js": "tiny", "tiny/plugin/a.js": "tiny/plugin/a"}
    path = tmp_path / f"manifest-{version}.json"
    path.write_text(json.dumps({"libs": libs, "aliases": aliases}), encoding="utf-8")
    return path


def test_the_section_follows_the_manifest(tmp_path: Path) -> None:
    first = sandbox_section(_manifest(tmp_path, "1.2.3"))
    # packages with their versions and summarised forms; file-name variants left out
    assert "tiny 1.2.3 (+ tiny/esm, tiny/plugin/*)." in first
    assert "min.js" not in first
    assert "plugin/a" not in first
    bumped = sandbox_section(_manifest(tmp_path, "2.0.0"))
    assert "tiny 2.0.0 (+ tiny/esm, tiny/plugin/*)." in bumped
    assert bumped != first


def test_a_missing_or_unreadable_manifest_says_so(tmp_path: Path) -> None:
    assert "none (the sandbox is not built)" in sandbox_section(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"libs": [1, 2]', encoding="utf-8")
    assert surface.packages(bad) == []


def test_create_tool_names_every_bundled_library_with_its_version() -> None:
    [create] = [s for s in builtin_specs() if s.name == "create_tool"]
    libs = json.loads(MANIFEST.read_text(encoding="utf-8"))["libs"]
    for name, entry in libs.items():
        if "/" not in name:  # a package; its subpaths are summarised as forms
            assert f"{name} {entry['version']}" in create.description, name
    forms = (
        "dayjs/plugin/*",
        "date-fns/*",
        "lodash/*",
        "lodash-es/*",
        "zod/v4",
        "nanoid/non-secure",
    )
    for form in forms:
        assert form in create.description
    for capability in ("network", "credentials", "storage", "system"):
        assert f"{capability}:" in create.description
    assert len(create.description) < 2500, len(create.description)


def _sandbox(code: str) -> object:
    ran = run_js(code, {}, SandboxPolicy())
    assert ran.error is None, ran.error
    return ran.value


def test_every_global_named_exists_in_the_sandbox() -> None:
    named = [*surface.prelude_globals(), *surface.polyfill_globals()]
    assert {"fetch", "crypto", "localStorage", "Intl", "TextEncoder", "URL"} <= set(named)
    missing = _sandbox(
        f"export default {json.dumps(named)}.filter((n) => typeof globalThis[n] === 'undefined')"
    )
    assert missing == []
    members = [(g, m) for g, ms in surface.prelude_globals().items() for m in ms]
    checks = []
    for g, m in members:
        head, _, methods = m.partition(".")
        for method in methods.split("/") if methods else [""]:
            checks.append([g, head, method])
    absent = _sandbox(
        f"export default {json.dumps(checks)}.filter(([g, h, m]) => "
        "{ const o = globalThis[g][h]; return o === undefined || (m && o[m] === undefined); })"
    )
    assert absent == []


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_every_web_api_of_the_sandbox_is_named() -> None:
    # A bare Node context has the language's globals only: what the sandbox has beyond those
    # is what the prelude and the polyfills add (less QuickJS's own extras and internals).
    bare = subprocess.run(
        [
            str(shutil.which("node")),
            "-e",
            "const vm = require('vm'); console.log(JSON.stringify("
            "vm.runInNewContext('Object.getOwnPropertyNames(globalThis)')))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    language = set(json.loads(bare.stdout))
    present = _sandbox("export default Object.getOwnPropertyNames(globalThis)")
    assert isinstance(present, list)
    quickjs_own = {"InternalError", "performance", "__core-js_shared__", "DisposableStack"}
    quickjs_own |= {"AsyncDisposableStack", "SuppressedError", "Float16Array", "Iterator"}
    web = set(present) - language - quickjs_own
    named = set(surface.prelude_globals()) | set(surface.polyfill_globals())
    assert web - named == set()


def test_a_polyfill_bundle_without_global_definitions_names_none(tmp_path: Path) -> None:
    empty = tmp_path / "polyfills.js"
    empty.write_text("(()=>{})();", encoding="utf-8")
    assert surface.polyfill_globals(empty) == ()
    assert surface.polyfill_globals(tmp_path / "absent.js") == ()
    assert "TextEncoder" in surface.polyfill_globals(POLYFILLS)
