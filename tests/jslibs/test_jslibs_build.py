"""Build outputs: self-contained, described by the manifest, equal to the committed checksums."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from toolfoundry.forge.checks.js import bundled_libraries

REPO = Path(__file__).resolve().parents[2]
BUILD = REPO / "src" / "toolfoundry" / "sandbox" / "js" / "_build"
JSBUILD = REPO / "jsbuild"
CHECKSUMS = JSBUILD / "checksums.json"
LIBRARIES = {
    "decimal.js",
    "js-yaml",
    "dayjs",
    "papaparse",
    "marked",
    "fast-xml-parser",
    "diff",
    "jsonpath-plus",
    "date-fns",
    "lodash",
    "lodash-es",
    "zod",
    "uuid",
    "nanoid",
}

# What a bare QuickJS cannot satisfy: module loading of any kind and Node's globals.
FORBIDDEN = {
    "require() call": r"(?<![\w$.])require\s*\(",
    "esbuild require shim": r"__require\b",
    "dynamic import()": r"(?<![\w$.])import\s*\(",
    "import.meta": r"(?<![\w$.])import\s*\.\s*meta\b",
    "import statement": r"(?<![\w$.])import\s*(?:[\"'{*]|[A-Za-z_$][\w$]*\s*(?:,|from\b))",
    "process global": r"(?<![\w$.])process\s*\.",
    "Buffer global": r"(?<![\w$.])Buffer\s*\.",
    "__dirname": r"(?<![\w$.])__dirname\b",
}
EXPORT_STATEMENT = r"(?<![\w$.])export\s*(?:\{|\*|default\b|const\b|let\b|var\b|function\b|class\b)"


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest() -> dict[str, dict[str, Any]]:
    libs: dict[str, dict[str, Any]] = json.loads((BUILD / "libs" / "manifest.json").read_text())[
        "libs"
    ]
    return libs


def bundles() -> list[Path]:
    return sorted((BUILD / "libs").glob("*.mjs"))


def test_manifest_lists_every_library_with_pinned_version_and_exports(built: Path) -> None:
    libs = manifest()
    assert {name for name in libs if "/" not in name} == LIBRARIES
    assert set(libs) <= bundled_libraries()  # the forge checks imports against this same list
    pinned = json.loads((JSBUILD / "package.json").read_text())["dependencies"]
    lock = json.loads((JSBUILD / "package-lock.json").read_text())["packages"]
    for name, entry in libs.items():
        package = name.split("/")[0]  # a subpath such as dayjs/plugin/utc has its package's version
        assert entry["version"] == pinned[package] == lock[f"node_modules/{package}"]["version"]
        assert re.fullmatch(r"[A-Za-z0-9_-]+\.mjs", str(entry["file"]))
        assert entry["sha256"] == sha256(BUILD / "libs" / str(entry["file"]))
        exports = entry["exports"]
        assert isinstance(exports, list)
        assert exports == sorted(exports)
        assert "default" not in exports
    assert "load" in libs["js-yaml"]["exports"]
    assert "Decimal" in libs["decimal.js"]["exports"]
    assert "marked" in libs["marked"]["exports"]
    assert {"diffLines", "createPatch"} <= set(libs["diff"]["exports"])
    assert {"dayjs/plugin/utc", "dayjs/plugin/customParseFormat"} <= set(libs)
    assert sorted(str(e["file"]) for e in libs.values()) == [p.name for p in bundles()]


def test_forms_name_real_package_files_and_bundled_targets(built: Path) -> None:
    aliases: dict[str, str | dict[str, str]] = json.loads(
        (BUILD / "libs" / "manifest.json").read_text()
    )["aliases"]
    libs = manifest()
    assert {"dayjs/esm", "dayjs/esm/index.js", "dayjs/plugin/utc.js"} <= set(aliases)
    assert aliases["lodash/get"] == {"module": "lodash", "export": "get"}
    assert aliases["date-fns/locale/en-US"] == {"module": "date-fns/locale", "export": "enUS"}
    for form, alias in aliases.items():
        target = alias if isinstance(alias, str) else alias["module"]
        assert target in libs
        assert form not in libs
        assert form.split("/")[0] == target.split("/")[0]
        if isinstance(alias, dict):
            assert alias["export"] in libs[target]["exports"]
        path = JSBUILD / "node_modules" / form
        if (JSBUILD / "node_modules").is_dir():
            assert any(p.is_file() for p in (path, Path(f"{path}.js"), path / "index.js")), form
    # the forge's static check accepts exactly what the sandbox's loader accepts
    assert bundled_libraries() == set(libs) | set(aliases)


def test_package_json_pins_exact_versions() -> None:
    package = json.loads((JSBUILD / "package.json").read_text())
    for deps in (package["dependencies"], package["devDependencies"]):
        for name, version in deps.items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name} is not pinned: {version}"
    lock = json.loads((JSBUILD / "package-lock.json").read_text())["packages"]
    for path, entry in lock.items():
        if path:
            assert entry.get("integrity", "").startswith("sha512-"), f"{path} has no integrity"


@pytest.mark.parametrize("name", sorted(LIBRARIES))
def test_bundle_is_self_contained(built: Path, name: str) -> None:
    text = (BUILD / "libs" / str(manifest()[name]["file"])).read_text()
    for what, pattern in FORBIDDEN.items():
        match = re.search(pattern, text)
        assert match is None, (
            f"{name} bundle has a {what}: {text[match.start() - 40 : match.end() + 40]!r}"
        )


def test_every_bundle_is_self_contained(built: Path) -> None:
    for path in bundles():
        text = path.read_text()
        found = [what for what, pattern in FORBIDDEN.items() if re.search(pattern, text)]
        assert found == [], f"{path.name}: {found}"


def test_polyfills_are_one_classic_script(built: Path) -> None:
    text = (BUILD / "polyfills.js").read_text()
    for what, pattern in {**FORBIDDEN, "export statement": EXPORT_STATEMENT}.items():
        match = re.search(pattern, text)
        assert match is None, (
            f"polyfills.js has a {what}: {text[match.start() - 40 : match.end() + 40]!r}"
        )
    assert text.lstrip().startswith("(()=>{")
    assert len(text.encode()) < 96 * 1024, "polyfills.js grew: it is evaluated into every snapshot"


def intl_files() -> dict[str, dict[str, str]]:
    """The manifest's Intl chunks and data files: {libs/<file>: entry}."""
    entry = json.loads((BUILD / "libs" / "manifest.json").read_text())["intl"]
    items = [*entry["chunks"].values(), *entry["data"].values()]
    return {f"libs/{item['file']}": item for item in items}


def test_intl_files_are_listed_self_contained_classic_scripts(built: Path) -> None:
    files = intl_files()
    assert {"libs/intl-runtime.js", "libs/intl-core.js", "libs/intl-tz.jsonl"} <= set(files)
    for rel, item in files.items():
        assert sha256(BUILD / rel) == item["sha256"], rel
        text = (BUILD / rel).read_text()
        if rel.endswith(".js"):  # evaluated by the prelude's loader: one function expression
            assert text.startswith("(function (Intl) {"), rel
            for what, pattern in {**FORBIDDEN, "export statement": EXPORT_STATEMENT}.items():
                assert re.search(pattern, text) is None, f"{rel} has a {what}"
        else:  # one ["<name>", value] line per part, the name under the file's feature
            feature = rel.removeprefix("libs/intl-").removesuffix(".jsonl")
            for line in text.splitlines():
                name = json.loads(line)[0]
                assert name == feature or name.startswith(f"{feature}/"), (rel, name)


def test_built_files_match_committed_checksums(built: Path) -> None:
    recorded = json.loads(CHECKSUMS.read_text())["files"]
    produced = {str(p.relative_to(BUILD)) for p in [*bundles(), BUILD / "libs" / "manifest.json"]}
    assert produced | set(intl_files()) | {"polyfills.js"} == set(recorded)
    for rel, digest in recorded.items():
        assert sha256(BUILD / rel) == digest, f"{rel} differs from checksums.json: make jslibs"


def test_build_check_mode_detects_tampering(built: Path, node: str, tmp_path: Path) -> None:
    """`build.mjs --check` passes on the real outputs and names a changed bundle."""
    ok = subprocess.run(
        [node, str(JSBUILD / "build.mjs"), "--check"], capture_output=True, text=True
    )
    assert ok.returncode == 0, ok.stderr
    # Check a copy of the tree so the shared outputs are never touched.
    copy = tmp_path / "repo"
    shutil.copytree(JSBUILD, copy / "jsbuild", ignore=shutil.ignore_patterns("node_modules"))
    shutil.copytree(BUILD, copy / "src" / "toolfoundry" / "sandbox" / "js" / "_build")
    target = copy / "src" / "toolfoundry" / "sandbox" / "js" / "_build" / "libs" / "dayjs.mjs"
    target.write_text(target.read_text() + "\n;globalThis.tampered = 1;\n")
    bad = subprocess.run(
        [node, str(copy / "jsbuild" / "build.mjs"), "--check"], capture_output=True, text=True
    )
    assert bad.returncode == 1
    assert "libs/dayjs.mjs: sha256" in bad.stderr
