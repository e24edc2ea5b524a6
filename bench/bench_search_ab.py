"""Search ranking choices measured side by side (A/B): what each one changes in relevance.

    .venv/bin/python bench/bench_search_ab.py

Over the library of tests/registry/search_library.py, alone and with the look-alike tools of
tests/registry/search_paraphrases.py added, each variant ranks the 120 paraphrased needs
(``PARAPHRASES``, the relevance goal's needs) and the 80 held-out ones written after the
ranking had been measured (``PARAPHRASES_HELD_OUT``), and judges the 50 needs no tool covers
with search's own strength rules. A line per variant: right tool first and in the top 3 of
each set, and how many uncovered needs would get a strong hit. First, the CPU one query's
embedding takes with each model file and onnxruntime session setting.

The lexical side is the registry's own (each need searched with every tool a candidate, so
every tool has its relevance); the vector side is computed here from the same model, so that
what is embedded per tool can vary without a migration. The shipped choice is marked ``*``;
queries are embedded as search embeds them (after ``vectors.QUERY_PREFIX``) except in the
"no prefix" and "keywords" lines. Choices are made on the training paraphrases; the held-out
column is reported, not tuned on.
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests' search library

import numpy as np
from tests.registry.search_library import LIBRARY, UNRELATED
from tests.registry.search_paraphrases import (
    DISTRACTORS,
    PARAPHRASES,
    PARAPHRASES_HELD_OUT,
    UNRELATED_HELD_OUT,
    UNRELATED_MORE,
)

from bench_search_relevance import fill
from harness import load
from toolfoundry.registry import Registry, embedder, query_model
from toolfoundry.registry import search as fulltext
from toolfoundry.registry.search import _param_text, _words, terms
from toolfoundry.registry.vectors import QUERY_PREFIX, text_of

Library = list[tuple[str, str, dict[str, Any]]]
NOT_COVERED = UNRELATED + UNRELATED_MORE + UNRELATED_HELD_OUT
SETS = {"paraphrases": PARAPHRASES, "held out": PARAPHRASES_HELD_OUT}


def relevances(library: Library, needs: Sequence[str]) -> np.ndarray:
    """The registry's relevance of every tool to every need (rows: needs)."""
    names = [n for n, _, _ in library]
    kept = fulltext.VECTOR_CANDIDATES, fulltext.NOISE
    fulltext.VECTOR_CANDIDATES, fulltext.NOISE = len(library), -2.0
    try:
        with tempfile.TemporaryDirectory() as tmp:
            registry = Registry.open(f"sqlite:///{tmp}/ab.db")
            fill(registry, library)
            out = np.zeros((len(needs), len(library)), dtype=np.float32)
            for row, need in enumerate(needs):
                for hit in registry.search(need, len(library)):
                    out[row, names.index(hit.name)] = hit.relevance
            registry.close()
    finally:
        fulltext.VECTOR_CANDIDATES, fulltext.NOISE = kept
    return out


def _parameters(parameters: dict[str, Any]) -> str:
    return "; ".join(t for t in _param_text(parameters) if t)


ToolTexts = Callable[[str, str, dict[str, Any]], list[str]]
TOOL_TEXTS: dict[str, ToolTexts] = {
    "* name: description": lambda n, d, p: [text_of(n, d)],
    "description only": lambda n, d, p: [d],
    "name: description. parameters": lambda n, d, p: [f"{text_of(n, d)} {_parameters(p)}"],
    "name: a tool to description": lambda n, d, p: [
        f"{_words(n)}: a tool to {d[:1].lower()}{d[1:]}"
    ],
    "max-sim: name: description | each parameter": lambda n, d, p: [
        text_of(n, d),
        *(f"{_words(n)}: {t}" for t in _param_text(p) if t),
    ],
    "max-sim: name: description | name | description": lambda n, d, p: [
        text_of(n, d),
        _words(n),
        d,
    ],
}


def similarities(
    model: embedder.Embedder, library: Library, texts: ToolTexts, queries: np.ndarray
) -> np.ndarray:
    """Cosine similarity of each query vector to each tool (max over a tool's vectors)."""
    out = np.full((len(queries), len(library)), -1.0, dtype=np.float32)
    for col, (name, description, parameters) in enumerate(library):
        vectors = model.embed(texts(name, description, parameters))
        out[:, col] = (queries @ vectors.T).max(axis=1)
    return out


def ranks(scores: np.ndarray) -> np.ndarray:
    """Rank of each tool per need (0: best)."""
    order = np.argsort(-scores, axis=1, kind="stable")
    out = np.empty_like(order)
    rows = np.arange(scores.shape[0])[:, None]
    out[rows, order] = np.arange(scores.shape[1])[None, :]
    return out


def rrf(similar: np.ndarray, relevance: np.ndarray, k: int = 60) -> np.ndarray:
    by_words = np.where(relevance > 0, 1.0 / (k + ranks(relevance)), 0.0)
    return 1.0 / (k + ranks(similar)) + by_words


def strong(similar: np.ndarray, relevance: np.ndarray) -> np.ndarray:
    """Search's strength rule, per need and tool."""
    return (
        (relevance >= 1.0)
        | (similar >= fulltext.SIMILAR)
        | ((relevance >= fulltext.RELEVANCE_FLOOR) & (similar >= fulltext.SIMILAR_WITH_WORDS))
    )


def counted(scores: np.ndarray, names: list[str], needs: list[tuple[str, str]]) -> str:
    order = np.argsort(-scores, axis=1, kind="stable")
    first = sum(names[order[i, 0]] == w for i, (_, w) in enumerate(needs))
    top3 = sum(w in [names[j] for j in order[i, :3]] for i, (_, w) in enumerate(needs))
    return f"{first:3}/{top3:3}"


def run(label: str, library: Library, model: embedder.Embedder) -> None:
    names = [n for n, _, _ in library]
    needs = {title: [q for q, _ in pairs] for title, pairs in SETS.items()}
    lexical = {title: relevances(library, qs) for title, qs in needs.items()}
    lexical["not covered"] = relevances(library, NOT_COVERED)
    asked = {**needs, "not covered": NOT_COVERED}

    def queries(how: str) -> dict[str, np.ndarray]:
        prefix = QUERY_PREFIX  # what search puts before a query
        if how == "quantised":
            return {
                t: np.array([model.embed_query(prefix + q) for q in qs]) for t, qs in asked.items()
            }
        if how == "quantised, no prefix":
            return {t: np.array([model.embed_query(q) for q in qs]) for t, qs in asked.items()}
        if how == "keywords":  # the words full-text search keeps (stopwords dropped)
            return {t: model.embed([" ".join(terms(q)) for q in qs]) for t, qs in asked.items()}
        return {t: model.embed([prefix + q for q in qs]) for t, qs in asked.items()}

    shipped = "quantised" if model.queries_by == "quantised copy" else "shipped"
    other = "shipped" if shipped == "quantised" else ""
    w0 = fulltext.LEXICAL_WEIGHT
    base = f"similarity + {w0} x relevance"

    def linear(w: float) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
        return lambda s, r: s + w * r

    text0 = "* name: description"
    variants = [(texts, shipped, base, linear(w0)) for texts in TOOL_TEXTS]
    if other:
        variants.append((text0, other, base, linear(w0)))
    if shipped == "quantised":
        variants.append((text0, "quantised, no prefix", base, linear(w0)))
    variants.append((text0, "keywords", base, linear(w0)))
    for w in (0.0, 0.05, 0.2, 0.4):
        variants.append((text0, shipped, f"similarity + {w} x relevance", linear(w)))
    variants.append((text0, shipped, "reciprocal rank fusion (k 60)", rrf))
    print(f"[{label}] {len(library)} tools; first/top 3 of each set; load {load():.1f}")
    print(
        f"  {'tool text':48} {'queries':11} {'fusion':32} "
        + " ".join(f"{t:>12}" for t in SETS)
        + "  strong, not covered"
    )
    vectors: dict[str, dict[str, np.ndarray]] = {}
    sims: dict[tuple[str, str], dict[str, np.ndarray]] = {}
    for texts, how, fusion, combine in variants:
        if how not in vectors:
            vectors[how] = queries(how)
        if (texts, how) not in sims:
            sims[texts, how] = {
                t: similarities(model, library, TOOL_TEXTS[texts], v)
                for t, v in vectors[how].items()
            }
        s = sims[texts, how]
        cells = [counted(combine(s[t], lexical[t]), names, SETS[t]) for t in SETS]
        struck = int(strong(s["not covered"], lexical["not covered"]).any(axis=1).sum())
        marked = f"* {how}" if how == shipped else how
        print(
            f"  {texts:48} {marked:11} {fusion:32} "
            + " ".join(f"{c:>12}" for c in cells)
            + f"  {struck}/{len(NOT_COVERED)}"
        )


def sessions(model: embedder.Embedder) -> None:
    """CPU per query embedding (process time, the 200 paraphrases) for onnxruntime sessions
    of the shipped model and of the quantised copy, by graph optimisation level and threads."""
    import onnxruntime

    levels = onnxruntime.GraphOptimizationLevel
    shipped, _ = embedder._located(embedder.MODEL_FILE)
    assert shipped is not None
    copy, why = query_model.quantised(shipped, embedder.MODEL_FILE.sha256)
    files = {"shipped model": shipped} | ({"quantised copy": copy} if copy else {})
    needs = [q for q, _ in PARAPHRASES + PARAPHRASES_HELD_OUT]
    tokenizer = model._tokenizer
    rows = [np.array([tokenizer.encode(q).ids], dtype=np.int64) for q in needs]
    print(f"[query embedding] CPU per query over {len(needs)} needs; load {load():.1f}")
    for label, path in files.items():
        for level_name, level, threads in (
            ("all (default)", levels.ORT_ENABLE_ALL, 1),
            ("extended", levels.ORT_ENABLE_EXTENDED, 1),
            ("basic", levels.ORT_ENABLE_BASIC, 1),
            ("all (default)", levels.ORT_ENABLE_ALL, 2),
        ):
            options = onnxruntime.SessionOptions()
            options.graph_optimization_level = level
            options.intra_op_num_threads = threads
            options.inter_op_num_threads = 1
            session = onnxruntime.InferenceSession(
                str(path), options, providers=["CPUExecutionProvider"]
            )
            feeds = [
                {"input_ids": r, "attention_mask": np.ones_like(r), "token_type_ids": r * 0}
                for r in rows
            ]
            for feed in feeds[:5]:
                session.run(None, feed)
            began = time.process_time()
            for feed in feeds:
                session.run(None, feed)
            ms = 1000 * (time.process_time() - began) / len(feeds)
            print(f"  {label:15} optimisation {level_name:14} threads {threads}: {ms:5.2f} ms")
    if not copy:
        print(f"  (no quantised copy: {why})")


def main() -> None:
    model = embedder.load()
    if model is None:
        print(f"skipped: {embedder.unavailable()}")
        return
    print(f"queries embedded by: {model.queries_by}")
    sessions(model)
    run("library", LIBRARY, model)
    run("library + look-alikes", LIBRARY + DISTRACTORS, model)


if __name__ == "__main__":
    main()
