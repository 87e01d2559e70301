"""Proposals: deterministic verdicts, the candidate line grammar, the preview, secrets
refused before any preview, and the write path ``save-session --force`` shares."""

from __future__ import annotations

import pytest

from engram.project.layout import Layout
from engram.project.proposals import (
    Candidate,
    CandidateError,
    SecretRefused,
    Verdict,
    parse_candidate_lines,
)
from engram.project.workspace import ProjectMemory
from tests.project.conftest import write_memory_file
from tests.safety.samples import aws_access_key_id, github_token, slack_bot_token

FIELDS = "TYPE, TEXT, CONTEXT, ORIGIN, TRIGGERS, DEPENDS_ON, LEVEL, UPDATE, PARENT, SOURCE_FILES"


def verdicts(memory: ProjectMemory, lines: str, query_level: int = 8) -> list[str]:
    proposal = memory.propose(parse_candidate_lines(lines), "workspace", query_level)
    return [verdict.line() for verdict in proposal.verdicts]


def md_files(layout: Layout) -> list[str]:
    return sorted(p.relative_to(layout.base).as_posix() for p in layout.base.rglob("*.md"))


# --- verdicts -----------------------------------------------------------------------------


def test_a_candidate_unlike_any_memory_is_an_add(memory: ProjectMemory, layout: Layout) -> None:
    write_memory_file(layout, "use-tabs", "rule", "Indent with tabs")

    assert verdicts(memory, "TYPE: knowledge | TEXT: The staging host is bluebird") == ["ADD"]


def test_an_explicit_update_names_its_target(memory: ProjectMemory, layout: Layout) -> None:
    write_memory_file(layout, "use-tabs", "rule", "Indent with tabs")

    assert verdicts(memory, "TYPE: rule | TEXT: Indent with four spaces | UPDATE: use-tabs") == [
        "UPDATE use-tabs"
    ]


def test_an_update_of_an_unknown_memory_is_refused(memory: ProjectMemory) -> None:
    with pytest.raises(CandidateError) as refused:
        verdicts(memory, "TYPE: rule | TEXT: Indent with spaces | UPDATE: no-such-memory")

    assert refused.value.detail == (
        "candidate 1: UPDATE names a memory id 'no-such-memory' that does not exist"
        " (engram search finds the id to update; leave UPDATE out to add a new memory)"
    )
    assert refused.value.code == "INVALID_CANDIDATE"


def test_a_candidate_with_the_id_of_an_existing_memory_updates_it(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "use-tabs", "rule", "Indent with tabs, never spaces")

    assert verdicts(memory, "TYPE: rule | TEXT: Use tabs.") == ["UPDATE use-tabs"]


def test_a_candidate_saying_exactly_what_a_memory_says_is_a_noop_duplicate(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "push-checks", "rule", "Run the linter before pushing code")

    assert verdicts(
        memory,
        "TYPE: rule | TEXT: run the LINTER, before pushing code!\n"
        "TYPE: knowledge | TEXT: Run the linter before pushing code",
    ) == ["NOOP duplicate of push-checks", "NOOP duplicate of push-checks"]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        # {run unit tests} of {run unit tests before push}: Jaccard 3/5 = 0.6
        ("Run unit tests", "SUPERSEDE unit-tests-first"),
        # {run unit tests daily} vs {run unit tests before push}: 3/6 = 0.5
        ("Run unit tests daily", "ADD"),
        # 6/7
        ("Run unit tests before every push", "SUPERSEDE unit-tests-first"),
    ],
)
def test_a_closely_related_memory_of_the_same_type_is_superseded_from_jaccard_0_6(
    memory: ProjectMemory, layout: Layout, text: str, verdict: str
) -> None:
    write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")

    assert verdicts(memory, f"TYPE: rule | TEXT: {text}") == [verdict]


def test_a_related_memory_of_another_type_is_not_superseded(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")

    assert verdicts(memory, "TYPE: knowledge | TEXT: Run unit tests before every push") == ["ADD"]


def test_working_notes_never_make_a_candidate_a_duplicate_or_an_update(
    memory: ProjectMemory,
) -> None:
    memory.write_note(memory.note("The cache warms slowly", "", "knowledge", "workspace"))

    assert verdicts(memory, "TYPE: knowledge | TEXT: The cache warms slowly") == ["ADD"]


def test_verdicts_and_preview_are_the_same_for_the_same_files_and_candidates(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")
    write_memory_file(layout, "use-tabs", "rule", "Indent with tabs")
    lines = (
        "TYPE: rule | TEXT: Run unit tests before every push\n"
        "TYPE: rule | TEXT: Use tabs\n"
        "TYPE: rule | TEXT: indent with TABS\n"
        "TYPE: knowledge | TEXT: The staging host is bluebird\n"
    )

    first = memory.propose(parse_candidate_lines(lines), "workspace")
    second = memory.propose(parse_candidate_lines(lines), "workspace")

    assert (
        first.verdicts
        == second.verdicts
        == [
            Verdict("SUPERSEDE", "unit-tests-first"),
            Verdict("UPDATE", "use-tabs"),
            Verdict("NOOP", "use-tabs"),
            Verdict("ADD"),
        ]
    )
    assert first.preview == second.preview


def test_the_preview_numbers_each_candidate_with_its_verdict_line(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "use-tabs", "rule", "Indent with tabs")

    proposal = memory.propose(
        parse_candidate_lines(
            "TYPE: rule | TEXT: Use tabs\n"
            "TYPE: workflow | TEXT: release by  tagging main. | CONTEXT: after CI  passes\n"
        ),
        "workspace",
    )

    assert proposal.preview == (
        "1. Verdict: UPDATE use-tabs\n"
        "   Type: rule | Id: use-tabs | Scope: workspace\n"
        "   Title: Use tabs\n"
        "   Text: Use tabs\n"
        "2. Verdict: ADD\n"
        "   Type: skill | Id: release-by-tagging-main | Scope: workspace\n"
        "   Title: Release by tagging main\n"
        "   Text: release by tagging main.\n"
        "   Context: after CI passes"
    )


# --- the candidate line grammar -----------------------------------------------------------------


def test_a_candidate_line_reads_every_field_of_the_grammar() -> None:
    candidates = parse_candidate_lines(
        "# session of 2024-05-01\n"
        "\n"
        "TYPE: workflow | TEXT: Release by tagging main | CONTEXT: after CI passes"
        " | ORIGIN: release retro | TRIGGERS: release, tag | DEPENDS_ON: ci-green"
        " | LEVEL: advanced | UPDATE: release-process | PARENT: shipping, git\n"
        "type: knowledge | text: The staging host is bluebird\n",
        scope="global",
        roles=("backend",),
    )

    assert candidates == [
        Candidate(
            type="skill",
            text="Release by tagging main",
            context="after CI passes",
            origin="release retro",
            triggers=("release", "tag"),
            depends_on=("ci-green",),
            level="advanced",
            update="release-process",
            parent=("shipping", "git"),
            scope="global",
            roles=("backend",),
        ),
        Candidate(
            type="knowledge",
            text="The staging host is bluebird",
            scope="global",
            roles=("backend",),
        ),
    ]


@pytest.mark.parametrize(
    ("lines", "detail"),
    [
        (
            "TYPE: rule | TEXT: ok\n\nTYPE: rule | TEXT: x | COLOR: red",
            f"line 3: expected FIELD: value with FIELD in {FIELDS}",
        ),
        (
            "TYPE: rule | TEXT: ok\nTYPE: rule | TEXT: x | just words",
            f"line 2: expected FIELD: value with FIELD in {FIELDS}",
        ),
        (
            "TYPE: rule | TEXT: ok\nTYPE: lesson | TEXT: x",
            "line 2: TYPE must be rule, skill, workflow or knowledge",
        ),
        ("# comment\nTEXT: no type", "line 2: TYPE must be rule, skill, workflow or knowledge"),
        ("TYPE: rule | TEXT: ok\nTYPE: rule", "line 2: TEXT is required"),
        ("TYPE: rule | TEXT:   ", "line 1: TEXT is required"),
        (
            "\n# only a comment\n",
            "no candidates: write one 'TYPE: ... | TEXT: ...' line per memory",
        ),
    ],
)
def test_a_bad_candidate_line_is_refused_with_its_line_number(lines: str, detail: str) -> None:
    with pytest.raises(CandidateError) as refused:
        parse_candidate_lines(lines)

    assert refused.value.detail == detail


# --- secrets ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("candidate", "kind"),
    [
        (Candidate("knowledge", f"The CI token is {github_token()}"), "github_token"),
        (
            Candidate("knowledge", "Deploy key", context=f"key {aws_access_key_id()}"),
            "aws_access_key_id",
        ),
        (Candidate("rule", "Post to slack", origin=f"bot {slack_bot_token()}"), "slack_token"),
    ],
)
def test_a_candidate_with_a_secret_is_refused_before_any_preview_naming_only_its_kind(
    memory: ProjectMemory, layout: Layout, candidate: Candidate, kind: str
) -> None:
    secret = next(
        word
        for text in (candidate.text, candidate.context, candidate.origin)
        for word in text.split()
        if len(word) >= 20
    )
    harmless = Candidate("knowledge", "The staging host is bluebird")

    with pytest.raises(SecretRefused) as refused:
        memory.propose([harmless, candidate], "workspace")

    assert refused.value.code == "SECRET_REFUSED"
    assert refused.value.detail == f"candidate 2 holds credential-like content ({kind})"
    assert secret not in str(refused.value)
    assert secret not in refused.value.message
    assert md_files(layout) == []
    assert not layout.pending.exists()


# --- writing (the save-session --force path) ------------------------------------------------------


def test_force_writes_adds_and_updates_and_defers_duplicates_and_supersedes_with_a_hint(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")
    write_memory_file(layout, "use-tabs", "rule", "Indent with tabs")
    lines = (
        "TYPE: rule | TEXT: Run unit tests before every push\n"
        "TYPE: rule | TEXT: Use tabs, width 4\n"
        "TYPE: rule | TEXT: Indent with four spaces | UPDATE: use-tabs\n"
        "TYPE: rule | TEXT: indent with TABS\n"
        "TYPE: knowledge | TEXT: The staging host is bluebird\n"
    )
    proposal = memory.propose(parse_candidate_lines(lines), "workspace")
    before = {name: (layout.base / name).read_text() for name in md_files(layout)}

    outcome = memory.write(proposal, [1, 2, 4, 5], human_approved=False)

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [
            {
                "number": 2,
                "verdict": "ADD",
                "id": "use-tabs-width-4",
                "file": "rules/use-tabs-width-4.md",
            },
            {
                "number": 5,
                "verdict": "ADD",
                "id": "the-staging-host-is-bluebird",
                "file": "knowledge/the-staging-host-is-bluebird.md",
            },
        ],
        "deferred": [
            {
                "number": 1,
                "verdict": "SUPERSEDE unit-tests-first",
                "reason": "related",
                "hint": "`engram load --id unit-tests-first`, then propose it with"
                " UPDATE: unit-tests-first (or approve the SUPERSEDE through engram_commit)",
            },
            {
                "number": 4,
                "verdict": "NOOP duplicate of use-tabs",
                "reason": "duplicate",
                "hint": "`engram load --id use-tabs` shows the memory that says it",
            },
        ],
    }
    assert {name: (layout.base / name).read_text() for name in before} == before
    assert md_files(layout) == [
        "knowledge/the-staging-host-is-bluebird.md",
        "rules/unit-tests-first.md",
        "rules/use-tabs-width-4.md",
        "rules/use-tabs.md",
    ]


def test_an_update_rewrites_the_content_keeps_id_and_title_and_bumps_the_revision(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "use-tabs", "rule", "Indent with tabs", fields="revision: 3\n")
    proposal = memory.propose(
        parse_candidate_lines("TYPE: rule | TEXT: Indent with tabs of width 4 | UPDATE: use-tabs"),
        "workspace",
    )

    outcome = memory.write(proposal, [1], human_approved=False)

    assert outcome.written == [
        {"number": 1, "verdict": "UPDATE use-tabs", "id": "use-tabs", "file": "rules/use-tabs.md"}
    ]
    assert memory.load(memory_id="use-tabs").packed == (
        "## Rule: Use tabs [use-tabs]\n- Indent with tabs of width 4\n"
    )
    updated = memory.index.memory("use-tabs")
    assert updated is not None
    assert updated.revision == 4
    assert memory.verify().files == [
        {"scope": "workspace", "path": "rules/use-tabs.md", "status": "ok"}
    ]


@pytest.mark.parametrize(
    "lines",
    [
        "TYPE: rule | TEXT: Use C++ style\nTYPE: rule | TEXT: Use C style",
        "TYPE: rule | TEXT: Deploy on Fridays is forbidden\n"
        "TYPE: knowledge | TEXT: Deploy on Fridays is forbidden",
    ],
    ids=["same-folder", "different-folders"],
)
def test_two_candidates_with_the_same_id_never_both_get_written(
    memory: ProjectMemory, lines: str
) -> None:
    proposal = memory.propose(parse_candidate_lines(lines), "workspace")

    outcome = memory.write(proposal, [1, 2], human_approved=False)

    ids = [entry["id"] for entry in outcome.written]
    assert len(ids) == len(set(ids))
    assert memory.problems() == []


# --- what a write may replace ---------------------------------------------------------


def test_an_add_never_overwrites_a_file_that_is_there(
    memory: ProjectMemory, layout: Layout
) -> None:
    broken = layout.folder("rules") / "keep-the-changelog-current.md"
    broken.write_text("not a memory file\n")
    proposal = memory.propose([Candidate("rule", "Keep the changelog current")], "workspace")
    outcome = memory.write(proposal, [1], human_approved=True)
    assert outcome.written == []
    assert [entry["reason"] for entry in outcome.deferred] == [
        "a file with this id exists and is not a valid memory"
    ]
    assert broken.read_text() == "not a memory file\n"


def test_a_note_cannot_be_updated_into_a_durable_memory(memory: ProjectMemory) -> None:
    note = memory.note("The cache warms slowly", "", "knowledge", "workspace")
    memory.write_note(note)
    with pytest.raises(CandidateError, match="engram promote"):
        memory.propose([Candidate("knowledge", "Warm it first", update=note.id)], "workspace")
