"""The projections: the lexical index a search ranks by (BM25, in stages on a large
index) and the semantic vectors, derived from the records and removed with them
(``ProjectionReads``, ``ProjectionWrites``, the purge's checks)."""

from __future__ import annotations

import pytest

from engram.memory.ports import MemoryStore, RecordRow
from engram.search import lexical
from tests.store.contract.conftest import OTHER, SCOPE, record

#: Analyzed texts (what :func:`engram.memory.records.index_text` gives: stems separated
#: by spaces).
TEXTS = {
    "mem_a": "deploy deploy staging server",
    "mem_b": "deploy product server server server",
    "mem_c": "rollback staging",
    "mem_d": "lunch menu cafeteria monday tuesday wednesday thursday",
}


def _indexed(store: MemoryStore, texts: dict[str, str], scope_id: str = SCOPE) -> None:
    with store.write() as tx:
        for record_id, text in texts.items():
            tx.add_record(record(record_id, scope_id=scope_id))
            tx.index(scope_id, record_id, text)


def _ranked(found: list[tuple[RecordRow, float]] | None) -> list[tuple[str, float]]:
    assert found is not None
    return [(row.record_id, round(score, 6)) for row, score in found]


def test_a_search_ranks_by_bm25_over_every_variant_of_the_question(store: MemoryStore) -> None:
    _indexed(store, TEXTS)
    _indexed(store, {"mem_x": "deploy staging"}, OTHER)
    with store.read() as reader:
        found = reader.search(SCOPE, [("deploy",), ("staging", "stage")], 10)
        assert _ranked(found) == [("mem_a", 1.709976), ("mem_c", 0.897014), ("mem_b", 0.66301)]
        assert found is not None
        assert found[0][0] == record("mem_a")
        assert _ranked(reader.search(SCOPE, [("server",)], 1)) == [("mem_b", 1.0639)]
        assert reader.search(SCOPE, [("deploy",)], 10, stage=1) is None
        assert reader.search(SCOPE, [("absent",)], 10) == []
        assert reader.search(SCOPE, [], 10) == []
        assert reader.search(SCOPE, [], 10, stage=1) is None
        assert reader.search("c" * 32, [("deploy",)], 10) == []
        assert reader.search("c" * 32, [("deploy",)], 10, stage=1) is None
        assert reader.indexed_count(SCOPE) == 4
        assert reader.indexed(SCOPE, "mem_a")
        assert not reader.indexed(OTHER, "mem_a")
        assert reader.lexical_current(SCOPE)


def test_equal_scores_rank_by_record_id(store: MemoryStore) -> None:
    _indexed(store, {"mem_z": "same words", "mem_m": "same words", "mem_q": "other"})
    with store.read() as reader:
        assert [row.record_id for row, _ in reader.search(SCOPE, [("same",)], 10) or []] == [
            "mem_m",
            "mem_z",
        ]


def test_a_large_index_matches_rare_terms_first_then_all_common_then_the_first(
    store: MemoryStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Pruning from 10 documents: of 52, 2% is 1, so a term two documents hold is common.
    monkeypatch.setattr(lexical, "PRUNE_MIN_DOCUMENTS", 10)
    texts = {f"mem_{n:02d}": f"filler{n} common" for n in range(50)}
    texts["mem_90"] = "rare common other"
    texts["mem_91"] = "other common"
    _indexed(store, texts)
    groups: list[tuple[str, ...]] = [("common",), ("other",), ("rare",)]
    with store.read() as reader:
        assert [row.record_id for row, _ in reader.search(SCOPE, groups, 20) or []] == ["mem_90"]
        both = reader.search(SCOPE, groups, 20, stage=1)
        assert [row.record_id for row, _ in both or []] == ["mem_91", "mem_90"]  # shorter first
        first = reader.search(SCOPE, groups, 20, stage=2)
        assert len(first or []) == 20
        assert reader.search(SCOPE, groups, 20, stage=3) is None
        assert reader.search(SCOPE, [("nowhere",), *groups[:1]], 20) == []


def test_a_record_left_the_index_is_found_no_more_and_counts_no_more(store: MemoryStore) -> None:
    _indexed(store, TEXTS)
    with store.write() as tx:
        tx.unindex(SCOPE, "mem_a", TEXTS["mem_a"])
        assert not tx.indexed(SCOPE, "mem_a")
    with store.read() as reader:
        assert reader.indexed_count(SCOPE) == 3
        assert _ranked(reader.search(SCOPE, [("deploy",)], 10)) == [("mem_b", 0.952982)]


def _rowid(store: MemoryStore, record_id: str) -> int:
    with store.read() as reader:
        (rowid,) = [
            r for r, row in reader.unembedded(SCOPE, "none", 100) if row.record_id == record_id
        ]
    return rowid


def test_vectors_are_kept_per_model_and_each_change_is_a_new_version(store: MemoryStore) -> None:
    _indexed(store, {"mem_a": "alpha", "mem_b": "beta"})
    a, b = _rowid(store, "mem_a"), _rowid(store, "mem_b")
    with store.read() as reader:
        assert reader.unembedded(SCOPE, "m1", 10) == [(a, record("mem_a")), (b, record("mem_b"))]
        assert reader.unembedded(SCOPE, "m1", 1) == [(a, record("mem_a"))]
        assert reader.vector_version(SCOPE, "m1") == (0, 0, 0)
    with store.write() as tx:
        tx.put_vector(SCOPE, b, "m1", b"\x01\x02")
        tx.put_vector(SCOPE, a, "m1", b"\x03\x04")
        tx.put_vector(SCOPE, a, "m2", b"\x05\x06")
    with store.read() as reader:
        assert reader.vectors(SCOPE, "m1") == [(a, b"\x03\x04"), (b, b"\x01\x02")]
        assert reader.vector_version(SCOPE, "m1") == (2, b, 2)
        assert reader.unembedded(SCOPE, "m1", 10) == []
        assert reader.unembedded(SCOPE, "m2", 10) == [(b, record("mem_b"))]
        assert reader.records_by_rowid(SCOPE, [b, a, 10_000]) == {
            a: record("mem_a"),
            b: record("mem_b"),
        }
        assert reader.records_by_rowid(OTHER, [a]) == {}
    with store.write() as tx:
        tx.put_vector(SCOPE, a, "m1", b"\x07\x08")  # replaced: a new version, same count
        assert tx.vector_version(SCOPE, "m1") == (2, b, 3)
        tx.drop_other_vectors(SCOPE, "m1")
        assert tx.vectors(SCOPE, "m2") == []
        assert tx.vector_version(SCOPE, "m2") == (0, 0, 0)
        tx.unindex(SCOPE, "mem_b", "beta")  # its vectors go with its terms
        assert not tx.has_vector("mem_b")
        assert tx.has_vector("mem_a")
        assert tx.vector_version(SCOPE, "m1") == (1, b, 4)
        tx.put_vector(SCOPE, b, "m1", b"\x09")  # not indexed any more: no vector
        assert tx.vectors(SCOPE, "m1") == [(a, b"\x07\x08")]


def test_a_forgotten_record_is_purged_once_nothing_of_it_is_left(store: MemoryStore) -> None:
    _indexed(store, {"mem_a": "alpha", "mem_b": "beta"})
    with store.write() as tx:
        tx.put_data_key("mem_a", SCOPE, "kek-1", b"wrapped")
        tx.add_purge(SCOPE, "mem_a", "projection", 1_000)
        tx.add_purge(SCOPE, "mem_a", "key", 2_000)  # the first one owed stays
        tx.add_purge(SCOPE, "cand_b", "key", 1_000)
    assert store.finish_purge("mem_a", 3_000) == {
        "scope_id": SCOPE,
        "kind": "projection",
        "created_ms": 1_000,
        "done_ms": None,
    }
    with store.write() as tx:
        tx.unindex(SCOPE, "mem_a", "alpha")
    assert store.finish_purge("mem_a", 3_000) == {
        "scope_id": SCOPE,
        "kind": "projection",
        "created_ms": 1_000,
        "done_ms": None,
    }
    with store.write() as tx:
        tx.delete_data_key("mem_a")
    with store.read() as reader:
        assert reader.pending_purges(SCOPE) == [("cand_b", "key"), ("mem_a", "projection")]
    done = {"scope_id": SCOPE, "kind": "projection", "created_ms": 1_000, "done_ms": 4_000}
    assert store.finish_purge("mem_a", 4_000) == done
    assert store.finish_purge("mem_a", 5_000) == done
    assert store.finish_purge("cand_b", 5_000) == {
        "scope_id": SCOPE,
        "kind": "key",
        "created_ms": 1_000,
        "done_ms": 5_000,
    }
    assert store.finish_purge("cand_none", 5_000) is None
    with store.read() as reader:
        assert reader.pending_purges(SCOPE) == []
        assert reader.purge_row("mem_a") == done
