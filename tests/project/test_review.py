"""What the review console asks of project memory: the proposals waiting (by id, never
by token) with who proposed them, a person's approval (whole or of some candidates) or
decline bound to the proposal's digest and spent once, what each approval writes file by
file, each file's health from the index, the search receipt of each channel's rank, and
which of a question's words each memory holds."""

from __future__ import annotations

import json

import pytest

from engram.canonical import digest
from engram.project.approvals import (
    ApprovalDeclined,
    ApprovalError,
    ApprovalTampered,
    Proposer,
)
from engram.project.layout import Layout
from engram.project.proposals import CandidateError
from engram.project.workspace import ProjectMemory
from tests.project.conftest import write_memory_file
from tests.project.test_approvals import AGENT, TWO, md_files, propose

THREE = TWO + "TYPE: skill | TEXT: Profile slow tests with pytest durations\n"


def test_waiting_lists_a_proposal_by_the_hash_of_its_token_with_its_digest(
    memory: ProjectMemory,
) -> None:
    import hashlib

    token = propose(memory)

    [waiting] = memory.proposals().waiting()

    assert waiting.proposal_id == hashlib.sha256(token.encode()).hexdigest()
    assert waiting.digest.startswith("sha256:")
    assert [c["text"] for c in waiting.pending.candidates] == [
        "Use tabs",
        "The staging host is bluebird",
    ]
    assert waiting.expires_ms - waiting.created_ms == 30 * 60 * 1000


def test_approving_in_review_writes_every_candidate_and_spends_the_token(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory)
    [waiting] = memory.proposals().waiting()

    outcome = memory.review(waiting.proposal_id, waiting.digest, approve="all")

    assert outcome is not None
    assert [entry["verdict"] for entry in outcome.written] == ["ADD", "ADD"]
    assert md_files(layout) == [
        "knowledge/the-staging-host-is-bluebird.md",
        "rules/use-tabs.md",
    ]
    assert memory.proposals().waiting() == []
    with pytest.raises(ApprovalError) as again:
        memory.review(waiting.proposal_id, waiting.digest, approve="all")
    assert again.value.detail == "approval_token was already used"
    with pytest.raises(ApprovalError):
        memory.commit(token, "all")


def test_waiting_says_who_proposed(memory: ProjectMemory) -> None:
    propose(memory)

    [waiting] = memory.proposals().waiting()

    assert waiting.proposer == AGENT


def test_approving_some_candidates_writes_only_those_and_finishes_the_proposal(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory, THREE)
    [waiting] = memory.proposals().waiting()

    outcome = memory.review(waiting.proposal_id, waiting.digest, approve=[1, 3])

    assert outcome is not None
    assert (outcome.written, outcome.deferred) == (
        [
            {"number": 1, "verdict": "ADD", "id": "use-tabs", "file": "rules/use-tabs.md"},
            {
                "number": 3,
                "verdict": "ADD",
                "id": "profile-slow-tests-with-pytest-durations",
                "file": "skills/profile-slow-tests-with-pytest-durations.md",
            },
        ],
        [],
    )
    assert md_files(layout) == [
        "rules/use-tabs.md",
        "skills/profile-slow-tests-with-pytest-durations.md",
    ]
    assert memory.proposals().waiting() == []
    with pytest.raises(ApprovalError) as spent:
        memory.commit(token, [2])
    assert spent.value.detail == "approval_token was already used"


def test_approving_a_number_the_proposal_does_not_have_is_refused_and_spends_nothing(
    memory: ProjectMemory, layout: Layout
) -> None:
    propose(memory)
    [waiting] = memory.proposals().waiting()

    with pytest.raises(CandidateError) as refused:
        memory.review(waiting.proposal_id, waiting.digest, approve=[2, 3])

    assert refused.value.detail == "approve numbers must be between 1 and 2"
    assert md_files(layout) == []
    assert memory.proposals().waiting() == [waiting]


def test_a_proposal_from_before_proposers_were_recorded_is_listed_and_approved(
    memory: ProjectMemory, layout: Layout
) -> None:
    propose(memory)
    stored = json.loads(layout.pending.read_text())
    [entry] = stored["proposals"].values()
    del entry["proposer"]
    covered = ("workspace", "kind", "scope", "candidates", "verdicts", "query_level")
    entry["candidates_digest"] = digest("proposal", {key: entry[key] for key in covered})
    layout.pending.write_text(json.dumps(stored))

    [waiting] = memory.proposals().waiting()
    outcome = memory.review(waiting.proposal_id, waiting.digest, approve="all")

    assert waiting.proposer == Proposer()
    assert not waiting.proposer.known
    assert outcome is not None
    assert len(outcome.written) == 2


def test_an_edited_proposer_fails_the_integrity_check(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory)
    layout.pending.write_text(layout.pending.read_text().replace("agent-7", "the-owner"))

    assert memory.proposals().waiting() == []
    with pytest.raises(ApprovalTampered):
        memory.commit(token, "all")
    assert md_files(layout) == []


def test_declining_in_review_writes_nothing_and_the_agents_commit_is_told_why(
    memory: ProjectMemory, layout: Layout
) -> None:
    token = propose(memory)
    [waiting] = memory.proposals().waiting()

    assert memory.review(waiting.proposal_id, waiting.digest, approve=[]) is None

    assert md_files(layout) == []
    assert memory.proposals().waiting() == []
    with pytest.raises(ApprovalDeclined):
        memory.commit(token, "all")


def test_a_review_of_another_digest_is_refused_and_spends_nothing(
    memory: ProjectMemory, layout: Layout
) -> None:
    propose(memory)
    [waiting] = memory.proposals().waiting()

    with pytest.raises(ApprovalTampered) as changed:
        memory.review(waiting.proposal_id, "sha256:" + "0" * 64, approve="all")

    assert changed.value.detail == "the proposal changed since it was shown; reload the page"
    assert md_files(layout) == []
    assert memory.review(waiting.proposal_id, waiting.digest, approve="all") is not None


def test_an_edited_proposal_is_not_listed_as_waiting(memory: ProjectMemory, layout: Layout) -> None:
    propose(memory)
    layout.pending.write_text(layout.pending.read_text().replace("Use tabs", "Use spaces"))

    assert memory.proposals().waiting() == []


def test_health_compares_the_indexed_hash_with_the_recorded_one(
    memory: ProjectMemory, layout: Layout
) -> None:
    memory.commit(propose(memory, TWO), "all")
    write_memory_file(layout, "by-hand", content="Written outside engram.")
    edited = layout.folder("rules") / "use-tabs.md"
    edited.write_text(edited.read_text() + "\nAn edit.\n")

    assert memory.health() == {
        "knowledge/by-hand.md": ["missing hash"],
        "knowledge/the-staging-host-is-bluebird.md": [],
        "rules/use-tabs.md": ["hash mismatch"],
    }


def test_search_explains_each_channels_rank_and_the_bm25_score(memory: ProjectMemory) -> None:
    memory.commit(propose(memory, TWO), "all")

    explained = memory.search("staging host", 5, explain=True).entries
    plain = memory.search("staging host", 5).entries

    assert [entry["id"] for entry in explained] == ["the-staging-host-is-bluebird"]
    assert explained[0]["ranks"] == {"lexical": 1}
    assert explained[0]["bm25"] == explained[0]["score"]
    assert plain == [
        {key: value for key, value in explained[0].items() if key not in ("ranks", "bm25", "parts")}
    ]


@pytest.mark.parametrize("watch", [True, False], ids=["inotify", "scan"])
def test_a_server_sees_a_memory_another_process_wrote_into_the_shared_index(
    layout: Layout, watch: bool
) -> None:
    from engram.compose import open_project

    server = open_project(layout.root, watch=watch)
    other = open_project(layout.root)
    try:
        assert server.memories() == []
        other.commit(propose(other, TWO), "all")  # writes the files and the shared index

        assert sorted(m.id for m in server.memories()) == [
            "the-staging-host-is-bluebird",
            "use-tabs",
        ]
        assert [e["id"] for e in server.search("staging host", 5).entries] == [
            "the-staging-host-is-bluebird"
        ]
    finally:
        other.close()
        server.close()


@pytest.mark.parametrize("watch", [True, False], ids=["inotify", "scan"])
def test_calls_that_change_nothing_keep_what_the_server_cached(layout: Layout, watch: bool) -> None:
    from engram.compose import open_project

    server = open_project(layout.root, watch=watch)
    try:
        server.commit(propose(server, TWO), "all")
        server.memories()
        cached = server.catalog.version

        for _ in range(3):
            server.memories()
            server.search("staging host", 5)

        assert server.catalog.version == cached
    finally:
        server.close()


def test_planned_shows_each_candidates_whole_file_and_what_it_changes(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(layout, "unit-tests-first", "rule", "Run unit tests before push")
    memory.commit(propose(memory, "TYPE: knowledge | TEXT: The staging host is bluebird\n"), "all")
    propose(
        memory,
        "TYPE: rule | TEXT: Run unit tests before every push | TRIGGERS: push, release\n"
        "TYPE: knowledge | TEXT: The staging host is bluebird\n"
        "TYPE: rule | TEXT: Sign every release tag | CONTEXT: the key is in the vault\n",
    )
    [waiting] = memory.proposals().waiting()

    supersede, noop, add = memory.planned(waiting.pending)

    old = (layout.folder("rules") / "unit-tests-first.md").read_text()
    assert (supersede.memory_id, supersede.marks, supersede.before) == (
        "run-unit-tests-before-every-push",
        "unit-tests-first",
        old,
    )
    assert [(plan.file, plan.old_file) for plan in (supersede, noop, add)] == [
        ("rules/run-unit-tests-before-every-push.md", "rules/unit-tests-first.md"),
        ("", "knowledge/the-staging-host-is-bluebird.md"),
        ("rules/sign-every-release-tag.md", ""),
    ]
    assert [plan.memory.id for plan in (supersede, noop, add)] == [
        "run-unit-tests-before-every-push",
        "the-staging-host-is-bluebird",
        "sign-every-release-tag",
    ]
    assert supersede.after is not None
    assert "supersedes: [unit-tests-first]" in supersede.after
    assert "triggers: [push, release]" in supersede.after
    assert (noop.memory_id, noop.after) == ("the-staging-host-is-bluebird", None)
    assert add.before is None
    assert add.after is not None
    assert "- Context: the key is in the vault" in add.after


def test_planned_names_the_file_an_update_replaces_and_its_next_revision(
    memory: ProjectMemory,
) -> None:
    memory.commit(propose(memory, "TYPE: rule | TEXT: Deploy on Tuesdays\n"), "all")
    propose(memory, "TYPE: rule | TEXT: Deploy on Wednesdays | UPDATE: deploy-on-tuesdays\n")
    [waiting] = memory.proposals().waiting()

    [update] = memory.planned(waiting.pending)

    assert (update.memory_id, update.file, update.old_file, update.memory.revision) == (
        "deploy-on-tuesdays",
        "rules/deploy-on-tuesdays.md",
        "rules/deploy-on-tuesdays.md",
        2,
    )


def test_shared_words_says_which_part_of_each_memory_holds_each_word_of_the_question(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(
        layout,
        "retry-policy",
        content="Payment retries back off exponentially.",
        title="Retry policy",
        tags=("payments",),
    )

    shared = memory.shared_words("How should the RetryPolicy treat payments?", ["retry-policy"])

    assert shared == {
        "retry-policy": [
            ("retry", ("title", "text")),
            ("policy", ("title",)),
            ("treat", ()),
            ("payments", ("tags", "text")),
        ]
    }
