"""``engram stale`` on real Git repositories: a memory's recorded files edited, deleted,
renamed and reverted, saved and checked through the command line."""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engram.cli.main import cli
from engram.project.repository import blob_id
from tests.project.gitrepo import blob, commit_all, git, write

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
TODAY = dt.date.today().isoformat()
RETRY = "retries-stop-after-3-attempts-src-payments-retry-py-12"
LIMITS = "limits-live-in-docs-limits-md-and-src-payments-policy-py"


def engram(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository with three files and two memories citing them, all committed."""
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(tmp_path / "global"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    git(root, "init", "-q", "-b", "main")
    write(root, "src/payments/retry.py", "ATTEMPTS = 3\n")
    write(root, "src/payments/policy.py", "LIMIT = 100\n")
    write(root, "docs/limits.md", "# Limits\n")
    assert engram("init").exit_code == 0
    saved = engram(
        "save-session",
        "--force",
        stdin="TYPE: rule | TEXT: Retries stop after 3 attempts (src/payments/retry.py:12)\n"
        "TYPE: knowledge | TEXT: Limits live in docs/limits.md and src/payments/policy.py\n"
        "TYPE: rule | TEXT: Run make lint before every push\n",
    )
    assert saved.exit_code == 0, saved.output
    commit_all(root, "memories")
    return root


def test_nothing_is_stale_while_the_files_are_as_recorded(repo: Path) -> None:
    checked = engram("stale")
    assert (checked.exit_code, checked.stdout) == (
        0,
        "no stale memory: the files of 2 memories are as recorded\n",
    )


def test_an_edit_a_deletion_and_a_rename_are_each_told(repo: Path) -> None:
    retry, limits = blob(repo, "src/payments/retry.py"), blob(repo, "docs/limits.md")
    policy = blob(repo, "src/payments/policy.py")
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")
    (repo / "docs" / "limits.md").unlink()
    git(repo, "mv", "src/payments/policy.py", "src/payments/rules.py")

    checked = engram("stale")

    assert checked.exit_code == 1
    assert checked.stdout == (
        f"{LIMITS} (knowledge/{LIMITS}.md), recorded {TODAY}:\n"
        "  missing: docs/limits.md\n"
        "  renamed: src/payments/policy.py -> src/payments/rules.py\n"
        f"{RETRY} (rules/{RETRY}.md), recorded {TODAY}:\n"
        "  changed: src/payments/retry.py\n"
        "2 stale memories of 2 that record files: check each against its files, then"
        " `engram reconfirm ID` records them as they are now (or propose an UPDATE)\n"
    )
    data = json.loads(engram("stale", "--json").stdout)
    assert data["memories"] == [
        {
            "id": LIMITS,
            "file": f"knowledge/{LIMITS}.md",
            "since": TODAY,
            "files": [
                {"path": "docs/limits.md", "state": "missing", "recorded": limits},
                {
                    "path": "src/payments/policy.py",
                    "state": "renamed",
                    "recorded": policy,
                    "renamed_to": "src/payments/rules.py",
                },
            ],
        },
        {
            "id": RETRY,
            "file": f"rules/{RETRY}.md",
            "since": TODAY,
            "files": [{"path": "src/payments/retry.py", "state": "changed", "recorded": retry}],
        },
    ]
    assert data["checked"] == 2


def test_a_file_changed_then_reverted_is_as_recorded(repo: Path) -> None:
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")
    assert engram("stale").exit_code == 1
    commit_all(repo, "five attempts")
    git(repo, "revert", "--no-edit", "HEAD")

    checked = engram("stale")

    assert (checked.exit_code, checked.stdout) == (
        0,
        "no stale memory: the files of 2 memories are as recorded\n",
    )


def test_a_rename_edited_as_well_is_missing_for_git_cannot_tell(repo: Path) -> None:
    git(repo, "mv", "src/payments/policy.py", "src/payments/rules.py")
    write(repo, "src/payments/rules.py", "LIMIT = 200\n")
    git(repo, "add", "--all")

    data = json.loads(engram("stale", "--json").stdout)

    assert [(m["id"], [f["state"] for f in m["files"]]) for m in data["memories"]] == [
        (LIMITS, ["missing"])
    ]


def test_the_remembered_hashes_follow_an_edit_of_the_same_size(repo: Path) -> None:
    for cited in ("src/payments/retry.py", "src/payments/policy.py", "docs/limits.md"):
        os.utime(repo / cited, (time.time() - 60, time.time() - 60))
    assert engram("stale").exit_code == 0  # the ids are remembered beside the index
    cache = json.loads((repo / ".agents" / ".engram" / "index.sqlite-sources").read_text())
    assert sorted(cache["files"]) == [
        "docs/limits.md",
        "src/payments/policy.py",
        "src/payments/retry.py",
    ]
    path = repo / "src" / "payments" / "retry.py"
    path.write_text("ATTEMPTS = 4\n", encoding="utf-8")  # same size

    data = json.loads(engram("stale", "--json").stdout)

    assert [m["id"] for m in data["memories"]] == [RETRY]
    assert git(repo, "status", "--porcelain", "--", ".agents") == ""


# --- the agent is told ---------------------------------------------------------------

MARK = (
    "Stale: src/payments/retry.py changed since {today}, when this memory was recorded:"
    " check the file before relying on it."
)
STDERR = f"engram: stale {RETRY}: src/payments/retry.py changed since {TODAY}\n"


def test_a_load_marks_a_stale_memory_under_its_heading_and_names_it_on_stderr(
    repo: Path,
) -> None:
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")

    loaded = engram("load", "retries attempts")

    assert loaded.exit_code == 0
    assert loaded.stdout == (
        "# Engram memory for: retries attempts (1 selected)\n\n"
        f"## Rule: Retries stop after 3 attempts (src/payments/retry.py:12) [{RETRY}]\n"
        + MARK.format(today=TODAY)
        + "\n- Retries stop after 3 attempts (src/payments/retry.py:12)\n"
    )
    assert loaded.stderr == STDERR
    data = json.loads(engram("load", "retries attempts", "--json").stdout)
    assert data["stale"] == [
        {
            "id": RETRY,
            "file": f"rules/{RETRY}.md",
            "since": TODAY,
            "files": [
                {
                    "path": "src/payments/retry.py",
                    "state": "changed",
                    "recorded": blob_id(b"ATTEMPTS = 3\n"),
                }
            ],
        }
    ]


def test_a_load_by_id_and_a_card_are_marked_too(repo: Path) -> None:
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")

    by_id = engram("load", "--id", RETRY)
    cards = engram("load", "retries attempts", "--cards")

    assert by_id.stdout.splitlines()[1] == MARK.format(today=TODAY)
    assert cards.stdout.splitlines()[-1] == (
        f"- {RETRY} (rule): Retries stop after 3 attempts (src/payments/retry.py:12)"
        f" [stale: src/payments/retry.py changed since {TODAY}]"
    )


def test_search_and_route_mark_a_stale_memory_and_keep_it(repo: Path) -> None:
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")

    searched = engram("search", "retries")
    routed = engram("route", "retries")

    assert searched.stdout.endswith(
        f"  {RETRY} (rule): Retries stop after 3 attempts (src/payments/retry.py:12)"
        f" [stale: src/payments/retry.py changed since {TODAY}]\n"
    )
    assert searched.stderr == STDERR
    assert routed.stdout == (
        f"{RETRY} (rule, direct) [stale: src/payments/retry.py changed since {TODAY}]\n"
    )
    assert routed.stderr == STDERR
    entry = json.loads(engram("route", "retries", "--json").stdout)["entries"][0]
    assert entry["stale"] == {
        "summary": f"src/payments/retry.py changed since {TODAY}",
        "since": TODAY,
        "files": [
            {
                "path": "src/payments/retry.py",
                "state": "changed",
                "recorded": blob_id(b"ATTEMPTS = 3\n"),
            }
        ],
    }


def test_a_fresh_memory_is_not_marked(repo: Path) -> None:
    loaded = engram("load", "retries attempts")
    assert "Stale" not in loaded.stdout
    assert loaded.stderr == ""
    assert "stale" not in json.loads(engram("load", "retries attempts", "--json").stdout)


def test_status_counts_stale_memories_and_doctor_warns(repo: Path) -> None:
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")
    (repo / "docs" / "limits.md").unlink()

    status = engram("status")
    data = json.loads(engram("status", "--json").stdout)
    doctor = json.loads(engram("doctor", "--json").stdout)

    assert status.stdout.endswith(
        "\n2 memories stand on files that changed since they were recorded:"
        " `engram stale` lists them\n"
    )
    assert (data["stale"], data["healthy"]) == (2, True)
    stale = [check for check in doctor["checks"] if check["id"] == "memory.stale"]
    assert [(c["status"], c["subject"], c["message"]) for c in stale] == [
        ("warn", f"knowledge/{LIMITS}.md", f"docs/limits.md missing since {TODAY}"),
        ("warn", f"rules/{RETRY}.md", f"src/payments/retry.py changed since {TODAY}"),
    ]
    assert stale[0]["remediation"] == (
        f"check the memory against its files, then `engram reconfirm {LIMITS}`"
        " (or let an agent propose an UPDATE of it)"
    )


# --- the human closes the loop -------------------------------------------------------


def test_reconfirm_records_the_files_as_they_are_now(repo: Path) -> None:
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")
    (repo / "docs" / "limits.md").unlink()
    git(repo, "mv", "src/payments/policy.py", "src/payments/rules.py")
    memory_file = repo / ".agents" / ".engram" / "knowledge" / f"{LIMITS}.md"
    before = memory_file.read_text(encoding="utf-8")

    done = engram("reconfirm", RETRY, LIMITS)

    assert (done.exit_code, done.stdout) == (
        0,
        f"reconfirmed {RETRY} (rules/{RETRY}.md): records src/payments/retry.py as they are"
        " now\n"
        f"reconfirmed {LIMITS} (knowledge/{LIMITS}.md): records src/payments/rules.py as they"
        " are now; no longer records docs/limits.md (gone)\n",
    )
    assert engram("stale").stdout == "no stale memory: the files of 2 memories are as recorded\n"
    assert engram("verify").exit_code == 0
    after = memory_file.read_text(encoding="utf-8")
    recorded = (
        "source_files: [src/payments/rules.py]\n"
        f"source_hashes: [{blob(repo, 'src/payments/rules.py')}]\n"
        f"last_verified: {TODAY}\n"
    )
    assert recorded in after
    kept = [line for line in before.splitlines() if not line.startswith(("source_", "last_v"))]
    assert [line for line in after.splitlines() if not line.startswith(("source_", "last_v"))] == (
        kept
    )


def test_reconfirm_writes_nothing_when_one_id_cannot_be_reconfirmed(repo: Path) -> None:
    write(repo, "src/payments/retry.py", "ATTEMPTS = 5\n")
    edited = repo / ".agents" / ".engram" / "knowledge" / f"{LIMITS}.md"
    edited.write_text(edited.read_text() + "- Edited by hand\n", encoding="utf-8")

    unknown = engram("reconfirm", RETRY, "no-such-memory")
    by_hand = engram("reconfirm", RETRY, LIMITS)

    assert (unknown.exit_code, unknown.stderr) == (
        1,
        "engram: no memory 'no-such-memory': `engram stale` lists the stale ones\n",
    )
    assert (by_hand.exit_code, by_hand.stderr) == (
        1,
        f"engram: knowledge/{LIMITS}.md changed outside engram: review it and `engram adopt"
        f" knowledge/{LIMITS}.md` first, then reconfirm it\n",
    )
    assert [m["id"] for m in json.loads(engram("stale", "--json").stdout)["memories"]] == [RETRY]
