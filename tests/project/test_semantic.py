"""Project memory's semantic channel: the same model, scoring and fusion as governed
memory, vectors kept in the derived index, embedded before a command ranks and in the
background of a server, and turned off by configuration or the environment."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engram.compose import open_project
from engram.errors import ConfigError
from engram.project.config import CONFIDENCE_FLOOR, load_config
from engram.project.layout import Layout
from engram.project.semantic import ProjectVectors
from engram.project.workspace import ProjectMemory
from engram.search.confidence import HYBRID, LEXICAL
from engram.search.embedding import MODEL, load_embedder
from engram.search.fusion import LEXICAL_WEIGHT
from engram.testing import StartServer, call, data_of, new_project
from tests.project.conftest import without_confidence_floor, write_memory_file

FRENCH = "Les paiements refusés sont réessayés trois fois, avec un délai qui double à chaque fois"
#: An English question that shares no word with the French memory.
QUESTION = "how often do we retry a declined payment"


def _write(layout: Layout) -> None:
    write_memory_file(layout, "payment-retries", content=FRENCH, title="Paiements")
    write_memory_file(
        layout, "frontend-stack", content="The frontend is a React app built with vite"
    )
    write_memory_file(
        layout, "nightly-backups", content="The database is backed up every night to storage"
    )


@pytest.fixture
def hybrid(layout: Layout) -> Iterator[ProjectMemory]:
    """Project memory with the semantic channel on (a command: it embeds before ranking)."""
    if load_embedder() is None:
        pytest.fail("the semantic extra is part of the test set-up: run scripts/setup test")
    opened = open_project(layout.root, semantic=True)
    yield opened
    opened.close()


def test_a_question_in_english_finds_a_memory_written_in_french(
    hybrid: ProjectMemory, layout: Layout
) -> None:
    _write(layout)
    lexical = open_project(layout.root, semantic=False)
    try:
        assert lexical.search(QUESTION).entries == []
    finally:
        lexical.close()

    found = hybrid.search(QUESTION, 3)

    first = found.entries[0]
    assert (first["id"], first["channels"]) == ("payment-retries", ["semantic"])
    explained = hybrid.search(QUESTION, 3, explain=True).entries[0]
    assert explained["parts"] == {"lexical": 0.0, "semantic": first["score"]}
    semantic = (1 - LEXICAL_WEIGHT) * (explained["cosine"] - 0.78) / 0.22
    assert first["score"] == pytest.approx(semantic, abs=1e-5)  # the cosine shown is rounded
    assert found.ranking == {
        "channels": ["lexical", "semantic"],
        "algorithm": (
            "convex(lexical=0.2, semantic=0.8):"
            " bm25(k1=1.2, b=0.75, idf=ln(1+(N-n+0.5)/(n+0.5))) / best,"
            " (cosine - 0.78) / 0.22"
        ),
        "model": MODEL,
        "fusion": "convex_combination",
        "confidence": {"model": "logistic-hybrid", "version": HYBRID.version},
    }
    # Found by meaning alone, in another language: under the default load floor.
    assert first["confidence"] < CONFIDENCE_FLOOR
    assert hybrid.load(QUESTION).selected_keys == []
    without_confidence_floor(layout)
    assert hybrid.load(QUESTION).selected_keys[0] == "payment-retries"
    assert hybrid.route_entries(QUESTION).entries[0]["id"] == "payment-retries"


def test_a_memory_both_channels_find_carries_both(hybrid: ProjectMemory, layout: Layout) -> None:
    _write(layout)

    entries = hybrid.search("is the database backed up every night", 3, explain=True).entries

    assert entries[0]["id"] == "nightly-backups"
    assert entries[0]["channels"] == ["lexical", "semantic"]
    assert entries[0]["ranks"] == {"lexical": 1, "semantic": 1}
    semantic = (1 - LEXICAL_WEIGHT) * (entries[0]["cosine"] - 0.78) / 0.22
    assert entries[0]["parts"]["lexical"] == LEXICAL_WEIGHT
    assert entries[0]["parts"]["semantic"] == pytest.approx(semantic, abs=1e-5)
    assert entries[0]["score"] == round(LEXICAL_WEIGHT + entries[0]["parts"]["semantic"], 6)


def test_the_session_query_routes_as_before(hybrid: ProjectMemory, layout: Layout) -> None:
    _write(layout)
    write_memory_file(layout, "run-tests", "rule", content="Run the tests before every commit")

    assert hybrid.load("current session").selected_keys == ["run-tests"]


class CountingEmbedder:
    """A stand-in model: a fixed vector per text, and a record of what it embedded."""

    model = "test/counting"
    dimension = 4

    def __init__(self) -> None:
        self.embedded: list[str] = []

    def passages(self, texts: Sequence[str]) -> Any:
        self.embedded.extend(texts)
        return np.stack([self._vector(text) for text in texts]).astype(np.float32)

    def query(self, text: str) -> Any:
        return self._vector(text)

    @staticmethod
    def _vector(text: str) -> Any:
        vector = np.array([1.0, len(text) % 7, 1.0, 0.0], dtype=np.float32)
        return vector / np.linalg.norm(vector)


def _with(embedder: CountingEmbedder, layout: Layout, background: bool = False) -> ProjectMemory:
    opened = open_project(layout.root, watch=background, semantic=False)
    opened.vectors = ProjectVectors(opened.index, background, lambda: embedder)
    return opened


def test_an_edit_embeds_only_the_memory_that_changed_and_a_deleted_one_leaves(
    layout: Layout,
) -> None:
    embedder = CountingEmbedder()
    opened = _with(embedder, layout)
    try:
        _write(layout)
        opened.search("payments")
        assert len(embedder.embedded) == 3
        assert opened.index.vector_counts(embedder.model) == (3, 3)

        write_memory_file(layout, "frontend-stack", content="The frontend is built with esbuild")
        opened.search("payments")
        assert len(embedder.embedded) == 4
        assert "esbuild" in embedder.embedded[-1]

        (layout.folder("knowledge") / "nightly-backups.md").unlink()
        opened.search("payments")
        assert opened.index.vector_counts(embedder.model) == (2, 2)
        assert len(opened.index.vectors(embedder.model)) == 2
        assert len(embedder.embedded) == 4
    finally:
        opened.close()


def test_a_rebuilt_index_keeps_the_vectors_of_unchanged_memories(layout: Layout) -> None:
    embedder = CountingEmbedder()
    _write(layout)
    first = _with(embedder, layout)
    first.search("payments")
    first.close()

    second = _with(embedder, layout)
    try:
        second.index.update([], second.index.files())  # every file forgotten, then re-read
        second.search("payments")
    finally:
        second.close()

    assert len(embedder.embedded) == 3


def test_a_server_embeds_in_the_background_and_ranks_lexically_until_then(
    layout: Layout,
) -> None:
    release = threading.Event()

    class Gated(CountingEmbedder):
        def passages(self, texts: Sequence[str]) -> Any:
            release.wait(30)
            return super().passages(texts)

    embedder = Gated()
    _write(layout)
    served = _with(embedder, layout, background=True)
    try:
        before = served.search("payments")
        assert before.ranking["channels"] == ["lexical"]
        release.set()
        deadline = time.monotonic() + 30
        while served.index.vector_counts(embedder.model) != (3, 3):
            assert time.monotonic() < deadline, "the background build did not finish"
            time.sleep(0.01)
        assert served.search("payments").ranking["channels"] == ["lexical", "semantic"]
    finally:
        release.set()
        served.close()


def test_configuration_or_the_environment_turns_the_channel_off(
    layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = CountingEmbedder()
    _write(layout)
    opened = _with(embedder, layout)
    try:
        layout.config.write_text('{"search": {"semantic": false}}', encoding="utf-8")
        assert opened.search("payments").ranking["channels"] == ["lexical"]
        assert embedder.embedded == []
    finally:
        opened.close()

    monkeypatch.setenv("ENGRAM_SEMANTIC", "off")
    assert open_project(layout.root).vectors is None
    monkeypatch.setenv("ENGRAM_SEMANTIC", "")
    on = open_project(layout.root)
    try:
        assert on.vectors is not None
    finally:
        on.close()


@pytest.mark.parametrize("value", ['"no"', "1", "null"])
def test_a_search_semantic_that_is_not_a_boolean_is_an_error_naming_the_key(
    tmp_path: Path, value: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(f'{{"search": {{"semantic": {value}}}}}', encoding="utf-8")

    with pytest.raises(ConfigError, match=r"search\.semantic must be true or false"):
        load_config(path)


def test_engram_search_over_mcp_names_the_channels_that_ranked(
    tmp_path: Path, start_server: StartServer
) -> None:
    project = new_project(tmp_path / "project", start_server)
    project.write_memory("payment-retries", "knowledge", FRENCH)
    project.write_memory("frontend-stack", "knowledge", "The frontend is a React app")
    server = project.start(ENGRAM_SEMANTIC="on")

    first = data_of(call(server, "engram_search", {"query": QUESTION}))
    assert first["ranking"] == {
        "channels": ["lexical"],
        "algorithm": "bm25(k1=1.2, b=0.75, idf=ln(1+(N-n+0.5)/(n+0.5)))",
        "confidence": {"model": "logistic-lexical", "version": LEXICAL.version},
    }
    assert {tuple(e["channels"]) for e in first["entries"]} <= {("lexical",)}

    deadline = time.monotonic() + 60  # the server embeds its two memories in the background
    while (found := data_of(call(server, "engram_search", {"query": QUESTION})))["ranking"][
        "channels"
    ] == ["lexical"]:
        assert time.monotonic() < deadline, "the server never ranked with the semantic channel"
        time.sleep(0.05)
    assert found["ranking"]["model"] == MODEL
    assert found["entries"][0]["id"] == "payment-retries"
    assert "semantic" in found["entries"][0]["channels"]
