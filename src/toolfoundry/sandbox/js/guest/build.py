"""Build the QuickJS-NG guest (``_build/quickjs.wasm``) from pinned, checksummed PyPI sources.

Run as ``python -m toolfoundry.sandbox.js.guest.build``. Idempotent: when the output's recorded
inputs (sdist hash, shim source, flags) match, it returns at once. The QuickJS-NG C sources come
from the ``quickjs-ng`` sdist (folder ``upstream-quickjs/``), compiled with ``ziglang`` for
wasm32-wasi as a reactor.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

QUICKJS_NG_VERSION = "0.17.0.2"
QUICKJS_NG_SHA256 = "43d2e48272208721a7aaea8e3f02d4b9318f12ef20cc4f5421b59d9a470706ef"
SDIST = f"quickjs_ng-{QUICKJS_NG_VERSION}.tar.gz"

HERE = Path(__file__).resolve().parent
SHIM = HERE / "guest.c"
# Our malloc (libc's rounds blocks up to powers of two) and our clock (no host crossing per read)
# replace libc's; see the comments at the top of each file.
OWN_C = [SHIM, HERE / "alloc.c", HERE / "clock.c"]
OUT_DIR = HERE.parent / "_build"
OUT = OUT_DIR / "quickjs.wasm"
STAMP = OUT_DIR / "quickjs.wasm.inputs"

# Shadow stack first, so a C stack overflow runs off address 0 and traps instead of
# silently overwriting the heap.
STACK_BYTES = 1024 * 1024
CFLAGS = [
    "-target",
    "wasm32-wasi",
    "-O2",
    "-mexec-model=reactor",
    "-D_WASI_EMULATED_SIGNAL",
    "-D_WASI_EMULATED_PROCESS_CLOCKS",
    "-DNDEBUG",
    "-Wno-everything",
    "-lwasi-emulated-signal",
    "-lwasi-emulated-process-clocks",
    f"-Wl,-z,stack-size={STACK_BYTES}",
    "-Wl,--strip-all",
]
UPSTREAM_C = ["libregexp.c", "libunicode.c", "dtoa.c"]


def cache_dir() -> Path:
    """Where downloaded sources are kept between builds."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolfoundry" / "quickjs-ng"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch_sources() -> Path:
    """Download (once) and verify the pinned sdist; return its ``upstream-quickjs`` folder."""
    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    sdist = cache / SDIST
    if not sdist.exists() or _sha256(sdist) != QUICKJS_NG_SHA256:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "-q",
                "--no-deps",
                "--no-binary",
                ":all:",
                f"quickjs-ng=={QUICKJS_NG_VERSION}",
                "-d",
                str(cache),
            ],
            check=True,
        )
    digest = _sha256(sdist)
    if digest != QUICKJS_NG_SHA256:
        raise SystemExit(f"{sdist}: sha256 {digest} does not match pinned {QUICKJS_NG_SHA256}")
    src = cache / f"quickjs_ng-{QUICKJS_NG_VERSION}" / "upstream-quickjs"
    if not (src / "quickjs.c").exists():
        with tarfile.open(sdist) as tar:
            tar.extractall(cache, filter="data")
    return src


def inputs_key() -> str:
    """Everything the output depends on, hashed."""
    h = hashlib.sha256()
    h.update(QUICKJS_NG_SHA256.encode())
    for source in OWN_C:
        h.update(source.read_bytes())
    h.update(" ".join(CFLAGS).encode())
    return h.hexdigest()


def build(force: bool = False) -> Path:
    """Build ``quickjs.wasm`` unless an up-to-date one exists; return its path."""
    key = inputs_key()
    if not force and OUT.exists() and STAMP.exists() and STAMP.read_text().strip() == key:
        return OUT
    src = fetch_sources()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "quickjs.wasm"
        cmd = [
            sys.executable,
            "-m",
            "ziglang",
            "cc",
            *CFLAGS,
            f"-I{src}",
            "-o",
            str(target),
            *(str(source) for source in OWN_C),
            *(str(src / name) for name in UPSTREAM_C),
        ]
        subprocess.run(cmd, check=True)
        os.replace(target, OUT)
    STAMP.write_text(key + "\n")
    return OUT


def warm() -> None:
    """Compile the guest and bake its initialised snapshot into the on-disk module cache."""
    from toolfoundry.sandbox.js.wasm_engine import WasmEngine

    WasmEngine(pool_size=0)


def main() -> None:
    """Command-line entry point: ``--force`` rebuilds even when up to date.

    Also warms the compiled-module cache, so the first call on this machine is fast.
    """
    path = build(force="--force" in sys.argv[1:])
    print(f"guest: {path} ({path.stat().st_size} bytes)")
    warm()


if __name__ == "__main__":
    main()
