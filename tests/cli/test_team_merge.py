"""Project memory shared through Git (issue 27, item 7): memories saved, updated or
removed on two branches merge with a plain ``git merge`` and ``engram verify`` passes
after it; a memory changed on both branches is a conflict in that memory's file alone,
which ``engram adopt --yes`` settles once the person has resolved it.

Real repositories in a temporary folder, real branches, the real ``git``; engram through
its own CLI (click's runner, in this process). Git reads no configuration of the machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engram.cli.main import cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

BASE = Path(".agents") / ".engram"
HASHES = BASE / "memory.hashes"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A repository on ``main`` with engram initialised and committed; the current
    directory."""
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(tmp_path / "global"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    root = tmp_path / "repo"
    root.mkdir()
    monkeypatch.chdir(root)
    git("init", "-q", "-b", "main")
    assert engram("init").exit_code == 0
    commit("engram init")
    return root


def git(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Ada",
        "GIT_AUTHOR_EMAIL": "ada@example.org",
        "GIT_COMMITTER_NAME": "Ada",
        "GIT_COMMITTER_EMAIL": "ada@example.org",
    }
    return subprocess.run(
        ["git", *args], env=env, capture_output=True, text=True, check=check, timeout=30
    )


def engram(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def save(line: str) -> None:
    saved = engram("save-session", "--force", stdin=line + "\n")
    assert saved.exit_code == 0, saved.output
    assert "wrote " in saved.stdout, saved.stdout


def commit(message: str) -> None:
    git("add", "--all")
    git("commit", "-q", "-m", message)


def on_branch(name: str, *lines: str) -> None:
    """Branch ``name`` off ``main``, save ``lines`` through engram there, commit."""
    git("checkout", "-q", "-b", name, "main")
    for line in lines:
        save(line)
    commit(name)


def merge_both(first: str, second: str) -> subprocess.CompletedProcess[str]:
    """Merge ``first`` then ``second`` into ``main``; the second merge's result."""
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-edit", first)
    return git("merge", "-q", "--no-edit", second, check=False)


def unmerged() -> list[str]:
    return git("diff", "--name-only", "--diff-filter=U").stdout.split()


def verify() -> Result:
    return engram("verify")


def recorded() -> list[str]:
    """The paths of memory.hashes' lines, in order (``-`` marks a removed one)."""
    lines = HASHES.read_text().splitlines()
    return [("-" if line.startswith("# removed") else "") + line.split("  ")[1] for line in lines]


def test_memories_saved_on_two_branches_merge_without_a_conflict_and_verify(repo: Path) -> None:
    on_branch("lint", "TYPE: rule | TEXT: Run make lint before every push")
    on_branch("db", "TYPE: knowledge | TEXT: The database is PostgreSQL 16")

    merged = merge_both("lint", "db")

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert unmerged() == []
    assert verify().stdout == (
        "ok: knowledge/the-database-is-postgresql-16.md\n"
        "ok: rules/run-make-lint-before-every-push.md\n"
    )
    assert git("status", "--porcelain").stdout == ""


def test_an_update_on_one_branch_and_a_save_on_the_other_merge_and_verify(repo: Path) -> None:
    save("TYPE: rule | TEXT: Use tabs")
    commit("a rule")
    on_branch("update", "TYPE: rule | TEXT: Use tabs | UPDATE: use-tabs | CONTEXT: width 4")
    on_branch("save", "TYPE: rule | TEXT: Use typing")  # its line is the updated one's neighbour

    merged = merge_both("update", "save")

    assert merged.returncode == 0, merged.stdout + merged.stderr
    # The union kept the old hash of use-tabs beside the new one; either is accepted.
    assert recorded() == ["rules/use-tabs.md", "rules/use-tabs.md", "rules/use-typing.md"]
    result = verify()
    assert (result.exit_code, result.stdout) == (
        0,
        "ok: rules/use-tabs.md\nok: rules/use-typing.md\n",
    )
    assert "- Context: width 4" in (repo / BASE / "rules" / "use-tabs.md").read_text()
    save("TYPE: knowledge | TEXT: Staging is bluebird")  # the next write compacts
    assert recorded() == [
        "knowledge/staging-is-bluebird.md",
        "rules/use-tabs.md",
        "rules/use-typing.md",
    ]
    assert verify().exit_code == 0


def test_a_removal_on_one_branch_and_a_save_on_the_other_merge_and_verify(repo: Path) -> None:
    save("TYPE: rule | TEXT: Use tabs")
    commit("a rule")
    git("checkout", "-q", "-b", "remove")
    git("rm", "-q", str(BASE / "rules" / "use-tabs.md"))
    assert engram("adopt", "--yes").stdout == (
        "removed rules/use-tabs.md\nadopted 1 file: recorded as reviewed\n"
    )
    commit("remove")
    on_branch("save", "TYPE: rule | TEXT: Use typing")

    merged = merge_both("remove", "save")

    assert merged.returncode == 0, merged.stdout + merged.stderr
    # The union brought the removed file's old line back; its removal is recorded too.
    assert recorded() == ["-rules/use-tabs.md", "rules/use-tabs.md", "rules/use-typing.md"]
    result = verify()
    assert (result.exit_code, result.stdout) == (0, "ok: rules/use-typing.md\n")
    compacted = engram("adopt", "--yes")
    assert compacted.stdout == "memory.hashes was compacted to one line per file\n"
    assert recorded() == ["-rules/use-tabs.md", "rules/use-typing.md"]


def test_a_memory_changed_on_both_branches_is_a_conflict_in_its_file_alone(repo: Path) -> None:
    save("TYPE: rule | TEXT: Use tabs")
    commit("a rule")
    on_branch("four", "TYPE: rule | TEXT: Use tabs | UPDATE: use-tabs | CONTEXT: width 4")
    on_branch("eight", "TYPE: rule | TEXT: Use tabs | UPDATE: use-tabs | CONTEXT: width 8")

    merged = merge_both("four", "eight")

    assert merged.returncode == 1
    assert unmerged() == [".agents/.engram/rules/use-tabs.md"]
    rule = repo / BASE / "rules" / "use-tabs.md"
    text = rule.read_text()
    assert "<<<<<<< HEAD\n- Context: width 4\n=======\n- Context: width 8\n>>>>>>> eight\n" in text
    # The person resolves the memory file, and only that one, by hand.
    rule.write_text(text.split("<<<<<<< HEAD\n")[0] + "- Context: width 4 or 8\n")
    result = verify()
    assert (result.exit_code, result.stdout) == (
        1,
        "hash mismatch: rules/use-tabs.md\n"
        "a memory file changed outside engram (edited by hand, or a merge conflict in it"
        " resolved by hand): review it, then `engram adopt --yes` records every file listed,"
        " or `engram adopt PATH` one (`git checkout -- PATH` restores one instead); commit"
        " memory.hashes with them\n",
    )

    adopted = engram("adopt", "--yes")

    assert adopted.stdout == "edited rules/use-tabs.md\nadopted 1 file: recorded as reviewed\n"
    assert verify().exit_code == 0
    assert HASHES.read_text() == (
        f"{hashlib.sha256(rule.read_bytes()).hexdigest()}  rules/use-tabs.md\n"
    )
    commit("merge eight")
    assert git("status", "--porcelain").stdout == ""


def test_a_project_with_upstreams_json_file_migrates_on_each_branch_and_merges(
    repo: Path,
) -> None:
    save("TYPE: rule | TEXT: Use tabs")
    rule = repo / BASE / "rules" / "use-tabs.md"
    # As engram made projects before memory.hashes: the JSON file, no .gitattributes.
    (repo / HASHES).unlink()
    (repo / BASE / ".gitattributes").unlink()
    digest = hashlib.sha256(rule.read_bytes()).hexdigest()
    legacy = repo / BASE / "memory.hashes.json"
    legacy.write_text(json.dumps({"rules/use-tabs.md": digest}, indent=2) + "\n")
    commit("an older engram's project")
    assert verify().stdout == "ok: rules/use-tabs.md\n"
    on_branch("typing", "TYPE: rule | TEXT: Use typing")
    on_branch("staging", "TYPE: knowledge | TEXT: Staging is bluebird")

    merged = merge_both("typing", "staging")

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert not legacy.exists()
    assert sorted(recorded()) == [
        "knowledge/staging-is-bluebird.md",
        "rules/use-tabs.md",
        "rules/use-tabs.md",
        "rules/use-typing.md",
    ]
    assert verify().exit_code == 0


def test_without_the_union_attribute_the_conflict_markers_are_read_as_both_sides(
    repo: Path,
) -> None:
    # .git/info/attributes outranks the repository's own: the text driver, markers.
    (repo / ".git" / "info" / "attributes").write_text(f"{HASHES.as_posix()} merge=text\n")
    on_branch("typing", "TYPE: rule | TEXT: Use typing")
    on_branch("staging", "TYPE: knowledge | TEXT: Staging is bluebird")

    merged = merge_both("typing", "staging")

    assert merged.returncode == 1
    assert unmerged() == [HASHES.as_posix()]
    result = verify()
    assert result.exit_code == 0
    assert result.stdout.splitlines()[-1].startswith("memory.hashes holds Git's conflict markers")
    assert engram("adopt", "--yes").stdout == (
        "memory.hashes was written without Git's conflict markers\n"
    )
    assert recorded() == ["knowledge/staging-is-bluebird.md", "rules/use-typing.md"]
    commit("merge staging")
    assert verify().exit_code == 0


def test_gitignore_lines_added_on_two_branches_merge(repo: Path) -> None:
    gitignore = repo / BASE / ".gitignore"
    gitignore.write_text(gitignore.read_text().replace("*.engram-tmp\n", ""))
    commit("made by an older engram")
    git("checkout", "-q", "-b", "mine")
    gitignore.write_text(gitignore.read_text() + "scratch/\n")
    commit("mine")
    git("checkout", "-q", "-b", "newer", "main")
    assert engram("status").exit_code == 0  # a newer engram adds what is missing
    commit("newer")

    merged = merge_both("mine", "newer")

    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert gitignore.read_text().splitlines()[-2:] == ["scratch/", "*.engram-tmp"]


def test_settings_changed_on_two_branches_are_a_conflict_that_says_what_to_do(
    repo: Path,
) -> None:
    git("checkout", "-q", "-b", "roles")
    assert engram("set-role", "backend").exit_code == 0
    commit("roles")
    git("checkout", "-q", "-b", "variant", "main")
    assert engram("set-rule-variant", "strict").exit_code == 0
    commit("variant")

    merged = merge_both("roles", "variant")

    assert merged.returncode == 1
    assert unmerged() == [".agents/.engram/config.json"]
    loaded = engram("load", "tabs")
    assert loaded.exit_code == 1
    assert loaded.stderr == (
        f"engram: {repo / BASE / 'config.json'}: holds Git's conflict markers (two branches"
        " changed the settings); edit the file (keep what each side meant, remove the"
        " markers, then `git add` it)\n"
    )
