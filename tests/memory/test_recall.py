"""engram_memory_get and engram_memory_search: eligibility, packets, paging, receipts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from engram.canonical import digest
from engram.memory.settings import HostPolicy
from engram.search.analysis import query_groups
from engram.search.confidence import LEXICAL, signals
from engram.testing import NOW, PURPOSE, Clock, binding, capture_args
from tests.memory.conftest import Memory, open_memory

DAY = 86_400_000


def _get(memory: Memory, record_id: str, **kw: Any) -> dict[str, Any]:
    return memory.call("get", {"record_id": record_id, "purpose_ref": PURPOSE}, **kw)


def _search(memory: Memory, query: str, **extra: Any) -> dict[str, Any]:
    who = extra.pop("who", None)
    return memory.call("search", {"query": query, "purpose_ref": PURPOSE, **extra}, who)


def _without_audit(envelope: dict[str, Any]) -> bytes:
    return json.dumps({k: v for k, v in envelope.items() if k != "auditId"}).encode()


def test_get_returns_the_record_packet_with_every_read_receipt_field(memory: Memory) -> None:
    record_id = memory.admit("Signed tags mark every release.", "rel")
    value = _get(memory, record_id)["output"]["value"]
    assert set(value) == {
        "record",
        "redacted_fields",
        "redaction_receipt_digest",
        "read_receipt",
        "packet_digest",
    }
    receipt = value["read_receipt"]
    assert set(receipt) == {
        "record_id",
        "record_digest",
        "valid_as_of",
        "system_as_of",
        "validated_through_cursor",
        "authorization_receipt_digest",
        "revalidation_receipt_digest",
        "checked_at",
        "receipt_digest",
    }
    unsealed = {key: item for key, item in receipt.items() if key != "receipt_digest"}
    assert receipt["receipt_digest"] == digest("receipt/read", unsealed)
    packet = {key: item for key, item in value.items() if key != "packet_digest"}
    assert value["packet_digest"] == digest("packet", packet)
    assert value["record"]["components"][0]["text"] == "Signed tags mark every release."
    assert value["record"]["record_id"] == record_id
    assert value["redacted_fields"] == ["captured_by", "retention.derivative_rule"]
    assert "captured_by" not in value["record"]


def test_not_found_is_byte_identical_for_unknown_foreign_and_ineligible_records(
    memory: Memory, clock: Clock
) -> None:
    current = memory.admit("Current fact.", "cur")
    future = memory.value(
        "capture",
        capture_args(text="Future fact.", key="future-capture-01", valid_time={"t": NOW + DAY}),
    )
    future_id = memory.value(
        "request_admission",
        {"candidate_id": future["candidate_id"], "idempotency_key": "future-admit-0001"},
    )["outcome"]["record_id"]
    bounded = memory.value(
        "capture",
        capture_args(
            text="Past fact.",
            key="bounded-capture-1",
            valid_time={"t": NOW - 2 * DAY, "t_end": NOW},
        ),
    )
    bounded_id = memory.value(
        "request_admission",
        {"candidate_id": bounded["candidate_id"], "idempotency_key": "bounded-admit-001"},
    )["outcome"]["record_id"]
    bodies = {
        _without_audit(_get(memory, "mem_" + "a" * 52)),
        _without_audit(_get(memory, current, who=binding(tenant="tenant-b"))),
        _without_audit(_get(memory, current, who=binding(workspace="ws-2"))),
        _without_audit(_get(memory, future_id)),
        _without_audit(_get(memory, bounded_id)),
    }
    assert len(bodies) == 1
    assert json.loads(bodies.pop())["error"]["code"] == "NOT_FOUND"
    assert _get(memory, current)["ok"] is True


def test_a_record_leaves_get_and_search_at_its_expiry_instant(memory: Memory, clock: Clock) -> None:
    expires = "2027-01-16T08:00:00.000Z"
    captured = memory.value(
        "capture", capture_args(text="Short-lived rule.", retention={"expires_at": expires})
    )
    record_id = memory.value(
        "request_admission",
        {"candidate_id": captured["candidate_id"], "idempotency_key": "expiring-admit-01"},
    )["outcome"]["record_id"]
    clock.now = NOW + DAY - 1
    assert _get(memory, record_id)["ok"] is True
    assert len(_search(memory, "short-lived")["output"]["value"]["records"]) == 1
    clock.now = NOW + DAY
    assert _get(memory, record_id)["error"]["code"] == "NOT_FOUND"
    assert _search(memory, "short-lived")["output"]["value"]["records"] == []


def test_search_ranks_with_bm25_and_returns_packets_in_rank_order(memory: Memory) -> None:
    best = memory.admit("Deploys use blue green switching; blue green avoids downtime.", "a")
    other = memory.admit("Deploys are announced in the channel.", "b")
    memory.admit("Unrelated note about lunch menus.", "c")
    value = _search(memory, "blue green deploys")["output"]["value"]
    ids = [packet["record"]["record_id"] for packet in value["records"]]
    assert ids == [best, other]
    assert [packet["rank"] for packet in value["records"]] == [1, 2]
    assert value["records"][0]["score"] > value["records"][1]["score"]
    assert set(value["records"][0]) == {
        "record",
        "redacted_fields",
        "redaction_receipt_digest",
        "score",
        "rank",
    }
    assert "next_page_cursor" not in value
    unsealed = {key: item for key, item in value.items() if key != "response_digest"}
    assert value["response_digest"] == digest("response", unsealed)


def test_search_never_shows_another_scope_or_pending_candidates(memory: Memory) -> None:
    memory.admit("Tenant B keeps zebra logs.", "b", who=binding(tenant="tenant-b"))
    memory.value("capture", capture_args(text="Pending zebra candidate.", key="pending-zebra-001"))
    assert _search(memory, "zebra")["output"]["value"]["records"] == []
    found = _search(memory, "zebra", who=binding(tenant="tenant-b"))["output"]["value"]["records"]
    assert [packet["record"]["components"][0]["text"] for packet in found] == [
        "Tenant B keeps zebra logs."
    ]


def test_pages_follow_the_cursor_and_a_changed_snapshot_is_stale(memory: Memory) -> None:
    for index in range(5):
        memory.admit(f"Paging fact number {index} about kiwis.", f"p{index}")
    first = _search(memory, "kiwis", limit=2)["output"]["value"]
    second = _search(memory, "kiwis", limit=2, page_cursor=first["next_page_cursor"])
    second_value = second["output"]["value"]
    assert [p["rank"] for p in second_value["records"]] == [3, 4]
    third = _search(memory, "kiwis", limit=2, page_cursor=second_value["next_page_cursor"])
    assert [p["rank"] for p in third["output"]["value"]["records"]] == [5]
    assert "next_page_cursor" not in third["output"]["value"]
    seen = {p["record"]["record_id"] for v in (first, second_value) for p in v["records"]}
    assert len(seen) == 4
    memory.admit("A new kiwi fact changes the snapshot.", "p-new")
    stale = _search(memory, "kiwis", limit=2, page_cursor=first["next_page_cursor"])
    assert stale["error"]["code"] == "STALE_PAGE"


@pytest.mark.parametrize(
    "change",
    [
        {"query": "other words"},
        {"limit": 3},
        {"max_packet_bytes": 8192},
        {"page_cursor": "forged.cursor"},
        {"page_cursor": "x"},
    ],
)
def test_a_cursor_for_other_parameters_or_a_forged_one_is_stale(
    memory: Memory, change: dict[str, Any]
) -> None:
    for index in range(3):
        memory.admit(f"Cursor fact {index} about figs.", f"f{index}")
    cursor = _search(memory, "figs", limit=2)["output"]["value"]["next_page_cursor"]
    arguments = {"query": "figs", "limit": 2, "page_cursor": cursor, **change}
    query = arguments.pop("query")
    assert _search(memory, query, **arguments)["error"]["code"] == "STALE_PAGE"


def test_a_cursor_does_not_work_for_another_tenant(memory: Memory) -> None:
    for index in range(3):
        memory.admit(f"Shared words {index} plums.", f"s{index}")
        memory.admit(f"Shared words {index} plums.", f"t{index}", who=binding(tenant="tenant-b"))
    cursor = _search(memory, "plums", limit=2)["output"]["value"]["next_page_cursor"]
    foreign = _search(memory, "plums", limit=2, page_cursor=cursor, who=binding(tenant="tenant-b"))
    assert foreign["error"]["code"] == "STALE_PAGE"


def test_requiring_a_semantic_channel_is_ranking_unavailable_never_a_fallback(
    memory: Memory,
) -> None:
    memory.admit("Lexical only.", "l")
    policy = {"minimum_channels": "lexical_and_semantic", "network": "forbid"}
    envelope = _search(memory, "lexical", capability_policy=policy)
    assert envelope["error"] == {
        "code": "RANKING_UNAVAILABLE",
        "message": "A required ranking channel is unavailable.",
        "retriable": True,
    }


def test_network_allow_grants_nothing_and_changes_nothing(memory: Memory) -> None:
    memory.admit("Network policy fact.", "n")
    allowed = _search(memory, "network", capability_policy={"network": "allow"})
    value = allowed["output"]["value"]
    assert value["rank_receipt"]["channels"] == ["lexical"]
    assert len(value["records"]) == 1


def test_a_packet_larger_than_max_packet_bytes_is_projection_oversized(memory: Memory) -> None:
    memory.admit("big " + "x" * 5000, "big")
    assert _search(memory, "big", max_packet_bytes=4096)["error"]["code"] == "PROJECTION_OVERSIZED"
    record = _search(memory, "big")["output"]["value"]["records"][0]["record"]["record_id"]
    small = memory.call(
        "get", {"record_id": record, "purpose_ref": PURPOSE, "max_packet_bytes": 4096}
    )
    assert small["error"]["code"] == "PROJECTION_OVERSIZED"


def test_a_response_above_one_mebibyte_is_result_too_large(tmp_path: Path, clock: Clock) -> None:
    # Only an embedding host can admit records this large (a profile caps them at 16 KiB).
    memory = open_memory(tmp_path, clock, HostPolicy(max_record_bytes=100_000))
    for index in range(20):
        memory.admit(f"bulky {index} " + "y" * 60_000, f"bulk{index}")
    envelope = _search(memory, "bulky", limit=20, max_packet_bytes=1_048_576)
    assert envelope["error"]["code"] == "RESULT_TOO_LARGE"


def test_an_empty_list_means_no_match(memory: Memory) -> None:
    memory.admit("Only apples here.", "apples")
    assert _search(memory, "oranges")["output"]["value"]["records"] == []
    assert _search(memory, "?!*")["output"]["value"]["records"] == []


@settings(
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=st.text(min_size=1, max_size=200).filter(lambda text: text.strip() != ""))
def test_any_user_text_is_a_safe_query(memory: Memory, query: str) -> None:
    import unicodedata

    normalized = unicodedata.normalize("NFC", query)
    assume(normalized == query and not any(0xD800 <= ord(c) <= 0xDFFF for c in query))
    if not getattr(memory, "indexed", False):
        memory.admit("An indexed record so that every query reaches FTS5.", "idx")
        memory.indexed = True  # type: ignore[attr-defined]
    envelope = _search(memory, query)
    assert envelope["ok"] is True, envelope


def _admit_many(memory: Memory, texts: list[str]) -> list[str]:
    """Admit ``texts`` in one transaction (fixture building; tools commit one by one)."""
    from engram.memory import admission, capture
    from engram.memory.call import Write

    engine, who, records = memory.engine, binding(), []
    with engine.store.write() as tx:
        for number, text in enumerate(texts):
            arguments = capture_args(text=text, key=f"bulk.capture-{number:06d}")
            captured = capture.capture(Write.of(engine, tx, "capture", who, arguments, NOW))
            admit = {
                "candidate_id": captured["candidate_id"],
                "idempotency_key": f"bulk.admit-{number:06d}",
            }
            step = Write.of(engine, tx, "request_admission", who, admit, NOW)
            outcome = admission.request_admission(step)["outcome"]
            records.append(str(outcome["record_id"]))
    return records


def test_in_a_large_store_common_words_count_only_when_nothing_rarer_matches(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 2,101 records: "the" in all, "build" in one in seven, "green" and "blue" in one in ten.
    # On PostgreSQL a tenth of it over a tenth of the threshold: the same stages, and
    # 2,000 admissions there cost 40 s of the suite (its figures are in the benchmark).
    size = 2_100
    if memory.backend == "postgresql":
        from engram.search import lexical

        size = 210
        monkeypatch.setattr(lexical, "PRUNE_MIN_DOCUMENTS", lexical.PRUNE_MIN_DOCUMENTS // 10)
    texts = []
    for number in range(size):
        extra = (" build" if number % 7 == 0 else "") + (" green" if number % 10 == 0 else "")
        texts.append(f"the filler{number} text{extra}" + (" blue" if number % 10 == 5 else ""))
    records = _admit_many(memory, [*texts, "the tarball is signed"])

    def found(query: str) -> list[str]:
        value = _search(memory, query, limit=50)["output"]["value"]
        return sorted(page["record"]["record_id"] for page in value["records"])

    assert found("build the tarball") == [records[-1]]
    assert found("green build") == sorted(records[n] for n in range(0, size, 70))
    assert found("zebra build green") == sorted(records[n] for n in range(0, size, 70))
    # The first common word of the query answers: up to 50 of the records holding "green".
    green = found("zebra green blue")
    assert len(green) == min(50, size // 10)
    assert set(green) <= {records[n] for n in range(0, size, 10)}


def test_a_stage_whose_matches_are_all_undisclosable_matches_nothing(
    memory: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engram.search import lexical

    # 61 documents over a lowered threshold: "alpha" is common, "zeta" is not.
    monkeypatch.setattr(lexical, "PRUNE_MIN_DOCUMENTS", 50)
    records = _admit_many(memory, [f"alpha filler{number}" for number in range(60)])
    future = capture_args(
        text="alpha zeta", key="future.capture-000001", valid_time={"t": NOW + DAY}
    )
    candidate = memory.value("capture", future)["candidate_id"]
    admitted = {"candidate_id": candidate, "idempotency_key": "future.admission-0001"}
    assert memory.value("request_admission", admitted)["outcome"]["status"] == "accepted"

    # "zeta" alone matches only the record not yet valid: the search goes on to "alpha".
    value = _search(memory, "alpha zeta", limit=5)["output"]["value"]
    assert len(value["records"]) == 5
    assert {packet["record"]["record_id"] for packet in value["records"]} <= set(records)
    assert _search(memory, "zeta", limit=5)["output"]["value"]["records"] == []


def test_the_rank_receipt_counts_only_disclosable_records(memory: Memory) -> None:
    future = capture_args(
        text="bluefalcon", key="future.capture-000001", valid_time={"t": NOW + DAY}
    )
    candidate = memory.value("capture", future)["candidate_id"]
    admitted = {"candidate_id": candidate, "idempotency_key": "future.admission-0001"}
    assert memory.value("request_admission", admitted)["outcome"]["status"] == "accepted"

    hidden = _search(memory, "bluefalcon")["output"]["value"]["rank_receipt"]
    absent = _search(memory, "redfalcon")["output"]["value"]["rank_receipt"]
    assert hidden["eligible"] == absent["eligible"] == 0
    assert (
        set(hidden)
        == set(absent)
        == {
            "query",
            "parameters",
            "scope",
            "principal",
            "channels",
            "algorithm",
            "snapshot",
            "offset",
            "eligible",
            "returned",
            "oversized_left_out",
            "confidence",
            "confidences",
            "ranked_at",
            "receipt_digest",
        }
    )


@pytest.mark.parametrize("word", ["ﬁrewall", "ＧＰＵ", "m²", "ｶﾀｶﾅ", "plain"])
def test_a_record_is_found_by_its_own_words_in_compatibility_forms(
    memory: Memory, word: str
) -> None:
    record_id = memory.admit(f"{word} appears in this record.", "compat-word")
    found = _search(memory, word)["output"]["value"]["records"]
    assert [packet["record"]["record_id"] for packet in found] == [record_id]


def test_the_rank_receipt_names_the_confidence_model_and_each_returned_records_confidence(
    memory: Memory,
) -> None:
    first = memory.admit("Deploys to staging run from the deploy job.", "d1")
    second = memory.admit("Staging holds a copy of last week's data.", "d2")

    value = _search(memory, "deploy to staging")["output"]["value"]
    receipt = value["rank_receipt"]

    assert receipt["returned"] == [first, second]
    assert receipt["confidence"] == {"model": "logistic-lexical", "version": LEXICAL.version}
    # The first holds both terms and is the best BM25 hit; the second holds one of two.
    share = value["records"][1]["score"] / value["records"][0]["score"]
    parts = [(1.0, 1.0, None), (share, share, None)]
    groups = query_groups("deploy to staging")
    assert receipt["confidences"] == [
        LEXICAL(signals(groups, parts, 0, "Deploys to staging run from the deploy job.")),
        LEXICAL(signals(groups, parts, 1, "Staging holds a copy of last week's data.")),
    ]
    assert "low_confidence_left_out" not in receipt


def test_a_minimum_confidence_leaves_out_the_records_under_it_and_counts_them(
    memory: Memory,
) -> None:
    memory.admit("Deploys to staging run from the deploy job.", "d1")
    memory.admit("Staging holds a copy of last week's data.", "d2")
    every = _search(memory, "deploy to staging")["output"]["value"]["rank_receipt"]
    middle = (every["confidences"][0] + every["confidences"][1]) / 2

    kept = _search(memory, "deploy to staging", capability_policy={"minimum_confidence": middle})[
        "output"
    ]["value"]
    none = _search(memory, "deploy to staging", capability_policy={"minimum_confidence": 1})[
        "output"
    ]["value"]

    assert kept["rank_receipt"]["returned"] == every["returned"][:1]
    assert kept["rank_receipt"]["low_confidence_left_out"] == 1
    assert none["records"] == []
    assert none["rank_receipt"]["low_confidence_left_out"] == 2
    # The floor is bound with the other parameters: a search without it has its own digest.
    assert kept["rank_receipt"]["parameters"] != every["parameters"]


@pytest.mark.parametrize("value", [-0.1, 1.5, "0.5", True, None])
def test_a_minimum_confidence_outside_0_to_1_or_not_a_number_is_invalid_schema(
    memory: Memory, value: Any
) -> None:
    envelope = _search(memory, "x", capability_policy={"minimum_confidence": value})
    assert envelope["error"]["code"] == "INVALID_SCHEMA"
