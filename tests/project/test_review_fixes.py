"""Behaviours settled after review: relevance, determinism, what a write may replace."""

from __future__ import annotations

import pytest

from engram.compose import open_project
from engram.errors import CandidateError
from engram.project.layout import Layout
from engram.project.proposals import Candidate
from engram.project.workspace import ProjectMemory
from tests.project.conftest import write_memory_file


def test_rules_that_match_only_weightless_words_do_not_crowd_out_relevant_memory(
    memory: ProjectMemory, layout: Layout
) -> None:
    for number in range(8):
        write_memory_file(layout, f"rule-{number}", "rule", f"The rule number {number} of the team")
    write_memory_file(layout, "rollback-steps", "knowledge", "Rollback uses the previous tag")
    result = memory.load("the rollback", explain=True)
    assert result.selected_keys == ["rollback-steps"]
    reasons = {entry["id"]: entry.get("reason") for entry in result.explain if not entry["chosen"]}
    assert reasons == {f"rule-{number}": "low-relevance" for number in range(8)}


def test_memories_cut_by_the_limit_are_omitted_for_budget(
    memory: ProjectMemory, layout: Layout
) -> None:
    for number in range(10):
        write_memory_file(layout, f"deploy-{number}", "knowledge", f"Deploy step {number}")
    result = memory.load("deploy step", explain=True)
    assert len(result.selected_keys) == 8
    cut = [entry for entry in result.explain if not entry["chosen"]]
    assert [entry["reason"] for entry in cut] == ["budget", "budget"]


def test_the_same_files_give_the_same_duplicate_winner_whatever_the_index_history(
    layout: Layout,
) -> None:
    write_memory_file(layout, "dup", "knowledge", "Knowledge version")
    first = open_project(layout.root)
    first.refresh()
    write_memory_file(layout, "dup", "rule", "Rule version")
    first.refresh()
    grown = first.load(memory_id="dup").text
    first.index.close()
    for suffix in ("", "-wal", "-shm"):
        (layout.base / f"index.sqlite{suffix}").unlink(missing_ok=True)
    rebuilt = open_project(layout.root).load(memory_id="dup").text
    assert grown == rebuilt
    assert "Rule version" in rebuilt  # rules/ comes before knowledge/ in folder order


def test_an_add_never_overwrites_a_file_that_is_there(
    memory: ProjectMemory, layout: Layout
) -> None:
    broken = layout.folder("rules") / "keep-the-changelog-current.md"
    broken.write_text("not a memory file\n")
    proposal = memory.propose([Candidate("rule", "Keep the changelog current")], "workspace")
    outcome = memory.write(proposal, [1], human_approved=True)
    assert outcome.written == []
    assert [entry["reason"] for entry in outcome.deferred] == [
        "a file with this id exists (invalid?)"
    ]
    assert broken.read_text() == "not a memory file\n"


def test_a_note_cannot_be_updated_into_a_durable_memory(memory: ProjectMemory) -> None:
    note = memory.note("The cache warms slowly", "", "knowledge", "workspace")
    memory.write_note(note)
    with pytest.raises(CandidateError, match="engram promote"):
        memory.propose([Candidate("knowledge", "Warm it first", update=note.id)], "workspace")


def test_roles_can_be_cleared(memory: ProjectMemory) -> None:
    memory.set_roles(["backend"])
    assert memory.set_roles([]).roles == ()
