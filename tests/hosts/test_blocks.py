"""Managed blocks in Markdown and TOML, and Codex's TOML entry."""

from __future__ import annotations

import pytest
import tomlkit
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import HostConfigShape, HostConfigUnparseable, ManagedBlockCorrupt
from engram.hosts.blocks import MARKDOWN, block_body, remove_block, set_block
from engram.hosts.toml_block import read_entry, remove_entry, write_entry

KEY = ("mcp_servers", "engram")
ENTRY = {
    "command": "engram-mcp",
    "args": [],
    "tools": {"engram_commit": {"approval_mode": "approve"}},
}


def test_a_block_is_appended_after_a_blank_line_and_replaced_in_place() -> None:
    text = "# Guide\n\nBe kind.\n"
    once = set_block(text, "v1", MARKDOWN, "AGENTS.md")
    assert once == "# Guide\n\nBe kind.\n\n<!-- engram:start -->\nv1\n<!-- engram:end -->\n"
    moved = once + "\nMore human text.\n"
    assert set_block(moved, "v2", MARKDOWN, "AGENTS.md") == moved.replace("v1", "v2")
    assert block_body(moved, MARKDOWN, "AGENTS.md") == "v1"


@pytest.mark.parametrize(
    "text",
    [
        "<!-- engram:start -->\na\n<!-- engram:start -->\nb\n<!-- engram:end -->\n",
        "<!-- engram:end -->\na\n<!-- engram:start -->\n",
        "intro\n<!-- engram:start -->\nnever closed\n",
        "<!-- engram:start -->\n<!-- engram:end -->\n<!-- engram:end -->\n",
    ],
)
def test_duplicated_or_misordered_markers_are_an_error_never_repaired(text: str) -> None:
    with pytest.raises(ManagedBlockCorrupt) as caught:
        set_block(text, "body", MARKDOWN, "CLAUDE.md")
    assert caught.value.detail.startswith("CLAUDE.md: engram markers")
    with pytest.raises(ManagedBlockCorrupt):
        remove_block(text, MARKDOWN, "CLAUDE.md")


_lines = st.lists(
    st.text(st.characters(exclude_categories=("Cs", "Cc")), max_size=20).filter(
        lambda line: "engram:" not in line
    ),
    max_size=6,
)


@settings(max_examples=200)
@given(_lines, st.sampled_from(["\n", "\r\n"]))
def test_remove_block_of_set_block_gives_the_file_back(lines: list[str], newline: str) -> None:
    text = "".join(line + newline for line in lines)
    text = text if text.strip() else ""  # a blank file is replaced, then removed whole
    added = set_block(text, "## Engram\n- rule", MARKDOWN, "f")
    assert set_block(added, "## Engram\n- rule", MARKDOWN, "f") == added
    assert remove_block(added, MARKDOWN, "f") == text


def test_codex_block_round_trips_around_other_tables() -> None:
    text = 'model = "o3"\n\n[mcp_servers.github]\ncommand = "npx"\n'
    written = write_entry(text, KEY, ENTRY, "config.toml")
    assert written.startswith(text + "\n# engram:start\n")
    assert tomlkit.parse(written).unwrap()["mcp_servers"]["github"] == {"command": "npx"}
    assert read_entry(written, KEY, "config.toml") == ENTRY
    assert remove_entry(written, KEY, "config.toml") == text


def test_a_hand_written_engram_table_is_replaced_by_the_managed_block() -> None:
    text = '[mcp_servers.engram]\ncommand = "old"\n\n[profiles.a]\nmodel = "x"\n'
    written = write_entry(text, KEY, ENTRY, "config.toml")
    assert written.count("[mcp_servers.engram]") == 1
    assert read_entry(written, KEY, "config.toml") == ENTRY
    assert 'model = "x"' in written


def test_an_inline_mcp_servers_table_is_refused_without_writing() -> None:
    text = 'mcp_servers = { other = { command = "x" } }\n'
    with pytest.raises(HostConfigShape) as caught:
        write_entry(text, KEY, ENTRY, "config.toml")
    assert "inline table" in caught.value.detail


def test_unparseable_toml_names_the_line() -> None:
    with pytest.raises(HostConfigUnparseable) as caught:
        write_entry('a = 1\nb = [1,\nc = "x"\n', KEY, ENTRY, "config.toml")
    assert caught.value.detail.startswith("config.toml: line ")


_names = st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True).filter(lambda n: n != "engram")
_toml_scalars = st.booleans() | st.integers(-1000, 1000) | st.text(max_size=8)


@st.composite
def codex_configs(draw: st.DrawFn) -> str:
    """A config.toml: top-level keys, tables, maybe other MCP servers, maybe comments."""
    config: dict[str, object] = draw(st.dictionaries(_names, _toml_scalars, max_size=3))
    tables = draw(st.dictionaries(_names, st.dictionaries(_names, _toml_scalars), max_size=2))
    config.update({f"t_{name}": table for name, table in tables.items()})
    servers = draw(st.dictionaries(_names, st.dictionaries(_names, _toml_scalars, min_size=1)))
    if servers:
        config["mcp_servers"] = servers
    text = tomlkit.dumps(config)
    if draw(st.booleans()):
        text = "# my codex config\n" + text
    return text


@settings(max_examples=150)
@given(codex_configs())
def test_codex_unlink_of_link_keeps_every_byte(text: str) -> None:
    linked = write_entry(text, KEY, ENTRY, "config.toml")
    assert write_entry(linked, KEY, ENTRY, "config.toml") == linked
    assert read_entry(linked, KEY, "config.toml") == ENTRY
    assert remove_entry(linked, KEY, "config.toml") == text
