"""The project tools (``engram_*``), resources, prompt and session hook, driven over the
real ``engram-mcp`` (and ``engram``) subprocesses in a temporary project.

The approval dialog has its own module, ``test_project_dialog.py``; here every client
is one without form elicitation, so proposals take the token flow.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from engram.mcp.project_resources import PROPOSE_PROMPT
from engram.testing import (
    ENGRAM,
    MODERN_META,
    LineClient,
    Project,
    StartServer,
    call,
    data_of,
    envelope,
    legacy_init,
    new_project,
    run_engram,
)
from tests.safety.samples import KEY

PROJECT_TOOLS = [
    "engram_load",
    "engram_route",
    "engram_search",
    "engram_verify",
    "engram_status",
    "engram_save",
    "engram_save_session",
    "engram_commit",
    "engram_set_role",
    "engram_set_rule_variant",
    "engram_note",
]
READ_TOOLS = PROJECT_TOOLS[:5]
DIALECT = "https://json-schema.org/draft/2020-12/schema"
RELOAD = "Agents: re-run engram_load for the current task and replace the memory loaded before."
VALID_ARGUMENTS: dict[str, dict[str, Any]] = {
    "engram_load": {"query": "deploy"},
    "engram_route": {"query": "deploy"},
    "engram_search": {"query": "deploy"},
    "engram_verify": {},
    "engram_status": {},
    "engram_save": {"text": "Release tags are signed with the team key", "type": "rule"},
    "engram_save_session": {"text": "TYPE: knowledge | TEXT: Staging is rebuilt every night"},
    "engram_set_role": {"role": "backend"},
    "engram_set_rule_variant": {"variant": "strict"},
    "engram_note": {"text": "The login test is flaky on CI", "objective": "fix login test"},
}


@pytest.fixture
def project(tmp_path: Path, start_server: StartServer) -> Project:
    return new_project(tmp_path / "project", start_server)


def _tools(server: LineClient, **params: Any) -> dict[str, dict[str, Any]]:
    reply = server.request("tools/list", params or None)
    return {tool["name"]: tool for tool in reply["result"]["tools"]}


def _failed(reply: dict[str, Any]) -> dict[str, Any]:
    """The ``error`` of a failed tool result (``isError``, envelope without data)."""
    assert "result" in reply, reply
    assert reply["result"].get("isError") is True, reply["result"]["content"]
    body = envelope(reply)
    assert set(body) == {"contract_version", "ok", "error", "diagnostics"}
    assert (body["contract_version"], body["ok"]) == ("1", False)
    error: dict[str, Any] = body["error"]
    assert set(error) == {"code", "message"}
    return error


def _valid_call(server: LineClient, name: str) -> dict[str, Any]:
    """A successful call of ``name`` (a commit gets a fresh proposal's token first)."""
    if name == "engram_commit":
        saved = data_of(call(server, "engram_save", VALID_ARGUMENTS["engram_save"]))
        return call(server, name, {"approval_token": saved["approval_token"], "approve": "all"})
    return call(server, name, VALID_ARGUMENTS[name])


def _tokens(text: str) -> int:
    """The documented estimate: ceil(UTF-8 bytes / 4)."""
    return math.ceil(len(text.encode("utf-8")) / 4)


# --- tools/list ------------------------------------------------------------------------


def test_tools_list_shows_the_eleven_project_tools_in_order(project: Project) -> None:
    server = project.start()
    legacy_init(server)
    assert list(_tools(server)) == PROJECT_TOOLS


def test_every_project_tool_has_a_closed_input_schema_and_no_output_schema(
    project: Project,
) -> None:
    """A project tool answers in content only, and an outputSchema would promise a
    structuredContent (docs/protocol.md, "Tools")."""
    tools = _tools(project.start())
    for name in PROJECT_TOOLS:
        schema = tools[name]["inputSchema"]
        assert (schema["$schema"], schema["type"]) == (DIALECT, "object"), name
        assert schema["additionalProperties"] is False, name
        assert "outputSchema" not in tools[name], name


def test_read_tools_are_read_only_and_the_writing_tools_are_not(project: Project) -> None:
    tools = _tools(project.start())
    for name in PROJECT_TOOLS:
        assert tools[name]["annotations"]["readOnlyHint"] is (name in READ_TOOLS), name


def test_note_is_not_read_only_and_has_no_destructive_hint(project: Project) -> None:
    annotations = _tools(project.start())["engram_note"]["annotations"]
    assert annotations["readOnlyHint"] is False
    assert "destructiveHint" not in annotations


def test_only_commit_requires_user_interaction(project: Project) -> None:
    tools = _tools(project.start())
    assert tools["engram_commit"]["_meta"] == {"anthropic/requiresUserInteraction": True}
    for name in PROJECT_TOOLS:
        if name != "engram_commit":
            assert "anthropic/requiresUserInteraction" not in tools[name].get("_meta", {}), name


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "2026-07-28"])
def test_always_load_option_marks_engram_load_and_only_it(project: Project, modern: bool) -> None:
    params: dict[str, Any] = {"_meta": MODERN_META} if modern else {}
    marked = _tools(project.start("--always-load"), **params)
    assert marked["engram_load"]["_meta"] == {"anthropic/alwaysLoad": True}
    for name in PROJECT_TOOLS[1:]:
        assert "anthropic/alwaysLoad" not in marked[name].get("_meta", {}), name
    plain = _tools(project.start(), **params)
    assert "_meta" not in plain["engram_load"]
    assert plain["engram_commit"]["_meta"] == {"anthropic/requiresUserInteraction": True}


# --- the structured envelope ---------------------------------------------------------------


@pytest.mark.parametrize("name", PROJECT_TOOLS)
def test_every_tool_answers_its_words_then_the_envelope_without_them(
    project: Project, name: str
) -> None:
    project.write_memory("deploy-checklist", "rule", "Deploy only from a green main branch.")
    reply = _valid_call(project.start(), name)
    result = reply["result"]
    assert set(result) == {"content", "isError"}
    assert result["isError"] is False
    words, copy = result["content"]
    assert words["type"] == copy["type"] == "text"
    assert words["text"]
    body = json.loads(copy["text"])
    assert body == envelope(reply)
    assert set(body) == {"contract_version", "ok", "data", "diagnostics"}
    assert (body["contract_version"], body["ok"], body["diagnostics"]) == ("1", True, [])
    assert "text" not in body["data"]


def test_load_data_names_what_was_selected_packed_carded_and_omitted(project: Project) -> None:
    filler = " ".join(f"detail{n}" for n in range(60))
    for n in range(6):
        project.write_memory(f"deploy-step-{n}", "knowledge", f"Deploy step {n}: {filler}.")
    # Six memories alike: none is sure to be the one, and packing is what is tested here.
    (project.base / "config.json").write_text('{"load": {"confidence_floor": 0}}')
    data = data_of(
        call(project.start(), "engram_load", {"query": "deploy step", "budget_tokens": 250})
    )
    assert set(data) == {
        "selected_keys",
        "body_keys",
        "card_ids",
        "omitted_ids",
        "tokens",
        "budget_tokens",
        "text",
    }
    assert data["budget_tokens"] == 250
    assert data["tokens"] == _tokens(data["text"]) <= 250
    packed = data["body_keys"] + data["card_ids"] + data["omitted_ids"]
    assert sorted(packed) == sorted(data["selected_keys"]) == [f"deploy-step-{n}" for n in range(6)]
    assert data["body_keys"]
    assert data["card_ids"]
    for memory_id in data["card_ids"]:
        assert f"- {memory_id} (knowledge): Deploy step {memory_id[-1]}" in data["text"]


def test_load_by_id_ignores_the_budget(project: Project) -> None:
    words = " ".join(f"word{n}" for n in range(400))
    project.write_memory("long-memory", "knowledge", words)
    data = data_of(
        call(project.start(), "engram_load", {"id": "long-memory", "budget_tokens": 200})
    )
    assert data["text"].startswith("## Knowledge: Long memory [long-memory]\n")
    assert data == {
        "selected_keys": ["long-memory"],
        "body_keys": ["long-memory"],
        "card_ids": [],
        "omitted_ids": [],
        "tokens": _tokens(data["text"]),
        "budget_tokens": None,
        "text": data["text"],
    }
    assert data["tokens"] > 200


def _seed_deploy_memories(project: Project) -> None:
    project.write_memory("friday-freeze", "rule", "No release deploys on Fridays.")
    project.write_memory(
        "deploy-pipeline",
        "knowledge",
        "The deploy pipeline: deploy to staging, deploy to canary, deploy to production.",
        title="Deploy pipeline deploy stages",
    )
    for n in range(6):
        project.write_memory(f"unrelated-{n}", "knowledge", f"Lunch menu number {n}.")


def test_search_entries_carry_id_type_scope_score_best_first(project: Project) -> None:
    _seed_deploy_memories(project)
    entries = data_of(call(project.start(), "engram_search", {"query": "deploy"}))["entries"]
    assert [(e["id"], e["type"], e["scope"]) for e in entries] == [
        ("deploy-pipeline", "knowledge", "workspace"),
        ("friday-freeze", "rule", "workspace"),
    ]
    assert all(isinstance(e["score"], float) for e in entries)
    assert entries[0]["score"] > entries[1]["score"] > 0


def test_route_entries_are_in_load_order_rules_first_not_by_score(project: Project) -> None:
    _seed_deploy_memories(project)
    entries = data_of(call(project.start(), "engram_route", {"query": "deploy"}))["entries"]
    assert [(e["id"], e["type"], e["scope"]) for e in entries] == [
        ("friday-freeze", "rule", "workspace"),
        ("deploy-pipeline", "knowledge", "workspace"),
    ]
    assert entries[0]["score"] < entries[1]["score"]


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("engram_load", {"bogus": 1}),
        ("engram_load", {"budget_tokens": 10}),
        ("engram_load", {"full": "yes"}),
        ("engram_route", {}),
        ("engram_search", {}),
        ("engram_search", {"query": "x", "limit": 0}),
        ("engram_verify", {"scope": "team"}),
        ("engram_status", {"verbose": True}),
        ("engram_save", {"text": ""}),
        ("engram_save", {"text": "x", "scope": "team"}),
        ("engram_save_session", {"text": "TYPE: rule | TEXT: x", "approve": "all"}),
        ("engram_commit", {"approval_token": "t" * 32, "approve": [0]}),
        ("engram_commit", {"approval_token": "t" * 32}),
        ("engram_set_role", {}),
        ("engram_set_rule_variant", {"variant": "loud"}),
        ("engram_note", {"text": "x", "scope": "both"}),
    ],
)
def test_invalid_arguments_are_an_error_result_with_invalid_arguments(
    project: Project, name: str, arguments: dict[str, Any]
) -> None:
    error = _failed(call(project.start(), name, arguments))
    assert error["code"] == "INVALID_ARGUMENTS"


BROKEN = "rules/broken.md"


@pytest.mark.parametrize("name", PROJECT_TOOLS)
def test_an_invalid_memory_file_is_reported_in_the_diagnostics_of_every_call(
    project: Project, name: str
) -> None:
    (project.base / BROKEN).write_text("---\nid: Not A Slug\ntype: rule\n---\n# Broken\n")
    server = project.start()
    body = envelope(_valid_call(server, name))
    assert body["ok"] is True, body
    reported = [(d["id"], d["severity"], d["message"].split(": ")[0]) for d in body["diagnostics"]]
    assert reported == [("memory.invalid", "warning", BROKEN)]


UNREADABLE = [
    "knowledge/a-pipe.md: cannot be read (not a regular file)",
    "rules/bad-frontmatter.md: line 2: id must be a slug (lowercase letters, digits, hyphens)",
    "rules/broken-link.md: cannot be read (a link to a file that does not exist)",
    "rules/latin-1.md: not UTF-8 text",
]


@pytest.mark.parametrize("name", READ_TOOLS)
def test_a_read_tool_names_each_memory_file_it_could_not_read_in_its_diagnostics(
    project: Project, name: str
) -> None:
    """Bad frontmatter, invalid UTF-8, a link to nowhere and a FIFO: each really fails
    to load, for root too (who reads a file without permissions)."""
    project.write_memory("deploy-checklist", "rule", "Deploy only from a green main branch.")
    bad = "---\nid: Not A Slug\ntype: rule\n---\n"
    (project.base / "rules" / "bad-frontmatter.md").write_text(bad)
    (project.base / "rules" / "latin-1.md").write_bytes(b"---\nid: latin-1\ntitle: caf\xe9\n")
    (project.base / "rules" / "broken-link.md").symlink_to(project.base / "rules" / "gone.md")
    os.mkfifo(project.base / "knowledge" / "a-pipe.md")

    body = envelope(call(project.start(), name, VALID_ARGUMENTS[name]))

    assert body["ok"] is True, body
    assert [d["message"] for d in body["diagnostics"]] == UNREADABLE
    assert {(d["id"], d["severity"]) for d in body["diagnostics"]} == {
        ("memory.invalid", "warning")
    }
    if name == "engram_status":
        assert body["data"]["invalid_files"] == len(UNREADABLE)


def test_an_error_result_also_reports_invalid_memory_files(project: Project) -> None:
    (project.base / BROKEN).write_text("not frontmatter at all\n")
    server = project.start()
    data_of(call(server, "engram_status", {}))
    for name, arguments in [
        ("engram_load", {"id": "no-such-memory"}),
        ("engram_commit", {"approval_token": "t" * 32, "approve": "all"}),
        ("engram_search", {}),
    ]:
        body = envelope(call(server, name, arguments))
        assert body["ok"] is False
        assert [d["message"].split(": ")[0] for d in body["diagnostics"]] == [BROKEN], name


def test_without_project_memory_tools_answer_not_initialized_until_init_runs(
    tmp_path: Path, start_server: StartServer
) -> None:
    bare = tmp_path / "bare"
    bare.mkdir()
    env = {"ENGRAM_GLOBAL_DIR": str(tmp_path / "global"), "ENGRAM_HOST_PROFILE": ""}
    server = start_server(cwd=bare, env=env)
    for name in ("engram_status", "engram_load", "engram_save"):
        arguments = VALID_ARGUMENTS[name]
        error = _failed(call(server, name, arguments))
        assert error["code"] == "NOT_INITIALIZED", name
    assert server.request("resources/read", {"uri": "engram://index"})["error"]["code"] == -32002
    assert run_engram("init", cwd=bare, env=env).returncode == 0
    index = server.request("resources/read", {"uri": "engram://index"})["result"]["contents"]
    assert index[0]["text"] == "(no memories yet)\n"
    status = data_of(call(server, "engram_status", {}))
    assert status["root"] == str(bare.resolve())
    assert status["healthy"] is True
    assert server.running


@pytest.mark.parametrize(
    ("approve", "message"),
    [
        ([], "approve: must not be empty"),
        ([0], "approve/0: must be at least 1"),
        ([1, 1], "approve: must not name an item twice"),
        ("some", 'approve: must be one of: "all"; or a non-empty list of integers >= 1, each once'),
    ],
)
def test_a_bad_approve_list_says_what_is_wrong_with_it(
    project: Project, approve: Any, message: str
) -> None:
    """Each used to be "does not satisfy anyOf"."""
    error = _failed(
        call(project.start(), "engram_commit", {"approval_token": "t" * 32, "approve": approve})
    )

    assert (error["code"], error["message"]) == ("INVALID_ARGUMENTS", message)


def test_an_out_of_range_resource_limit_is_an_error_naming_the_key_not_a_traceback(
    project: Project, capfd: pytest.CaptureFixture[str]
) -> None:
    (project.base / "config.json").write_text('{"mcp": {"resource_limit": 999}}')
    server = project.start()

    reply = server.request("resources/list")

    config = project.base / "config.json"
    assert reply["error"] == {
        "code": -32603,
        "message": "Project memory cannot serve this request",
        "data": {
            "code": "INVALID_CONFIG",
            "detail": f"{config}: mcp.resource_limit must be a whole number 0..200; edit the"
            " file (remove it for the default, 20)",
        },
    }
    assert "Traceback" not in capfd.readouterr().err


# --- proposals, tokens and commit ---------------------------------------------------------


def test_save_previews_with_a_verdict_line_and_writes_nothing(project: Project) -> None:
    before = project.files()
    data = data_of(call(project.start(), "engram_save", VALID_ARGUMENTS["engram_save"]))
    token = data["approval_token"]
    assert data["saved"] is False
    assert data["verdicts"] == ["ADD"]
    assert data["preview"] == (
        "1. Verdict: ADD\n"
        "   Type: rule | Id: release-tags-are-signed-with-the-team-key | Scope: workspace\n"
        "   Title: Release tags are signed with the team key\n"
        "   Text: Release tags are signed with the team key"
    )
    assert data["text"].startswith("Proposal (1 candidate):\n")  # not "1 candidates"
    assert data["text"].endswith(f"approval_token: {token} (single use, expires in 30 minutes)")
    assert len(token) >= 22  # at least 128 random bits in URL-safe base64
    assert project.files() == before
    stored = json.dumps(project.pending_proposals())
    assert token not in stored
    assert len(project.pending_proposals()) == 1


def _seed_for_verdicts(project: Project) -> None:
    project.write_memory("use-tabs-in-makefiles", "rule", "Use tabs in Makefiles.")
    project.write_memory("staging-refresh", "knowledge", "Staging is refreshed at 2am.")
    project.write_memory(
        "python-lint", "rule", "Run ruff check on every Python change before pushing."
    )


VERDICT_LINES = "\n".join(
    [
        "TYPE: skill | TEXT: Bisect flaky tests with pytest-randomly seeds",
        "TYPE: rule | TEXT: use tabs in makefiles!",
        "TYPE: knowledge | TEXT: Staging is refreshed at 3am | UPDATE: staging-refresh",
        "TYPE: rule | TEXT: Run ruff check on every Python change before merging",
    ]
)


def test_every_candidate_carries_a_deterministic_verdict(project: Project) -> None:
    _seed_for_verdicts(project)
    server = project.start()
    first = data_of(call(server, "engram_save_session", {"text": VERDICT_LINES}))
    assert first["verdicts"] == [
        "ADD",
        "NOOP duplicate of use-tabs-in-makefiles",
        "UPDATE staging-refresh",
        "SUPERSEDE python-lint",
    ]
    lines = [line for line in first["preview"].splitlines() if "Verdict:" in line]
    assert lines == [f"{n}. Verdict: {v}" for n, v in enumerate(first["verdicts"], 1)]
    again = data_of(call(server, "engram_save_session", {"text": VERDICT_LINES}))
    assert again["preview"] == first["preview"]
    assert again["approval_token"] != first["approval_token"]


def test_commit_with_numbers_writes_exactly_those_candidates(project: Project) -> None:
    _seed_for_verdicts(project)
    server = project.start()
    before = project.files()
    token = data_of(call(server, "engram_save_session", {"text": VERDICT_LINES}))["approval_token"]
    data = data_of(call(server, "engram_commit", {"approval_token": token, "approve": [1]}))
    skill = "bisect-flaky-tests-with-pytest-randomly-seeds"
    assert data["written"] == [
        {"number": 1, "verdict": "ADD", "id": skill, "file": f"skills/{skill}.md"}
    ]
    assert data["deferred"] == []
    assert project.files() == sorted([*before, f"skills/{skill}.md"])
    assert "Bisect flaky tests" in (project.base / f"skills/{skill}.md").read_text()
    assert [entry["state"] for entry in project.pending_proposals().values()] == ["used"]


def test_commit_all_writes_every_candidate_and_defers_a_duplicate(project: Project) -> None:
    project.write_memory("use-tabs-in-makefiles", "rule", "Use tabs in Makefiles.")
    server = project.start()
    lines = (
        "TYPE: rule | TEXT: Pin CI actions to a commit\n"
        "TYPE: rule | TEXT: Use tabs in Makefiles\n"
        "TYPE: knowledge | TEXT: The docs site builds with mkdocs | CONTEXT: since 2024"
    )
    token = data_of(call(server, "engram_save_session", {"text": lines}))["approval_token"]
    data = data_of(call(server, "engram_commit", {"approval_token": token, "approve": "all"}))
    assert data["written"] == [
        {
            "number": 1,
            "verdict": "ADD",
            "id": "pin-ci-actions-to-a-commit",
            "file": "rules/pin-ci-actions-to-a-commit.md",
        },
        {
            "number": 3,
            "verdict": "ADD",
            "id": "the-docs-site-builds-with-mkdocs",
            "file": "knowledge/the-docs-site-builds-with-mkdocs.md",
        },
    ]
    assert data["deferred"] == [
        {
            "number": 2,
            "verdict": "NOOP duplicate of use-tabs-in-makefiles",
            "reason": "duplicate",
            "hint": "`engram load --id use-tabs-in-makefiles` shows the memory that says it",
        }
    ]
    assert project.files() == [
        "knowledge/the-docs-site-builds-with-mkdocs.md",
        "rules/pin-ci-actions-to-a-commit.md",
        "rules/use-tabs-in-makefiles.md",
    ]
    verified = data_of(call(server, "engram_verify", {}))
    assert [(f["path"], f["status"]) for f in verified["files"] if f["status"] == "ok"] == [
        ("knowledge/the-docs-site-builds-with-mkdocs.md", "ok"),
        ("rules/pin-ci-actions-to-a-commit.md", "ok"),
    ]


def test_a_token_works_once(project: Project) -> None:
    server = project.start()
    token = data_of(call(server, "engram_save", VALID_ARGUMENTS["engram_save"]))["approval_token"]
    data_of(call(server, "engram_commit", {"approval_token": token, "approve": "all"}))
    files = project.files()
    replay = _failed(call(server, "engram_commit", {"approval_token": token, "approve": "all"}))
    assert replay["code"] == "APPROVAL_INVALID"
    unknown = _failed(call(server, "engram_commit", {"approval_token": "x" * 32, "approve": "all"}))
    assert unknown["code"] == "APPROVAL_INVALID"
    assert project.files() == files


def test_a_pending_candidate_edited_on_disk_fails_the_integrity_check(project: Project) -> None:
    server = project.start()
    token = data_of(call(server, "engram_save", VALID_ARGUMENTS["engram_save"]))["approval_token"]
    stored = json.loads(project.pending.read_text())
    [entry] = stored["proposals"].values()
    entry["candidates"][0]["text"] = "Release tags need no signature"
    project.pending.write_text(json.dumps(stored))
    error = _failed(call(server, "engram_commit", {"approval_token": token, "approve": "all"}))
    assert error["code"] == "APPROVAL_TAMPERED"
    assert project.files() == []


def test_committing_an_update_rewrites_the_memory_and_later_calls_still_work(
    project: Project,
) -> None:
    project.write_memory("staging-refresh", "knowledge", "Staging is refreshed at 2am.")
    server = project.start()
    lines = "TYPE: knowledge | TEXT: Staging is refreshed at 3am | UPDATE: staging-refresh"
    token = data_of(call(server, "engram_save_session", {"text": lines}))["approval_token"]
    data = data_of(call(server, "engram_commit", {"approval_token": token, "approve": "all"}))
    assert data["written"] == [
        {
            "number": 1,
            "verdict": "UPDATE staging-refresh",
            "id": "staging-refresh",
            "file": "knowledge/staging-refresh.md",
        }
    ]
    text = (project.base / "knowledge/staging-refresh.md").read_text()
    assert "revision: 2" in text
    assert "Staging is refreshed at 3am" in text
    loaded = data_of(call(server, "engram_load", {"id": "staging-refresh"}))
    assert "3am" in loaded["text"]


def test_a_memory_edited_by_hand_is_seen_by_the_next_call(project: Project) -> None:
    path = project.write_memory("staging-refresh", "knowledge", "Staging is refreshed at 2am.")
    server = project.start()
    assert data_of(call(server, "engram_search", {"query": "nightly"}))["entries"] == []
    path.write_text(path.read_text().replace("at 2am", "nightly"))
    found = data_of(call(server, "engram_search", {"query": "nightly"}))["entries"]
    assert [entry["id"] for entry in found] == ["staging-refresh"]


def test_saving_with_scope_both_writes_a_healthy_copy_in_each_scope(project: Project) -> None:
    server = project.start()
    arguments = {"text": "Pin every CI action to a commit SHA", "type": "rule", "scope": "both"}
    token = data_of(call(server, "engram_save", arguments))["approval_token"]
    data_of(call(server, "engram_commit", {"approval_token": token, "approve": "all"}))
    assert project.files() == [
        "global:rules/pin-every-ci-action-to-a-commit-sha.md",
        "rules/pin-every-ci-action-to-a-commit-sha.md",
    ]
    body = envelope(call(server, "engram_status", {}))
    assert body["diagnostics"] == []
    assert (body["data"]["invalid_files"], body["data"]["healthy"]) == (0, True)


# --- roles and rule variants -----------------------------------------------------------


def test_set_role_updates_the_configuration_and_asks_for_a_reload(project: Project) -> None:
    project.write_memory("css-modules", "knowledge", "Deploy CSS as modules.", role=["frontend"])
    project.write_memory("api-versioning", "knowledge", "Deploy the API behind /v2.")
    server = project.start()
    before = data_of(call(server, "engram_load", {"query": "deploy"}))["selected_keys"]
    assert before == ["css-modules", "api-versioning"]  # "deploy" in the shorter one first
    data = data_of(call(server, "engram_set_role", {"role": "backend"}))
    assert data == {
        "roles": ["backend"],
        "variant": "balanced",
        "text": f"roles: backend. {RELOAD}",
    }
    assert json.loads((project.base / "config.json").read_text())["roles"] == ["backend"]
    after = data_of(call(server, "engram_load", {"query": "deploy"}))["selected_keys"]
    assert after == ["api-versioning"]


def test_set_rule_variant_updates_the_configuration_and_asks_for_a_reload(
    project: Project,
) -> None:
    server = project.start()
    data = data_of(call(server, "engram_set_rule_variant", {"variant": "strict"}))
    assert data == {"roles": [], "variant": "strict", "text": f"rule variant: strict. {RELOAD}"}
    assert json.loads((project.base / "config.json").read_text())["rule_variant"] == "strict"
    status = data_of(call(server, "engram_set_rule_variant", {"variant": "status"}))
    assert status == {"roles": [], "variant": "strict", "text": "rule variant: strict"}


# --- secrets never land --------------------------------------------------------------------


def _assert_refused_without_trace(project: Project, reply: dict[str, Any]) -> dict[str, Any]:
    assert KEY not in json.dumps(reply)
    error = _failed(reply)
    assert project.pending_proposals() == {}
    assert not any(KEY in path.read_text() for path in project.base.rglob("*.md"))
    return error


def test_save_refuses_an_aws_key_without_a_token_and_without_repeating_it(
    project: Project,
) -> None:
    reply = call(project.start(), "engram_save", {"text": f"CI uploads with {KEY} for now"})
    error = _assert_refused_without_trace(project, reply)
    assert error["code"] == "SECRET_REFUSED"
    assert "approval_token" not in json.dumps(reply)
    assert not project.pending.exists()


@pytest.mark.parametrize(
    "line",
    [
        f"TYPE: rule | TEXT: CI uploads with {KEY}",
        f"TYPE: rule | TEXT: CI uploads artifacts | CONTEXT: the key is {KEY}",
        f"TYPE: rule | TEXT: CI uploads artifacts | ORIGIN: {KEY}",
        f"TYPE: rule | TEXT: CI uploads artifacts | TRIGGERS: upload,{KEY}",
        f"TYPE: rule | TEXT: CI uploads artifacts | DEPENDS_ON: {KEY}",
        f"TYPE: rule | TEXT: CI uploads artifacts | PARENT: {KEY}",
        f"TYPE: rule | TEXT: CI uploads artifacts | LEVEL: {KEY}",
        f"TYPE: rule | TEXT: CI uploads artifacts | UPDATE: {KEY}",
    ],
    ids=["text", "context", "origin", "triggers", "depends_on", "parent", "level", "update"],
)
def test_save_session_refuses_a_key_in_any_field_without_repeating_it(
    project: Project, line: str
) -> None:
    reply = call(project.start(), "engram_save_session", {"text": line})
    error = _assert_refused_without_trace(project, reply)
    assert error["code"] == "SECRET_REFUSED"


def test_save_refuses_a_key_given_as_a_role(project: Project) -> None:
    reply = call(project.start(), "engram_save", {"text": "CI uploads artifacts", "role": KEY})
    error = _assert_refused_without_trace(project, reply)
    assert error["code"] == "SECRET_REFUSED"


def test_a_malformed_candidate_line_is_refused_without_repeating_a_key(project: Project) -> None:
    line = f"TYPE: rule | TEXT: CI uploads artifacts | SECRET: {KEY}"
    reply = call(project.start(), "engram_save_session", {"text": line})
    _assert_refused_without_trace(project, reply)


# --- resources and the prompt ----------------------------------------------------------

INDEX = {
    "uri": "engram://index",
    "name": "index",
    "title": "Engram memory index",
    "description": "One-line cards of every memory",
    "mimeType": "text/markdown",
}


def _seed_three(project: Project) -> None:
    project.write_memory("alpha-rule", "rule", "Alpha facts.", title="Alpha rule")
    project.write_memory("beta-notes", "knowledge", "Beta facts.", title="Beta notes")
    project.write_memory("gamma-skill", "skill", "Gamma facts.", title="Gamma skill")
    project.write_memory(
        "note-scratch",
        "knowledge",
        "Scratch.",
        folder="working",
        title="Scratch",
        tier="working",
        source="note",
        valid_until="2999-01-01",
    )


def _read(server: LineClient, uri: str, **extra: Any) -> dict[str, Any]:
    return server.request("resources/read", {"uri": uri, **extra})


def _listed(server: LineClient) -> list[str]:
    return [r["uri"] for r in server.request("resources/list")["result"]["resources"]]


def test_resources_list_is_the_index_until_memories_are_used(project: Project) -> None:
    _seed_three(project)
    server = project.start()
    legacy_init(server)
    assert server.request("resources/list")["result"] == {"resources": [INDEX]}


def test_reading_the_index_gives_one_line_cards_without_working_notes(project: Project) -> None:
    _seed_three(project)
    server = project.start()
    assert _read(server, "engram://index")["result"] == {
        "contents": [
            {
                "uri": "engram://index",
                "mimeType": "text/markdown",
                "text": "- alpha-rule (rule): Alpha rule\n"
                "- beta-notes (knowledge): Beta notes\n"
                "- gamma-skill (skill): Gamma skill\n",
            }
        ]
    }


def test_reading_a_memory_equals_engram_load_by_id_and_counts_as_a_use(project: Project) -> None:
    _seed_three(project)
    server = project.start()
    contents = _read(server, "engram://memory/beta-notes")["result"]["contents"]
    cli = project.engram("load", "--id", "beta-notes")
    assert cli.returncode == 0, cli.stderr
    assert contents == [
        {"uri": "engram://memory/beta-notes", "mimeType": "text/markdown", "text": cli.stdout}
    ]
    resources = server.request("resources/list")["result"]["resources"]
    assert resources == [
        INDEX,
        {
            "uri": "engram://memory/beta-notes",
            "name": "beta-notes",
            "title": "Beta notes",
            "mimeType": "text/markdown",
        },
    ]


@pytest.mark.parametrize(
    ("limit", "expected"),
    [
        (None, ["engram://memory/gamma-skill", "engram://memory/alpha-rule"]),
        (1, ["engram://memory/gamma-skill"]),
        (0, []),
    ],
)
def test_resources_list_holds_the_most_used_memories_up_to_the_limit(
    project: Project, limit: int | None, expected: list[str]
) -> None:
    _seed_three(project)
    if limit is not None:
        (project.base / "config.json").write_text(json.dumps({"mcp": {"resource_limit": limit}}))
    server = project.start()
    for uri in ["gamma-skill", "alpha-rule", "gamma-skill"]:
        assert "result" in _read(server, f"engram://memory/{uri}")
    assert _listed(server) == ["engram://index", *expected]


@pytest.mark.parametrize(
    "uri", ["engram://memory/no-such-memory", "engram://other", "file:///etc/passwd"]
)
def test_an_unknown_resource_is_32002_in_legacy_and_32602_in_the_2026_era(
    project: Project, uri: str
) -> None:
    _seed_three(project)
    server = project.start()
    legacy = _read(server, uri)
    assert legacy["error"]["code"] == -32002
    assert "result" not in legacy
    modern = _read(server, uri, _meta=MODERN_META)
    assert modern["error"]["code"] == -32602
    assert "result" not in modern


def test_resource_templates_list_offers_memory_by_id(project: Project) -> None:
    reply = project.start().request("resources/templates/list")
    assert reply["result"] == {
        "resourceTemplates": [
            {
                "uriTemplate": "engram://memory/{id}",
                "name": "memory",
                "title": "One memory by id",
                "mimeType": "text/markdown",
            }
        ]
    }


def test_the_propose_prompt_returns_the_proposal_protocol(project: Project) -> None:
    server = project.start()
    assert server.request("prompts/list")["result"] == {
        "prompts": [
            {
                "name": "propose",
                "title": "Propose project memory",
                "description": "The protocol for proposing memories the human approves.",
            }
        ]
    }
    got = server.request("prompts/get", {"name": "propose"})["result"]
    assert got == {
        "description": "The memory proposal protocol",
        "messages": [{"role": "user", "content": {"type": "text", "text": PROPOSE_PROMPT}}],
    }
    for phrase in ("engram_save", "engram_commit", "approval_token", "Verdict"):
        assert phrase in PROPOSE_PROMPT


@pytest.mark.parametrize("modern", [False, True], ids=["legacy", "2026-07-28"])
def test_an_unknown_prompt_is_invalid_params(project: Project, modern: bool) -> None:
    extra: dict[str, Any] = {"_meta": MODERN_META} if modern else {}
    reply = project.start().request("prompts/get", {"name": "no-such-prompt", **extra})
    assert reply["error"]["code"] == -32602


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("tools/list", {}),
        ("resources/list", {}),
        ("resources/templates/list", {}),
        ("prompts/list", {}),
        ("resources/read", {"uri": "engram://index"}),
    ],
)
def test_2026_era_list_and_read_results_carry_ttl_and_cache_scope(
    project: Project, method: str, params: dict[str, Any]
) -> None:
    _seed_three(project)
    result = project.start().request(method, {**params, "_meta": MODERN_META})["result"]
    assert result["resultType"] == "complete"
    assert isinstance(result["ttlMs"], int)
    assert result["ttlMs"] >= 0
    assert result["cacheScope"] == "private"
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "engram"


def test_2026_era_tool_results_are_complete_envelopes(project: Project) -> None:
    server = project.start()
    reply = call(server, "engram_status", {}, _meta=MODERN_META)
    assert reply["result"]["resultType"] == "complete"
    assert data_of(reply)["healthy"] is True


# --- the session hook ------------------------------------------------------------------

HOSTS = ["claude", "codex", "gemini", "cursor"]


def _hook(
    root: Path,
    host: str,
    *options: str,
    env: dict[str, str],
    cwd: Path | None = None,
    objective: str | None = None,
) -> tuple[str, str, int]:
    """Run ``engram hook HOST`` as the host does: the session's JSON on stdin."""
    environ = {k: v for k, v in os.environ.items() if k != "ENGRAM_SESSION_OBJECTIVE"}
    environ.update(env)
    if objective is not None:
        environ["ENGRAM_SESSION_OBJECTIVE"] = objective
    done = subprocess.run(
        [str(ENGRAM), "hook", host, *options],
        input=json.dumps({"cwd": str(root), "hook_event_name": "SessionStart"}),
        cwd=cwd or root,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done.stdout, done.stderr, done.returncode


def _context(host: str, stdout: str) -> str:
    lines = stdout.splitlines()
    assert len(lines) == 1, stdout
    shape = json.loads(lines[0])
    if host == "cursor":
        assert list(shape) == ["additional_context"]
        text: str = shape["additional_context"]
    else:
        assert shape == {
            "hookSpecificOutput": {
                "hookEventName": "SessionStart",
                "additionalContext": shape["hookSpecificOutput"]["additionalContext"],
            }
        }
        text = shape["hookSpecificOutput"]["additionalContext"]
    return text


def _seed_session(project: Project) -> None:
    project.write_memory("review-before-merge", "rule", "Every change is reviewed before merge.")
    project.write_memory(
        "team-glossary", "knowledge", "A ticket is a unit of work.", tags=["session-start"]
    )
    project.write_memory("database-tuning", "knowledge", "Vacuum the database weekly.")


@pytest.mark.parametrize("host", HOSTS)
def test_hook_prints_one_json_line_of_the_host_shape_with_the_session_memory(
    project: Project, host: str
) -> None:
    _seed_session(project)
    stdout, stderr, status = _hook(project.root, host, env=project.env, cwd=project.root.parent)
    assert status == 0, stderr
    text = _context(host, stdout)
    assert "## Rule: Review before merge [review-before-merge]" in text
    assert "## Knowledge: Team glossary [team-glossary]" in text
    assert "database-tuning" not in text
    cli = project.engram("load", "current session", "--budget-tokens", "1500")
    assert text == cli.stdout


def _seed_many_rules(project: Project, count: int = 8) -> None:
    filler = " ".join(f"clause{n}" for n in range(150))
    for n in range(count):
        project.write_memory(f"rule-{n}", "rule", f"Rule {n} says {filler}.")


@pytest.mark.parametrize(
    ("options", "budget", "bodies"), [((), 1500, 4), (("--budget-tokens", "300"), 300, 0)]
)
def test_hook_loads_within_its_token_budget(
    project: Project, options: tuple[str, ...], budget: int, bodies: int
) -> None:
    _seed_many_rules(project)
    stdout, stderr, status = _hook(project.root, "claude", *options, env=project.env)
    assert status == 0, stderr
    text = _context("claude", stdout)
    assert _tokens(text) <= budget
    assert text.count("\n## Rule: ") == bodies
    cards = [f"- rule-{n} (rule): Rule {n}" for n in range(bodies, 8)]
    assert text.endswith("More memories (engram_load with id):\n" + "\n".join(cards) + "\n")


def _seed_note(project: Project) -> None:
    project.write_memory("review-before-merge", "rule", "Every change is reviewed before merge.")
    project.write_memory(
        "note-login-test-is-flaky",
        "rule",
        "Retry the login test once before digging in.",
        folder="working",
        title="Login test is flaky",
        source="note",
        tier="working",
        valid_until="2999-01-01",
        objective="Fix the flaky login test",
    )


def test_hook_omits_working_notes_without_a_matching_objective(project: Project) -> None:
    _seed_note(project)
    for objective in (None, "ship the billing page"):
        stdout, _, status = _hook(project.root, "codex", env=project.env, objective=objective)
        assert status == 0
        text = _context("codex", stdout)
        assert "review-before-merge" in text
        assert "note-login-test-is-flaky" not in text
        assert "Retry the login test" not in text


def test_hook_shows_a_note_whose_objective_matches_as_a_one_line_card(project: Project) -> None:
    _seed_note(project)
    stdout, _, status = _hook(
        project.root, "gemini", env=project.env, objective="  fix the FLAKY login test "
    )
    assert status == 0
    text = _context("gemini", stdout)
    assert "- note-login-test-is-flaky (note): Login test is flaky\n" in text
    assert "Retry the login test" not in text
    assert "review-before-merge" in text


def test_hook_for_an_unknown_host_is_a_usage_error_with_nothing_on_stdout(
    project: Project,
) -> None:
    stdout, stderr, status = _hook(project.root, "vscode", env=project.env)
    assert (stdout, status) == ("", 2)
    assert "Usage: engram hook" in stderr


@pytest.mark.parametrize("host", HOSTS)
def test_hook_outside_a_project_prints_empty_context_and_a_note_on_stderr(
    tmp_path: Path, host: str
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    env = {"ENGRAM_GLOBAL_DIR": str(tmp_path / "global")}
    stdout, stderr, status = _hook(outside, host, env=env)
    assert status == 0
    assert _context(host, stdout) == ""
    assert stderr.startswith("engram hook: ")


@pytest.mark.parametrize(
    ("name", "arguments", "message"),
    [
        ("engram_route", {}, "arguments: give 'query' or 'task'"),
        ("engram_set_role", {}, "arguments: give 'role' or 'roles'"),
    ],
)
def test_a_call_missing_both_alternatives_names_them(
    project: Project, name: str, arguments: dict[str, Any], message: str
) -> None:
    error = _failed(call(project.start(), name, arguments))

    assert error["code"] == "INVALID_ARGUMENTS"
    assert error["message"] == message


def test_route_takes_task_as_well_as_query(project: Project) -> None:
    _seed_deploy_memories(project)
    server = project.start()

    by_task = data_of(call(server, "engram_route", {"task": "deploy"}))["entries"]

    assert by_task == data_of(call(server, "engram_route", {"query": "deploy"}))["entries"]
    assert by_task != []
