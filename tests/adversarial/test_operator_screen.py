"""The operator's screen: an agent must not be able to change what a person is shown.

Refs and keys are agent-written and shown to people (``engram host pending``, the MCP
dialog), so the schemas refuse control, separator and invisible format characters in
them (``INVALID_SCHEMA``), and every agent-written string that is shown is escaped,
even one a store kept from before the refusal.
"""

from __future__ import annotations

import json
import os
import pty
import select
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engram.host.profile import load_profile
from engram.host.runtime import binding_of, open_memory
from engram.memory.gate import Operation
from engram.testing import ENGRAM, PURPOSE, capture_args
from tests.adversarial.conftest import host_init

#: What an agent would write to rewrite a terminal line or reorder a dialog's text.
HOSTILE = {
    "carriage return": "reason:ok\rforget of nothing",
    "line feed": "reason:ok\nconfirm  conf_x  withdraw cand_draft",
    "ANSI erase line": "reason:\x1b[2K\x1b[1Gwithdraw of a draft",
    "ANSI colour": "\x1b[8mhidden\x1b[0m",
    "C1 CSI": "reason:\x9b2Kgone",
    "NUL": "reason:\x00",
    "DEL": "reason:\x7f",
    "right-to-left override": "reason:\u202efed.rof",
    "right-to-left isolate": "reason:\u2067withdraw\u2069",
    "line separator": "reason:one\u2028two",
    "zero width space": "reason:\u200b",
    "byte order mark": "\ufeffreason:x",
    "tag character": "reason:\U000e0041",
}


@pytest.fixture
def profile(tmp_path: Path) -> Path:
    return host_init(tmp_path / "host")


def _call(profile: Path, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    memory = open_memory(profile, sweep=False)
    try:
        result: dict[str, Any] = memory.call(tool, arguments)
        return result
    finally:
        memory.close()


FIELDS = [
    ("forget", "reason_ref"),
    ("forget", "idempotency_key"),
    ("withdraw", "reason_ref"),
    ("capture", "evidence_ref"),
    ("capture", "source_ref"),
]


def _arguments(tool: str, field: str, text: str) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "forget": {
            "record_id": "mem_aaaa",
            "idempotency_key": "forget-key-00001",
            "reason_ref": "reason:x",
        },
        "withdraw": {
            "candidate_id": "cand_aaaa",
            "idempotency_key": "withdraw-key-0001",
            "reason_ref": "reason:x",
        },
        "capture": capture_args("A fact.", key="capture-key-00001"),
    }[tool]
    if field == "evidence_ref":
        arguments["evidence"] = {**arguments["evidence"], field: text}
    elif field == "source_ref":
        arguments["payload"]["citations"][0]["source_ref"] = text
    else:
        arguments[field] = text.ljust(16, "x") if field == "idempotency_key" else text
    return arguments


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
@pytest.mark.parametrize(("tool", "field"), FIELDS)
def test_a_ref_or_key_that_could_rewrite_a_display_is_refused_at_the_schema(
    profile: Path, tool: str, field: str, hostile: str
) -> None:
    envelope = _call(profile, tool, _arguments(tool, field, hostile))

    assert envelope["ok"] is False
    assert envelope["error"]["code"] == "INVALID_SCHEMA"
    assert hostile not in json.dumps(envelope, ensure_ascii=False)


@pytest.mark.parametrize(("tool", "field"), FIELDS)
def test_the_same_field_with_plain_text_passes_the_schema(
    profile: Path, tool: str, field: str
) -> None:
    envelope = _call(profile, tool, _arguments(tool, field, "reason:plain-text é ü 日本"))

    assert envelope.get("error", {}).get("code") != "INVALID_SCHEMA", envelope


def test_the_dialog_is_shown_the_agents_reason_escaped() -> None:
    from engram.safety.display import displayable

    operation = Operation("forget", "mem_aaaa", "reason:\x1b[2K\r\u202ewithdraw", "sha256:0")

    shown = operation.display()

    assert shown == {
        "operation": "forget",
        "target": "mem_aaaa",
        "reason": "reason:\\u001b[2K\\u000d\\u202ewithdraw",
    }
    assert displayable(shown["reason"])


@pytest.mark.parametrize("hostile", HOSTILE.values(), ids=HOSTILE.keys())
def test_escaping_shows_every_hostile_character_and_is_idempotent(hostile: str) -> None:
    from engram.safety.display import displayable, escaped

    shown = escaped(hostile)

    assert displayable(shown)
    assert escaped(shown) == shown
    assert shown.isprintable()


def _in_a_terminal(*arguments: str) -> bytes:
    """Run ``engram`` with a pseudo-terminal as its output, as an operator would."""
    controller, terminal = pty.openpty()
    process = subprocess.Popen(
        [str(ENGRAM), *arguments], stdin=subprocess.DEVNULL, stdout=terminal, stderr=terminal
    )
    os.close(terminal)
    output = bytearray()
    while True:
        ready, _, _ = select.select([controller], [], [], 30)
        assert ready, "engram did not finish within 30 s"
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        output += chunk
    os.close(controller)
    assert process.wait(30) == 0, output.decode("utf-8", "replace")
    return bytes(output)


def test_pending_in_a_terminal_shows_a_request_an_older_engram_stored_escaped(
    profile: Path,
) -> None:
    loaded = load_profile(profile)
    scope = binding_of(loaded).scope.scope_id
    _call(profile, "search", {"query": "x", "purpose_ref": PURPOSE})  # the store exists
    hostile = "reason:ok\r\x1b[2Kconfirm  conf_fake  withdraw cand_draft \u202e"
    display = json.dumps({"operation": "forget", "target": "mem_real", "reason": hostile})
    with sqlite3.connect(loaded.store_file) as db:
        db.execute(
            "INSERT INTO confirmations VALUES (?, ?, ?, ?, ?, ?, ?, NULL, NULL, ?)",
            (
                "conf_aaaaaaaaaaaaaaaaaaaaaaaa",
                scope,
                "agent-a",
                "forget",
                "mem_real",
                "sha256:" + "0" * 64,
                2**50,
                display,
            ),
        )

    shown = _in_a_terminal("host", "pending", "--host-profile", str(profile))

    assert shown == (
        b"confirm  conf_aaaaaaaaaaaaaaaaaaaaaaaa  forget mem_real"
        b" (reason: reason:ok\\u000d\\u001b[2Kconfirm  conf_fake  withdraw cand_draft \\u202e)\r\n"
    )
