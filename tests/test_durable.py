"""``engram.durable``: every file written whole, several files together or not at all."""

from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path

import pytest

from engram.durable import STALE_S, TEMPORARY_MARK, FileChanges, recover, write_atomic
from engram.errors import NotWritable


def _leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if TEMPORARY_MARK in path.name)


def test_write_atomic_replaces_the_whole_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "config.json"
    target.write_text("old\n")
    os.chmod(target, 0o640)

    write_atomic(target, "new\r\n")

    assert target.read_bytes() == b"new\r\n"  # line endings as given
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # the file keeps its mode
    assert _leftovers(tmp_path) == []


def test_write_atomic_with_a_mode_and_exclusive_creates_a_private_file_once(
    tmp_path: Path,
) -> None:
    target = tmp_path / "kek-k1.key"
    write_atomic(target, b"\x01" * 32, mode=0o600, exclusive=True)

    assert target.read_bytes() == b"\x01" * 32
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    with pytest.raises(FileExistsError):
        write_atomic(target, b"\x02" * 32, mode=0o600, exclusive=True)
    assert target.read_bytes() == b"\x01" * 32
    assert _leftovers(tmp_path) == []


def test_a_folder_that_refuses_the_file_names_itself_and_the_next_step(tmp_path: Path) -> None:
    missing = tmp_path / "gone" / "file.json"
    with pytest.raises(FileNotFoundError):  # not a refusal: the folder does not exist
        write_atomic(missing, "x")
    changes = FileChanges(tmp_path / "journal")
    blocker = tmp_path / "blocked"
    blocker.write_text("a file where a folder should be\n")
    changes.write(blocker / "memory.md", "x")
    with pytest.raises(NotWritable) as refused:
        changes.commit()
    assert refused.value.code == "NOT_WRITABLE"
    assert str(blocker) in refused.value.detail
    assert "nothing was changed" in refused.value.detail


def test_file_changes_write_and_delete_together(tmp_path: Path) -> None:
    old = tmp_path / "working" / "note.md"
    old.parent.mkdir()
    old.write_text("note\n")
    changes = FileChanges(tmp_path / "commit.journal")
    changes.write(tmp_path / "knowledge" / "fact.md", "fact\n")
    changes.write(tmp_path / "hashes.json", "{}\n")
    changes.delete(old)

    changes.commit()

    assert (tmp_path / "knowledge" / "fact.md").read_text() == "fact\n"
    assert (tmp_path / "hashes.json").read_text() == "{}\n"
    assert not old.exists()
    assert not (tmp_path / "commit.journal").exists()
    assert _leftovers(tmp_path) == _leftovers(tmp_path / "knowledge") == []


def test_a_commit_interrupted_after_its_journal_is_finished_by_recover(tmp_path: Path) -> None:
    """What a process leaves when it dies between two renames: the journal, one file
    switched and one temporary waiting. Recovery switches the rest in."""
    done, waiting = tmp_path / "a.md", tmp_path / "b.md"
    done.write_text("new a\n")
    waiting.write_text("old b\n")
    temporary = tmp_path / f".b.md.1234abcd{TEMPORARY_MARK}"
    temporary.write_text("new b\n")
    journal = tmp_path / "commit.journal"
    journal.write_text(
        json.dumps(
            {
                "renames": [
                    [str(tmp_path / f".a.md.0000aaaa{TEMPORARY_MARK}"), str(done)],
                    [str(temporary), str(waiting)],
                ],
                "deletes": [str(tmp_path / "gone.md")],
            }
        )
    )
    (tmp_path / "gone.md").write_text("deleted by the commit\n")

    assert recover(journal, [tmp_path]) is True

    assert done.read_text() == "new a\n"
    assert waiting.read_text() == "new b\n"
    assert not (tmp_path / "gone.md").exists()
    assert not journal.exists()
    assert _leftovers(tmp_path) == []


def test_recover_deletes_only_stale_temporaries_of_a_commit_that_never_began(
    tmp_path: Path,
) -> None:
    stale = tmp_path / f".a.md.1111aaaa{TEMPORARY_MARK}"
    fresh = tmp_path / f".b.md.2222bbbb{TEMPORARY_MARK}"
    stale.write_text("half")
    fresh.write_text("being written by another process")
    old = time.time() - STALE_S - 5
    os.utime(stale, (old, old))

    assert recover(tmp_path / "commit.journal", [tmp_path]) is False

    assert not stale.exists()
    assert fresh.exists()  # may belong to a write under way in another process


def test_a_commit_first_finishes_the_one_an_interrupted_process_left(tmp_path: Path) -> None:
    """A long-running server commits while another process's journal is there: the
    old commit is finished first, never overwritten."""
    waiting = tmp_path / "old.md"
    temporary = tmp_path / f".old.md.1234abcd{TEMPORARY_MARK}"
    temporary.write_text("from the stopped process\n")
    journal = tmp_path / "commit.journal"
    journal.write_text(json.dumps({"renames": [[str(temporary), str(waiting)]], "deletes": []}))

    changes = FileChanges(journal)
    changes.write(tmp_path / "new.md", "from this process\n")
    changes.commit()

    assert waiting.read_text() == "from the stopped process\n"
    assert (tmp_path / "new.md").read_text() == "from this process\n"
    assert not journal.exists()


def test_what_a_commit_reads_under_its_lock_includes_every_earlier_commit(tmp_path: Path) -> None:
    """Two writers staged at once: each one's record survives the other's commit."""
    record = tmp_path / "hashes.json"
    record.write_text("[]")

    def append(name: str) -> FileChanges:
        changes = FileChanges(tmp_path / "commit.journal")
        changes.write(tmp_path / f"{name}.md", name)
        return changes

    def listed(name: str):  # type: ignore[no-untyped-def]
        def add(files: FileChanges) -> None:
            files.write(record, json.dumps([*json.loads(record.read_text()), name]))

        return add

    first, second = append("a"), append("b")  # both staged before either commits
    first.commit(listed("a"))
    second.commit(listed("b"))

    assert json.loads(record.read_text()) == ["a", "b"]
