"""Demo, part 2: project memory through the real server, as an agent and a human use it.

``engram init``, a session proposal with verdicts and an approval token, the human's
approval of two candidates, a budgeted load, a search, a working note; then the file a
memory stands on changes: the load marks it stale, ``engram stale`` lists it and
``engram reconfirm`` records the file as it is once the human has checked it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from engram.demo import transcript
from engram.testing.clients import StdioClient, Trace
from engram.testing.projects import edit_file

__all__ = ["run"]

SESSION = """\
TYPE: rule | TEXT: Run ruff and mypy before every commit | CONTEXT: CI rejects lint and type errors
TYPE: knowledge | TEXT: Releases are cut from main every Tuesday and tagged vYYYY.MM.DD
TYPE: skill | TEXT: To roll back a release, redeploy the previous tag with scripts/deploy
"""


def _tool(client: StdioClient, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    reply = client.request("tools/call", {"name": name, "arguments": arguments})
    # A project tool answers in content only: its words, then the envelope as JSON.
    *words, copy = reply["result"]["content"]
    envelope: dict[str, Any] = json.loads(copy["text"])
    if not envelope["ok"]:
        transcript.note(f"{name}: {envelope['error']['code']}: {envelope['error']['message']}")
        return {}
    data: dict[str, Any] = envelope["data"]
    return {**data, "text": words[0]["text"]} if words else data


def _show(text: str) -> None:
    for line in text.rstrip("\n").splitlines():
        transcript.note(f"| {line}")


def _engram(repo: Path, env: dict[str, str], *args: str) -> str:
    """``engram ARGS`` run by the human in ``repo``: what it prints."""
    done = subprocess.run(
        [sys.executable, "-m", "engram", *args],
        cwd=repo,
        env={**os.environ, **env},
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    return done.stdout


def run(workdir: Path, trace: Trace) -> None:
    """Play the project-memory story in a fresh repository under ``workdir``."""
    repo = workdir / "repo"
    repo.mkdir()
    deploy = repo / "scripts" / "deploy"
    edit_file(deploy, '#!/bin/sh\nexec ./release.sh --tag "$1"\n')
    transcript.heading("Project memory: the repository remembers, the human approves")
    done = subprocess.run(
        [sys.executable, "-m", "engram", "init"],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        timeout=60,
    )
    transcript.note(f"$ engram init -> {done.stdout.strip()}")
    env = {"ENGRAM_GLOBAL_DIR": str(workdir / "global-memory")}
    with StdioClient(cwd=repo, env=env, trace=trace) as agent:
        agent.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
        proposal = _tool(agent, "engram_save_session", {"text": SESSION})
        transcript.note("the agent proposes; nothing is written yet:")
        _show(proposal["preview"])
        transcript.note("the human approves candidates 1 and 3 (the agent never decides that):")
        committed = _tool(
            agent,
            "engram_commit",
            {"approval_token": proposal["approval_token"], "approve": [1, 3]},
        )
        _show(committed["text"])
        again = _tool(
            agent, "engram_commit", {"approval_token": proposal["approval_token"], "approve": "all"}
        )
        transcript.note(f"the same token again: {'refused' if not again else 'accepted?!'}")
        loaded = _tool(
            agent, "engram_load", {"query": "how do I roll back a release", "budget_tokens": 300}
        )
        transcript.note(f"engram_load within 300 tokens ({loaded['tokens']} used):")
        _show(loaded["text"])
        found = _tool(agent, "engram_search", {"query": "lint before commit"})
        transcript.note(f"engram_search: {[entry['id'] for entry in found['entries']]}")
        note = _tool(
            agent,
            "engram_note",
            {
                "text": "Flaky test_payment_retry; seed 42 fails",
                "objective": "fix flaky payments test",
            },
        )
        _tool(agent, "engram_commit", {"approval_token": note["approval_token"], "approve": "all"})
        transcript.note(
            f"engram_note -> {note['id']} (working tier, expires {note['valid_until']})"
        )
        _stale_story(agent, repo, env, deploy)


def _stale_story(agent: StdioClient, repo: Path, env: dict[str, str], deploy: Path) -> None:
    """The skill named scripts/deploy, which was recorded with its hash: someone changes
    the script; the agent is told, and the human closes the loop."""
    transcript.heading("Memories that know when their code changed")
    edit_file(deploy, '#!/bin/sh\nexec ./release.sh --rollback "$1"\n')
    transcript.note("someone edits scripts/deploy, which the roll-back skill names")
    question = {"query": "how do I roll back a release", "budget_tokens": 300}
    loaded = _tool(agent, "engram_load", question)
    transcript.note("engram_load marks the memory beside it (and in its diagnostics):")
    _show(loaded["text"])
    transcript.note("$ engram stale")
    _show(_engram(repo, env, "stale"))
    stale = json.loads(_engram(repo, env, "stale", "--json"))["memories"]
    ids = [memory["id"] for memory in stale]
    transcript.note(
        f"the human checks the skill against the script, then: $ engram reconfirm {' '.join(ids)}"
    )
    _show(_engram(repo, env, "reconfirm", *ids))
    after = _tool(agent, "engram_load", question)
    marked = "Stale:" in after["text"]
    transcript.note(f"engram_load again: {'still marked?!' if marked else 'no longer marked'}")
