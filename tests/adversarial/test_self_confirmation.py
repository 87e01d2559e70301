"""An agent that drives its own MCP client must not confirm its own withdraw or forget.

The server cannot tell whether a client's dialog reaches a person; only the host can. By
default (``[confirmation] via = "host"``) no client dialog can approve: the operator does,
with ``engram host confirm``. ``dialog`` trusts the client's dialog (a host whose client
shows it to a person); ``both`` needs the operator and then the dialog.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from engram.cli.main import cli
from engram.testing import (
    ELICIT_CAPS,
    ENGRAM,
    PURPOSE,
    LineClient,
    StartServer,
    call,
    current_capture_args,
    elicit_meta,
    host_profile,
    legacy_init,
    tool_request,
    value,
)
from tests.adversarial.conftest import host_init

ACCEPT = {"action": "accept", "content": {"approve": True}}


def _admit(server: LineClient, key: str = "r1") -> str:
    arguments = current_capture_args(text="Deploys go out on Tuesdays.", key=f"{key}.capture-00001")
    candidate = value(call(server, "engram_memory_capture", arguments))["candidate_id"]
    admission = {"candidate_id": candidate, "idempotency_key": f"{key}.admission-0001"}
    return str(
        value(call(server, "engram_memory_request_admission", admission))["outcome"]["record_id"]
    )


def _forget(record: str) -> dict[str, Any]:
    return {"record_id": record, "idempotency_key": "forget-key-000001", "reason_ref": "reason:x"}


def _host(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ENGRAM), "host", *arguments], capture_output=True, text=True, timeout=60, check=False
    )


def _confirm_the_one_request(profile: Path) -> None:
    listed = _host("pending", "--json", "--host-profile", str(profile))
    [request] = json.loads(listed.stdout)["confirmations"]
    assert _host("confirm", request["request_id"], "--host-profile", str(profile)).returncode == 0


def test_by_default_the_agents_own_legacy_dialog_is_never_asked(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host")
    assert 'via = "host"' in profile.read_text(encoding="utf-8")
    server = start_server("--host-profile", str(profile))
    legacy_init(server, ELICIT_CAPS)  # the agent's client declares it can show a dialog
    record = _admit(server)

    server.send(tool_request(90, "engram_memory_forget", _forget(record)))
    answer = server.receive()  # the call's own answer: no elicitation/create came first

    assert answer.get("method") is None
    assert answer["result"]["structuredContent"]["error"]["code"] == "gate_failed"
    _confirm_the_one_request(profile)
    forgotten = value(call(server, "engram_memory_forget", _forget(record)))
    assert forgotten["receipt"]["to_state"] == "tombstoned"


def test_by_default_a_modern_client_gets_no_input_request_to_answer(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host")
    server = start_server("--host-profile", str(profile))
    record = _admit(server)

    first = call(server, "engram_memory_forget", _forget(record), _meta=elicit_meta())["result"]

    assert first["resultType"] == "complete"
    assert first["structuredContent"]["error"]["code"] == "gate_failed"
    # An answer the agent makes up on its own is worth nothing either.
    forged = call(
        server,
        "engram_memory_forget",
        _forget(record),
        _meta=elicit_meta(),
        inputResponses={"confirm": ACCEPT},
    )
    assert forged["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
    assert (
        value(
            call(
                server,
                "engram_memory_get",
                {"record_id": record, "purpose_ref": PURPOSE},
            )
        )["record"]["record_id"]
        == record
    )


def test_with_dialog_the_clients_dialog_approves_as_before(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", confirm_via="dialog")
    server = start_server("--host-profile", str(profile))
    legacy_init(server, ELICIT_CAPS)
    record = _admit(server)

    server.send(tool_request(90, "engram_memory_forget", _forget(record)))
    ask = server.receive()
    assert ask["method"] == "elicitation/create"
    server.send({"jsonrpc": "2.0", "id": ask["id"], "result": ACCEPT})

    assert value(server.receive())["receipt"]["to_state"] == "tombstoned"


@pytest.mark.parametrize("dialog", ["accept", "decline"])
def test_with_both_the_operator_approves_first_and_then_the_dialog(
    start_server: StartServer, tmp_path: Path, dialog: str
) -> None:
    profile = host_profile(tmp_path / "host", confirm_via="both")
    server = start_server("--host-profile", str(profile))
    legacy_init(server, ELICIT_CAPS)
    record = _admit(server)

    server.send(tool_request(90, "engram_memory_forget", _forget(record)))
    first = server.receive()
    assert first.get("method") is None  # no dialog before the operator has approved
    assert first["result"]["structuredContent"]["error"]["code"] == "gate_failed"
    _confirm_the_one_request(profile)

    server.send(tool_request(91, "engram_memory_forget", _forget(record)))
    ask = server.receive()
    assert ask["method"] == "elicitation/create"
    answer = ACCEPT if dialog == "accept" else {"action": "decline"}
    server.send({"jsonrpc": "2.0", "id": ask["id"], "result": answer})
    final = server.receive()["result"]["structuredContent"]

    if dialog == "accept":
        assert final["output"]["value"]["receipt"]["to_state"] == "tombstoned"
    else:
        assert final["error"]["code"] == "gate_failed"
        got = call(
            server,
            "engram_memory_get",
            {"record_id": record, "purpose_ref": PURPOSE},
        )
        assert value(got)["record"]["record_id"] == record


def test_with_both_an_operator_approval_alone_runs_nothing(
    start_server: StartServer, tmp_path: Path
) -> None:
    profile = host_profile(tmp_path / "host", confirm_via="both")
    server = start_server("--host-profile", str(profile))
    legacy_init(server, {})  # this client shows no dialog
    record = _admit(server)
    call(server, "engram_memory_forget", _forget(record))
    _confirm_the_one_request(profile)

    retried = call(server, "engram_memory_forget", _forget(record))["result"]["structuredContent"]

    assert retried["error"]["code"] == "gate_failed"


@pytest.mark.parametrize("via", ["host", "dialog", "both"])
def test_init_stores_the_channel_and_doctor_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, via: str
) -> None:
    profile = host_init(tmp_path / "h", "--confirm-via", via)
    assert f'via = "{via}"' in profile.read_text(encoding="utf-8")
    monkeypatch.setenv("ENGRAM_HOST_PROFILE", str(profile))
    monkeypatch.chdir(tmp_path)

    checks = json.loads(CliRunner().invoke(cli, ["doctor", "--json"]).stdout)["checks"]

    [check] = [c for c in checks if c["id"] == "memory.confirmation"]
    assert check["status"] == "pass"
    assert (
        check["message"]
        == {
            "host": "withdraw and forget are confirmed by the host operator (engram host confirm)",
            "dialog": "withdraw and forget are confirmed in the client's dialog where it shows"
            " one (trusting that a person sees it), else by the host operator",
            "both": "withdraw and forget need the host operator's approval, then the client's"
            " dialog",
        }[via]
    )


def test_a_profile_naming_another_channel_is_refused(tmp_path: Path) -> None:
    from engram.errors import TrustedContextUnavailable
    from engram.host.profile import load_profile

    profile = host_profile(tmp_path / "host")
    text = profile.read_text(encoding="utf-8").replace('via = "host"', 'via = "agent"')
    profile.write_text(text, encoding="utf-8")

    with pytest.raises(TrustedContextUnavailable, match=r"confirmation\.via"):
        load_profile(profile)
