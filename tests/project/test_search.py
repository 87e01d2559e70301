"""engram_search and engram_route: BM25 ranking (better than upstream's word overlap on
a labelled set), entry shapes, and route entries in load order."""

from __future__ import annotations

import re
from typing import Any

from engram.project.layout import Layout
from engram.project.memory_file import Memory
from engram.project.routing import replaced_by, replacements_first
from engram.project.workspace import ProjectMemory
from tests.project.conftest import memory_text, without_confidence_floor, write_memory_file

#: (id, type, title, content): a small project's memories.
MEMORIES = [
    ("deploy-with-blue-green", "knowledge", "Deploy with blue green",
     "Deployments use blue green releases on the production cluster"),
    ("database-migrations", "knowledge", "Database migrations",
     "Database migrations are written with alembic and run before each release"),
    ("run-tests-before-commit", "rule", "Run tests before commit",
     "Run the test suite with pytest before every commit"),
    ("structured-logging", "knowledge", "Structured logging",
     "Logging goes through structlog with JSON output in production"),
    ("redis-cache", "knowledge", "Redis cache",
     "The cache is redis and its keys expire after one hour"),
    ("api-token-rotation", "knowledge", "API token rotation",
     "API tokens are rotated every ninety days by the security team"),
    ("frontend-stack", "knowledge", "Frontend stack",
     "The frontend is a React app built with vite"),
    ("continuous-integration", "knowledge", "Continuous integration",
     "CI runs on GitHub Actions and caches the pip downloads"),
    ("two-approvals-per-pull-request", "rule", "Two approvals per pull request",
     "Every pull request needs two approvals before it is merged"),
    ("feature-flags", "knowledge", "Feature flags",
     "Feature flags live in the flags service and default to off"),
    ("error-monitoring", "knowledge", "Error monitoring",
     "Exceptions are reported to Sentry with the release version"),
    ("python-formatting", "rule", "Python formatting",
     "Format Python with ruff format at a line length of 100"),
    ("nightly-backups", "knowledge", "Nightly backups",
     "The database is backed up every night to object storage"),
    ("onboarding-guide", "knowledge", "Onboarding guide",
     "New developers start with the guide in the docs folder\n"
     "It is what the team keeps up to date for people who are new to the project"
     " and it says what to read first"),
    ("release-process", "skill", "Release process",
     "Cut a release by tagging the main branch and pushing the tag"),
]  # fmt: skip

#: (query, the one relevant memory): how a developer would ask.
LABELLED = [
    ("deploying to production", "deploy-with-blue-green"),
    ("what is the process to release the project", "release-process"),
    ("who has to approve merging a pull request", "two-approvals-per-pull-request"),
    ("how long do cached keys live", "redis-cache"),
    ("where do exceptions get reported", "error-monitoring"),
    ("rotating the api tokens", "api-token-rotation"),
    ("is the database backed up", "nightly-backups"),
    ("what should a new developer read first", "onboarding-guide"),
]


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.lower()))


def word_overlap(query: str, documents: dict[str, str]) -> list[str]:
    """Upstream's ranking: how many distinct query words a memory contains, ties by id."""
    wanted = _words(query)
    scored = [(len(wanted & _words(text)), memory_id) for memory_id, text in documents.items()]
    return [memory_id for score, memory_id in sorted(scored, key=lambda s: (-s[0], s[1])) if score]


def reciprocal_rank(ranking: list[str], relevant: str) -> float:
    return 1 / (ranking.index(relevant) + 1) if relevant in ranking else 0.0


def _write_project(layout: Layout) -> dict[str, str]:
    documents = {}
    for memory_id, kind, title, content in MEMORIES:
        write_memory_file(layout, memory_id, kind, content, title=title)
        documents[memory_id] = memory_text(memory_id, kind, content, title=title).split("---")[2]
    return documents


def test_bm25_ranks_the_relevant_memory_better_than_word_overlap(
    memory: ProjectMemory, layout: Layout
) -> None:
    documents = _write_project(layout)

    bm25 = {query: [e["id"] for e in memory.search(query, 15).entries] for query, _ in LABELLED}
    overlap = {query: word_overlap(query, documents) for query, _ in LABELLED}

    assert [bm25[query][0] for query, _ in LABELLED] == [relevant for _, relevant in LABELLED]
    mrr_bm25 = sum(reciprocal_rank(bm25[q], r) for q, r in LABELLED) / len(LABELLED)
    mrr_overlap = sum(reciprocal_rank(overlap[q], r) for q, r in LABELLED) / len(LABELLED)
    assert mrr_bm25 == 1.0
    assert mrr_overlap == 0.78125
    assert mrr_bm25 > mrr_overlap


def test_search_entries_carry_id_type_scope_score_and_title_best_first(
    memory: ProjectMemory, layout: Layout
) -> None:
    _write_project(layout)

    entries = memory.search("database release", 3).entries

    # Both words, then "release" in a title and twice in the text (four of the fifteen
    # memories hold it), then "database" once (two hold it).
    assert [(e["id"], e["type"], e["scope"]) for e in entries] == [
        ("database-migrations", "knowledge", "workspace"),
        ("release-process", "skill", "workspace"),
        ("nightly-backups", "knowledge", "workspace"),
    ]
    assert [sorted(e) for e in entries] == [
        ["channels", "confidence", "id", "scope", "score", "title", "type"]
    ] * 3
    assert {tuple(e["channels"]) for e in entries} == {("lexical",)}
    assert entries[0]["title"] == "Database migrations"
    scores = [e["score"] for e in entries]
    assert all(isinstance(score, float) and score > 0 for score in scores)
    assert scores == sorted(scores, reverse=True)


def test_in_a_project_of_two_memories_a_word_both_hold_still_weighs(
    memory: ProjectMemory, layout: Layout
) -> None:
    write_memory_file(
        layout, "release-process", "skill", "Cut a release by tagging main", title="Release process"
    )
    write_memory_file(
        layout, "release-notes", "knowledge", "Release notes go in CHANGES", title="Release notes"
    )

    entries = memory.search("how do I cut a release", 5).entries

    # FTS5's own IDF weighs both words 1e-6 here (each is held by at least half of the
    # memories): the exact match scored 0.000002. Worked by hand: "cut" weighs ln 2 and
    # "releas" ln 1.2; each memory is 9 terms long (its heading and "content" in the
    # body) and holds "releas" 5 times weighted (title 3, body 2), the first "cut" once:
    # ln 2 + ln 1.2 * 5 * 2.2 / 6.2, then ln 1.2 * 5 * 2.2 / 6.2.
    assert [e["id"] for e in entries] == ["release-process", "release-notes"]
    assert [e["score"] for e in entries] == [1.016621, 0.323474]


def test_search_matches_word_forms_by_stemming(memory: ProjectMemory, layout: Layout) -> None:
    _write_project(layout)

    assert memory.search("deploying", 3).entries[0]["id"] == "deploy-with-blue-green"
    assert memory.search("rotating", 3).entries[0]["id"] == "api-token-rotation"


def test_search_of_text_without_words_or_with_fts_syntax_finds_nothing_and_never_fails(
    memory: ProjectMemory, layout: Layout
) -> None:
    _write_project(layout)

    assert memory.search("", 5).entries == []
    assert memory.search("  ?! -- ", 5).entries == []
    assert [e["id"] for e in memory.search('redis" OR NEAR(cache', 1).entries] == ["redis-cache"]


def test_a_superseded_memory_is_listed_after_the_memory_that_replaced_it(
    memory: ProjectMemory, layout: Layout
) -> None:
    _write_project(layout)
    write_memory_file(
        layout,
        "deploy-by-scp",
        content="Deploy by copying the build with scp to the production hosts and deploy",
        fields="lifecycle: superseded\nsuperseded_by: deploy-with-blue-green\n",
    )
    write_memory_file(
        layout,
        "deploy-by-ftp",
        content="Deploy by uploading the build over ftp to production and deploy again",
        fields="lifecycle: superseded\nsuperseded_by: not-in-the-index\n",
    )

    found = memory.search("deploy the build to production", 4)

    # By score: ftp, scp, blue green. Blue green replaced scp, so it comes before it; ftp's
    # replacement does not exist, so it stays where its score puts it.
    assert [(e["id"], e.get("superseded_by")) for e in found.entries] == [
        ("deploy-by-ftp", None),
        ("deploy-with-blue-green", None),
        ("deploy-by-scp", "deploy-with-blue-green"),
        ("structured-logging", None),
    ]
    scores = {e["id"]: e["score"] for e in found.entries}
    assert scores["deploy-by-scp"] > scores["deploy-with-blue-green"]  # each keeps its own
    assert "deploy-by-scp (knowledge): Deploy by scp [superseded by deploy-with-blue-green]" in (
        found.text()
    )
    # A smaller limit gives the first entries of a larger one: the replacement is looked
    # for past the limit.
    for limit in (1, 2, 3):
        entries = memory.search("deploy the build to production", limit).entries
        assert entries == found.entries[:limit]


def _memory(memory_id: str, replaced_by: str | None = None) -> Memory:
    fields: dict[str, Any] = {"created": "2026-01-01", "updated": "2026-01-01"}
    if replaced_by is not None:
        fields |= {"lifecycle": "superseded", "superseded_by": replaced_by}
    return Memory(memory_id, "knowledge", "workspace", memory_id, "", fields)


def test_replacements_come_first_along_a_chain_and_rings_stay_in_score_order() -> None:
    memories = {
        "a": _memory("a", "b"),  # a was replaced by b, b by c
        "b": _memory("b", "c"),
        "c": _memory("c"),
        "x": _memory("x", "y"),  # x, y and z replace one another in a ring
        "y": _memory("y", "z"),
        "z": _memory("z", "x"),
        "self": _memory("self", "self"),
        "lost": _memory("lost", "not-in-the-index"),
    }

    assert replacements_first(["a", "b", "c"], memories) == ["c", "b", "a"]
    assert replacements_first(["b", "a", "c"], memories) == ["c", "b", "a"]
    assert replacements_first(["a", "c"], memories) == ["a", "c"]  # b was not found
    assert replacements_first(["x", "y", "z"], memories) == ["x", "y", "z"]
    assert replacements_first(["z", "y", "x"], memories) == ["z", "y", "x"]
    assert replacements_first(["self", "lost", "c"], memories) == ["self", "lost", "c"]
    assert [replaced_by(m, memories) for m in ("a", "c", "x", "self", "lost")] == [
        "b",
        None,
        None,
        None,
        None,
    ]


def test_route_entries_are_in_load_order_not_sorted_by_score(
    memory: ProjectMemory, layout: Layout
) -> None:
    without_confidence_floor(layout)
    _write_project(layout)
    query = "format the database migrations before release"

    entries = memory.route_entries(query).entries

    # Rules first although "database-migrations" matches more; the rules that shared only
    # the stop words "the" and "before" with the task are not routed at all.
    assert [(e["id"], e["type"]) for e in entries] == [
        ("python-formatting", "rule"),
        ("database-migrations", "knowledge"),
        ("release-process", "skill"),
        ("nightly-backups", "knowledge"),
        ("error-monitoring", "knowledge"),
        ("deploy-with-blue-green", "knowledge"),
    ]
    assert all(sorted(e) == ["how", "id", "scope", "score", "type"] for e in entries)
    assert {(e["scope"], e["how"]) for e in entries} == {("workspace", "direct")}
    assert [e["id"] for e in entries] == memory.load(query).selected_keys
    assert [e["id"] for e in memory.search(query, 2).entries] == [
        "database-migrations",
        "python-formatting",
    ]
    assert entries[1]["score"] > entries[0]["score"]


def _write_large_project(layout: Layout) -> None:
    """2,101 memories: every filler holds "the", one in seven "build", one in ten "green"
    and another one in ten "blue"."""
    for number in range(2_100):
        extra = (" build" if number % 7 == 0 else "") + (" green" if number % 10 == 0 else "")
        extra += " blue" if number % 10 == 5 else ""
        write_memory_file(layout, f"filler-{number:04d}", content=f"the filler{number} text{extra}")
    write_memory_file(layout, "tarball-signing", content="the tarball is signed")


def test_in_a_large_index_common_words_count_only_when_nothing_rarer_matches(
    memory: ProjectMemory, layout: Layout
) -> None:
    _write_large_project(layout)

    # "build" is in 300 of 2,101 memories, more than 2%: left out while "tarball" matches.
    assert [e["id"] for e in memory.search("build the tarball", 5).entries] == ["tarball-signing"]
    # Only common words: the memories holding all of them.
    found = memory.search("green build", 500).entries
    assert sorted(e["id"] for e in found) == [f"filler-{n:04d}" for n in range(0, 2_100, 70)]
    # The rare word matches nothing: the memories holding all the common ones answer.
    found = memory.search("zebra build green", 500).entries
    assert sorted(e["id"] for e in found) == [f"filler-{n:04d}" for n in range(0, 2_100, 70)]
    # No memory holds them all either: the first common word of the query answers.
    found = memory.search("zebra green blue", 500).entries
    assert sorted(e["id"] for e in found) == [f"filler-{n:04d}" for n in range(0, 2_100, 10)]
    # Counts go through the index's stemmer: "builds" is as common as "build".
    assert [e["id"] for e in memory.search("builds the tarball", 5).entries] == ["tarball-signing"]


def test_each_entry_has_a_confidence_and_a_minimum_leaves_out_the_entries_under_it(
    memory: ProjectMemory, layout: Layout
) -> None:
    _write_project(layout)
    write_memory_file(layout, "deploy-helm", "knowledge", "Deploy with helm to the cluster")
    write_memory_file(layout, "deploy-notes", "knowledge", "Deploy notes of last year")

    every = memory.search("deploy with helm").entries
    sure = memory.search("deploy with helm", min_confidence=0.5).entries

    # The last hit scores above the second: its margin is its whole score (none follows).
    assert [(e["id"], e["confidence"]) for e in every] == [
        ("deploy-helm", 0.8123),
        ("deploy-notes", 0.0329),
        ("deploy-with-blue-green", 0.0773),
    ]
    assert [e["id"] for e in sure] == ["deploy-helm"]
    assert sure[0] == every[0]
