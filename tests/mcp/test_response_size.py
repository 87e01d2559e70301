"""Every project tool puts its words on the wire once: a response is at most 1.5 times
its text plus 4 KiB, on a realistic project (issue 27, item 5; docs/protocol.md,
"Tools": how each block is read)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from engram.project.schemas import ENVELOPE_OUTPUT
from engram.testing import Project, StartServer, call, data_of, new_project

TOPICS = [
    "deploy", "release", "database", "migrations", "testing", "review", "logging",
    "secrets", "api", "frontend", "ci", "docker", "cache", "auth", "payments",
]  # fmt: skip
SESSION = (
    "TYPE: knowledge | TEXT: Staging is rebuilt every night\nTYPE: rule | TEXT: No Friday deploys"
)
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("engram_load", {"query": "deploy a release with migrations"}),
    ("engram_load", {"query": "deploy a release with migrations", "budget_tokens": 16_000}),
    ("engram_load", {"query": "deploy", "full": True, "explain": True}),
    ("engram_load", {"id": "deploy-notes"}),
    ("engram_route", {"query": "deploy a release with migrations"}),
    ("engram_search", {"query": "deploy"}),
    ("engram_verify", {}),
    ("engram_status", {}),
    ("engram_save", {"text": "Release tags are signed with the team key", "type": "rule"}),
    ("engram_save_session", {"text": SESSION}),
    ("engram_set_role", {"role": "backend"}),
    ("engram_set_rule_variant", {"variant": "strict"}),
    ("engram_note", {"text": "The login test is flaky on CI", "objective": "fix login test"}),
]


def _body(topic: str) -> str:
    return (
        f"When you touch {topic}, follow the team's {topic} checklist: run the {topic} suite,"
        f" update docs/{topic}.md, and ask the {topic} owner for review before merging."
    )


@pytest.fixture
def project(tmp_path: Path, start_server: StartServer) -> Project:
    """Thirty memories of the size people write: a rule and a note per topic."""
    project = new_project(tmp_path / "project", start_server)
    for topic in TOPICS:
        project.write_memory(
            f"{topic}-rule", "rule", _body(topic), title=f"{topic.capitalize()} rule for deploys"
        )
        project.write_memory(
            f"{topic}-notes", "knowledge", f"{_body(topic)} {_body(topic)}",
            title=f"How {topic} works in a deploy",
        )  # fmt: skip
    return project


def _size(reply: dict[str, Any]) -> int:
    """The response's bytes as the server writes them (compact UTF-8 JSON)."""
    line = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
    return len(line.encode("utf-8"))


def _words(reply: dict[str, Any]) -> str:
    words: str = reply["result"]["content"][0]["text"]
    return words


@pytest.mark.parametrize(("name", "arguments"), CALLS, ids=lambda v: str(v)[:40])
def test_a_project_tool_response_is_at_most_one_and_a_half_times_its_text_plus_4_kib(
    project: Project, name: str, arguments: dict[str, Any]
) -> None:
    reply = call(project.start(), name, arguments)
    data_of(reply)  # a success, in the shape envelope() checks
    jsonschema.validate(json.loads(reply["result"]["content"][1]["text"]), ENVELOPE_OUTPUT)
    text = _words(reply).encode("utf-8")
    assert _size(reply) <= 1.5 * len(text) + 4096, (name, _size(reply), len(text))


def test_the_commit_response_is_within_the_bound_too(project: Project) -> None:
    server = project.start()
    saved = data_of(call(server, "engram_save_session", dict(CALLS[9][1])))
    reply = call(
        server, "engram_commit", {"approval_token": saved["approval_token"], "approve": "all"}
    )
    assert data_of(reply)["written"]
    assert _size(reply) <= 1.5 * len(_words(reply).encode("utf-8")) + 4096


def test_a_large_load_carries_each_memory_once(project: Project) -> None:
    # Thirty memories about deploys alike: none is sure, and a large load is what is tested.
    (project.base / "config.json").write_text('{"load": {"confidence_floor": 0}}')
    reply = call(project.start(), "engram_load", {"query": "deploy", "budget_tokens": 16_000})
    line = json.dumps(reply, ensure_ascii=False, separators=(",", ":"))
    loaded = data_of(reply)
    assert len(loaded["body_keys"]) >= 5
    assert "structuredContent" not in reply["result"]
    # Each loaded memory's words are on the wire as often as in the text: once.
    for memory_id in loaded["body_keys"]:
        sentence = f"update docs/{memory_id.rsplit('-', 1)[0]}.md"
        assert line.count(sentence) == _words(reply).count(sentence) > 0, memory_id
