"""Memories record the files they stand on: paths named in their text (with or without a
line anchor) and given explicitly, inside the repository and not ignored by Git, with
their Git blob ids; on real Git repositories, and without Git."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pytest

from engram.errors import CandidateError
from engram.project.layout import Layout
from engram.project.memory_file import parse_memory
from engram.project.proposals import parse_candidate_lines
from engram.project.repository import blob_id
from engram.project.sources import cited_paths
from engram.project.workspace import ProjectMemory
from tests.project.conftest import write_memory_file
from tests.project.gitrepo import blob, git, write

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
TODAY = dt.date.today().isoformat()


@pytest.fixture
def repo(layout: Layout) -> Path:
    """The project's root as a Git repository with a few files, one of them ignored."""
    root = layout.root
    git(root, "init", "-q", "-b", "main")
    write(root, "src/payments/retry.py", "ATTEMPTS = 3\n")
    write(root, "README.md", "# Shop\n")
    write(root, ".gitignore", "build/\n")
    write(root, "build/out.log", "built\n")
    write(root.parent, "outside.py", "secret = 1\n")
    return root


def saved(memory: ProjectMemory, line: str) -> str:
    """Save one candidate line as ``save-session --force`` does; the file written."""
    proposal = memory.propose(parse_candidate_lines(line), "workspace")
    outcome = memory.write(proposal, [1], human_approved=False)
    assert outcome.deferred == []
    file = str(outcome.written[0]["file"])
    return (memory.layout.base / file).read_text(encoding="utf-8")


def test_path_like_words_are_read_with_or_without_a_line_anchor() -> None:
    text = (
        "Retries stop after 3 attempts (src/payments/retry.py:42), see `docs/a.md#L10-L20`,"
        " ./Makefile and README.md. Not make, src, https://x.org/y.py or /etc/passwd;"
        " ../up.py is a path"
    )
    assert cited_paths(text) == [
        "src/payments/retry.py",
        "docs/a.md",
        "./Makefile",
        "README.md",
        "../up.py",
    ]


def test_a_blob_id_is_what_git_hash_object_prints() -> None:
    assert blob_id(b"ATTEMPTS = 3\n") == "2e77764e8738251146d37d2038b40c42be814554"
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


@needs_git
def test_a_saved_memory_records_the_repository_files_its_text_names(
    memory: ProjectMemory, repo: Path
) -> None:
    text = saved(
        memory,
        "TYPE: rule | TEXT: Retries stop after 3 attempts (src/payments/retry.py:42); the"
        " README.md says why, build/out.log shows it, ../outside.py and /etc/hostname too,"
        " docs/gone.md never existed",
    )

    fields = parse_memory(text).fields
    assert fields["source_files"] == ["src/payments/retry.py", "README.md"]
    assert fields["source_hashes"] == [
        blob(repo, "src/payments/retry.py"),
        blob(repo, "README.md"),
    ]
    assert fields["last_verified"] == TODAY
    assert (
        "source_files: [src/payments/retry.py, README.md]\n"
        f"source_hashes: [{blob(repo, 'src/payments/retry.py')}, {blob(repo, 'README.md')}]\n"
    ) in text


@needs_git
def test_explicit_source_files_come_first_and_are_checked_when_proposed(
    memory: ProjectMemory, repo: Path
) -> None:
    text = saved(
        memory,
        "TYPE: knowledge | TEXT: Payments retry, as README.md says"
        " | SOURCE_FILES: src/payments/retry.py, ./src/../README.md",
    )
    assert parse_memory(text).fields["source_files"] == ["src/payments/retry.py", "README.md"]

    for given, detail in [
        (
            "docs/gone.md",
            "candidate 1: SOURCE_FILES names 'docs/gone.md', which is no file in the"
            f" repository ({repo}): give paths relative to it, of files that exist",
        ),
        (
            "../outside.py",
            "candidate 1: SOURCE_FILES names '../outside.py', which is no file in the"
            f" repository ({repo}): give paths relative to it, of files that exist",
        ),
        (
            "build/out.log",
            "candidate 1: SOURCE_FILES names 'build/out.log', which Git ignores: a memory"
            " stands only on files the repository shares; leave it out",
        ),
    ]:
        with pytest.raises(CandidateError) as refused:
            memory.propose(
                parse_candidate_lines(f"TYPE: rule | TEXT: Other {given} | SOURCE_FILES: {given}"),
                "workspace",
            )
        assert (refused.value.code, refused.value.detail) == ("INVALID_CANDIDATE", detail)


def test_without_git_only_files_outside_the_root_are_left_out(
    memory: ProjectMemory, layout: Layout
) -> None:
    root = layout.root
    write(root, ".gitignore", "build/\n")
    write(root, "build/out.log", "built\n")
    write(root.parent, "outside.py", "x = 1\n")

    text = saved(memory, "TYPE: rule | TEXT: See build/out.log, not ../outside.py")

    fields = parse_memory(text).fields
    assert fields["source_files"] == ["build/out.log"]
    assert fields["source_hashes"] == [blob_id(b"built\n")]


@needs_git
def test_a_link_out_of_the_repository_and_engrams_own_files_are_never_recorded(
    memory: ProjectMemory, repo: Path
) -> None:
    (repo / "src" / "elsewhere.py").symlink_to(repo.parent / "outside.py")
    text = saved(
        memory,
        "TYPE: rule | TEXT: Never src/elsewhere.py, .agents/.engram/memory.hashes or .git/HEAD",
    )
    assert "source_files" not in parse_memory(text).fields


@needs_git
def test_a_memory_naming_no_file_gets_no_source_fields(memory: ProjectMemory, repo: Path) -> None:
    text = saved(memory, "TYPE: rule | TEXT: Run make lint before every push")
    assert "source_files" not in text
    assert "last_verified" not in text


@needs_git
def test_an_update_records_the_files_as_they_are_now(memory: ProjectMemory, repo: Path) -> None:
    saved(memory, "TYPE: rule | TEXT: Retries stop after 3 attempts (src/payments/retry.py)")
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")

    text = saved(
        memory,
        "TYPE: rule | TEXT: Retries stop after 5 attempts | UPDATE:"
        " retries-stop-after-3-attempts-src-payments-retry-py",
    )

    fields = parse_memory(text).fields
    assert fields["source_files"] == ["src/payments/retry.py"]
    assert fields["source_hashes"] == [blob_id(b"ATTEMPTS = 5\n")]


@needs_git
def test_adopt_records_the_files_a_hand_written_memory_names(
    memory: ProjectMemory, layout: Layout, repo: Path
) -> None:
    path = write_memory_file(
        layout, "retry-limit", "rule", "Retries stop at 3 (src/payments/retry.py:1)"
    )
    before = path.read_text(encoding="utf-8")

    plan = memory.adopt(None, record=True)

    after = path.read_text(encoding="utf-8")
    added = (
        "+source_files: [src/payments/retry.py]\n"
        f"+source_hashes: [{blob(repo, 'src/payments/retry.py')}]\n"
        f"+last_verified: {TODAY}\n"
    )
    assert [item.line() for item in plan.items] == ["new rules/retry-limit.md"]
    assert added in plan.items[0].diff
    assert after == before.replace(
        "tags: []\n",
        "tags: []\n"
        "source_files: [src/payments/retry.py]\n"
        f"source_hashes: [{blob(repo, 'src/payments/retry.py')}]\n"
        f"last_verified: {TODAY}\n",
    )
    assert memory.verify().ok


@needs_git
def test_adopt_records_anew_hand_edited_lists_engram_would_never_write(
    memory: ProjectMemory, layout: Layout, repo: Path
) -> None:
    # A hand edit naming a file out of the root, one with terminal escapes, Git's own
    # config and an ignored file, with one garbage hash for five paths: adopting it
    # records only what may be recorded, as it is now (found by a tester, issue 30).
    path = write_memory_file(layout, "retry-limit", "rule", "Retries stop at 3")
    listed = (
        "[src/payments/retry.py, ../outside.py, src/\x1b[31mEVIL\x07.py, .git/config,"
        " build/out.log]"
    )
    path.write_text(
        path.read_text(encoding="utf-8").replace(
            "tags: []\n", f"tags: []\nsource_files: {listed}\nsource_hashes: [zzzz]\n"
        ),
        encoding="utf-8",
    )

    plan = memory.adopt(None, record=True)

    fields = parse_memory(path.read_text(encoding="utf-8"), "rule").fields
    assert [item.line() for item in plan.items] == ["new rules/retry-limit.md"]
    assert fields["source_files"] == ["src/payments/retry.py"]
    assert fields["source_hashes"] == [blob(repo, "src/payments/retry.py")]
    assert fields["last_verified"] == TODAY
    assert memory.verify().ok


@needs_git
def test_adopt_keeps_files_recorded_well_even_when_one_changed_since(
    memory: ProjectMemory, layout: Layout, repo: Path
) -> None:
    old = blob_id(b"ATTEMPTS = 2\n")  # the file as it was when the person recorded it
    path = write_memory_file(layout, "retry-limit", "rule", "Retries stop at 3")
    text = path.read_text(encoding="utf-8").replace(
        "tags: []\n", f"tags: []\nsource_files: [src/payments/retry.py]\nsource_hashes: [{old}]\n"
    )
    path.write_text(text, encoding="utf-8")

    memory.adopt(None, record=True)

    assert path.read_text(encoding="utf-8") == text


@needs_git
def test_a_promoted_note_records_the_files_it_names(memory: ProjectMemory, repo: Path) -> None:
    note = memory.note("Retries are capped in src/payments/retry.py", "", "knowledge", "workspace")
    memory.write_note(note)
    assert "source_files" not in note.fields  # a note records nothing

    promoted = memory.promote(note.id)

    fields = parse_memory((memory.layout.base / promoted.file).read_text()).fields
    assert fields["source_files"] == ["src/payments/retry.py"]
    assert fields["source_hashes"] == [blob(repo, "src/payments/retry.py")]


@needs_git
def test_a_large_file_is_hashed_in_pieces_to_what_git_says(layout: Layout, tmp_path: Path) -> None:
    from engram.project.repository import file_blob_id

    git(layout.root, "init", "-q")
    big = write(layout.root, "data/big.txt", "0123456789abcdef\n" * 200_000)  # 3.4 MB

    assert file_blob_id(big) == blob(layout.root, "data/big.txt")
