"""Approval tokens and engram_commit: randomness, hash-only storage, single use, expiry,
workspace binding, tamper and decline detection, numbered approval, and SUPERSEDE
applied only while the recomputed verdict still matches."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

import pytest

from engram.project.approvals import (
    TOKEN_TTL_MS,
    ApprovalDeclined,
    ApprovalError,
    ApprovalTampered,
    Pending,
    Proposals,
    Proposer,
)
from engram.project.layout import Layout
from engram.project.proposals import CandidateError, parse_candidate_lines
from engram.project.workspace import ProjectMemory
from tests.project.conftest import write_memory_file

TWO = "TYPE: rule | TEXT: Use tabs\nTYPE: knowledge | TEXT: The staging host is bluebird\n"
#: Who the tests' proposals come from, as engram-mcp records a client.
AGENT = Proposer("test-client", "Test Client", "1.0", "ses_0123456789abcdef", "agent-7")


def propose(memory: ProjectMemory, lines: str = TWO) -> str:
    """Propose candidates and return the approval token (as engram_save does)."""
    proposal = memory.propose(parse_candidate_lines(lines), "workspace")
    return memory.proposals().create(proposal.pending(), by=AGENT)


def md_files(layout: Layout) -> list[str]:
    return sorted(p.relative_to(layout.base).as_posix() for p in layout.base.rglob("*.md"))


def pending_file(layout: Layout) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(layout.pending.read_text())
    return data


class Clock:
    def __init__(self, now: int = 1_800_000_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


# --- the token ------------------------------------------------------------------------------


def test_a_token_is_32_url_safe_characters_of_192_random_bits(memory: ProjectMemory) -> None:
    tokens = {propose(memory) for _ in range(20)}

    assert len(tokens) == 20
    # secrets.token_urlsafe(24): 24 random bytes as 32 base64url characters.
    assert all(re.fullmatch(r"[A-Za-z0-9_-]{32}", token) for token in tokens)


def test_only_the_sha256_of_the_token_is_stored_in_pending_approvals(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory)

    text = layout.pending.read_text()
    assert token not in text
    assert list(pending_file(layout)["proposals"]) == [hashlib.sha256(token.encode()).hexdigest()]


def test_a_token_works_once(memory: ProjectMemory, layout: Layout) -> None:
    token = propose(memory)
    memory.commit(token, "all")

    with pytest.raises(ApprovalError) as refused:
        memory.commit(token, "all")

    assert refused.value.code == "APPROVAL_INVALID"
    assert md_files(layout) == [
        "knowledge/the-staging-host-is-bluebird.md",
        "rules/use-tabs.md",
    ]


def test_an_unknown_token_is_refused(memory: ProjectMemory) -> None:
    propose(memory)

    with pytest.raises(ApprovalError) as refused:
        memory.commit("A" * 32, "all")

    assert refused.value.code == "APPROVAL_INVALID"


def _pending() -> Pending:
    return Pending(
        "save",
        [{"type": "rule", "text": "Use tabs"}],
        [{"kind": "ADD", "target": ""}],
        "workspace",
    )


def test_a_token_works_until_30_minutes_have_passed(layout: Layout) -> None:
    clock = Clock()
    proposals = Proposals(layout.pending, str(layout.root), clock=clock)
    token = proposals.create(_pending(), by=AGENT)

    clock.now += TOKEN_TTL_MS - 1

    assert proposals.take(token) == _pending()


def test_a_token_expires_after_30_minutes(layout: Layout) -> None:
    clock = Clock()
    proposals = Proposals(layout.pending, str(layout.root), clock=clock)
    token = proposals.create(_pending(), by=AGENT)

    clock.now += TOKEN_TTL_MS + 1

    with pytest.raises(ApprovalError) as refused:
        proposals.take(token)
    assert refused.value.code == "APPROVAL_INVALID"


def test_a_token_is_refused_in_another_workspace_and_still_works_in_its_own(
    layout: Layout,
) -> None:
    token = Proposals(layout.pending, str(layout.root)).create(_pending(), by=AGENT)

    with pytest.raises(ApprovalError) as refused:
        Proposals(layout.pending, str(layout.root / "elsewhere")).take(token)

    assert refused.value.code == "APPROVAL_INVALID"
    assert refused.value.detail == "approval_token belongs to another workspace"
    assert Proposals(layout.pending, str(layout.root)).take(token) == _pending()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("text", "Use spaces"),
        ("type", "knowledge"),
        ("update", "use-tabs"),
    ],
)
def test_editing_a_pending_candidate_makes_commit_fail_and_write_nothing(
    memory: ProjectMemory, layout: Layout, field: str, value: str
) -> None:
    token = propose(memory)
    data = pending_file(layout)
    entry = next(iter(data["proposals"].values()))
    entry["candidates"][0][field] = value
    layout.pending.write_text(json.dumps(data))

    with pytest.raises(ApprovalTampered) as refused:
        memory.commit(token, "all")

    assert refused.value.code == "APPROVAL_TAMPERED"
    assert md_files(layout) == []


def test_editing_a_frozen_verdict_makes_commit_fail(memory: ProjectMemory, layout: Layout) -> None:
    token = propose(memory)
    data = pending_file(layout)
    next(iter(data["proposals"].values()))["verdicts"][0] = {"kind": "UPDATE", "target": "x"}
    layout.pending.write_text(json.dumps(data))

    with pytest.raises(ApprovalTampered):
        memory.commit(token, "all")
    assert md_files(layout) == []


def test_a_proposal_declined_in_the_dialog_fails_commit_with_the_decline_message(
    memory: ProjectMemory, layout: Layout
) -> None:
    proposal = memory.propose(parse_candidate_lines(TWO), "workspace")
    token = memory.proposals().create(proposal.pending(), by=AGENT, state="declined")

    with pytest.raises(ApprovalDeclined) as refused:
        memory.commit(token, "all")

    assert refused.value.code == "APPROVAL_DECLINED"
    assert refused.value.detail == "approval was declined in the approval dialog"
    assert refused.value.message == "approval was declined in the approval dialog"
    assert md_files(layout) == []


# --- approve ------------------------------------------------------------------------------------


def test_approving_number_2_writes_exactly_candidate_2(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory)

    outcome = memory.commit(token, [2])

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [
            {
                "number": 2,
                "verdict": "ADD",
                "id": "the-staging-host-is-bluebird",
                "file": "knowledge/the-staging-host-is-bluebird.md",
            }
        ],
        "deferred": [],
    }
    assert md_files(layout) == ["knowledge/the-staging-host-is-bluebird.md"]


def test_approving_all_writes_every_candidate_and_records_their_hashes(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory)

    outcome = memory.commit(token, "all")

    assert [entry["number"] for entry in outcome.written] == [1, 2]
    assert [entry["status"] for entry in memory.verify().files] == ["ok", "ok"]


@pytest.mark.parametrize("approve", [[0], [3], [1, 3], [-1]])
def test_numbers_outside_1_to_n_are_refused_and_write_nothing(
    memory: ProjectMemory, layout: Layout, approve: list[int]
) -> None:
    token = propose(memory)

    with pytest.raises(CandidateError) as refused:
        memory.commit(token, approve)

    assert refused.value.detail == "approve numbers must be between 1 and 2"
    assert md_files(layout) == []


def test_a_refused_approve_list_leaves_the_token_usable(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory)
    with pytest.raises(CandidateError):
        memory.commit(token, [3])

    outcome = memory.commit(token, [1])

    assert [entry["id"] for entry in outcome.written] == ["use-tabs"]


# --- SUPERSEDE at commit time --------------------------------------------------------------------

SUPERSEDING = "TYPE: rule | TEXT: Run unit tests before every push\n"


def test_commit_applies_a_supersede_whose_verdict_still_matches(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")
    token = propose(memory, SUPERSEDING)

    outcome = memory.commit(token, "all")

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [
            {
                "number": 1,
                "verdict": "SUPERSEDE unit-tests-first",
                "id": "run-unit-tests-before-every-push",
                "file": "rules/run-unit-tests-before-every-push.md",
            }
        ],
        "deferred": [],
    }
    old = memory.index.memory("unit-tests-first")
    new = memory.index.memory("run-unit-tests-before-every-push")
    assert old is not None
    assert new is not None
    assert (old.lifecycle, old.get("superseded_by")) == (
        "superseded",
        "run-unit-tests-before-every-push",
    )
    assert new.items("supersedes") == ["unit-tests-first"]
    assert memory.load("unit tests push").selected_keys == ["run-unit-tests-before-every-push"]


def test_commit_defers_a_supersede_whose_target_became_a_duplicate(
    memory: ProjectMemory, layout: Layout
) -> None:
    target = write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")
    token = propose(memory, SUPERSEDING)
    write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before every push")
    edited = target.read_text()

    outcome = memory.commit(token, "all")

    assert {"written": outcome.written, "deferred": outcome.deferred} == {
        "written": [],
        "deferred": [
            {
                "number": 1,
                "verdict": "NOOP duplicate of unit-tests-first",
                "reason": "duplicate",
                "hint": "`engram load --id unit-tests-first` shows the memory that says it",
            }
        ],
    }
    assert md_files(layout) == ["rules/unit-tests-first.md"]
    assert target.read_text() == edited


def test_commit_defers_a_supersede_whose_target_no_longer_matches(
    memory: ProjectMemory, layout: Layout
) -> None:
    target = write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")
    token = propose(memory, SUPERSEDING)
    write_memory_file(layout, "unit-tests-first", "rule", "Format SQL files with sqlfluff")
    edited = target.read_text()

    outcome = memory.commit(token, "all")

    assert outcome.written == []
    assert [entry["number"] for entry in outcome.deferred] == [1]
    assert md_files(layout) == ["rules/unit-tests-first.md"]
    assert target.read_text() == edited


def test_an_unreadable_pending_approvals_file_says_it_can_be_deleted(
    memory: ProjectMemory, layout: Layout
) -> None:
    layout.pending.write_text("{ not json")

    with pytest.raises(ApprovalTampered) as refused:
        memory.proposals().take("x" * 32, lambda pending: None)

    assert refused.value.detail == (
        f"{layout.pending} does not parse: delete it (it holds only proposals not yet"
        " approved, which the agent can propose again; no memory is lost)"
    )


def test_a_write_after_a_dialog_sees_the_file_as_it_is_now(
    memory: ProjectMemory, layout: Layout
) -> None:
    """Within one tool call the index is refreshed once, but a write judges the files as
    they are when it writes: a section added by hand while the dialog waited survives."""
    first = memory.propose(parse_candidate_lines("TYPE: rule | TEXT: Run the tests"), "workspace")
    memory.write(first, [1], human_approved=True)
    path = layout.folder("rules") / "run-the-tests.md"
    with memory.call():
        proposal = memory.propose(
            parse_candidate_lines("TYPE: rule | TEXT: Run the tests twice | UPDATE: run-the-tests"),
            "workspace",
        )
        path.write_text(path.read_text() + "\n## Notes\n- written while the dialog waited\n")
        memory.write(proposal, [1], human_approved=True)

    text = path.read_text()
    assert "- Run the tests twice\n" in text
    assert "## Notes\n- written while the dialog waited\n" in text
