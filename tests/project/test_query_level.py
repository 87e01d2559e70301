"""The query level (how many BM25 matches a candidate is compared with) travels from the
preview to the write: the verdicts written are the verdicts shown, on the
``save-session --force`` path, the ``engram_commit`` path and over MCP."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.canonical import digest
from engram.errors import ApprovalTampered
from engram.project.approvals import Proposer
from engram.project.layout import Layout
from engram.project.proposals import Candidate
from engram.project.workspace import ProjectMemory
from engram.testing import Project, StartServer, call, data_of, envelope, new_project
from tests.project.conftest import BURIED_CANDIDATE, bury_a_related_rule

CANDIDATE = Candidate("rule", BURIED_CANDIDATE)
NEW_FILE = "rules/alpha-beta-gamma-delta-epsilon.md"


@pytest.fixture
def buried(memory: ProjectMemory, layout: Layout) -> ProjectMemory:
    """A project where the rule related to :data:`CANDIDATE` is the 13th BM25 match."""
    bury_a_related_rule(layout.folder("rules"))
    ranked = [entry["id"] for entry in memory.search(BURIED_CANDIDATE, 20).entries]
    assert ranked.index("target") == 12
    return memory


def _verdicts(memory: ProjectMemory, level: int) -> list[str]:
    return [verdict.line() for verdict in memory.propose([CANDIDATE], "workspace", level).verdicts]


def _pending_entry(layout: Layout) -> tuple[dict[str, Any], dict[str, Any]]:
    stored = json.loads(layout.pending.read_text())
    [entry] = stored["proposals"].values()
    return stored, entry


def test_a_related_memory_past_the_default_level_counts_only_at_a_deeper_level(
    buried: ProjectMemory,
) -> None:
    assert _verdicts(buried, 8) == ["ADD"]
    assert _verdicts(buried, 12) == ["ADD"]
    assert _verdicts(buried, 13) == ["SUPERSEDE target"]
    assert _verdicts(buried, 50) == ["SUPERSEDE target"]


def test_a_query_level_past_any_sqlite_integer_compares_with_every_memory(
    buried: ProjectMemory,
) -> None:
    assert _verdicts(buried, 10**30) == ["SUPERSEDE target"]


def test_force_at_a_deeper_level_defers_the_supersede_it_showed(
    buried: ProjectMemory, layout: Layout
) -> None:
    proposal = buried.propose([CANDIDATE], "workspace", 50)

    outcome = buried.write(proposal, [1], human_approved=False)

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [],
        "deferred": [
            {
                "number": 1,
                "verdict": "SUPERSEDE target",
                "reason": "related",
                "hint": "`engram load --id target`, then propose it with UPDATE: target"
                " (or approve the SUPERSEDE through engram_commit)",
            }
        ],
    }
    assert not (layout.base / NEW_FILE).exists()


def test_force_at_the_default_level_writes_the_add_it_showed(
    buried: ProjectMemory, layout: Layout
) -> None:
    proposal = buried.propose([CANDIDATE], "workspace")

    outcome = buried.write(proposal, [1], human_approved=False)

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [
            {
                "number": 1,
                "verdict": "ADD",
                "id": "alpha-beta-gamma-delta-epsilon",
                "file": NEW_FILE,
            }
        ],
        "deferred": [],
    }


def test_a_commit_recomputes_verdicts_at_the_level_of_its_proposal(
    buried: ProjectMemory, layout: Layout
) -> None:
    token = buried.proposals().create(
        buried.propose([CANDIDATE], "workspace", 50).pending(), by=Proposer()
    )
    assert _pending_entry(layout)[1]["query_level"] == 50

    outcome = buried.commit(token, "all")

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [
            {
                "number": 1,
                "verdict": "SUPERSEDE target",
                "id": "alpha-beta-gamma-delta-epsilon",
                "file": NEW_FILE,
            }
        ],
        "deferred": [],
    }
    target = buried.index.memory("target")
    assert target is not None
    assert (target.get("lifecycle"), target.get("superseded_by")) == (
        "superseded",
        "alpha-beta-gamma-delta-epsilon",
    )


def test_a_verdict_that_changed_since_the_preview_is_deferred_even_when_forced(
    memory: ProjectMemory, layout: Layout
) -> None:
    proposal = memory.propose([Candidate("rule", "Use tabs")], "workspace")
    assert [verdict.line() for verdict in proposal.verdicts] == ["ADD"]
    (layout.folder("rules") / "use-tabs.md").write_text(
        "---\nid: use-tabs\ntype: rule\n---\n# Use tabs\n\n## Content\n- Indent with tabs\n"
    )

    outcome = memory.write(proposal, [1], human_approved=False)

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [],
        "deferred": [
            {
                "number": 1,
                "verdict": "UPDATE use-tabs",
                "reason": "verdict changed since the proposal",
                "hint": "propose it again to see the new verdict",
            }
        ],
    }
    assert "- Indent with tabs\n" in (layout.folder("rules") / "use-tabs.md").read_text()


def test_a_pending_entry_from_before_query_levels_were_stored_commits_at_the_default_level(
    buried: ProjectMemory, layout: Layout
) -> None:
    token = buried.proposals().create(
        buried.propose([CANDIDATE], "workspace").pending(), by=Proposer()
    )
    stored, entry = _pending_entry(layout)
    del entry["query_level"], entry["proposer"]  # an older engram recorded neither
    old_keys = ("workspace", "kind", "scope", "candidates", "verdicts")
    entry["candidates_digest"] = digest("proposal", {key: entry[key] for key in old_keys})
    layout.pending.write_text(json.dumps(stored))

    outcome = buried.commit(token, "all")

    assert [(entry["verdict"], entry["file"]) for entry in outcome.written] == [("ADD", NEW_FILE)]


@pytest.mark.parametrize("edit", ["lowered", "removed"])
def test_an_edited_query_level_fails_the_integrity_check(
    buried: ProjectMemory, layout: Layout, edit: str
) -> None:
    token = buried.proposals().create(
        buried.propose([CANDIDATE], "workspace", 50).pending(), by=Proposer()
    )
    stored, entry = _pending_entry(layout)
    if edit == "lowered":
        entry["query_level"] = 8
    else:
        del entry["query_level"]
    layout.pending.write_text(json.dumps(stored))

    with pytest.raises(ApprovalTampered) as tampered:
        buried.commit(token, "all")

    assert tampered.value.code == "APPROVAL_TAMPERED"
    assert not (layout.base / NEW_FILE).exists()


@pytest.mark.parametrize("level", [0, -3, "50", True, None, 2.5])
def test_a_query_level_that_is_not_a_positive_integer_fails_the_integrity_check(
    buried: ProjectMemory, layout: Layout, level: object
) -> None:
    token = buried.proposals().create(
        buried.propose([CANDIDATE], "workspace", 50).pending(), by=Proposer()
    )
    stored, entry = _pending_entry(layout)
    entry["query_level"] = level
    keys = ("workspace", "kind", "scope", "candidates", "verdicts", "query_level")
    entry["candidates_digest"] = digest("proposal", {key: entry[key] for key in keys})
    layout.pending.write_text(json.dumps(stored))

    with pytest.raises(ApprovalTampered):
        buried.commit(token, "all")

    assert not (layout.base / NEW_FILE).exists()


# --- over MCP: engram_save_session takes no query level, and writes what it showed ----------


@pytest.fixture
def served(tmp_path: Path, start_server: StartServer) -> Project:
    project = new_project(tmp_path / "served", start_server)
    bury_a_related_rule(project.base / "rules")
    return project


def test_engram_commit_writes_the_verdict_engram_save_session_showed(served: Project) -> None:
    server = served.start()
    text = f"TYPE: rule | TEXT: {BURIED_CANDIDATE}"
    proposed = data_of(call(server, "engram_save_session", {"text": text}))
    assert proposed["verdicts"] == ["ADD"]
    assert _pending_entry_of(served)["query_level"] == 8

    token = proposed["approval_token"]
    committed = data_of(call(server, "engram_commit", {"approval_token": token, "approve": [1]}))

    assert committed["written"] == [
        {"number": 1, "verdict": "ADD", "id": "alpha-beta-gamma-delta-epsilon", "file": NEW_FILE}
    ]
    assert committed["deferred"] == []


def test_engram_save_session_refuses_a_query_level_argument(served: Project) -> None:
    text = f"TYPE: rule | TEXT: {BURIED_CANDIDATE}"
    reply = call(served.start(), "engram_save_session", {"text": text, "query_level": 50})

    body = envelope(reply)
    assert (body["ok"], body["error"]["code"]) == (False, "INVALID_ARGUMENTS")
    assert not served.pending.exists()


def _pending_entry_of(project: Project) -> dict[str, Any]:
    [entry] = project.pending_proposals().values()
    return dict(entry)
