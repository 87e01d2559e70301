"""Managed blocks in Markdown and TOML, and Codex's TOML entry."""

from __future__ import annotations

import pytest
import tomlkit
from hypothesis import example, given, settings
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


ENGRAM_TABLES = (
    "[mcp_servers.engram]\n"
    'command = "engram-mcp"\n'
    "args = []\n"
    "\n"
    "[mcp_servers.engram.tools.engram_commit]\n"
    'approval_mode = "approve"\n'
)


def test_codex_entry_is_appended_as_plain_tables_and_removed_exactly() -> None:
    text = 'model = "o3"\n\n[mcp_servers.github]\ncommand = "npx"\n'
    written = write_entry(text, KEY, ENTRY, "config.toml")
    assert written == text + "\n" + ENGRAM_TABLES
    assert read_entry(written, KEY, "config.toml") == ENTRY
    assert remove_entry(written, KEY, "config.toml") == text


def test_a_hand_written_engram_table_is_replaced_where_it_stands() -> None:
    text = '[mcp_servers.engram]\ncommand = "old"\n\n[profiles.a]\nmodel = "x"\n'
    written = write_entry(text, KEY, ENTRY, "config.toml")
    assert written == ENGRAM_TABLES + '\n[profiles.a]\nmodel = "x"\n'
    assert remove_entry(written, KEY, "config.toml") == '[profiles.a]\nmodel = "x"\n'


def test_engram_01_marker_lines_go_but_a_table_between_them_stays() -> None:
    text = (
        "# engram:start\n"
        "# Managed by engram link; engram unlink removes this block.\n"
        '[mcp_servers.engram]\ncommand = "old"\n\n'
        "[features]\nhooks = true\n"
        "# engram:end\n"
    )
    assert remove_entry(text, KEY, "config.toml") == "[features]\nhooks = true\n"
    assert write_entry(text, KEY, ENTRY, "config.toml") == (
        ENGRAM_TABLES + "\n[features]\nhooks = true\n"
    )


def test_lines_inside_strings_and_arrays_are_never_taken_for_engrams() -> None:
    text = (
        'notes = """\n# engram:end\n[mcp_servers.engram]\ncommand = "no"\n"""\n'
        "matrix = [\n  [1],\n  [2],\n]\n"
        "\n"
        '[mcp_servers.engram]\ncommand = "old"\nargs = [\n  "--root",\n  "[x]",\n]\n'
        "\n"
        "[mcp_servers.next]\nliteral = '''\n[mcp_servers.engram.env]\n'''\n"
    )
    rest = remove_entry(text, KEY, "config.toml")
    assert rest == text.replace(
        '[mcp_servers.engram]\ncommand = "old"\nargs = [\n  "--root",\n  "[x]",\n]\n\n', ""
    )
    written = write_entry(text, KEY, ENTRY, "config.toml")
    assert written == rest.replace("[mcp_servers.next]", ENGRAM_TABLES + "\n[mcp_servers.next]")


def test_a_header_with_spaces_and_quoted_keys_names_engrams_table() -> None:
    text = (
        'x = 1\n\n[ mcp_servers . "engram" ]  # mine\ncommand = "old"\n\n[ "mcp_servers".other ]\n'
    )
    assert remove_entry(text, KEY, "config.toml") == 'x = 1\n\n[ "mcp_servers".other ]\n'


def test_engrams_tables_spread_over_the_file_become_one_entry_at_the_first() -> None:
    text = (
        '[mcp_servers.engram]\ncommand = "old"\n\n'
        '[profiles.a]\nmodel = "x"\n\n'
        '[mcp_servers.engram.env]\nKEY = "v"\n'
    )
    entry = {**ENTRY, "env": {"KEY": "v"}}
    written = write_entry(text, KEY, entry, "config.toml")
    assert written == (
        '[mcp_servers.engram]\ncommand = "engram-mcp"\nargs = []\n\n'
        '[mcp_servers.engram.tools.engram_commit]\napproval_mode = "approve"\n\n'
        '[mcp_servers.engram.env]\nKEY = "v"\n\n'
        '[profiles.a]\nmodel = "x"\n'
    )
    assert remove_entry(text, KEY, "config.toml") == '[profiles.a]\nmodel = "x"\n'


def test_an_entry_written_as_an_inline_table_is_replaced_by_engrams_table() -> None:
    text = '[mcp_servers]\nengram = { command = "old" }\nother = { command = "o" }\n'
    rest = '[mcp_servers]\nother = { command = "o" }\n'
    assert write_entry(text, KEY, ENTRY, "config.toml") == rest + "\n" + ENGRAM_TABLES
    assert remove_entry(text, KEY, "config.toml") == rest


def test_crlf_files_get_crlf_tables() -> None:
    text = 'model = "o3"\r\n'
    written = write_entry(text, KEY, ENTRY, "config.toml")
    assert written == text + "\r\n" + ENGRAM_TABLES.replace("\n", "\r\n")
    assert remove_entry(written, KEY, "config.toml") == text


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
# A string holding a character str.splitlines breaks at (NEL), found by this test.
@example('[mcp_servers.a]\na = "_\x85\u2028x"\n')
def test_codex_unlink_of_link_keeps_every_byte(text: str) -> None:
    linked = write_entry(text, KEY, ENTRY, "config.toml")
    assert write_entry(linked, KEY, ENTRY, "config.toml") == linked
    assert read_entry(linked, KEY, "config.toml") == ENTRY
    assert remove_entry(linked, KEY, "config.toml") == text


_chunks = st.sampled_from(
    [
        "# a comment\n",
        "\n",
        'm{n} = """\n# engram:end\n[mcp_servers.engram]\n"""\n',
        'arr{n} = [\n  [1],\n  "[a]",  # ]\n]\n',
        "lit{n} = '''\n# engram:start\n'''\n",
        '[t{n}]\nkey = "value"  # trailing\n',
        '[mcp_servers.s{n}]\ncommand = "x"\n\n[mcp_servers.s{n}.env]\nA = "1"\n',
        '[projects."/p/{n}"]\ntrust_level = "trusted"\n',
    ]
)


@st.composite
def decorated_configs(draw: st.DrawFn) -> str:
    """A config.toml with comments, multi-line strings and arrays whose lines look like
    tables or engram's old markers, and other servers' tables."""
    chunks = draw(st.lists(_chunks, max_size=8))
    text = "".join(chunk.replace("{n}", str(number)) for number, chunk in enumerate(chunks))
    return text if text.strip() else ""


_LEGACY_BLOCK = (
    "# engram:start\n# Managed by engram link; engram unlink removes this block.\n"
    '[mcp_servers.engram]\ncommand = "engram-mcp"\nargs = []\n\n'
    '[mcp_servers.engram.tools.engram_commit]\napproval_mode = "approve"\n'
)


@settings(max_examples=150)
@given(decorated_configs())
def test_codex_unlink_of_link_keeps_every_byte_of_decorated_files(text: str) -> None:
    linked = write_entry(text, KEY, ENTRY, "config.toml")
    assert write_entry(linked, KEY, ENTRY, "config.toml") == linked
    assert read_entry(linked, KEY, "config.toml") == ENTRY
    assert remove_entry(linked, KEY, "config.toml") == text


_appended_tables = st.lists(
    st.sampled_from(
        ["[features]\nhooks = true\n", '[projects."/p"]\ntrust_level = "trusted"\n', "[tui]\n"]
    ),
    min_size=1,
    max_size=3,
    unique=True,
).map("".join)


@settings(max_examples=150)
@given(decorated_configs(), _appended_tables)
def test_unlink_of_an_engram_01_block_keeps_every_table_codex_put_inside_it(
    text: str, appended: str
) -> None:
    # Codex appends its tables at the end of the file: before a trailing `# engram:end`.
    before = text + "\n" if text else ""
    legacy = before + _LEGACY_BLOCK + "\n" + appended + "# engram:end\n"
    assert remove_entry(legacy, KEY, "config.toml") == before + appended
