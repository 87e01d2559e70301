"""No credential an agent sends is ever written in clear: not in the store, its WAL, its
shared memory, its keys folder or a backup. Component text is sealed (and refused at
admission), idempotency keys are kept only as an HMAC, a reason holding a credential is
refused before anything is written."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.host.profile import load_profile
from engram.host.runtime import binding_of, open_memory
from engram.testing import PURPOSE, capture_args
from tests.adversarial.conftest import host_init
from tests.safety.samples import ALNUM, aws_access_key_id, fake, github_token

GITHUB = github_token(seed=11)
AWS = aws_access_key_id(seed=11)
STRIPE = "sk_live_" + fake(ALNUM, 28, 11)


def _every_byte(*roots: Path) -> bytes:
    return b"".join(
        path.read_bytes() for root in roots for path in sorted(root.rglob("*")) if path.is_file()
    )


def test_credentials_an_agent_sends_never_reach_the_disk_in_clear(tmp_path: Path) -> None:
    profile = host_init(tmp_path / "host")
    memory = open_memory(profile, sweep=False, semantic=False)
    outcomes: dict[str, Any] = {}
    try:
        captured = memory.call(
            "capture", capture_args(text=f"Use {GITHUB} to deploy.", key=f"deploy {AWS} key")
        )
        assert captured["ok"], captured
        candidate = captured["output"]["value"]["candidate_id"]
        outcomes["admission"] = memory.call(
            "request_admission", {"candidate_id": candidate, "idempotency_key": f"admit {STRIPE}"}
        )
        outcomes["withdraw"] = memory.call(
            "withdraw",
            {
                "candidate_id": candidate,
                "idempotency_key": "withdraw-key-00001",
                "reason_ref": f"reason: leaked {STRIPE}",
            },
        )
        outcomes["search"] = memory.call("search", {"query": GITHUB, "purpose_ref": PURPOSE})
        # The replay of the capture still finds its hashed key.
        again = memory.call(
            "capture", capture_args(text=f"Use {GITHUB} to deploy.", key=f"deploy {AWS} key")
        )
        assert again["output"]["value"]["status"] == "duplicate_exact"
    finally:
        memory.close()
    backup = tmp_path / "backup.engram"
    backed_up = CliRunner().invoke(
        cli, ["host", "backup", str(backup), "--host-profile", str(profile)]
    )
    assert backed_up.exit_code == 0, backed_up.output
    assert backup.is_file()

    assert outcomes["admission"]["output"]["value"]["outcome"]["status"] == "rejected"
    assert outcomes["withdraw"]["error"]["code"] == "INVALID_SCHEMA"
    disk = _every_byte(tmp_path)
    for credential in (GITHUB, AWS, STRIPE):
        assert credential.encode() not in disk


def test_keys_an_older_engram_stored_in_clear_still_replay_and_are_hashed_on_open(
    tmp_path: Path,
) -> None:
    from engram.memory.idempotency import stored_key

    profile = host_init(tmp_path / "host")
    memory = open_memory(profile, sweep=False, semantic=False)
    key = f"legacy {AWS} key"
    first = memory.call("capture", capture_args(text="A legacy fact.", key=key))
    memory.close()
    loaded = load_profile(profile)
    hashed = stored_key(memory.engine.vault, key)
    with sqlite3.connect(loaded.store_file) as db:  # as an older engram kept it
        db.execute("UPDATE idempotency SET key = ?, hashed = 0 WHERE key = ?", (key, hashed))

    replayed = open_memory(profile, sweep=False, semantic=False)
    try:
        again = replayed.call("capture", capture_args(text="A legacy fact.", key=key))
        assert again["output"]["value"]["candidate_id"] == first["output"]["value"]["candidate_id"]
    finally:
        replayed.close()
    opened = open_memory(profile)  # a server's open: sweeps and hashes old keys
    opened.close()

    with sqlite3.connect(loaded.store_file) as db:
        rows = db.execute("SELECT key, hashed FROM idempotency").fetchall()
    assert rows == [(hashed, 1)]
    assert binding_of(loaded).principal == "agent-a"


@pytest.mark.parametrize(
    "reason", [f"reason {GITHUB}", f"token={STRIPE}", f"aws {AWS[:8]} {AWS[8:]}"]
)
def test_a_reason_holding_a_credential_is_refused(tmp_path: Path, reason: str) -> None:
    memory = open_memory(host_init(tmp_path / "host"), sweep=False, semantic=False)
    try:
        envelope = memory.call(
            "forget",
            {"record_id": "mem_aaaa", "idempotency_key": "forget-key-00001", "reason_ref": reason},
        )
    finally:
        memory.close()

    assert envelope["error"]["code"] == "INVALID_SCHEMA"
