"""Who proposed, in the words the proposals page says it: the client as it named itself
(title, then name and version), the session and the agent, each where known."""

from __future__ import annotations

import pytest

from engram.console.review import who_proposed
from engram.project.approvals import Proposer

SESSION = "ses_7a3dc842ba4bab19"


@pytest.mark.parametrize(
    ("proposer", "said"),
    [
        (
            Proposer("claude-code", "Claude Code", "2.1.3", SESSION, "agent-7"),
            f"By Claude Code (claude-code 2.1.3) over MCP · session {SESSION} · agent agent-7",
        ),
        (
            Proposer("codex-mcp-client", "", "0.63.0", SESSION),
            f"By codex-mcp-client 0.63.0 over MCP · session {SESSION}",
        ),
        (Proposer("", "Cursor", "", SESSION), f"By Cursor over MCP · session {SESSION}"),
        (
            Proposer("", "", "1.0", SESSION),
            f"By a client that gave no name (version 1.0) over MCP · session {SESSION}",
        ),
        (Proposer(session=SESSION), f"By a client that gave no name over MCP · session {SESSION}"),
        (Proposer(), "Who proposed it was not recorded (an older engram took this proposal)."),
    ],
)
def test_who_proposed_says_what_is_known_and_nothing_else(proposer: Proposer, said: str) -> None:
    assert who_proposed(proposer) == said
