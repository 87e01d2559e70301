"""memory.hashes: one sorted ``<sha256>  <path>`` line per memory file, any recorded hash
of a path accepted (a union merge may keep two), ``# removed`` lines, Git's conflict
markers read as both sides, compaction at the next write, upstream's memory.hashes.json
read and replaced, and the same format in the global root."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from engram.errors import HashesCorrupt
from engram.project.hashes import read_hashes
from engram.project.layout import Layout, update_gitignore
from engram.project.proposals import parse_candidate_lines
from engram.project.workspace import ProjectMemory
from tests.project.conftest import write_memory_file

OLD = hashlib.sha256(b"old").hexdigest()


def _save(memory: ProjectMemory, lines: str, scope: str = "workspace") -> None:
    proposal = memory.propose(parse_candidate_lines(lines, scope), scope)
    memory.write(proposal, list(range(1, len(proposal.candidates) + 1)), human_approved=False)


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _statuses(memory: ProjectMemory) -> dict[str, str]:
    return {entry["path"]: entry["status"] for entry in memory.verify().files}


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="needs coreutils' sha256sum")
def test_the_file_is_one_sorted_line_per_memory_file_that_sha256sum_checks(
    memory: ProjectMemory, layout: Layout
) -> None:
    _save(memory, "TYPE: rule | TEXT: Use tabs\nTYPE: knowledge | TEXT: Staging is bluebird")

    knowledge = layout.folder("knowledge") / "staging-is-bluebird.md"
    rule = layout.folder("rules") / "use-tabs.md"
    assert layout.hashes.read_text() == (
        f"{_sha(knowledge)}  knowledge/staging-is-bluebird.md\n{_sha(rule)}  rules/use-tabs.md\n"
    )
    checked = subprocess.run(
        ["sha256sum", "--check", "--strict", "memory.hashes"],
        cwd=layout.base,
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert (checked.returncode, checked.stdout) == (
        0,
        "knowledge/staging-is-bluebird.md: OK\nrules/use-tabs.md: OK\n",
    )


def test_any_hash_recorded_for_a_path_is_accepted(memory: ProjectMemory, layout: Layout) -> None:
    _save(memory, "TYPE: rule | TEXT: Use tabs")
    rule = layout.folder("rules") / "use-tabs.md"
    written = rule.read_text()
    # What a union merge of an update and a neighbouring save leaves: both hashes.
    layout.hashes.write_text(f"{OLD}  rules/use-tabs.md\n{_sha(rule)}  rules/use-tabs.md\n")

    assert _statuses(memory) == {"rules/use-tabs.md": "ok"}
    assert memory.health() == {"rules/use-tabs.md": []}
    rule.write_text("old")
    assert _statuses(memory) == {"rules/use-tabs.md": "ok"}
    rule.write_text(written + "- by hand\n")
    assert _statuses(memory) == {"rules/use-tabs.md": "hash mismatch"}
    assert memory.health() == {"rules/use-tabs.md": ["hash mismatch"]}


def test_a_removed_line_means_the_file_is_gone_on_purpose_whatever_else_is_recorded(
    memory: ProjectMemory, layout: Layout
) -> None:
    # A removal on one branch, a neighbouring save on the other: the union keeps the
    # removed file's old line beside its ``# removed`` line.
    layout.hashes.write_text(
        f"# removed  rules/use-tabs.md\n{OLD}  rules/use-tabs.md\n{OLD}  rules/gone-by-hand.md\n"
    )

    assert _statuses(memory) == {"rules/gone-by-hand.md": "missing file"}
    rule = layout.folder("rules") / "use-tabs.md"
    rule.write_text("old")  # a merge that kept the file (the person's resolution)
    assert _statuses(memory)["rules/use-tabs.md"] == "ok"
    rule.write_text("written again by hand")
    assert _statuses(memory)["rules/use-tabs.md"] == "hash mismatch"


def test_git_conflict_markers_are_skipped_and_both_sides_are_read(
    memory: ProjectMemory, layout: Layout
) -> None:
    rule = write_memory_file(layout, "use-tabs", "rule")
    fact = write_memory_file(layout, "staging-is-bluebird")
    layout.hashes.write_text(
        "<<<<<<< HEAD\n"
        f"{_sha(rule)}  rules/use-tabs.md\r\n"
        "||||||| base\n"
        "=======\n"
        f"{_sha(fact).upper()} *knowledge/staging-is-bluebird.md\n"
        ">>>>>>> other\n"
    )

    verification = memory.verify()

    assert verification.ok
    assert verification.text().splitlines()[-1] == (
        "memory.hashes holds Git's conflict markers (merged without its union attribute);"
        " engram reads both sides: `engram adopt --yes` writes it without them, then"
        " `git add` it"
    )
    plan = memory.adopt(None, record=True)
    assert plan.text() == "memory.hashes was written without Git's conflict markers"
    assert layout.hashes.read_text() == (
        f"{_sha(fact)}  knowledge/staging-is-bluebird.md\n{_sha(rule)}  rules/use-tabs.md\n"
    )
    assert memory.adopt(None, record=False).text() == (
        "nothing to adopt: every memory file matches what engram recorded"
    )


def test_the_next_write_keeps_one_line_per_path_the_one_its_file_matches(
    memory: ProjectMemory, layout: Layout
) -> None:
    kept = write_memory_file(layout, "use-tabs", "rule")
    write_memory_file(layout, "use-typing", "rule")
    layout.hashes.write_text(
        f"{OLD}  rules/use-tabs.md\n"
        f"{_sha(kept)}  rules/use-tabs.md\n"
        f"{OLD}  rules/gone.md\n"
        "# removed  rules/gone.md\n"
        f"{'1' * 64}  rules/use-typing.md\n"
        f"{'2' * 64}  rules/use-typing.md\n"
    )

    _save(memory, "TYPE: knowledge | TEXT: Staging is bluebird")

    fact = layout.folder("knowledge") / "staging-is-bluebird.md"
    assert layout.hashes.read_text() == (
        f"{_sha(fact)}  knowledge/staging-is-bluebird.md\n"
        "# removed  rules/gone.md\n"
        f"{_sha(kept)}  rules/use-tabs.md\n"
        f"{'1' * 64}  rules/use-typing.md\n"  # neither is the file: verify reports it
        f"{'2' * 64}  rules/use-typing.md\n"
    )
    assert _statuses(memory)["rules/use-typing.md"] == "hash mismatch"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (f"{OLD}  rules/a.md\nrules/b.md {OLD}\n".encode(), "line 2 is not `<sha256 hex>  <path>`"),
        (f"{OLD[:-1]}  rules/a.md\n".encode(), "line 1 is not `<sha256 hex>  <path>`"),
        (f"{OLD}  rules/caf\xe9.md\n".encode("latin-1"), "not UTF-8 text"),
    ],
    ids=["swapped", "short digest", "latin-1"],
)
def test_a_file_that_is_not_records_is_corrupt_and_says_what_to_do(
    layout: Layout, text: bytes, problem: str
) -> None:
    layout.hashes.write_bytes(text)

    with pytest.raises(HashesCorrupt) as raised:
        read_hashes(layout)

    assert raised.value.detail == (
        f"{layout.hashes}: {problem}; restore it from Git"
        " (`git checkout -- .agents/.engram/memory.hashes`), or review the memory files and"
        " run `engram adopt --yes`, which records them all again"
    )


def test_upstream_json_is_read_and_the_next_write_replaces_it_in_the_same_commit(
    memory: ProjectMemory, layout: Layout
) -> None:
    rule = write_memory_file(layout, "use-tabs", "rule")
    layout.hashes.unlink()
    layout.gitattributes.unlink()
    layout.legacy_hashes.write_text(json.dumps({"rules/use-tabs.md": _sha(rule)}, indent=2))

    assert _statuses(memory) == {"rules/use-tabs.md": "ok"}
    assert memory.adopt(None, record=False).text() == (
        "memory.hashes.json (upstream's format) becomes memory.hashes with --yes"
    )
    _save(memory, "TYPE: knowledge | TEXT: Staging is bluebird")

    fact = layout.folder("knowledge") / "staging-is-bluebird.md"
    assert not layout.legacy_hashes.exists()
    assert layout.hashes.read_text() == (
        f"{_sha(fact)}  knowledge/staging-is-bluebird.md\n{_sha(rule)}  rules/use-tabs.md\n"
    )
    assert "/memory.hashes merge=union" in layout.gitattributes.read_text().splitlines()
    assert _statuses(memory) == {
        "knowledge/staging-is-bluebird.md": "ok",
        "rules/use-tabs.md": "ok",
    }


def test_records_in_both_files_are_read_while_upstreams_is_still_there(
    memory: ProjectMemory, layout: Layout
) -> None:
    # A branch of an older engram merged after this one replaced the file.
    rule = write_memory_file(layout, "use-tabs", "rule")
    fact = write_memory_file(layout, "staging-is-bluebird")
    layout.legacy_hashes.write_text(json.dumps({"rules/use-tabs.md": _sha(rule)}))
    layout.hashes.write_text(f"{_sha(fact)}  knowledge/staging-is-bluebird.md\n")

    assert memory.verify().ok
    assert memory.adopt(None, record=True).text() == (
        "memory.hashes.json (upstream's format) became memory.hashes"
    )
    assert not layout.legacy_hashes.exists()
    assert memory.verify().ok


def test_the_global_root_keeps_the_same_format_and_no_git_attributes(
    memory: ProjectMemory, global_dir: Path
) -> None:
    _save(memory, "TYPE: knowledge | TEXT: My editor is helix", scope="global")

    fact = global_dir / "knowledge" / "my-editor-is-helix.md"
    assert (global_dir / "memory.hashes").read_text() == (
        f"{_sha(fact)}  knowledge/my-editor-is-helix.md\n"
    )
    assert not (global_dir / ".gitattributes").exists()
    (global_dir / "memory.hashes").write_text("not a record\n")
    with pytest.raises(HashesCorrupt) as raised:
        memory.verify("global")
    assert raised.value.detail == (
        f"{global_dir / 'memory.hashes'}: line 1 is not `<sha256 hex>  <path>`; delete it:"
        " engram records each global memory again when it next writes it"
        " (`engram verify --scope global` lists the others as `missing hash`)"
    )


def test_a_git_file_that_is_not_utf8_is_completed_byte_for_byte(
    memory: ProjectMemory, layout: Layout
) -> None:
    """A person's line in .gitignore or .gitattributes need not be UTF-8 (a Latin-1 path):
    engram adds its own lines and keeps theirs as they were (it stopped with an internal
    error)."""
    theirs = b"caf\xe9-notes/\n"
    (layout.base / ".gitignore").write_bytes(theirs)
    layout.gitattributes.write_bytes(b"*.bin binary \xff\n")

    assert update_gitignore(layout) is True  # as opening the project does
    _save(memory, "TYPE: rule | TEXT: Use UTC in every log line")

    ignored = (layout.base / ".gitignore").read_bytes().splitlines()
    assert ignored[0] == theirs.rstrip(b"\n")
    assert b"working/" in ignored
    attributes = layout.gitattributes.read_bytes().splitlines()
    assert attributes[0] == b"*.bin binary \xff"
    assert b"/memory.hashes merge=union" in attributes
