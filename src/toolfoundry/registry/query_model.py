"""The copy of the embedding model that search runs its queries through: the shipped model with
its matrix products quantised to 8 bits (weights per output channel, activations per query),
about half the CPU of the shipped file's float products (3.2 against 6.7 ms for a 12-token
query here). bench/bench_search_relevance.py ranks the needs the same with either
(docs/benchmarks.md, search).

Only queries use it: the vectors a registry keeps are the shipped model's, whichever process
wrote them, so a process that cannot make the copy (no ``onnx`` package, an unwritable cache)
embeds its queries with the shipped file and compares them with the same vectors.

The copy is made once per machine from the shipped file by onnxruntime's own quantiser (which
needs the ``onnx`` package, in the ``[search]`` extra), about 3 s of CPU, and cached in
``$XDG_CACHE_HOME/toolfoundry/search`` (or ``~/.cache/...``) under a key of the shipped
file's sha256, the onnxruntime release (its quantiser makes the copy) and the recipe; a cached
copy is used only if its own sha256, written beside it, still matches. ``onnx`` is imported
only to make a copy (importing it costs 0.7 s of CPU).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import tempfile
from pathlib import Path

# How the copy is made (part of its key): quantise the MatMuls whose second input is a weight.
RECIPE = "dynamic-int8-matmul-weights-per-channel-1"
KEEP = 2  # copies kept: the current one and one of another release, side by side


def cache_dir() -> Path:
    """``$XDG_CACHE_HOME/toolfoundry/search`` (or ``~/.cache/...``)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "toolfoundry" / "search"


def quantised(source: Path, source_sha256: str) -> tuple[Path | None, str]:
    """The cached copy of ``source`` (made now when missing), or None and why it cannot be."""
    try:
        import onnxruntime
    except ImportError as exc:
        return None, f"module {exc.name!r} is missing"
    identity = f"{source_sha256}-{onnxruntime.__version__}-{RECIPE}"
    key = hashlib.sha256(identity.encode()).hexdigest()[:32]
    target = cache_dir() / f"{key}.onnx"
    if _intact(target):
        with contextlib.suppress(OSError):
            os.utime(target)
        return target, ""
    if importlib.util.find_spec("onnx") is None:
        return (
            None,
            "module 'onnx' is missing (the [search] extra makes the quantised copy with it)",
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".making-") as work:
            made = _make(source, Path(work))
            digest = hashlib.sha256(made.read_bytes()).hexdigest()
            Path(work, "sha256").write_text(digest)
            os.replace(Path(work, "sha256"), target.with_suffix(".sha256"))
            os.replace(made, target)
    except Exception as exc:  # onnx's and onnxruntime's errors have no common base
        return None, f"the quantised copy could not be made: {type(exc).__name__}: {exc}"
    _prune()
    return target, ""


def _make(source: Path, work: Path) -> Path:
    from onnxruntime.quantization import QuantType, quant_pre_process, quantize_dynamic

    prepared, out = work / "prepared.onnx", work / "quantised.onnx"
    # folds the shipped int8 weights into float constants, so the quantiser sees MatMuls of
    # weights; symbolic shape inference (it needs sympy) adds nothing for this graph
    quant_pre_process(source, prepared, skip_symbolic_shape=True)
    quantize_dynamic(
        prepared,
        out,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        weight_type=QuantType.QInt8,
        extra_options={"MatMulConstBOnly": True},
    )
    return out


def _intact(path: Path) -> bool:
    try:
        expected = path.with_suffix(".sha256").read_text().strip()
        return hashlib.sha256(path.read_bytes()).hexdigest() == expected
    except OSError:
        return False


def _prune() -> None:
    with contextlib.suppress(OSError):
        copies = sorted(cache_dir().glob("*.onnx"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in copies[KEEP:]:
            old.unlink(missing_ok=True)
            old.with_suffix(".sha256").unlink(missing_ok=True)
