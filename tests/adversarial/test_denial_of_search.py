"""No denial of search: one principal's record must never make another's search fail.

The host caps a record's size at admission (``[admission] max_record_bytes``, 16 KiB by
default and at most), so every packet of an admitted record fits the default
``max_packet_bytes`` and a page of 50 of them fits the 1 MiB response ceiling; a record
admitted before the cap (or by a host embedding the engine with a larger one) that no
``max_packet_bytes`` the caller could reasonably choose would fit is left out of the page
and counted in the rank receipt.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram.canonical import canonical_bytes
from engram.errors import TrustedContextUnavailable
from engram.host.profile import load_profile
from engram.memory.engine import MemoryEngine
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import PURPOSE, Clock, binding, capture_args
from tests.adversarial.conftest import host_init
from tests.memory.conftest import Memory, open_memory

ATTACKER = binding(principal="mallory")
VICTIM = binding(principal="alice")


@pytest.fixture
def clock() -> Clock:
    return Clock()


class _AcceptAll:
    """The admission policy of a host that admits whatever resolves (the secret scan of
    megabytes of filler only costs these tests time)."""

    policy_id = "test.accept-all/v1"

    def decide(self, record: dict[str, Any], now_ms: int) -> Any:
        from engram.memory.admission import Decision

        return Decision(True, self.policy_id, now_ms)


def _engine(tmp_path: Path, clock: Clock, ceiling: int = 2_000_000) -> Memory:
    """An engine admitting whatever resolves, with this record ceiling (by default one
    far above today's: the store as an engram from before the ceiling left it)."""
    from engram.crypto.keyfiles import create_keyring
    from engram.memory.settings import HostPolicy

    path = tmp_path / "memory.db"
    engine = MemoryEngine(
        SqliteMemoryStore(path),
        create_keyring(tmp_path / "memory.db.keys"),
        HostPolicy(max_record_bytes=ceiling),
        _AcceptAll(),
        clock=clock,
    )
    return Memory(engine, clock, path)


def _search(memory: Memory, query: str, who: Any, **extra: Any) -> dict[str, Any]:
    return memory.call("search", {"query": query, "purpose_ref": PURPOSE, **extra}, who)


def _components(text: str) -> list[dict[str, Any]]:
    """``text`` cut into components of 60,000 characters (one component holds 64 KiB)."""
    return [
        {"component_id": f"c{n + 1}", "kind": "decision", "text": text[start : start + 60_000]}
        | {"citation_ids": ["cit1"]}
        for n, start in enumerate(range(0, len(text), 60_000))
    ]


def _admission(memory: Memory, text: str, key: str, who: Any) -> dict[str, Any]:
    arguments = capture_args(key=key + ".capture-0001", components=_components(text))
    captured = memory.value("capture", arguments, who)
    arguments = {
        "candidate_id": captured["candidate_id"],
        "idempotency_key": key + ".admission-00001",
    }
    outcome: dict[str, Any] = memory.value("request_admission", arguments, who)["outcome"]
    return outcome


def test_a_record_larger_than_the_ceiling_is_rejected_at_admission(
    tmp_path: Path, clock: Clock
) -> None:
    memory = open_memory(tmp_path, clock)

    outcome = _admission(memory, "payments " + "x" * 900_000, "huge", ATTACKER)

    assert outcome["status"] == "rejected"  # reason record_too_large, in the receipt
    assert _admission(memory, "payments " + "x" * 9_000, "fits", ATTACKER)["status"] == "accepted"
    memory.admit("The payments service retries three times.", "fact", VICTIM)
    assert len(memory.found("payments", VICTIM)) == 2  # the one that fits, and the victim's


def test_a_record_just_under_the_ceiling_is_admitted_and_fifty_fit_one_response(
    tmp_path: Path, clock: Clock
) -> None:
    from engram.memory.settings import MAX_RECORD_BYTES

    memory = _engine(tmp_path, clock, MAX_RECORD_BYTES)  # today's ceiling
    # The body around the text is a few hundred bytes: fill up to the ceiling.
    probe = capture_args(text="", key="probe-key-000001")
    frame = len(canonical_bytes(probe["payload"])) + len(canonical_bytes(probe["evidence"])) + 600
    text = "ledger " + "y" * (MAX_RECORD_BYTES - frame)
    for index in range(50):
        assert _admission(memory, f"{index} {text}", f"big{index:03d}", ATTACKER)["status"] == (
            "accepted"
        )

    value = memory.value("search", {"query": "ledger", "purpose_ref": PURPOSE, "limit": 50}, VICTIM)

    assert len(value["records"]) == 50
    assert value["rank_receipt"]["oversized_left_out"] == 0


def test_a_record_admitted_before_the_ceiling_is_left_out_and_counted(
    tmp_path: Path, clock: Clock
) -> None:

    old = _engine(tmp_path, clock)
    legacy = _admission(old, "refunds " + "z" * 900_000, "legacy", ATTACKER)
    assert legacy["status"] == "accepted"
    huge = legacy["record_id"]
    old.engine.store.close()
    memory = open_memory(tmp_path, clock)  # the same store, today's ceiling
    small = memory.admit("Refunds are issued within five days.", "fact", VICTIM)

    for extra in ({}, {"max_packet_bytes": 4096}, {"limit": 50}):
        value = memory.value(
            "search", {"query": "refunds", "purpose_ref": PURPOSE, **extra}, VICTIM
        )
        assert [p["record"]["record_id"] for p in value["records"]] == [small]
        assert value["rank_receipt"]["oversized_left_out"] == 1
    assert memory.code("get", {"record_id": huge, "purpose_ref": PURPOSE}, VICTIM) == (
        "PROJECTION_OVERSIZED"
    )


def test_a_caller_who_lowers_max_packet_bytes_below_an_admissible_record_is_told(
    tmp_path: Path, clock: Clock
) -> None:
    memory = open_memory(tmp_path, clock)
    memory.admit("invoices " + "w" * 8_000, "mid", ATTACKER)

    envelope = _search(memory, "invoices", VICTIM, max_packet_bytes=4096)

    assert envelope["error"]["code"] == "PROJECTION_OVERSIZED"


@pytest.mark.parametrize("value", ["1023", "16385", "0", '"16384"', "true"])
def test_a_profile_ceiling_out_of_bounds_is_refused(tmp_path: Path, value: str) -> None:
    profile = host_init(tmp_path / "h")
    text = profile.read_text(encoding="utf-8")
    assert "max_record_bytes = 16384" in text
    profile.write_text(
        text.replace("max_record_bytes = 16384", f"max_record_bytes = {value}"), encoding="utf-8"
    )

    with pytest.raises(TrustedContextUnavailable, match="max_record_bytes"):
        load_profile(profile)


def test_an_embedding_host_keeps_the_ceiling_it_chose(tmp_path: Path, clock: Clock) -> None:
    from engram.crypto.keyfiles import create_keyring
    from engram.memory.settings import HostPolicy

    engine = MemoryEngine(
        SqliteMemoryStore(tmp_path / "m.db"),
        create_keyring(tmp_path / "m.db.keys"),
        HostPolicy(max_record_bytes=4_000),
        clock=clock,
    )
    memory = Memory(engine, clock, tmp_path / "m.db")

    assert _admission(memory, "a" * 8_000, "over", VICTIM)["status"] == "rejected"
    assert _admission(memory, "a" * 200, "under", VICTIM)["status"] == "accepted"


def test_records_admitted_before_the_ceiling_cannot_add_up_to_result_too_large(
    tmp_path: Path, clock: Clock
) -> None:

    old = _engine(tmp_path, clock)
    for index in range(20):
        legacy = _admission(old, f"bulky {index} " + "y" * 60_000, f"bulk{index:03d}", ATTACKER)
        assert legacy["status"] == "accepted"
    old.engine.store.close()
    memory = open_memory(tmp_path, clock)
    mine = memory.admit("Bulky invoices are archived monthly.", "fact", VICTIM)

    value = memory.value("search", {"query": "bulky", "purpose_ref": PURPOSE, "limit": 50}, VICTIM)

    assert [p["record"]["record_id"] for p in value["records"]] == [mine]
    assert value["rank_receipt"]["oversized_left_out"] == 20
