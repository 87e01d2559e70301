"""Every tool of both faces against the schema rules of the agent hosts (docs/hosts.md,
"Tool schemas every host accepts"): Claude Code 2.1.197, Gemini CLI 0.61.0, Codex 0.171.0,
OpenCode 1.18.33 (each run against a stand-in for its model API that recorded what it
sent), and Cursor's documented limits. A tool that breaks one is dropped by that host, or
makes it drop every tool of the server, without an error the person sees."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.testing import Project, StartServer, host_profile, new_project
from engram.testing.wire import call, data_of, envelope

#: Keywords a host refuses at the top of an input schema (Claude Code skips the tool:
#: "its input schema uses top-level anyOf"; Codex and OpenAI refuse the rest).
TOP_LEVEL_REFUSED = (
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "enum",
    "const",
    "$ref",
)
#: Property names the Anthropic API takes (Claude Code sends them unchecked).
PROPERTY_NAME = re.compile(r"^[a-zA-Z0-9_.-]{1,64}$")
#: Tool names every host keeps as they are: no "-" (Codex rewrites it), no "." (Claude
#: Code and OpenCode rewrite it).
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_]+$")
#: Cursor: the server's name and the tool's together; and its tool budget.
CURSOR_NAME_LIMIT = 60
CURSOR_TOOL_LIMIT = 40
#: Claude Code truncates longer descriptions.
DESCRIPTION_LIMIT = 2048


@pytest.fixture
def project(tmp_path: Path, start_server: StartServer) -> Project:
    return new_project(tmp_path / "project", start_server)


def _tools(project: Project, tmp_path: Path) -> dict[str, dict[str, Any]]:
    profile = host_profile(tmp_path / "host")
    server = project.start("--host-profile", str(profile))
    reply = server.request("tools/list", {})
    return {tool["name"]: tool for tool in reply["result"]["tools"]}


def _schemas(schema: Any, path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    """Every (sub)schema, with where it is."""
    if isinstance(schema, dict):
        yield path, schema
        for key, value in schema.items():
            if isinstance(value, dict | list):
                yield from _schemas(value, f"{path}/{key}")
    elif isinstance(schema, list):
        for index, item in enumerate(schema):
            yield from _schemas(item, f"{path}/{index}")


def test_every_tool_of_both_faces_keeps_every_hosts_schema_rules(
    project: Project, tmp_path: Path
) -> None:
    tools = _tools(project, tmp_path)

    assert len(tools) == 17  # eleven project tools and the six governed ones
    assert len(tools) <= CURSOR_TOOL_LIMIT
    broken: list[str] = []
    for name, tool in tools.items():
        schema = tool["inputSchema"]
        if schema.get("type") != "object":  # a type list loses every tool in Claude, Gemini
            broken.append(f"{name}: root type is not exactly object")
        if not isinstance(schema.get("properties"), dict):
            broken.append(f"{name}: no root properties")
        broken += [f"{name}: top-level {key}" for key in TOP_LEVEL_REFUSED if key in schema]
        if not TOOL_NAME.fullmatch(name) or len("engram" + name) > CURSOR_NAME_LIMIT:
            broken.append(f"{name}: tool name")
        if len("mcp__engram__" + name) > 64 or len("mcp_engram_" + name) > 63:
            broken.append(f"{name}: qualified name too long")
        if len(tool.get("description", "")) > DESCRIPTION_LIMIT:
            broken.append(f"{name}: description longer than {DESCRIPTION_LIMIT}")
        for where, sub in _schemas(schema):
            for key in sub.get("properties", {}) if isinstance(sub.get("properties"), dict) else ():
                if not PROPERTY_NAME.fullmatch(key):
                    broken.append(f"{name}{where}: property name {key!r}")
            if "enum" in sub and "type" not in sub:  # Gemini wants typed string enums
                broken.append(f"{name}{where}: enum without a type")
            if "$ref" in sub or "$defs" in sub:  # OpenCode's Google path empties them
                broken.append(f"{name}{where}: $ref")
            if sub.get("type") == "null" and where == "":
                broken.append(f"{name}: null root (Codex drops it)")
    assert broken == []


def test_the_one_of_rule_codex_cannot_see_is_in_the_description(
    project: Project, tmp_path: Path
) -> None:
    """Codex strips ``x-*`` keywords (and lengths) before its model sees a schema: what
    only ``x-engram-oneRequired`` says must be in the tool's description too."""
    tools = _tools(project, tmp_path)

    for name, tool in tools.items():
        names = tool["inputSchema"].get("x-engram-oneRequired")
        if names:
            said = " or ".join(f"`{n}`" for n in names)
            assert f"Give {said}." in tool["description"], name


@pytest.mark.parametrize("value", [True, False])
def test_gemini_clis_wait_for_previous_argument_is_taken_and_ignored(
    project: Project, value: bool
) -> None:
    """Gemini CLI adds ``wait_for_previous`` to every tool's schema it shows its model
    and passes the model's value on to the server: a closed schema refused it, so every
    call from Gemini failed."""
    server = project.start()

    data = data_of(call(server, "engram_status", {"wait_for_previous": value}))

    assert data["healthy"] is True
    refused = call(server, "engram_status", {"wait_for_previous": "yes"})  # not Gemini's
    assert envelope(refused)["error"]["code"] == "INVALID_ARGUMENTS"
