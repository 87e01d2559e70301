"""Adversarial isolation: two tenants and two workspaces on one store, several principals.

Every probe is made with another scope's (or another principal's) real record ids,
candidate ids, page cursors and idempotency keys, and its answer is compared with the
answer for an id that never existed. Nothing here measures time.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engram.errors import NotFound
from engram.memory.binding import Binding, Scope
from engram.memory.gate import Operation
from engram.memory.maintenance import Maintenance
from engram.memory.settings import HostPolicy
from engram.testing import PURPOSE, Clock, binding, capture_args
from engram.testing.isolation import (
    QUERY,
    TEXTS,
    error_code,
    probe_arguments,
    unknown_like,
    without_audit_id,
)
from tests.memory.conftest import Memory, open_memory

ALICE_A1 = binding("tenant-a", "ws-1", "alice")
BOB_A1 = binding("tenant-a", "ws-1", "bob")
ALICE_A2 = binding("tenant-a", "ws-2", "alice")  # same tenant and principal, other workspace
ALICE_B1 = binding("tenant-b", "ws-1", "alice")  # same principal and workspace names, other tenant
CAROL_B1 = binding("tenant-b", "ws-1", "carol")
SCOPES = (ALICE_A1.scope, ALICE_A2.scope, ALICE_B1.scope)
OTHER_SCOPES = (ALICE_A2, ALICE_B1, CAROL_B1)
OTHER_PRINCIPALS = (*OTHER_SCOPES, BOB_A1)

OWN_TEXTS = {
    ALICE_A2.scope: (
        "Workspace two documents releases in its runbook.",
        "Workspace two audits releases.",
    ),
    ALICE_B1.scope: (
        "Tenant B gates releases behind a canary runbook.",
        "Tenant B freezes releases.",
    ),
}


def _who(who: Binding) -> str:
    return f"{who.tenant}/{who.workspace}/{who.principal}"


def _approve(operation: Operation) -> bool:
    return True


class Dialog:
    """A human who would approve anything, and remembers being asked."""

    def __init__(self) -> None:
        self.asked: list[Operation] = []

    def __call__(self, operation: Operation) -> bool:
        self.asked.append(operation)
        return True


def _ok(memory: Memory, tool: str, arguments: dict[str, Any], who: Binding) -> Any:
    envelope = memory.engine.call(tool, arguments, who, _approve)
    assert envelope["ok"] is True, envelope
    return envelope["output"]["value"]


def _capture(memory: Memory, who: Binding, text: str, key: str) -> str:
    return str(_ok(memory, "capture", capture_args(text=text, key=key), who)["candidate_id"])


def _admit(memory: Memory, who: Binding, candidate: str, key: str) -> str:
    outcome = _ok(
        memory, "request_admission", probe_arguments("request_admission", candidate, key), who
    )
    assert outcome["outcome"]["status"] == "accepted", outcome
    return str(outcome["outcome"]["record_id"])


def _search(memory: Memory, who: Binding, query: str = QUERY, **extra: Any) -> dict[str, Any]:
    return memory.engine.call("search", {"query": query, "purpose_ref": PURPOSE, **extra}, who)


def _heads(memory: Memory) -> dict[str, int]:
    with memory.engine.store.read() as reader:
        return {scope.scope_id: reader.head(scope.scope_id).cursor for scope in SCOPES}


def _open_confirmations(memory: Memory) -> list[Any]:
    return [
        row for scope in SCOPES for row in Maintenance(memory.engine, scope).pending().confirmations
    ]


@dataclass
class World:
    """Alice's items in tenant-a/ws-1 (by role), and every id of every scope."""

    memory: Memory
    ids: dict[str, str]
    keys: dict[str, str]
    by_scope: dict[Scope, set[str]]
    texts_by_scope: dict[Scope, set[str]]

    def foreign_to(self, who: Binding) -> set[str]:
        """Every id, text and scope id that ``who`` must never see."""
        return {
            item
            for scope, items in self.by_scope.items()
            if scope != who.scope
            for item in (*items, *self.texts_by_scope[scope], scope.scope_id)
        }


def _build_world(memory: Memory) -> World:
    ids: dict[str, str] = {}
    keys = {role: f"alice.{role}.key.000001" for role in ("admit", "forget", "withdraw")}
    ids["accepted"] = _capture(memory, ALICE_A1, TEXTS["record"], "alice.record.capture01")
    ids["record"] = _admit(memory, ALICE_A1, ids["accepted"], keys["admit"])
    second = _capture(memory, ALICE_A1, TEXTS["second"], "alice.second.capture01")
    ids["second"] = _admit(memory, ALICE_A1, second, "alice.second.admission1")
    gone = _capture(memory, ALICE_A1, TEXTS["tombstoned"], "alice.gone.capture0001")
    ids["tombstoned"] = _admit(memory, ALICE_A1, gone, "alice.gone.admission01")
    _ok(memory, "forget", probe_arguments("forget", ids["tombstoned"], keys["forget"]), ALICE_A1)
    ids["pending"] = _capture(memory, ALICE_A1, TEXTS["pending"], "alice.pending.capture1")
    ids["withdrawn"] = _capture(memory, ALICE_A1, TEXTS["withdrawn"], "alice.withdrawn.capt1")
    _ok(
        memory,
        "withdraw",
        probe_arguments("withdraw", ids["withdrawn"], keys["withdraw"]),
        ALICE_A1,
    )
    by_scope = {ALICE_A1.scope: {*ids.values(), second, gone}}
    texts_by_scope = {ALICE_A1.scope: set(TEXTS.values())}
    for who in (ALICE_A2, CAROL_B1):
        by_scope[who.scope] = set()
        texts_by_scope[who.scope] = set(OWN_TEXTS[who.scope])
        for n, text in enumerate(OWN_TEXTS[who.scope]):
            candidate = _capture(memory, who, text, f"{who.principal}.own.capture.{n:04}")
            record = _admit(memory, who, candidate, f"{who.principal}.own.admission.{n:04}")
            by_scope[who.scope] |= {candidate, record}
    return World(memory, ids, keys, by_scope, texts_by_scope)


@pytest.fixture
def world(memory: Memory) -> World:
    return _build_world(memory)


def _assert_not_found_like_unknown(
    memory: Memory, tool: str, arguments: dict[str, Any], field: str, who: Binding
) -> None:
    """``arguments`` (naming another's target) answer exactly like a never-existing id,
    with or without a dialog, asking no human and changing nothing anywhere."""
    heads = _heads(memory)
    dialog = Dialog()
    unknown = {**arguments, field: unknown_like(arguments[field])}
    for confirm in (None, dialog):
        foreign = memory.engine.call(tool, arguments, who, confirm)
        baseline = memory.engine.call(tool, unknown, who, confirm)
        assert error_code(foreign) == "NOT_FOUND", foreign
        assert without_audit_id(foreign) == without_audit_id(baseline)
        assert foreign["auditId"] != baseline["auditId"]
    assert dialog.asked == []
    assert _open_confirmations(memory) == []
    assert _heads(memory) == heads


# --- get, forget, request_admission, withdraw with another's ids --------------------


@pytest.mark.parametrize("who", OTHER_SCOPES, ids=_who)
@pytest.mark.parametrize("target", ["record", "second", "tombstoned"])
@pytest.mark.parametrize("tool", ["get", "forget"])
def test_a_record_id_of_another_scope_is_the_not_found_of_an_id_that_never_existed(
    world: World, tool: str, target: str, who: Binding
) -> None:
    arguments = probe_arguments(tool, world.ids[target])
    _assert_not_found_like_unknown(world.memory, tool, arguments, "record_id", who)


@pytest.mark.parametrize("who", OTHER_PRINCIPALS, ids=_who)
@pytest.mark.parametrize("target", ["pending", "accepted", "withdrawn"])
@pytest.mark.parametrize("tool", ["request_admission", "withdraw"])
def test_a_candidate_id_of_another_scope_or_principal_is_the_not_found_of_an_unknown_id(
    world: World, tool: str, target: str, who: Binding
) -> None:
    arguments = probe_arguments(tool, world.ids[target])
    _assert_not_found_like_unknown(world.memory, tool, arguments, "candidate_id", who)


@pytest.mark.parametrize("who", OTHER_PRINCIPALS, ids=_who)
def test_a_host_gated_admission_answers_not_found_for_anothers_candidate_before_the_gate(
    tmp_path: Path, clock: Clock, who: Binding
) -> None:
    gated = HostPolicy(confirm_tools=frozenset({"capture", "request_admission"}))
    world = _build_world(open_memory(tmp_path, clock, gated))
    arguments = probe_arguments("request_admission", world.ids["pending"])
    _assert_not_found_like_unknown(
        world.memory, "request_admission", arguments, "candidate_id", who
    )


def test_the_owner_still_sees_and_acts_on_everything_the_probes_targeted(world: World) -> None:
    for who in OTHER_PRINCIPALS:
        for tool in ("request_admission", "withdraw"):
            world.memory.engine.call(
                tool, probe_arguments(tool, world.ids["pending"]), who, _approve
            )
    for who in OTHER_SCOPES:  # bob shares alice's scope: her records are his to forget
        world.memory.engine.call(
            "forget", probe_arguments("forget", world.ids["record"]), who, _approve
        )
    got = world.memory.value("get", probe_arguments("get", world.ids["record"]), ALICE_A1)
    assert got["record"]["record_id"] == world.ids["record"]
    admitted = _ok(
        world.memory,
        "request_admission",
        probe_arguments("request_admission", world.ids["pending"], "alice.pending.admission"),
        ALICE_A1,
    )
    assert admitted["outcome"]["status"] == "accepted"


# --- search -----------------------------------------------------------------------


def _leaks(envelope: dict[str, Any], foreign: set[str]) -> list[str]:
    """The foreign strings found in the envelope or inside its (decoded) page cursor."""
    text = json.dumps(envelope, sort_keys=True, ensure_ascii=False)
    cursor = envelope.get("output", {}).get("value", {}).get("next_page_cursor", "")
    for part in cursor.split(".") if cursor else ():
        text += base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)).decode("utf-8", "replace")
    return sorted(item for item in foreign if item in text)


@pytest.mark.parametrize("who", OTHER_SCOPES, ids=_who)
@pytest.mark.parametrize("role", ["record", "second", "tombstoned", "pending", "withdrawn"])
def test_search_never_returns_another_scopes_record_even_for_its_exact_text(
    world: World, role: str, who: Binding
) -> None:
    envelope = _search(world.memory, who, TEXTS[role], limit=1)
    value = envelope["output"]["value"]
    [packet] = value["records"]  # the query shares words with the scope's own records
    assert packet["record"]["record_id"] in world.by_scope[who.scope]
    assert "next_page_cursor" in value
    assert _leaks(envelope, world.foreign_to(who)) == []


@pytest.mark.parametrize("who", OTHER_SCOPES, ids=_who)
def test_search_for_another_scopes_ids_finds_nothing(world: World, who: Binding) -> None:
    for item in sorted(world.by_scope[ALICE_A1.scope]):
        envelope = _search(world.memory, who, item)
        assert envelope["output"]["value"]["records"] == []
        assert _leaks(envelope, world.foreign_to(who)) == []


@pytest.mark.parametrize("who", [ALICE_A1, BOB_A1, *OTHER_SCOPES], ids=_who)
def test_search_receipts_cursors_and_digests_hold_no_foreign_id(world: World, who: Binding) -> None:
    cursor = None
    for _ in range(3):
        extra: dict[str, Any] = {"page_cursor": cursor} if cursor else {}
        envelope = _search(world.memory, who, limit=1, **extra)
        assert error_code(envelope) == "ok", envelope
        assert _leaks(envelope, world.foreign_to(who)) == []
        cursor = envelope["output"]["value"].get("next_page_cursor")
        if cursor is None:
            break


@pytest.mark.parametrize("who", OTHER_PRINCIPALS, ids=_who)
def test_a_page_cursor_from_another_scope_or_principal_is_stale_page(
    world: World, who: Binding
) -> None:
    alices = _search(world.memory, ALICE_A1, limit=1)["output"]["value"]["next_page_cursor"]
    own = _search(world.memory, who, limit=1)["output"]["value"]["next_page_cursor"]
    assert error_code(_search(world.memory, who, limit=1, page_cursor=alices)) == "STALE_PAGE"
    assert error_code(_search(world.memory, ALICE_A1, limit=1, page_cursor=own)) == "STALE_PAGE"
    # Each cursor still works for the one it was given to.
    assert error_code(_search(world.memory, who, limit=1, page_cursor=own)) == "ok"
    assert error_code(_search(world.memory, ALICE_A1, limit=1, page_cursor=alices)) == "ok"


@pytest.mark.parametrize("who", [ALICE_A2, ALICE_B1], ids=_who)
def test_a_page_cursor_from_another_scope_with_the_same_history_is_stale_page(
    memory: Memory, who: Binding
) -> None:
    # Same principal name, same writes, same query: only the scope tells the cursors apart.
    for owner in (ALICE_A1, who):
        for n in range(3):
            memory.admit(f"Mirrored releases runbook {n}.", f"mirror.{n}", owner)
    alices = _search(memory, ALICE_A1, limit=1)["output"]["value"]
    theirs = _search(memory, who, limit=1)["output"]["value"]
    assert alices["rank_receipt"]["snapshot"] == theirs["rank_receipt"]["snapshot"]
    stale = _search(memory, who, limit=1, page_cursor=alices["next_page_cursor"])
    assert error_code(stale) == "STALE_PAGE"


# --- idempotency keys -------------------------------------------------------------


@pytest.mark.parametrize("same_content", [False, True], ids=["other-content", "same-content"])
@pytest.mark.parametrize("who", OTHER_PRINCIPALS, ids=_who)
def test_one_capture_key_used_by_two_principals_gives_two_independent_candidates(
    memory: Memory, who: Binding, same_content: bool
) -> None:
    key = "shared.capture.key.000001"
    mine_args = capture_args(text="Alice's own note on releases.", key=key)
    theirs_args = mine_args if same_content else capture_args(text="Another note.", key=key)
    mine = memory.value("capture", mine_args, ALICE_A1)
    theirs = memory.value("capture", theirs_args, who)
    assert mine["status"] == theirs["status"] == "committed_pending"
    assert theirs["candidate_id"] != mine["candidate_id"]
    assert memory.value("capture", mine_args, ALICE_A1) == {**mine, "status": "duplicate_exact"}
    assert memory.value("capture", theirs_args, who) == {**theirs, "status": "duplicate_exact"}


@pytest.mark.parametrize("who", OTHER_PRINCIPALS, ids=_who)
def test_replaying_anothers_exact_admission_request_is_not_found_never_their_outcome(
    world: World, who: Binding
) -> None:
    arguments = probe_arguments("request_admission", world.ids["accepted"], world.keys["admit"])
    _assert_not_found_like_unknown(
        world.memory, "request_admission", arguments, "candidate_id", who
    )
    own = _capture(world.memory, who, "My own releases note.", "own.capture.key.000001")
    value = _ok(world.memory, "request_admission", {**arguments, "candidate_id": own}, who)
    assert value["replayed"] is False
    assert value["outcome"]["status"] == "accepted"
    assert value["outcome"]["candidate_id"] == own


@pytest.mark.parametrize("who", OTHER_PRINCIPALS, ids=_who)
def test_replaying_anothers_exact_withdrawal_is_not_found_and_the_key_stays_free(
    world: World, who: Binding
) -> None:
    arguments = probe_arguments("withdraw", world.ids["withdrawn"], world.keys["withdraw"])
    _assert_not_found_like_unknown(world.memory, "withdraw", arguments, "candidate_id", who)
    own = _capture(world.memory, who, "My own draft to withdraw.", "own.capture.key.000002")
    value = _ok(world.memory, "withdraw", {**arguments, "candidate_id": own}, who)
    assert value["replayed"] is False
    assert value["receipt"]["to_state"] == "withdrawn"


@pytest.mark.parametrize("who", OTHER_SCOPES, ids=_who)
def test_replaying_anothers_exact_forget_is_not_found_and_the_key_stays_free(
    world: World, who: Binding
) -> None:
    arguments = probe_arguments("forget", world.ids["tombstoned"], world.keys["forget"])
    _assert_not_found_like_unknown(world.memory, "forget", arguments, "record_id", who)
    own = _admit(
        world.memory,
        who,
        _capture(world.memory, who, "My own record to forget.", "own.capture.key.000003"),
        "own.admission.key.000003",
    )
    value = _ok(world.memory, "forget", {**arguments, "record_id": own}, who)
    assert value["replayed"] is False
    assert value["receipt"]["to_state"] == "tombstoned"


# --- confirmations ----------------------------------------------------------------


def test_a_host_approval_for_one_principal_is_never_consumed_by_another(world: World) -> None:
    memory = world.memory
    arguments = probe_arguments("forget", world.ids["record"], "forget.key.0000001")
    assert error_code(memory.call("forget", arguments, ALICE_A1)) == "gate_failed"
    [request] = Maintenance(memory.engine, ALICE_A1.scope).pending().confirmations
    Maintenance(memory.engine, ALICE_A1.scope).confirm(request.request_id)
    assert error_code(memory.call("forget", arguments, BOB_A1)) == "gate_failed"
    assert error_code(memory.call("forget", arguments, ALICE_A1)) == "ok"


def test_host_maintenance_of_one_scope_never_reaches_another_scopes_items(world: World) -> None:
    memory = world.memory
    waiting = memory.call("forget", probe_arguments("forget", world.ids["record"]), ALICE_A1)
    assert error_code(waiting) == "gate_failed"
    [request] = Maintenance(memory.engine, ALICE_A1.scope).pending().confirmations
    heads = _heads(memory)
    for scope in (ALICE_A2.scope, ALICE_B1.scope):
        other = Maintenance(memory.engine, scope)
        with pytest.raises(NotFound):
            other.confirm(request.request_id)
        with pytest.raises(NotFound):
            other.transition(world.ids["record"], "dispute")
        with pytest.raises(NotFound):
            other.adjudicate(world.ids["pending"], accept=True)
    assert _heads(memory) == heads
    assert Maintenance(memory.engine, ALICE_A1.scope).pending().confirmations == [request]


# --- journals, ranking and admission rules are per scope --------------------------


def _busy_tenant_a(memory: Memory, record_b: str) -> None:
    """Tenant A writes a lot, with the same words, and probes tenant B's record."""
    for n in range(4):
        for who in (ALICE_A1, ALICE_A2):
            candidate = _capture(
                memory, who, f"Tenant A releases runbook step {n}.", f"busy.{n}.capture.0001"
            )
            record = _admit(memory, who, candidate, f"busy.{n}.admission.01")
            if n == 0:
                _ok(memory, "forget", probe_arguments("forget", record, "busy.forget.key.01"), who)
        draft = _capture(memory, ALICE_A1, f"Tenant A draft {n} releases.", f"busy.{n}.draft.0001")
        _ok(
            memory,
            "withdraw",
            probe_arguments("withdraw", draft, f"busy.{n}.withdraw.01"),
            ALICE_A1,
        )
    for tool in ("get", "forget"):
        memory.engine.call(tool, probe_arguments(tool, record_b), ALICE_A1, _approve)


def test_tenant_b_journal_cursors_do_not_move_when_tenant_a_writes(memory: Memory) -> None:
    captured = memory.value(
        "capture", capture_args(text="B runbook releases.", key="b.capture.key.000001"), CAROL_B1
    )
    assert captured["cursor"] == "1"
    outcome = _ok(
        memory,
        "request_admission",
        probe_arguments("request_admission", captured["candidate_id"], "b.admission.key.0001"),
        CAROL_B1,
    )["outcome"]
    assert outcome["cursor"] == "2"
    before = memory.call("get", probe_arguments("get", outcome["record_id"]), CAROL_B1)
    _busy_tenant_a(memory, outcome["record_id"])
    after = memory.call("get", probe_arguments("get", outcome["record_id"]), CAROL_B1)
    assert after["output"]["value"]["read_receipt"]["validated_through_cursor"] == "2"
    assert without_audit_id(after) == without_audit_id(before)
    again = memory.value(
        "capture", capture_args(text="B next.", key="b.capture.key.000002"), ALICE_B1
    )
    assert again["cursor"] == "3"


def test_tenant_b_search_answers_are_unchanged_by_tenant_a_records_with_the_same_words(
    memory: Memory,
) -> None:
    records = [
        _admit(
            memory,
            CAROL_B1,
            _capture(memory, CAROL_B1, text, f"b.seed.capture.{n:04}"),
            f"b.seed.admission.{n:04}",
        )
        for n, text in enumerate(OWN_TEXTS[ALICE_B1.scope])
    ]
    before = _search(memory, CAROL_B1, limit=1)
    _busy_tenant_a(memory, records[0])
    after = _search(memory, CAROL_B1, limit=1)
    # Same scores, same rank receipt (snapshot, counts), same cursor and digest.
    assert without_audit_id(after) == without_audit_id(before)
    cursor = after["output"]["value"]["next_page_cursor"]
    second = _search(memory, CAROL_B1, limit=1, page_cursor=cursor)
    assert [packet["rank"] for packet in second["output"]["value"]["records"]] == [2]


def test_identical_content_in_two_scopes_is_admitted_in_each_as_its_own_record(
    memory: Memory,
) -> None:
    records = {
        who: memory.admit("Identical content in every scope.", "same.content", who)
        for who in (ALICE_A1, ALICE_A2, ALICE_B1)
    }
    assert len(set(records.values())) == 3
    for who, record in records.items():
        others = set(records.values()) - {record}
        for other in others:
            assert error_code(memory.call("get", probe_arguments("get", other), who)) == "NOT_FOUND"


def test_content_forgotten_in_one_scope_is_not_held_for_adjudication_in_another(
    memory: Memory,
) -> None:
    record = memory.admit("Forgotten only in tenant A.", "forgotten.a", ALICE_A1)
    _ok(memory, "forget", probe_arguments("forget", record, "forget.key.0000001"), ALICE_A1)
    for who in (ALICE_A2, ALICE_B1):
        candidate = _capture(memory, who, "Forgotten only in tenant A.", "again.capture.key.01")
        value = _ok(
            memory,
            "request_admission",
            probe_arguments("request_admission", candidate, "again.admission.01"),
            who,
        )
        assert value["outcome"]["status"] == "accepted"
        assert value["outcome"]["record_id"] != record


def test_tenant_and_workspace_names_holding_the_separator_never_share_a_scope(
    memory: Memory,
) -> None:
    # ("t\0u", "w") and ("t", "u\0w") are two different scopes.
    owner = binding("tenant-a\0ws-1", "x", "alice")
    prober = binding("tenant-a", "ws-1\0x", "alice")
    record = memory.admit("Only for the first pair.", "separator", owner)
    got = memory.call("get", probe_arguments("get", record), prober)
    assert error_code(got) == "NOT_FOUND"
    assert _search(memory, prober, "first pair")["output"]["value"]["records"] == []
