"""A flood of confirmation requests: one agent must not bury the operator.

Found: one agent filed 200 forget requests in under a second, and every one waited in
``engram host pending`` beside the requests of everyone else. A principal may now have
the host's ``[confirmation] max_open_requests`` (default 10) waiting in a scope; the call
that would leave one more is ``RATE_LIMITED`` (retriable, the contract's back-off code),
leaves nothing, and succeeds in leaving its request once the operator has confirmed or
denied one. Other principals keep their own room. On both backends.
"""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.errors import TrustedContextUnavailable
from engram.host.profile import load_profile
from engram.host.runtime import HostMemory, open_memory
from engram.store.location import DatabaseUrl, StoreLocation
from engram.testing import current_capture_args
from tests.adversarial.conftest import host_init

RATE_LIMITED = {
    "code": "RATE_LIMITED",
    "message": "Rate limited; back off and retry.",
    "retriable": True,
}
GATE_FAILED = {
    "code": "gate_failed",
    "message": "A required confirmation or policy gate is not satisfied.",
    "retriable": False,
}


@pytest.fixture
def profiles(tmp_path: Path, store_location: StoreLocation) -> tuple[Path, Path]:
    """The record's owner (``agent-a``) and ``mallory``, who floods: one scope, one store."""
    store = store_location.url if isinstance(store_location, DatabaseUrl) else str(store_location)
    owner = host_init(tmp_path / "owner", "--store", store)
    keys = (
        [] if isinstance(store_location, Path) else ["--keys", str(tmp_path / "owner/memory.keys")]
    )
    mallory = host_init(tmp_path / "mallory", "--store", store, *keys, "--principal", "mallory")
    return owner, mallory


def _record(memory: HostMemory) -> str:
    captured = memory.call("capture", current_capture_args("A fact.", "owner.capture-000001"))
    admitted = memory.call(
        "request_admission",
        {
            "candidate_id": captured["output"]["value"]["candidate_id"],
            "idempotency_key": "owner.admission-0001",
        },
    )
    return str(admitted["output"]["value"]["outcome"]["record_id"])


def _forget(memory: HostMemory, record_id: str, number: int) -> dict[str, Any]:
    arguments = {
        "record_id": record_id,
        "idempotency_key": f"flood.forget-{number:06d}",
        "reason_ref": f"reason:flood {number}",
    }
    envelope: dict[str, Any] = memory.call("forget", arguments)
    assert envelope["ok"] is False
    error: dict[str, Any] = envelope["error"]
    return error


def _host(profile: Path, *arguments: str) -> str:
    result = CliRunner().invoke(cli, ["host", *arguments, "--host-profile", str(profile)])
    assert result.exit_code == 0, result.output
    return result.stdout


def _waiting(profile: Path) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = json.loads(_host(profile, "pending", "--json"))["confirmations"]
    return listed


def test_two_hundred_requests_of_one_agent_leave_ten_and_the_rest_are_rate_limited(
    profiles: tuple[Path, Path],
) -> None:
    owner, mallory = profiles
    with closing(open_memory(owner, sweep=False)) as memory:
        record_id = _record(memory)
    with closing(open_memory(mallory, sweep=False)) as memory:
        errors = [_forget(memory, record_id, number) for number in range(200)]

    from engram.memory.settings import DEFAULT_MAX_OPEN_REQUESTS

    assert DEFAULT_MAX_OPEN_REQUESTS == 10
    assert errors == [GATE_FAILED] * 10 + [RATE_LIMITED] * 190
    waiting = _waiting(owner)
    # Requests of one millisecond are listed in the order of their random ids.
    assert sorted(request["reason"] for request in waiting) == sorted(
        f"reason:flood {n}" for n in range(10)
    )
    assert {request["principal"] for request in waiting} == {"mallory"}


def test_another_principal_still_reaches_the_operator_while_one_is_at_its_cap(
    profiles: tuple[Path, Path],
) -> None:
    owner, mallory = profiles
    with closing(open_memory(owner, sweep=False)) as memory:
        record_id = _record(memory)
    with closing(open_memory(mallory, sweep=False)) as memory:
        for number in range(12):
            _forget(memory, record_id, number)

    with closing(open_memory(owner, sweep=False)) as memory:
        assert _forget(memory, record_id, 500) == GATE_FAILED

    principals = sorted(request["principal"] for request in _waiting(owner))
    assert principals == ["agent-a"] + ["mallory"] * 10


def test_a_confirmation_or_a_deny_makes_room_for_the_next_request(
    profiles: tuple[Path, Path],
) -> None:
    owner, mallory = profiles
    with closing(open_memory(owner, sweep=False)) as memory:
        record_id = _record(memory)
    with closing(open_memory(mallory, sweep=False)) as memory:
        for number in range(10):
            assert _forget(memory, record_id, number) == GATE_FAILED
        assert _forget(memory, record_id, 10) == RATE_LIMITED
        first, second = (request["request_id"] for request in _waiting(owner)[:2])

        _host(owner, "deny", first)
        assert _forget(memory, record_id, 10) == GATE_FAILED  # the same call, retried
        assert _forget(memory, record_id, 11) == RATE_LIMITED
        _host(owner, "confirm", second)
        assert _forget(memory, record_id, 11) == GATE_FAILED
        assert _forget(memory, record_id, 12) == RATE_LIMITED

    assert len(_waiting(owner)) == 10


def test_a_retry_of_a_request_already_waiting_is_still_gate_failed_at_the_cap(
    profiles: tuple[Path, Path],
) -> None:
    owner, mallory = profiles
    with closing(open_memory(owner, sweep=False)) as memory:
        record_id = _record(memory)
    with closing(open_memory(mallory, sweep=False)) as memory:
        for number in range(10):
            _forget(memory, record_id, number)

        # Its request waits: the honest retry is told so, not told to back off.
        assert _forget(memory, record_id, 3) == GATE_FAILED

    assert len(_waiting(owner)) == 10


def test_the_cap_is_the_host_profiles_setting(profiles: tuple[Path, Path]) -> None:
    owner, mallory = profiles
    text = mallory.read_text(encoding="utf-8")
    assert "max_open_requests = 10" in text
    mallory.write_text(text.replace("max_open_requests = 10", "max_open_requests = 2"))
    assert load_profile(mallory).policy.max_open_requests == 2
    with closing(open_memory(owner, sweep=False)) as memory:
        record_id = _record(memory)

    with closing(open_memory(mallory, sweep=False)) as memory:
        errors = [_forget(memory, record_id, number) for number in range(4)]

    assert errors == [GATE_FAILED, GATE_FAILED, RATE_LIMITED, RATE_LIMITED]


@pytest.mark.parametrize("value", ["0", "1001", '"10"', "true", "-1", "2.5"])
def test_a_cap_outside_1_to_1000_or_not_an_integer_makes_the_profile_untrusted(
    tmp_path: Path, value: str
) -> None:
    profile = host_init(tmp_path / "host")
    text = profile.read_text(encoding="utf-8")
    profile.write_text(text.replace("max_open_requests = 10", f"max_open_requests = {value}"))

    with pytest.raises(TrustedContextUnavailable):
        load_profile(profile)
