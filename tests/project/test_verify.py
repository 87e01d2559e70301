"""engram_verify and engram_status: per-file hash states and the health counters."""

from __future__ import annotations

import hashlib
from pathlib import Path

from engram import __version__
from engram.project.layout import Layout
from engram.project.proposals import parse_candidate_lines
from engram.project.workspace import ProjectMemory
from tests.project.conftest import write_memory_file


def _save(memory: ProjectMemory, lines: str, scope: str = "workspace") -> None:
    proposal = memory.propose(parse_candidate_lines(lines, scope), scope)
    memory.write(proposal, list(range(1, len(proposal.candidates) + 1)), human_approved=False)


def test_every_file_engram_wrote_verifies_ok_and_its_hash_is_the_sha256_of_its_text(
    memory: ProjectMemory, layout: Layout
) -> None:
    _save(memory, "TYPE: rule | TEXT: Use tabs\nTYPE: knowledge | TEXT: Staging is bluebird")

    report = memory.verify().files

    assert report == [
        {"scope": "workspace", "path": "knowledge/staging-is-bluebird.md", "status": "ok"},
        {"scope": "workspace", "path": "rules/use-tabs.md", "status": "ok"},
    ]
    knowledge = layout.folder("knowledge") / "staging-is-bluebird.md"
    rule = layout.folder("rules") / "use-tabs.md"
    assert layout.hashes.read_text() == (
        f"{hashlib.sha256(knowledge.read_bytes()).hexdigest()}  knowledge/staging-is-bluebird.md\n"
        f"{hashlib.sha256(rule.read_bytes()).hexdigest()}  rules/use-tabs.md\n"
    )


def test_verify_reports_ok_missing_hash_hash_mismatch_and_missing_file(
    memory: ProjectMemory, layout: Layout
) -> None:
    _save(memory, "TYPE: rule | TEXT: Use tabs\nTYPE: knowledge | TEXT: Staging is bluebird")
    _save(memory, "TYPE: skill | TEXT: Release by tagging main")
    edited = layout.folder("rules") / "use-tabs.md"
    edited.write_text(edited.read_text().replace("- Use tabs", "- Use spaces"))
    (layout.folder("skills") / "release-by-tagging-main.md").unlink()
    write_memory_file(layout, "written-by-hand", "knowledge", "Nobody told engram")

    report = memory.verify().files

    assert report == [
        {"scope": "workspace", "path": "knowledge/staging-is-bluebird.md", "status": "ok"},
        {"scope": "workspace", "path": "knowledge/written-by-hand.md", "status": "missing hash"},
        {"scope": "workspace", "path": "rules/use-tabs.md", "status": "hash mismatch"},
        {
            "scope": "workspace",
            "path": "skills/release-by-tagging-main.md",
            "status": "missing file",
        },
    ]


def test_working_notes_are_not_verified(memory: ProjectMemory) -> None:
    memory.write_note(memory.note("The cache warms slowly", "", "knowledge", "workspace"))

    assert memory.verify().files == []


def test_verify_all_reports_workspace_and_global_files_with_their_scope(
    memory: ProjectMemory, global_dir: Path
) -> None:
    _save(memory, "TYPE: rule | TEXT: Use tabs")
    _save(memory, "TYPE: knowledge | TEXT: My editor is helix", scope="global")

    assert (global_dir / "knowledge" / "my-editor-is-helix.md").is_file()
    assert memory.verify("global").files == [
        {"scope": "global", "path": "knowledge/my-editor-is-helix.md", "status": "ok"}
    ]
    assert memory.verify("all").files == [
        {"scope": "workspace", "path": "rules/use-tabs.md", "status": "ok"},
        {"scope": "global", "path": "knowledge/my-editor-is-helix.md", "status": "ok"},
    ]


def test_status_counts_memories_notes_invalid_files_and_hash_problems(
    memory: ProjectMemory, layout: Layout
) -> None:
    assert memory.status().data() == {
        "version": __version__,
        "root": str(layout.root),
        "memories": {"rule": 0, "skill": 0, "knowledge": 0},
        "notes": 0,
        "invalid_files": 0,
        "hash_mismatches": 0,
        "roles": [],
        "rule_variant": "balanced",
        "stale": 0,
        "healthy": True,
        "text": f"engram {__version__} in {layout.root}: 0 rules, 0 skills, 0 knowledge,"
        " 0 notes; 0 invalid files, 0 hash problems",
    }

    _save(memory, "TYPE: rule | TEXT: Use tabs\nTYPE: rule | TEXT: Write tests first")
    _save(memory, "TYPE: workflow | TEXT: Release by tagging main")
    memory.write_note(memory.note("The cache warms slowly", "", "knowledge", "workspace"))
    write_memory_file(layout, "written-by-hand", "knowledge", "Nobody told engram")
    (layout.folder("knowledge") / "broken.md").write_text("no frontmatter\n")
    memory.set_roles(["backend"])
    memory.set_rule_variant("strict")

    assert memory.status().data() == {
        "version": __version__,
        "root": str(layout.root),
        "memories": {"rule": 2, "skill": 1, "knowledge": 1},
        "notes": 1,
        "invalid_files": 1,
        "hash_mismatches": 2,
        "roles": ["backend"],
        "rule_variant": "strict",
        "stale": 0,
        "healthy": False,
        "text": f"engram {__version__} in {layout.root}: 2 rules, 1 skill, 1 knowledge,"
        " 1 note; 1 invalid file, 2 hash problems\n"
        "`engram doctor` names the invalid files and what is wrong in each\n"
        "`engram verify` lists the files with hash problems; `engram adopt PATH` records"
        " a reviewed edit",
    }
