"""The official Python SDK client (mcp 2.3.0) against the real engram-mcp, in every mode.

The SDK is a test dependency only: an independent implementation of the client side
that checks our wire against its own strict models (2026-07-28 results included).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from mcp import Client, StdioServerParameters, types

from engram.project.layout import init_layout
from engram.testing import server_command

pytestmark = pytest.mark.e2e

MODES = ["auto", "legacy", "2026-07-28"]
ELICIT_SERVER = str(Path(__file__).with_name("elicit_server.py"))


def _inherited() -> dict[str, str]:
    return {key: os.environ[key] for key in ("PATH", "PYTHONPATH") if key in os.environ}


def _params(command: list[str], cwd: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=command[0],
        args=command[1:],
        cwd=str(cwd),
        # PYTHONPATH too: a run against the source tree serves that source, not a wheel.
        env={**_inherited(), **env},
    )


async def _list_and_call(params: StdioServerParameters, mode: str) -> tuple[str, list[str], Any]:
    async with Client(params, mode=mode, cache=None) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("engram_status", {})
        return client.protocol_version, [tool.name for tool in tools], result


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_lists_and_calls_tools_in_each_mode(tmp_path: Path, mode: str) -> None:
    init_layout(tmp_path)
    params = _params(server_command(), tmp_path, ENGRAM_GLOBAL_DIR=str(tmp_path / "global"))
    version, names, result = anyio.run(_list_and_call, params, mode)
    assert version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
    assert "engram_status" in names
    assert result.is_error is False
    # A project tool answers in content only: its words, then the envelope without them.
    human, copy = result.content
    assert result.structured_content is None
    body = json.loads(copy.text)
    assert body["ok"] is True
    assert human.text.startswith("engram ")
    assert "text" not in body["data"]


async def _confirm(
    params: StdioServerParameters, mode: str, action: Literal["accept", "decline", "cancel"]
) -> Any:
    asked: list[str] = []

    async def on_elicit(context: Any, request: types.ElicitRequestParams) -> types.ElicitResult:
        assert isinstance(request, types.ElicitRequestFormParams)
        asked.append(request.message)
        if action == "accept":
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action=action)

    async with Client(
        params,
        mode=mode,
        cache=None,
        elicitation_callback=on_elicit,  # type: ignore[arg-type]
    ) as client:
        result = await client.call_tool("confirm_write", {"note": "from-sdk"})
    return asked, result.structured_content


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("action", ["accept", "decline"])
def test_sdk_client_completes_an_elicitation_round_trip_in_each_mode(
    tmp_path: Path, mode: str, action: Literal["accept", "decline"]
) -> None:
    log = tmp_path / "written.log"
    params = _params([sys.executable, ELICIT_SERVER], tmp_path, ELICIT_LOG=str(log))
    asked, outcome = anyio.run(_confirm, params, mode, action)
    assert asked == ["Write note 'from-sdk'?"]
    if action == "accept":
        assert outcome == {"outcome": "written"}
        assert log.read_text() == "from-sdk\n"
    else:
        assert outcome == {"outcome": "decline"}
        assert not log.exists()


async def _unknown_tool(params: StdioServerParameters, mode: str) -> int:
    from mcp import MCPError

    async with Client(params, mode=mode, cache=None) as client:
        try:
            await client.call_tool("engram_no_such_tool", {})
        except MCPError as error:
            return int(error.error.code)
    raise AssertionError("an unknown tool must be a protocol error")


@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_sees_unknown_tool_as_invalid_params(tmp_path: Path, mode: str) -> None:
    assert anyio.run(_unknown_tool, _params(server_command(), tmp_path), mode) == -32602


async def _listen(params: StdioServerParameters) -> tuple[Any, list[str], list[str]]:
    async with Client(params, mode="2026-07-28", cache=None) as client:
        async with client.listen(
            tools_list_changed=True, resource_subscriptions=["engram://index"]
        ) as subscription:
            during = [tool.name for tool in (await client.list_tools()).tools]
        after = [tool.name for tool in (await client.list_tools()).tools]
        return subscription.honored, during, after


def test_sdk_client_listen_is_acknowledged_with_nothing_honoured_and_keeps_calling(
    tmp_path: Path,
) -> None:
    init_layout(tmp_path)
    params = _params(server_command(), tmp_path, ENGRAM_GLOBAL_DIR=str(tmp_path / "global"))
    honoured, during, after = anyio.run(_listen, params)
    assert honoured == types.SubscriptionFilter()
    assert "engram_status" in during
    assert during == after
