"""Elicitation plumbing on the wire, in both eras, with a tool that writes only after
the human accepts (served in this process by ``elicit_server``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram.testing import (
    ELICIT_CAPS,
    MODERN_META,
    InProcessClient,
    LineClient,
    legacy_init,
    tool_request,
)
from tests.mcp import elicit_server

#: The confirmation form of the elicit_server's ``confirm_write`` tool, and a yes to it.
WRITE_FORM = {
    "type": "object",
    "properties": {"approve": {"type": "boolean", "title": "Write the note?"}},
    "required": ["approve"],
}
ACCEPT_WRITE = {
    "jsonrpc": "2.0",
    "id": "engram-1",
    "result": {"action": "accept", "content": {"approve": True}},
}


@pytest.fixture
def log(tmp_path: Path) -> Path:
    return tmp_path / "written.log"


def _start(log: Path, *args: str, timeout: str = "60") -> LineClient:
    env = {"ELICIT_LOG": str(log), "ENGRAM_ELICITATION_TIMEOUT_S": timeout}
    return InProcessClient(args, cwd=log.parent, env=env, serve=elicit_server.run, timeout=20)


def _written(log: Path) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def _write_request(note: str = "n1") -> dict[str, Any]:
    return tool_request(50, "confirm_write", {"note": note})


def _outcome(reply: dict[str, Any]) -> str:
    return str(reply["result"]["structuredContent"]["outcome"])


# --- legacy era: elicitation/create --------------------------------------------------


def test_legacy_elicitation_is_a_form_request_and_other_requests_are_served_meanwhile(
    log: Path,
) -> None:
    with _start(log) as client:
        legacy_init(client, ELICIT_CAPS)
        client.send(_write_request())
        ask = client.receive()
        assert ask == {
            "jsonrpc": "2.0",
            "id": "engram-1",
            "method": "elicitation/create",
            "params": {
                "mode": "form",
                "message": "Write note 'n1'?",
                "requestedSchema": WRITE_FORM,
            },
        }
        assert client.request("ping") == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert client.request("tools/list")["result"]["tools"][0]["name"] == "confirm_write"
        client.send(ACCEPT_WRITE)
        assert _outcome(client.receive()) == "written"
    assert _written(log) == ["n1"]


@pytest.mark.parametrize(
    ("reply", "outcome"),
    [
        ({"result": {"action": "decline"}}, "decline"),
        ({"result": {"action": "cancel"}}, "cancel"),
        ({"result": {"action": "accept", "content": {"approve": False}}}, "accept"),
        ({"result": {"action": "maybe"}}, "failed"),
        ({"error": {"code": -32600, "message": "Elicitation not supported"}}, "failed"),
    ],
)
def test_legacy_anything_but_an_accepting_answer_writes_nothing(
    log: Path, reply: dict[str, Any], outcome: str
) -> None:
    with _start(log) as client:
        legacy_init(client, ELICIT_CAPS)
        client.send(_write_request())
        ask = client.receive()
        client.send({"jsonrpc": "2.0", "id": ask["id"], **reply})
        assert _outcome(client.receive()) == outcome
    assert _written(log) == []


def test_legacy_timeout_cancels_the_dialog_and_writes_nothing(log: Path) -> None:
    with _start(log, timeout="0.3") as client:
        legacy_init(client, ELICIT_CAPS)
        client.send(_write_request())
        assert client.receive()["method"] == "elicitation/create"
        assert client.receive() == {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "engram-1", "reason": "timeout"},
        }
        assert _outcome(client.receive()) == "failed"
        # A late answer to the cancelled dialog is dropped, not misrouted.
        client.send({"jsonrpc": "2.0", "id": "engram-1", "result": {"action": "accept"}})
        assert client.request("ping")["result"] == {}
    assert _written(log) == []


def test_legacy_client_without_the_capability_is_never_asked(log: Path) -> None:
    with _start(log) as client:
        legacy_init(client, {"elicitation": {"url": {}}})
        client.send(_write_request())
        assert _outcome(client.receive()) == "no-dialog"


def test_legacy_client_is_asked_only_after_its_initialized_notification(log: Path) -> None:
    with _start(log) as client:
        params = {"protocolVersion": "2025-11-25", "capabilities": ELICIT_CAPS}
        client.request("initialize", params)
        client.send(_write_request())
        assert _outcome(client.receive()) == "no-dialog"
        client.notify("notifications/initialized")
        client.send(_write_request("n2"))
        assert client.receive()["method"] == "elicitation/create"
    assert _written(log) == []


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26"])
def test_legacy_versions_without_elicitation_are_never_asked(log: Path, version: str) -> None:
    with _start(log) as client:
        legacy_init(client, {"elicitation": {}}, version)
        client.send(_write_request())
        assert _outcome(client.receive()) == "no-dialog"
    assert _written(log) == []


def test_a_2025_06_18_dialog_is_asked_without_the_mode_that_version_lacks(log: Path) -> None:
    with _start(log) as client:
        legacy_init(client, {"elicitation": {}}, "2025-06-18")
        client.send(_write_request())
        assert client.receive() == {
            "jsonrpc": "2.0",
            "id": "engram-1",
            "method": "elicitation/create",
            "params": {
                "message": "Write note 'n1'?",
                "requestedSchema": WRITE_FORM,
            },
        }
        client.send(ACCEPT_WRITE)
        assert _outcome(client.receive()) == "written"
    assert _written(log) == ["n1"]


def test_no_elicitation_option_disables_the_dialog_in_both_eras(log: Path) -> None:
    with _start(log, "--no-elicitation") as client:
        legacy_init(client, ELICIT_CAPS)
        client.send(_write_request())
        assert _outcome(client.receive()) == "no-dialog"
        meta = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": ELICIT_CAPS}
        reply = client.request(
            "tools/call", {"name": "confirm_write", "arguments": {"note": "m"}, "_meta": meta}
        )
        assert reply["result"]["resultType"] == "complete"
        assert reply["result"]["structuredContent"] == {"outcome": "no-dialog"}


def test_end_of_input_while_a_dialog_is_open_exits_promptly_and_writes_nothing(
    log: Path,
) -> None:
    client = _start(log)
    legacy_init(client, ELICIT_CAPS)
    client.send(_write_request())
    assert client.receive()["method"] == "elicitation/create"
    assert client.close() == 0
    assert _written(log) == []


# --- modern era: input_required ------------------------------------------------------

MODERN_ELICIT_META = {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": ELICIT_CAPS}


def _modern_call(client: LineClient, note: str = "n1", **extra: Any) -> dict[str, Any]:
    params = {"name": "confirm_write", "arguments": {"note": note}, "_meta": MODERN_ELICIT_META}
    return client.request("tools/call", {**params, **extra})


def test_modern_elicitation_is_an_input_required_result_then_a_retry(log: Path) -> None:
    with _start(log) as client:
        first = _modern_call(client)["result"]
        state = first.pop("requestState")
        assert first == {
            "resultType": "input_required",
            "inputRequests": {
                "confirm": {
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": "Write note 'n1'?",
                        "requestedSchema": {
                            "type": "object",
                            "properties": {
                                "approve": {"type": "boolean", "title": "Write the note?"}
                            },
                            "required": ["approve"],
                        },
                    },
                }
            },
            "_meta": {
                "io.modelcontextprotocol/serverInfo": {
                    "name": "engram",
                    "title": "Engram test",
                    "version": "test",
                }
            },
        }
        assert _written(log) == []
        answer = {"confirm": {"action": "accept", "content": {"approve": True}}}
        final = _modern_call(client, requestState=state, inputResponses=answer)["result"]
        assert final["resultType"] == "complete"
        assert final["structuredContent"] == {"outcome": "written"}
    assert _written(log) == ["n1"]


def test_modern_retry_without_the_answer_asks_again(log: Path) -> None:
    with _start(log) as client:
        state = _modern_call(client)["result"]["requestState"]
        again = _modern_call(client, requestState=state, inputResponses={"other": {}})["result"]
        assert again["resultType"] == "input_required"
        assert list(again["inputRequests"]) == ["confirm"]
    assert _written(log) == []


def _flip(state: str) -> str:
    return state[:-2] + ("A" if state[-2] != "A" else "B") + state[-1]


@pytest.mark.parametrize(
    "tamper",
    [
        pytest.param(lambda s: {"requestState": _flip(s)}, id="forged-mac"),
        pytest.param(lambda s: {"requestState": "x" + s}, id="forged-payload"),
        pytest.param(lambda s: {"requestState": "garbage"}, id="garbage"),
        pytest.param(lambda s: {"requestState": 42}, id="not-a-string"),
        pytest.param(lambda s: {"requestState": s, "_note": "other"}, id="other-arguments"),
        pytest.param(lambda s: {}, id="responses-without-state"),
    ],
)
def test_modern_forged_or_mismatched_state_is_invalid_params_and_writes_nothing(
    log: Path, tamper: Any
) -> None:
    with _start(log) as client:
        state = _modern_call(client)["result"]["requestState"]
        changes = tamper(state)
        note = changes.pop("_note", "n1")
        answer = {"confirm": {"action": "accept", "content": {"approve": True}}}
        reply = _modern_call(client, note=note, inputResponses=answer, **changes)
        assert reply["error"] == {"code": -32602, "message": "Invalid or expired requestState"}
    assert _written(log) == []


def test_modern_state_does_not_survive_a_server_restart(log: Path) -> None:
    with _start(log) as client:
        state = _modern_call(client)["result"]["requestState"]
    with _start(log) as restarted:
        answer = {"confirm": {"action": "accept", "content": {"approve": True}}}
        reply = _modern_call(restarted, requestState=state, inputResponses=answer)
        assert reply["error"]["code"] == -32602
    assert _written(log) == []


def test_modern_client_without_the_capability_gets_no_input_required(log: Path) -> None:
    with _start(log) as client:
        reply = client.request(
            "tools/call",
            {"name": "confirm_write", "arguments": {"note": "n"}, "_meta": MODERN_META},
        )
        assert reply["result"]["structuredContent"] == {"outcome": "no-dialog"}
