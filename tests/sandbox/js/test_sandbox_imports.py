"""The module loader: bundled libraries by name only, everything else refused clearly."""

from __future__ import annotations

import hashlib
import json

import pytest

from toolfoundry.sandbox import run_js
from toolfoundry.sandbox.host.storage import StorageHook, StorageQuota
from toolfoundry.sandbox.js.host_calls import CallHost
from toolfoundry.sandbox.js.modules import MANIFEST, ImportRefused, LibraryCatalog
from toolfoundry.spec import ErrorKind

needs_libs = pytest.mark.skipif(not MANIFEST.exists(), reason="npm libraries not built")


@pytest.mark.parametrize(
    "spec",
    [
        "./x.js",
        "../x.js",
        "/etc/passwd",
        "node:fs",
        "fs",
        "child_process",
        "https://evil.example/x.js",
        "data:text/javascript,export default 1",
        "qjs:std",
        "qjs:os",
        "std",
        "decimal.js/../../../etc/passwd",
        "decimal.js/",
        "DECIMAL.JS",
    ],
)
def test_unbundled_specifiers_are_refused(spec: str) -> None:
    for code in (
        f"import x from {json.dumps(spec)}; export default 1",
        f"export default await import({json.dumps(spec)})",
    ):
        r = run_js(code)
        assert r.error is not None
        assert r.error.kind is ErrorKind.RUNTIME_ERROR
        assert "only bundled libraries can be imported" in r.error.message
    assert run_js("export default 1").ok


@needs_libs
def test_refusal_names_the_bundled_libraries() -> None:
    r = run_js("import fs from 'node:fs'; export default 1")
    assert r.error is not None
    assert "decimal.js" in r.error.message


@needs_libs
def test_bundled_library_does_real_work() -> None:
    code = """import Decimal from "decimal.js";
      export function handler({ a, b }) { return new Decimal(a).plus(b).toString() }"""
    assert run_js(code, {"a": "0.1", "b": "0.2"}).value == "0.3"


@needs_libs
def test_library_state_does_not_leak_between_calls() -> None:
    first = "import Decimal from 'decimal.js'; Decimal.set({ precision: 2 }); export default 1"
    second = "import Decimal from 'decimal.js'; export default new Decimal(1).div(3).toString()"
    assert run_js(first).ok
    assert run_js(second).value == "0.33333333333333333333"


def test_catalog_reads_only_files_inside_libs(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "ok.mjs").write_text("export default 1")
    (tmp_path / "outside.mjs").write_text("export default 2")
    (libs / "linked.mjs").symlink_to(tmp_path / "outside.mjs")
    manifest = libs / "manifest.json"
    evil = {"evil": {"file": "../outside.mjs"}, "linked": {"file": "linked.mjs"}}
    for i, name in enumerate(["", ".", "..", "/etc/passwd", "sub/../ok.mjs"]):
        evil[f"odd{i}"] = {"file": name}
    manifest.write_text(json.dumps({"libs": {"ok": {"file": "ok.mjs"}, **evil}}))
    catalog = LibraryCatalog(manifest)
    assert catalog.names() == ["ok"]
    assert catalog.source("ok") == "export default 1"


def test_host_validates_raw_requests() -> None:
    host = CallHost(
        fetch=None,
        storage=StorageHook(None, "n", StorageQuota()),
        libraries=LibraryCatalog(),
        log_lines=5,
        log_bytes=100,
        deadline=1e18,
    )
    answers = [
        json.loads(host.answer(op, payload.encode()))
        for op, payload in [
            ("storage", '{"op": "set", "key": "k", "value": "v"}'),
            ("fetch", '{"url": "https://example.com/"}'),
            ("spawn", "{}"),
        ]
    ]
    assert all("error" in a for a in answers), answers
    assert answers[0]["error"]["kind"] == "capability_denied"
    assert answers[1]["error"]["kind"] == "capability_denied"
    # crypto's binary requests: a JSON header, a NUL, the fields; "!" + a JSON error when bad
    for op, bad, kind in [
        ("digest", b'{"alg": "MD5", "sizes": [0]}\0', "runtime_error"),
        ("digest", b'{"alg": "SHA-1", "data": "zz"}', "runtime_error"),  # the old JSON form
        ("digest", b'{"alg": "SHA-1", "sizes": [3]}\0ab', "runtime_error"),  # short
        ("digest", b'{"alg": "SHA-1", "sizes": [1]}\0ab', "runtime_error"),  # long
        ("digest", b'{"alg": "SHA-1", "sizes": [-1]}\0', "runtime_error"),
        ("digest", b'{"alg": "SHA-1", "sizes": [true]}\0x', "runtime_error"),
        ("digest", b'{"alg": "SHA-1", "sizes": [0, 0]}\0', "runtime_error"),
        ("digest", b'{"alg": "SHA-1", "sizes": [1e999]}\0', "runtime_error"),
        ("digest", b'{"alg": "SHA-1", "sizes": [[[[1]]]]}\0', "runtime_error"),
        ("digest", b'{"alg": "SHA-1", "sizes": [16777217]}\0', "quota"),
        ("digest", b"\xff\xfe\0", "runtime_error"),
        ("hmac", b'{"hash": "SHA-256", "sizes": [0, 0]}\0', "runtime_error"),  # empty key
        ("hmac", b'{"hash": "SHA-256", "sizes": [1]}\0k', "runtime_error"),  # no data
        ("hmac", b'{"hash": "SHA-256", "sizes": [1, 16777217]}\0k', "quota"),
    ]:
        answer = host.answer(op, bad)
        assert answer[:1] == b"!", (bad, answer)
        assert json.loads(answer[1:])["error"]["kind"] == kind, (bad, answer)
    assert host.answer("digest", b'{"alg": "SHA-1", "sizes": [2]}\0ab') == (
        b"=" + hashlib.sha1(b"ab").digest()
    )
    for bad in (b"-1", b"1000000000", b"x", b"true", b""):
        assert host.answer("random", bad) == b""
    assert len(host.answer("random", b"4")) == 4
    assert host.answer("log", b"no-such-level\nx") == b"1"
    assert host.logs == []
    assert host.answer("import", b"node:fs").startswith(b"!")
    # a call that runs tool code never feeds the bytecode cache, even right after the
    # library's source was served to it (the tool could forge the bytecode it hands back)
    assert host.answer("import", b"decimal.js").startswith(b"S")
    host.answer("bytecode", b"decimal.js\0forged")
    assert host.libraries.bytecode("decimal.js") is None


@needs_libs
def test_library_bytecode_is_cached_from_a_trusted_compile_only() -> None:
    from toolfoundry.sandbox.js.modules import default_catalog

    catalog = default_catalog()
    spec = "diff"
    code = "import * as Diff from 'diff'; export default Diff.diffChars('ab', 'ac').length"
    result = run_js(code)
    assert result.ok, result.error
    cached = catalog.bytecode(spec)
    assert cached is not None  # compiled by the host's own call after the tool's call
    # A hostile tool cannot replace it: a forged offer after a fresh source is ignored.
    host = CallHost(
        fetch=None,
        storage=StorageHook(None, "t", StorageQuota()),
        libraries=catalog,
        log_lines=10,
        log_bytes=100,
        deadline=1e18,
    )
    host.answer("import", spec.encode())  # cached now: served as bytecode, not source
    host.answer("bytecode", spec.encode() + b"\0forged")
    assert catalog.bytecode(spec) == cached
    assert run_js(code).value == result.value


@needs_libs
def test_second_import_uses_cached_bytecode_and_still_works() -> None:
    code = "import yaml from 'js-yaml'; export default yaml.load('a: [1, 2]')"
    first = run_js(code)
    second = run_js(code)
    assert first.value == second.value == {"a": [1, 2]}


@needs_libs
def test_a_form_is_the_same_module_as_its_library() -> None:
    code = """import dayjs from "dayjs/esm";
      import core, { isDayjs } from "dayjs";
      import utc from "dayjs/plugin/utc.js";
      import utc2 from "dayjs/esm/plugin/utc/index.js";
      dayjs.extend(utc);
      export default [dayjs === core, utc === utc2, isDayjs(core.utc("2024-01-01"))]"""
    for _ in range(2):  # the second call runs on cached library bytecode
        result = run_js(code)
        assert result.ok, result.error
        assert result.value == [True, True, True]


def test_forms_come_from_the_manifest_and_need_a_bundled_target(tmp_path: object) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    libs = tmp_path / "libs"
    libs.mkdir()
    (libs / "ok.mjs").write_text("export default 1")
    manifest = libs / "manifest.json"
    aliases = {"ok/esm": "ok", "ghost/esm": "ghost", "ok": "other"}
    manifest.write_text(json.dumps({"libs": {"ok": {"file": "ok.mjs"}}, "aliases": aliases}))
    catalog = LibraryCatalog(manifest)
    assert catalog.names() == ["ok"]
    assert catalog.importable() == {"ok", "ok/esm"}
    assert catalog.resolve("ok/esm") == "ok"
    assert catalog.resolve("ghost/esm") is None
    assert catalog.source("ok/esm") == 'export * from "ok";\nexport { default } from "ok";\n'
    assert catalog.wants_bytecode("ok")
    assert not catalog.wants_bytecode("ok/esm")
    catalog.keep_bytecode("ok/esm", b"code")
    assert catalog.bytecode("ok/esm") is None
    with pytest.raises(ImportRefused, match="ok/esmx"):
        catalog.source("ok/esmx")


@needs_libs
def test_a_form_costs_no_trusted_compile_of_its_own() -> None:
    from toolfoundry.sandbox.js.modules import default_catalog

    catalog = default_catalog()
    assert run_js("import get from 'lodash/get'; export default get({ a: 1 }, 'a')").value == 1
    # the library's bundle was compiled by the host and cached; the one-line form never is
    assert catalog.bytecode("lodash") is not None
    assert not catalog.wants_bytecode("lodash/get")
    assert catalog.bytecode("lodash/get") is None
