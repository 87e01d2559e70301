"""engram_load: the budget, load order, dependencies, visibility, the session query,
loading by id, tiered disclosure, explain, rule variants and determinism."""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from engram.compose import open_project
from engram.errors import ConfigError
from engram.project.layout import Layout, init_layout
from engram.project.packing import estimate_tokens
from engram.project.workspace import ProjectMemory
from tests.project.conftest import without_confidence_floor, write_config, write_memory_file

FILLER = {
    "editor-config": "Editors read the editorconfig file",
    "frontend-stack": "The frontend is a React app built with vite",
    "feature-flags": "Feature flags default to off",
    "nightly-backups": "The database is backed up every night",
    "error-monitoring": "Exceptions are reported to Sentry",
    "onboarding-guide": "New developers start with the onboarding guide",
}


def add_filler(layout: Layout) -> None:
    """Unrelated memories, so that a query word is rare enough for BM25 to weigh it."""
    for memory_id, content in FILLER.items():
        write_memory_file(layout, memory_id, "knowledge", content)


# --- the budget -------------------------------------------------------------------------

VOCABULARY = ("deploy", "database", "cache", "release", "lint", "auth")
PROSE = st.text(alphabet=st.sampled_from("abcdefghij klmnop éü中文🙂\n.,:-#*`"), max_size=400)
MEMORY = st.tuples(
    st.sampled_from(["rule", "skill", "knowledge"]),
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=4),
    PROSE,
    st.sampled_from([(), ("decision",), ("session-start",)]),
    st.integers(1, 30),  # how often the content repeats: bodies from a line to pages
    st.integers(1, 200),  # how often the title word repeats: cards that may not fit
)


@settings(
    max_examples=60,
    # The only function-scoped fixture is the autouse ENGRAM_GLOBAL_DIR one, which is
    # the same for every example; each example builds its own project directory.
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    memories=st.lists(MEMORY, min_size=1, max_size=10),
    # Small budgets half the time, so that cards and omissions are exercised too.
    budget=st.one_of(st.integers(200, 1_000), st.integers(200, 16_000)),
    query=st.sampled_from([*VOCABULARY, "deploy database cache", "current session"]),
    disclosure=st.sampled_from(["tiered", "cards"]),
    full=st.booleans(),
)
def test_a_load_never_exceeds_its_token_budget(
    memories: list[tuple[str, list[str], str, tuple[str, ...], int, int]],
    budget: int,
    query: str,
    disclosure: str,
    full: bool,
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        layout = init_layout(Path(directory))[0]
        for number, (kind, words, prose, tags, repeat, title_repeat) in enumerate(memories):
            content = ((" ".join(words) + " " + prose.replace("\n", " ")) * repeat).strip()
            title = " ".join([words[0]] * title_repeat)
            write_memory_file(layout, f"m{number}", kind, content, title=title, tags=tags)
        memory = open_project(layout.root)

        result = memory.load(query, budget_tokens=budget, disclosure=disclosure, full=full)
        memory.index.close()

    event(f"cards: {bool(result.card_ids)}, omitted: {bool(result.omitted_ids)}")
    assert estimate_tokens(result.packed) <= budget
    assert result.tokens <= budget
    assert result.budget_tokens == budget
    shown = [*result.body_keys, *result.card_ids, *result.omitted_ids]
    assert sorted(shown) == sorted(result.selected_keys)
    assert len(set(shown)) == len(shown)


def test_the_token_estimate_is_utf8_bytes_divided_by_four_rounded_up() -> None:
    assert [estimate_tokens(t) for t in ["", "a", "abcd", "abcde", "é", "中文", "🙂🙂"]] == [
        0,
        1,
        1,
        2,
        1,
        2,
        2,
    ]


# --- order ------------------------------------------------------------------------------


def test_rules_load_first_then_decisions_then_the_rest(
    memory: ProjectMemory, layout: Layout
) -> None:
    without_confidence_floor(layout)
    add_filler(layout)
    write_memory_file(layout, "deploy-checklist", "knowledge", "Deploy deploy deploy checklist")
    write_memory_file(layout, "deploy-script", "skill", "Run make deploy")
    write_memory_file(
        layout, "deploy-strategy", "knowledge", "We deploy blue green", tags=("decision",)
    )
    write_memory_file(layout, "deploy-from-main", "rule", "Deploy only from main")

    result = memory.load("deploy")

    assert result.selected_keys == [
        "deploy-from-main",
        "deploy-strategy",
        "deploy-checklist",
        "deploy-script",
    ]
    assert result.body_keys == result.selected_keys


def _dependency_chain(layout: Layout) -> None:
    add_filler(layout)
    write_memory_file(
        layout, "deploy-script", "skill", "Run make deploy", fields="depends_on: [staging-env]\n"
    )
    write_memory_file(
        layout,
        "staging-env",
        "knowledge",
        "Staging runs in the eu region",
        fields="depends_on: [cloud-account]\n",
    )
    write_memory_file(layout, "cloud-account", "knowledge", "The cloud account is acme-prod")


def test_dependencies_come_just_before_their_dependent_in_dependency_order(
    memory: ProjectMemory, layout: Layout
) -> None:
    _dependency_chain(layout)
    write_memory_file(layout, "deploy-from-main", "rule", "Deploy only from main")

    entries = memory.route_entries("deploy").entries

    assert [(e["id"], e["how"]) for e in entries] == [
        ("deploy-from-main", "direct"),
        ("cloud-account", "dependency"),
        ("staging-env", "dependency"),
        ("deploy-script", "direct"),
    ]
    assert memory.load("deploy").selected_keys == [e["id"] for e in entries]


def test_dependencies_are_added_only_within_max_memories(
    memory: ProjectMemory, layout: Layout
) -> None:
    add_filler(layout)
    write_memory_file(
        layout, "deploy-script", "skill", "Run make deploy", fields="depends_on: [staging-env]\n"
    )
    write_memory_file(layout, "staging-env", "knowledge", "Staging runs in the eu region")
    write_memory_file(layout, "deploy-from-main", "rule", "Deploy only from main")
    write_config(layout, json.dumps({"load": {"max_memories": 2}}))

    result = memory.load("deploy", explain=True)

    assert result.selected_keys == ["deploy-from-main", "deploy-script"]
    assert {"id": "staging-env", "chosen": False, "reason": "budget"} in result.explain

    write_config(layout, json.dumps({"load": {"max_memories": 3}}))
    assert memory.load("deploy").selected_keys == [
        "deploy-from-main",
        "staging-env",
        "deploy-script",
    ]


# --- visibility ----------------------------------------------------------------------------


def _role_memories(layout: Layout) -> None:
    add_filler(layout)
    write_memory_file(layout, "deploy-any", "knowledge", "Deploy with make")
    write_memory_file(
        layout, "deploy-backend", "knowledge", "Deploy with helm", fields="role: [backend]\n"
    )
    write_memory_file(
        layout, "deploy-both", "knowledge", "Deploy with care", fields="role: [backend, frontend]\n"
    )


@pytest.mark.parametrize(
    ("roles", "visible"),
    [
        ([], ["deploy-any", "deploy-backend", "deploy-both"]),
        (["frontend"], ["deploy-any", "deploy-both"]),
        (["backend"], ["deploy-any", "deploy-backend", "deploy-both"]),
    ],
)
def test_a_memory_naming_roles_is_hidden_when_the_configured_roles_name_none_of_them(
    memory: ProjectMemory, layout: Layout, roles: list[str], visible: list[str]
) -> None:
    without_confidence_floor(layout)
    _role_memories(layout)
    memory.set_roles(roles)

    result = memory.load("deploy", explain=True)

    assert sorted(result.selected_keys) == visible
    hidden = [e for e in result.explain if not e["chosen"]]
    assert hidden == (
        [{"id": "deploy-backend", "chosen": False, "reason": "profile"}]
        if roles == ["frontend"]
        else []
    )


def test_archived_superseded_and_low_confidence_memories_are_hidden(
    memory: ProjectMemory, layout: Layout
) -> None:
    without_confidence_floor(layout)
    add_filler(layout)
    write_memory_file(layout, "deploy-now", "knowledge", "Deploy with helm")
    write_memory_file(
        layout, "deploy-review", "knowledge", "Deploy soon", fields="lifecycle: review_due\n"
    )
    write_memory_file(
        layout, "deploy-old", "knowledge", "Deploy by ftp", fields="lifecycle: archived\n"
    )
    write_memory_file(
        layout,
        "deploy-replaced",
        "knowledge",
        "Deploy by scp",
        fields="lifecycle: superseded\nsuperseded_by: deploy-now\n",
    )
    write_memory_file(
        layout, "deploy-guess", "knowledge", "Deploy maybe", fields="confidence: low\n"
    )

    result = memory.load("deploy", explain=True)

    assert sorted(result.selected_keys) == ["deploy-now", "deploy-review"]
    assert sorted((e["id"], e["reason"]) for e in result.explain if not e["chosen"]) == [
        ("deploy-guess", "low-relevance"),
        ("deploy-old", "lifecycle"),
        ("deploy-replaced", "lifecycle"),
    ]


# --- the session query and loading by id -----------------------------------------------------


@pytest.mark.parametrize("query", ["current session", "  Current   SESSION "])
def test_current_session_loads_every_rule_and_the_session_tagged_memories(
    memory: ProjectMemory, layout: Layout, query: str
) -> None:
    add_filler(layout)
    write_memory_file(layout, "rule-one", "rule", "Use tabs")
    write_memory_file(layout, "rule-two", "rule", "Write tests")
    for tag in ("session-start", "always-load", "start-session", "always"):
        write_memory_file(layout, f"tagged-{tag}", "knowledge", "Read me first", tags=(tag,))
    write_memory_file(layout, "tagged-other", "knowledge", "Not at start", tags=("decision",))

    result = memory.load(query)

    assert result.selected_keys == [
        "rule-one",
        "rule-two",
        "tagged-always",
        "tagged-always-load",
        "tagged-session-start",
        "tagged-start-session",
    ]


def test_loading_by_id_ignores_the_budget_and_returns_the_whole_memory(
    memory: ProjectMemory, layout: Layout
) -> None:
    content = "The release checklist step " * 400
    write_memory_file(layout, "release-checklist", "knowledge", content.strip())

    result = memory.load(memory_id="release-checklist", budget_tokens=200)

    expected = f"## Knowledge: Release checklist [release-checklist]\n- {content.strip()}\n"
    assert result.packed == expected
    assert result.tokens == estimate_tokens(expected) > 200
    assert (result.selected_keys, result.body_keys) == (
        ["release-checklist"],
        ["release-checklist"],
    )
    assert (result.card_ids, result.omitted_ids, result.budget_tokens) == ([], [], None)


def test_loading_by_id_counts_as_a_use(memory: ProjectMemory, layout: Layout) -> None:
    write_memory_file(layout, "rarely-used", "knowledge", "Something")
    write_memory_file(layout, "often-used", "knowledge", "Something else")

    memory.load(memory_id="often-used")
    memory.load(memory_id="often-used")
    memory.load(memory_id="rarely-used")

    # Counted in memory: a read does not write the index each time.
    assert memory.index.most_used(10) == []
    assert memory.most_used(10) == ["often-used", "rarely-used"]  # written, then read


def test_loading_by_id_shows_a_hidden_memory(memory: ProjectMemory, layout: Layout) -> None:
    write_memory_file(
        layout, "deploy-guess", "knowledge", "Deploy maybe", fields="confidence: low\n"
    )

    assert memory.load(memory_id="deploy-guess").packed == (
        "## Knowledge: Deploy guess [deploy-guess]\n- Deploy maybe\n"
    )


# --- disclosure --------------------------------------------------------------------------------


def _tiered_memories(layout: Layout) -> tuple[str, str]:
    add_filler(layout)
    rule_content = "Deploy only from the main branch after CI passes. " * 5
    write_memory_file(layout, "deploy-rule", "rule", rule_content.strip())
    write_memory_file(layout, "deploy-notes", "knowledge", "Deploy notes. " * 50)
    write_memory_file(layout, "deploy-history", "knowledge", "Deploy history", title="H" * 900)
    return rule_content.strip(), "# Engram memory for: deploy (3 selected)"


def test_what_does_not_fit_becomes_a_card_and_what_does_not_fit_as_a_card_is_omitted(
    memory: ProjectMemory, layout: Layout
) -> None:
    without_confidence_floor(layout)
    rule_content, header = _tiered_memories(layout)

    result = memory.load("deploy", budget_tokens=200, explain=True)

    assert result.body_keys == ["deploy-rule"]
    assert result.card_ids == ["deploy-notes"]
    assert result.omitted_ids == ["deploy-history"]
    assert result.packed == (
        f"{header}\n\n## Rule: Deploy rule [deploy-rule]\n- {rule_content}\n\n"
        "More memories (engram_load with id):\n- deploy-notes (knowledge): Deploy notes\n"
    )
    assert result.tokens == estimate_tokens(result.packed) <= 200
    reasons = {e["id"]: e.get("reason") for e in result.explain}
    assert reasons == {"deploy-rule": None, "deploy-notes": None, "deploy-history": "budget"}


def test_cards_disclosure_shows_only_one_line_cards(memory: ProjectMemory, layout: Layout) -> None:
    without_confidence_floor(layout)
    _, header = _tiered_memories(layout)

    result = memory.load("deploy", budget_tokens=1600, disclosure="cards")

    assert result.body_keys == []
    assert result.card_ids == ["deploy-rule", "deploy-notes", "deploy-history"]
    assert result.packed == (
        f"{header}\n\nMore memories (engram_load with id):\n"
        "- deploy-rule (rule): Deploy rule\n"
        "- deploy-notes (knowledge): Deploy notes\n"
        f"- deploy-history (knowledge): {'H' * 900}\n"
    )


VARIANTS = (
    "\n## Rule Variants\n"
    "### Light\n- Prefer small commits\n"
    "### Balanced\n- Keep commits under 300 lines\n"
    "### Strict\n- One logical change per commit\n"
    "\n## Origin\n- Agreed in the 2024 retro\n"
)


def test_full_shows_every_section_and_the_metadata(memory: ProjectMemory, layout: Layout) -> None:
    write_memory_file(
        layout, "small-commits", "rule", "Commit small changes", tags=("git",), sections=VARIANTS
    )

    result = memory.load(memory_id="small-commits", full=True)

    assert result.packed == (
        "## Rule: Small commits [small-commits]\n"
        "scope workspace; revision 1; confidence medium; tags git\n"
        "## Content\n- Commit small changes\n\n"
        "## Rule Variants\n"
        "### Light\n- Prefer small commits\n"
        "### Balanced\n- Keep commits under 300 lines\n"
        "### Strict\n- One logical change per commit\n\n"
        "## Origin\n- Agreed in the 2024 retro\n"
    )
    assert memory.load("commits", full=True).packed.endswith(result.packed)


@pytest.mark.parametrize(
    ("variant", "shown"),
    [
        ("off", ""),
        ("light", "Variant (light):\n- Prefer small commits\n"),
        ("balanced", "Variant (balanced):\n- Keep commits under 300 lines\n"),
        ("strict", "Variant (strict):\n- One logical change per commit\n"),
    ],
)
def test_the_configured_rule_variant_picks_its_subsection(
    memory: ProjectMemory, layout: Layout, variant: str, shown: str
) -> None:
    write_memory_file(layout, "small-commits", "rule", "Commit small changes", sections=VARIANTS)
    write_config(layout, json.dumps({"rule_variant": variant}))

    by_id = memory.load(memory_id="small-commits").packed
    routed = memory.load("commits").packed

    assert by_id == "## Rule: Small commits [small-commits]\n- Commit small changes\n" + shown
    assert routed == "# Engram memory for: commits (1 selected)\n\n" + by_id


def test_explain_gives_how_terms_and_score_and_reasons_for_omissions(
    memory: ProjectMemory, layout: Layout
) -> None:
    add_filler(layout)
    write_memory_file(
        layout, "deploy-script", "skill", "Run make deploy", fields="depends_on: [staging-env]\n"
    )
    write_memory_file(layout, "staging-env", "knowledge", "Staging runs in the eu region")
    write_memory_file(
        layout, "deploy-old", "knowledge", "Deploy by ftp", fields="lifecycle: archived\n"
    )

    result = memory.load("deploy script", explain=True)

    direct = result.explain[1]
    assert result.explain == [
        {"id": "staging-env", "chosen": True, "how": "dependency", "terms": [], "score": 0.0},
        {
            "id": "deploy-script",
            "chosen": True,
            "how": "direct",
            "terms": ["deploy", "script"],
            "score": direct["score"],
            "confidence": 0.7851,
        },
        {"id": "deploy-old", "chosen": False, "reason": "lifecycle"},
    ]
    assert direct["score"] > 0
    assert result.data()["explain"] == result.explain
    assert "explain" not in memory.load("deploy script").data()
    # The words say it too (`engram load --explain` prints them), after the memories.
    assert result.text() == result.packed.rstrip() + (
        "\n\n## Why\n"
        "- loaded staging-env: dependency\n"
        "- loaded deploy-script: direct on deploy, script; confidence 0.79\n"
        "- omitted deploy-old: lifecycle"
    )
    assert memory.load("deploy script").text() == memory.load("deploy script").packed


# --- determinism ----------------------------------------------------------------------------------


def _same_files(root: Path, reverse: bool) -> ProjectMemory:
    layout = init_layout(root)[0]
    writes: list[Callable[[], object]] = [
        lambda: add_filler(layout),
        lambda: write_memory_file(layout, "deploy-from-main", "rule", "Deploy only from main"),
        lambda: write_memory_file(
            layout,
            "deploy-script",
            "skill",
            "Run make deploy",
            fields="depends_on: [staging-env]\n",
        ),
        lambda: write_memory_file(layout, "staging-env", "knowledge", "Staging is in the eu"),
        lambda: write_memory_file(
            layout, "deploy-strategy", "knowledge", "We deploy blue green", tags=("decision",)
        ),
        lambda: write_memory_file(layout, "deploy-notes", "knowledge", "Deploy notes. " * 60),
    ]
    for write in reversed(writes) if reverse else writes:
        write()
    return open_project(root)


@pytest.mark.parametrize("budget", [200, 400, 1600])
def test_the_same_files_and_query_give_the_same_bytes_across_fresh_opens(
    tmp_path: Path, budget: int
) -> None:
    first = _same_files(tmp_path / "a", reverse=False)
    second = _same_files(tmp_path / "b", reverse=True)

    results = [
        m.load("how do we deploy the script", budget_tokens=budget, explain=True)
        for m in (first, second)
    ]

    assert results[0].packed.encode() == results[1].packed.encode()
    dumped = [json.dumps(r.data(), sort_keys=True) for r in results]
    assert dumped[0] == dumped[1]
    assert first.route_entries("deploy").entries == second.route_entries("deploy").entries
    assert first.search("deploy").entries == second.search("deploy").entries
    first.index.close()
    second.index.close()


# --- relevance, the limit, roles ----------------------------------------------------


def test_rules_that_match_only_weightless_words_do_not_crowd_out_relevant_memory(
    memory: ProjectMemory, layout: Layout
) -> None:
    for number in range(8):
        write_memory_file(layout, f"rule-{number}", "rule", f"The rule number {number} of the team")
    write_memory_file(layout, "rollback-steps", "knowledge", "Rollback uses the previous tag")
    result = memory.load("the rollback", explain=True)
    assert result.selected_keys == ["rollback-steps"]
    # "the" is a stop word: the rules are not even candidates.
    assert [entry["id"] for entry in result.explain] == ["rollback-steps"]


def test_memories_cut_by_the_limit_are_omitted_for_budget(
    memory: ProjectMemory, layout: Layout
) -> None:
    without_confidence_floor(layout)
    for number in range(10):
        write_memory_file(layout, f"deploy-{number}", "knowledge", f"Deploy step {number}")
    result = memory.load("deploy step", explain=True)
    assert len(result.selected_keys) == 8
    cut = [entry for entry in result.explain if not entry["chosen"]]
    assert [entry["reason"] for entry in cut] == ["budget", "budget"]


def test_roles_can_be_cleared(memory: ProjectMemory) -> None:
    memory.set_roles(["backend"])
    assert memory.set_roles([]).roles == []


def test_one_call_brings_the_index_up_to_date_once(
    memory: ProjectMemory, layout: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One engram_load refreshed the index three times (the load, then the diagnostics
    twice); a write within a call still refreshes it again."""
    write_memory_file(layout, "deploy-script", "knowledge", "Deploy with make release")
    refreshes: list[int] = []
    original = memory.catalog.refresh

    def counted() -> None:
        refreshes.append(1)
        original()

    monkeypatch.setattr(memory.catalog, "refresh", counted)

    with memory.call():
        memory.load("deploy")
        memory.problems()
        memory.search("deploy")
    assert len(refreshes) == 1

    with memory.call():
        memory.write_note(memory.note("The cache warms slowly", "", "knowledge", "workspace"))
        memory.search("cache")
    assert len(refreshes) == 3  # the call's own, and the one after the write


# --- the confidence floor -----------------------------------------------------------------


def test_a_task_about_nothing_stored_loads_nothing_and_explains_each_omission(
    memory: ProjectMemory, layout: Layout
) -> None:
    add_filler(layout)
    write_memory_file(layout, "deploy-helm", "knowledge", "Deploy with helm to the cluster")
    write_memory_file(layout, "deploy-notes", "knowledge", "Deploy notes of last year")

    result = memory.load("deploy the mobile app to the app store", explain=True)

    assert result.selected_keys == []
    # Each shares one word of the task ("deploy", or "app" for the frontend's memory).
    assert result.explain == [
        {"id": "deploy-helm", "chosen": False, "reason": "low-relevance", "confidence": 0.1627},
        {"id": "deploy-notes", "chosen": False, "reason": "low-relevance", "confidence": 0.1572},
        {"id": "frontend-stack", "chosen": False, "reason": "low-relevance", "confidence": 0.3233},
    ]


def test_the_floor_comes_from_the_configuration_and_a_memory_to_load_always_passes_it(
    memory: ProjectMemory, layout: Layout
) -> None:
    add_filler(layout)
    write_memory_file(layout, "deploy-helm", "knowledge", "Deploy with helm to the cluster")
    write_memory_file(layout, "deploy-notes", "knowledge", "Deploy notes of last year")

    default = memory.load("deploy with helm", explain=True)
    write_memory_file(
        layout, "deploy-notes", "knowledge", "Deploy notes of last year", tags=("always-load",)
    )
    always = memory.load("deploy with helm", explain=True)
    write_config(layout, '{"load": {"confidence_floor": 0}}')
    everything = memory.load("deploy with helm", explain=True)

    assert default.selected_keys == ["deploy-helm"]
    assert default.explain[1:] == [
        {"id": "deploy-notes", "chosen": False, "reason": "low-relevance", "confidence": 0.121}
    ]
    assert default.explain[0]["confidence"] == 0.8027
    assert always.selected_keys == ["deploy-helm", "deploy-notes"]
    assert everything.selected_keys == ["deploy-helm", "deploy-notes"]


@pytest.mark.parametrize("value", ["-0.1", "1.5", '"0.5"', "true"])
def test_a_confidence_floor_outside_0_to_1_is_a_configuration_error(
    memory: ProjectMemory, layout: Layout, value: str
) -> None:
    write_config(layout, json.dumps({"load": {"confidence_floor": json.loads(value)}}))

    with pytest.raises(ConfigError):
        memory.load("deploy")
