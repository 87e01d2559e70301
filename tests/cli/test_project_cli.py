"""The project memory verbs: ``engram init``, ``save-session`` (``ss``), ``load``,
``search``, ``route``, ``verify``, ``status``, ``promote``, through click's runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from engram import __version__
from engram.cli.main import cli
from engram.compose import open_project
from tests.project.conftest import BURIED_CANDIDATE, bury_a_related_rule
from tests.safety.samples import github_token

BASE = Path(".agents") / ".engram"
INIT_CREATED = "rules/, skills/, knowledge/, working/, .gitignore, .gitattributes, memory.hashes"


@pytest.fixture(autouse=True)
def project_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The current directory is ``tmp_path``; global memory lives in a private folder."""
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(tmp_path / "global"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


def engram(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), input=stdin, catch_exceptions=False)


def md_files(root: Path) -> list[str]:
    base = root / BASE
    return sorted(p.relative_to(base).as_posix() for p in base.rglob("*.md"))


@pytest.fixture
def initialised(project_dir: Path) -> Path:
    assert engram("init").exit_code == 0
    return project_dir


def save(lines: str, *options: str) -> Result:
    return engram("save-session", *options, stdin=lines)


# --- init ------------------------------------------------------------------------------------


def test_init_creates_the_layout_and_says_what_it_created(project_dir: Path) -> None:
    result = engram("init")

    base = project_dir / BASE
    assert result.exit_code == 0
    assert result.stdout == f"engram memory in {base} (created {INIT_CREATED})\n"
    assert all((base / name).is_dir() for name in ("rules", "skills", "knowledge", "working"))
    assert (base / "memory.hashes").read_text() == ""
    ignored = (base / ".gitignore").read_text().splitlines()
    assert {"working/", "pending-approvals.json"} <= set(ignored)


def test_init_twice_says_already_there_and_changes_nothing(project_dir: Path) -> None:
    engram("init")
    base = project_dir / BASE
    before = {p: p.read_bytes() for p in base.rglob("*") if p.is_file()}

    result = engram("init")

    assert result.exit_code == 0
    assert result.stdout == f"engram memory in {base} (already there)\n"
    assert {p: p.read_bytes() for p in base.rglob("*") if p.is_file()} == before


def test_a_project_verb_outside_an_initialised_project_fails_with_a_hint(
    project_dir: Path,
) -> None:
    result = engram("load", "deploy")

    assert result.exit_code == 1
    assert result.stderr == (
        f"engram: no {BASE} in {project_dir.resolve()} or above: run `engram init` in the"
        " repository's root\n"
    )


# --- save-session ----------------------------------------------------------------------------


def test_save_session_without_force_previews_and_writes_nothing(initialised: Path) -> None:
    result = save("TYPE: rule | TEXT: Use tabs\n")

    assert result.exit_code == 0
    assert result.stdout == (
        "1. Verdict: ADD\n"
        "   Type: rule | Id: use-tabs | Scope: workspace\n"
        "   Title: Use tabs\n"
        "   Text: Use tabs\n"
        "\n(dry run: nothing written; add --force to write)\n"
    )
    assert md_files(initialised) == []
    assert not (initialised / BASE / "pending-approvals.json").exists()


@pytest.mark.parametrize("command", [["save-session", "--force"], ["ss", "-f"], ["ss", "--force"]])
def test_save_session_force_and_its_ss_f_shortcut_write_the_ready_candidates(
    initialised: Path, command: list[str]
) -> None:
    result = engram(
        *command, stdin="TYPE: rule | TEXT: Use tabs\nTYPE: workflow | TEXT: Tag main\n"
    )

    assert result.exit_code == 0
    assert result.stdout.endswith(
        "\n\nwrote use-tabs (ADD) to rules/use-tabs.md"
        "\nwrote tag-main (ADD) to skills/tag-main.md\n"
    )
    assert md_files(initialised) == ["rules/use-tabs.md", "skills/tag-main.md"]


def test_save_session_force_writes_add_and_update_and_defers_noop_and_supersede_with_a_hint(
    initialised: Path,
) -> None:
    save("TYPE: rule | TEXT: Run unit tests before push\nTYPE: rule | TEXT: Use tabs\n", "--force")
    use_tabs = initialised / BASE / "rules" / "use-tabs.md"

    result = save(
        "TYPE: rule | TEXT: Run unit tests before every push\n"
        "TYPE: rule | TEXT: use TABS!\n"
        "TYPE: rule | TEXT: Use tabs of width 4 | UPDATE: use-tabs\n"
        "TYPE: knowledge | TEXT: Staging is bluebird\n",
        "--force",
    )

    assert result.exit_code == 0
    assert result.stdout.splitlines()[-4:] == [
        "wrote use-tabs (UPDATE use-tabs) to rules/use-tabs.md",
        "wrote staging-is-bluebird (ADD) to knowledge/staging-is-bluebird.md",
        "deferred 1 (SUPERSEDE run-unit-tests-before-push): related;"
        " `engram load --id run-unit-tests-before-push`, then propose it with"
        " UPDATE: run-unit-tests-before-push (or approve the SUPERSEDE through engram_commit)",
        "deferred 2 (NOOP duplicate of use-tabs): duplicate; `engram load --id use-tabs`"
        " shows the memory that says it",
    ]
    assert "- Use tabs of width 4\n" in use_tabs.read_text()
    assert "revision: 2\n" in use_tabs.read_text()
    assert md_files(initialised) == [
        "knowledge/staging-is-bluebird.md",
        "rules/run-unit-tests-before-push.md",
        "rules/use-tabs.md",
    ]


def test_save_session_reads_candidates_from_a_file(initialised: Path) -> None:
    (initialised / "candidates.txt").write_text("TYPE: knowledge | TEXT: Staging is bluebird\n")

    result = engram("ss", "--file", "candidates.txt", "-f")

    assert result.exit_code == 0
    assert md_files(initialised) == ["knowledge/staging-is-bluebird.md"]


@pytest.mark.parametrize("level", ["0", "-1"])
def test_a_query_level_below_1_is_a_usage_error(initialised: Path, level: str) -> None:
    result = save("TYPE: rule | TEXT: Use tabs\n", "--query-level", level, "--force")

    assert result.exit_code == 2
    assert f"Invalid value for '--query-level': {level} is not in the range x>=1." in (
        result.stderr
    )
    assert md_files(initialised) == []


def test_a_positive_query_level_is_accepted(initialised: Path) -> None:
    result = save("TYPE: rule | TEXT: Use tabs\n", "--query-level", "50", "--force")

    assert result.exit_code == 0
    assert md_files(initialised) == ["rules/use-tabs.md"]


BURIED_LINE = f"TYPE: rule | TEXT: {BURIED_CANDIDATE}\n"
BURIED_PREVIEW = (
    "   Type: rule | Id: alpha-beta-gamma-delta-epsilon | Scope: workspace\n"
    "   Title: Alpha beta gamma delta epsilon\n"
    "   Text: Alpha beta gamma delta epsilon\n"
)


def test_force_at_the_default_query_level_writes_the_add_it_previewed(initialised: Path) -> None:
    bury_a_related_rule(initialised / BASE / "rules")

    result = save(BURIED_LINE, "--force")

    assert result.exit_code == 0
    assert result.stdout == (
        "1. Verdict: ADD\n" + BURIED_PREVIEW + "\nwrote alpha-beta-gamma-delta-epsilon (ADD)"
        " to rules/alpha-beta-gamma-delta-epsilon.md\n"
    )


def test_a_query_level_past_any_sqlite_integer_is_accepted(initialised: Path) -> None:
    bury_a_related_rule(initialised / BASE / "rules")

    result = save(BURIED_LINE, "--query-level", str(10**30))

    assert result.exit_code == 0
    assert result.stdout.startswith("1. Verdict: SUPERSEDE target\n")


@pytest.mark.parametrize(
    "command",
    [
        ["save-session", "--force", "--query-level", "50"],
        ["ss", "-f", "last", "50", "sessions"],
        ["save-session", "last", "50", "sessions", "--force"],
        ["ss", "-f", "--query-level", "50", "last", "50", "sessions"],
    ],
)
def test_force_at_a_query_level_writes_exactly_the_verdicts_it_previewed(
    initialised: Path, command: list[str]
) -> None:
    # The last three spell the counted shortcut: "last N sessions" is --query-level N.
    bury_a_related_rule(initialised / BASE / "rules")
    before = md_files(initialised)

    result = engram(*command, stdin=BURIED_LINE)

    assert result.exit_code == 0
    assert result.stdout == (
        "1. Verdict: SUPERSEDE target\n"
        + BURIED_PREVIEW
        + "\ndeferred 1 (SUPERSEDE target): related; `engram load --id target`, then propose"
        " it with UPDATE: target (or approve the SUPERSEDE through engram_commit)\n"
    )
    assert md_files(initialised) == before


@pytest.mark.parametrize(
    "words",
    [
        "last fifty sessions",
        "last 0 sessions",
        "last -5 sessions",
        "last 50",
        "last 50 session",
        "Last 50 Sessions",
        "first 50 sessions",
        "last 50 sessions please",
        "50",
    ],
)
def test_arguments_other_than_last_n_sessions_are_a_usage_error(
    initialised: Path, words: str
) -> None:
    result = engram("ss", "-f", "--", *words.split(), stdin="TYPE: rule | TEXT: Use tabs\n")

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.endswith(
        f"Error: expected 'last N sessions' with N a positive integer, got '{words}'\n"
    )
    assert md_files(initialised) == []


def test_a_counted_shortcut_that_contradicts_query_level_is_a_usage_error(
    initialised: Path,
) -> None:
    result = engram(
        "ss", "-f", "--query-level", "8", "last", "50", "sessions", stdin="TYPE: rule | TEXT: x\n"
    )

    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: --query-level 8 and 'last 50 sessions' disagree: give one\n"
    )
    assert md_files(initialised) == []


def test_a_bad_candidate_line_fails_with_its_line_number_and_writes_nothing(
    initialised: Path,
) -> None:
    result = save("TYPE: rule | TEXT: Use tabs\nTYPE: lesson | TEXT: x\n", "--force")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "engram: line 2: TYPE must be rule, skill, workflow or knowledge\n"
    assert md_files(initialised) == []


def test_a_candidate_with_a_secret_is_refused_before_the_preview_without_echoing_it(
    initialised: Path,
) -> None:
    token = github_token()

    result = save(f"TYPE: knowledge | TEXT: The CI token is {token}\n", "--force")

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == "engram: candidate 1 holds credential-like content (github_token)\n"
    assert token not in result.output
    assert md_files(initialised) == []


# --- load, search, route ------------------------------------------------------------------------


def test_load_json_carries_the_structured_keys(initialised: Path) -> None:
    save(
        "TYPE: rule | TEXT: Deploy only from main\nTYPE: knowledge | TEXT: Deploy is blue green\n",
        "-f",
    )

    result = engram("load", "deploy", "--json")

    assert result.exit_code == 0
    data = json.loads(result.stdout)
    text = (
        "# Engram memory for: deploy (2 selected)\n\n"
        "## Rule: Deploy only from main [deploy-only-from-main]\n- Deploy only from main\n\n"
        "## Knowledge: Deploy is blue green [deploy-is-blue-green]\n- Deploy is blue green\n"
    )
    assert data == {
        "selected_keys": ["deploy-only-from-main", "deploy-is-blue-green"],
        "body_keys": ["deploy-only-from-main", "deploy-is-blue-green"],
        "card_ids": [],
        "omitted_ids": [],
        "tokens": (len(text.encode()) + 3) // 4,
        "budget_tokens": 1600,
        "text": text,
    }
    assert engram("load", "deploy").stdout == text


def test_load_by_id_prints_one_memory(initialised: Path) -> None:
    save("TYPE: rule | TEXT: Deploy only from main\n", "-f")

    result = engram("load", "--id", "deploy-only-from-main")

    assert result.exit_code == 0
    assert result.stdout == (
        "## Rule: Deploy only from main [deploy-only-from-main]\n- Deploy only from main\n"
    )


@pytest.mark.parametrize(
    "args",
    [
        ["load"],
        ["load", "deploy", "--budget-tokens", "199"],
        ["load", "x", "--budget-tokens", "16001"],
    ],
)
def test_load_without_a_query_or_with_a_budget_out_of_range_is_a_usage_error(
    initialised: Path, args: list[str]
) -> None:
    assert engram(*args).exit_code == 2


def test_search_and_route_print_entries_with_id_type_scope_and_score(initialised: Path) -> None:
    save(
        "TYPE: rule | TEXT: Deploy only from main\nTYPE: knowledge | TEXT: Staging is bluebird\n",
        "-f",
    )

    searched = json.loads(engram("search", "bluebird", "--json").stdout)["entries"]
    routed = json.loads(engram("route", "deploy", "--json").stdout)["entries"]

    assert [(e["id"], e["type"], e["scope"]) for e in searched] == [
        ("staging-is-bluebird", "knowledge", "workspace")
    ]
    assert [(e["id"], e["type"], e["scope"], e["how"]) for e in routed] == [
        ("deploy-only-from-main", "rule", "workspace", "direct")
    ]
    assert all(isinstance(e["score"], float) for e in [*searched, *routed])
    assert engram("search", "nothing-matches-this").stdout == "no match\n"


def test_a_file_edited_by_hand_between_commands_is_loaded_as_edited(initialised: Path) -> None:
    save("TYPE: knowledge | TEXT: The database is postgres\n", "-f")
    assert engram("load", "database").exit_code == 0
    path = initialised / BASE / "knowledge" / "the-database-is-postgres.md"

    path.write_text(path.read_text().replace("- The database is postgres", "- It moved to mysql"))
    result = engram("load", "--id", "the-database-is-postgres")

    assert result.exit_code == 0
    assert result.stdout.endswith("- It moved to mysql\n")


# --- verify and status ---------------------------------------------------------------------------


def test_verify_exits_0_when_every_hash_matches_and_1_on_a_hand_edit(initialised: Path) -> None:
    save("TYPE: rule | TEXT: Use tabs\nTYPE: knowledge | TEXT: Staging is bluebird\n", "-f")

    clean = engram("verify")
    path = initialised / BASE / "rules" / "use-tabs.md"
    path.write_text(path.read_text() + "- edited by hand\n")
    edited = engram("verify")

    assert (clean.exit_code, clean.stdout) == (
        0,
        "ok: knowledge/staging-is-bluebird.md\nok: rules/use-tabs.md\n",
    )
    assert (edited.exit_code, edited.stdout) == (
        1,
        "ok: knowledge/staging-is-bluebird.md\nhash mismatch: rules/use-tabs.md\n"
        "a memory file changed outside engram (edited by hand, or a merge conflict in it"
        " resolved by hand): review it, then `engram adopt --yes` records every file listed,"
        " or `engram adopt PATH` one (`git checkout -- PATH` restores one instead); commit"
        " memory.hashes with them\n",
    )


def test_status_prints_the_counters(initialised: Path) -> None:
    save("TYPE: rule | TEXT: Use tabs\nTYPE: knowledge | TEXT: Staging is bluebird\n", "-f")

    text = engram("status")
    data = json.loads(engram("status", "--json").stdout)

    summary = (
        f"engram {__version__} in {initialised.resolve()}: 1 rule, 0 skills, 1 knowledge,"
        " 0 notes; 0 invalid files, 0 hash problems"
    )
    assert text.stdout == summary + "\n"
    assert data == {
        "version": __version__,
        "text": summary,
        "root": str(initialised.resolve()),
        "memories": {"rule": 1, "skill": 0, "knowledge": 1},
        "notes": 0,
        "invalid_files": 0,
        "hash_mismatches": 0,
        "roles": [],
        "rule_variant": "balanced",
        "stale": 0,
        "healthy": True,
    }


# --- memory files that cannot be read are named, never skipped in silence ---------------------

#: What each broken file is told to be, in path order (stderr of load, route and search).
SKIPPED = (
    "engram: skipped knowledge/a-pipe.md: cannot be read (not a regular file)\n"
    "engram: skipped rules/bad-frontmatter.md: line 2: id must be a slug"
    " (lowercase letters, digits, hyphens)\n"
    "engram: skipped rules/broken-link.md: cannot be read (a link to a file that does not"
    " exist)\n"
    "engram: skipped rules/latin-1.md: not UTF-8 text\n"
)


def corrupt(root: Path) -> None:
    """A valid memory and four files that cannot be loaded, as they really fail for
    root too (who reads a file without permissions): bad frontmatter, invalid UTF-8, a
    link to nowhere, and a FIFO (which a read would block on)."""
    save("TYPE: rule | TEXT: Deploy only from main\n", "-f")
    base = root / BASE
    (base / "rules" / "bad-frontmatter.md").write_text("---\nid: Not A Slug\ntype: rule\n---\n")
    (base / "rules" / "latin-1.md").write_bytes(b"---\nid: latin-1\ntitle: caf\xe9\n---\n")
    (base / "rules" / "broken-link.md").symlink_to(base / "rules" / "gone.md")
    os.mkfifo(base / "knowledge" / "a-pipe.md")


@pytest.mark.parametrize("verb", ["load", "route", "search"])
def test_a_read_verb_names_each_memory_file_it_could_not_read_on_stderr(
    initialised: Path, verb: str
) -> None:
    corrupt(initialised)

    result = engram(verb, "deploy")

    assert result.exit_code == 0
    assert "deploy-only-from-main" in result.stdout
    assert result.stderr == SKIPPED


def test_a_read_verb_with_json_keeps_stdout_json_and_names_them_on_stderr(
    initialised: Path,
) -> None:
    corrupt(initialised)

    result = engram("load", "deploy", "--json")

    assert json.loads(result.stdout)["selected_keys"] == ["deploy-only-from-main"]
    assert result.stderr == SKIPPED


def test_status_counts_the_files_it_could_not_read(initialised: Path) -> None:
    corrupt(initialised)

    data = json.loads(engram("status", "--json").stdout)

    assert data["memories"] == {"rule": 1, "skill": 0, "knowledge": 0}
    assert (data["invalid_files"], data["healthy"]) == (4, False)


def test_verify_lists_a_file_it_cannot_read_as_unreadable(initialised: Path) -> None:
    corrupt(initialised)

    result = engram("verify")

    assert result.exit_code == 1
    assert result.stdout.splitlines()[:5] == [
        "unreadable: knowledge/a-pipe.md",
        "missing hash: rules/bad-frontmatter.md",
        "unreadable: rules/broken-link.md",
        "ok: rules/deploy-only-from-main.md",
        "missing hash: rules/latin-1.md",
    ]


# --- promote, roles, variants ---------------------------------------------------------------------


def test_promote_makes_a_working_note_durable(initialised: Path) -> None:
    memory = open_project(initialised)
    note = memory.note("The cache warms slowly", "", "knowledge", "workspace")
    memory.write_note(note)
    memory.index.close()

    result = engram("promote", note.id)

    assert result.exit_code == 0
    assert result.stdout == (
        "promoted note-the-cache-warms-slowly to the-cache-warms-slowly in"
        " knowledge/the-cache-warms-slowly.md\n"
    )
    assert md_files(initialised) == ["knowledge/the-cache-warms-slowly.md"]


def test_set_role_and_set_rule_variant_update_the_configuration(initialised: Path) -> None:
    roles = engram("set-role", "frontend", "backend", "frontend")
    variant = engram("set-rule-variant", "strict")

    reload = (
        "Agents: re-run engram_load for the current task and replace the memory loaded before.\n"
    )
    assert roles.stdout == f"roles: backend, frontend. {reload}"
    assert variant.stdout == f"rule variant: strict. {reload}"
    config = json.loads((initialised / BASE / "config.json").read_text())
    assert (config["roles"], config["rule_variant"]) == (["backend", "frontend"], "strict")
    assert engram("set-rule-variant", "loud").exit_code == 2


# --- ids never collide ------------------------------------------------------------------

SHARED_START = "When the billing service retries a charge it waits for the ledger to"


def test_two_long_texts_that_begin_alike_are_two_memories(initialised: Path) -> None:
    first = f"{SHARED_START} confirm the previous attempt before it sends anything"
    second = f"{SHARED_START} flush, and it never retries more than three times"
    assert first[:70] != second[:70]
    assert first[:58] == second[:58]

    assert save(f"TYPE: knowledge | TEXT: {first}", "-f").exit_code == 0
    result = save(f"TYPE: knowledge | TEXT: {second}", "-f")

    assert result.exit_code == 0, result.output
    files = md_files(initialised)
    assert len(files) == 2
    texts = [(initialised / BASE / name).read_text() for name in files]
    assert any("previous attempt" in text for text in texts)  # the first fact is still there
    assert any("three times" in text for text in texts)


def test_another_title_whose_id_is_taken_is_refused_with_what_to_do(initialised: Path) -> None:
    assert save("TYPE: rule | TEXT: Deploy to the cafe server", "-f").exit_code == 0

    refused = save("TYPE: rule | TEXT: Deploy to the café server", "-f")  # the same slug

    assert refused.exit_code != 0
    assert (
        "its id 'deploy-to-the-cafe-server' belongs to another memory ('Deploy to the cafe"
        " server'): write 'UPDATE: deploy-to-the-cafe-server' to change that memory, or"
        " reword the first line"
    ) in " ".join(refused.output.split())
    assert md_files(initialised) == ["rules/deploy-to-the-cafe-server.md"]
