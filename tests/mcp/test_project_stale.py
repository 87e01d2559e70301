"""The agent is told over MCP: ``engram_load``, ``engram_search`` and ``engram_route`` mark a
memory whose recorded files changed, in their text and in ``diagnostics``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from engram.project.repository import blob_id
from engram.testing import Project, StartServer, call, data_of, envelope, new_project

RECORDED = "2026-11-02"
DIAGNOSTIC = {
    "id": "memory.stale",
    "severity": "warning",
    "message": f"retry-limit: src/retry.py changed since {RECORDED}",
    "remediation": "check the memory against its files: propose 'UPDATE: retry-limit' with"
    " what is true now, or ask a person to run `engram reconfirm retry-limit` if it still"
    " holds",
}


@pytest.fixture
def project(tmp_path: Path, start_server: StartServer) -> Project:
    made = new_project(tmp_path / "project", start_server)
    (made.root / "src").mkdir()
    (made.root / "src" / "retry.py").write_text("ATTEMPTS = 3\n", encoding="utf-8")
    made.write_memory(
        "retry-limit",
        "rule",
        "Payment retries stop after 3 attempts (src/retry.py)",
        source_files=["src/retry.py"],
        source_hashes=[blob_id(b"ATTEMPTS = 3\n")],
        last_verified=RECORDED,
    )
    return made


def _diagnostics(reply: dict[str, Any]) -> list[dict[str, str]]:
    diagnostics: list[dict[str, str]] = envelope(reply)["diagnostics"]
    return diagnostics


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("engram_load", {"query": "payment retries"}),
        ("engram_search", {"query": "payment retries"}),
        ("engram_route", {"query": "payment retries"}),
    ],
)
def test_a_read_reports_a_stale_memory_in_its_text_and_diagnostics(
    project: Project, tool: str, arguments: dict[str, Any]
) -> None:
    with project.start() as server:
        before = call(server, tool, arguments)
        (project.root / "src" / "retry.py").write_text("ATTEMPTS = 5\n", encoding="utf-8")
        after = call(server, tool, arguments)

    assert _diagnostics(before) == []
    assert "tale" not in data_of(before)["text"]
    assert _diagnostics(after) == [DIAGNOSTIC]
    assert f"src/retry.py changed since {RECORDED}" in data_of(after)["text"]


def test_a_stale_rule_still_loads_with_its_mark_under_its_heading(project: Project) -> None:
    (project.root / "src" / "retry.py").write_text("ATTEMPTS = 5\n", encoding="utf-8")
    with project.start() as server:
        loaded = data_of(call(server, "engram_load", {"query": "payment retries"}))

    assert loaded["body_keys"] == ["retry-limit"]
    assert loaded["text"] == (
        "# Engram memory for: payment retries (1 selected)\n\n"
        "## Rule: Retry limit [retry-limit]\n"
        f"Stale: src/retry.py changed since {RECORDED}, when this memory was recorded:"
        " check the file before relying on it.\n"
        "- Payment retries stop after 3 attempts (src/retry.py)\n"
    )
    assert loaded["stale"][0]["files"] == [
        {"path": "src/retry.py", "state": "changed", "recorded": blob_id(b"ATTEMPTS = 3\n")}
    ]
    assert dt.date.fromisoformat(loaded["stale"][0]["since"]) == dt.date(2026, 11, 2)


def test_the_approval_dialog_shows_an_updated_memorys_changed_file(project: Project) -> None:
    from tests.mcp.test_project_dialog import _answer, _ask, _legacy

    (project.root / "src" / "retry.py").write_text("ATTEMPTS = 5\n", encoding="utf-8")
    server = _legacy(project)
    line = "TYPE: rule | TEXT: Payment retries stop after 5 attempts | UPDATE: retry-limit"

    ask = _ask(server, "engram_save_session", {"text": line})

    recorded = blob_id(b"ATTEMPTS = 3\n")[:12]
    assert ask["params"]["message"] == (
        "Save 1 proposed project memory? Choose which to write.\n\n"
        "1. UPDATE retry-limit changes a memory whose files moved: src/retry.py changed"
        f" since {RECORDED}\n"
        "src/retry.py changed; Git does not hold the version recorded"
        f" ({recorded}: never committed or added), so there is no diff"
    )
    _answer(server, ask, result={"action": "cancel"})


def test_engram_save_takes_the_files_a_memory_stands_on(project: Project) -> None:
    (project.root / "docs").mkdir()
    (project.root / "docs" / "payments.md").write_text("# Payments\n", encoding="utf-8")
    with project.start() as server:
        refused = envelope(
            call(
                server,
                "engram_save",
                {"text": "Refunds go through the ledger", "source_files": ["docs/gone.md"]},
            )
        )
        proposed = data_of(
            call(
                server,
                "engram_save",
                {"text": "Refunds go through the ledger", "source_files": ["docs/payments.md"]},
            )
        )
        token = proposed["approval_token"]
        data_of(call(server, "engram_commit", {"approval_token": token, "approve": "all"}))

    assert refused["error"] == {
        "code": "INVALID_CANDIDATE",
        "message": "candidate 1: SOURCE_FILES names 'docs/gone.md', which is no file in the"
        f" repository ({project.root.resolve()}): give paths relative to it, of files that exist",
    }
    assert "   Source files: docs/payments.md" in proposed["text"]
    written = (project.base / "knowledge" / "refunds-go-through-the-ledger.md").read_text()
    assert "source_files: [docs/payments.md]\n" in written
    payments = blob_id(b"# Payments\n")
    assert f"source_hashes: [{payments}]\n" in written
