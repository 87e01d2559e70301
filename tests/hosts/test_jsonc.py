"""The JSON/JSONC reader and the text-splicing editor."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import HostConfigShape, HostConfigUnparseable
from engram.hosts.jsonc import parse, to_python
from engram.hosts.jsonc_edit import MISSING, JsonDocument

ENTRY = {"command": "engram-mcp", "args": ["--always-load"], "env": {"A": "1"}}
PATH = ("mcpServers", "engram")


def test_jsonc_reads_comments_and_trailing_commas() -> None:
    text = '// top\n{\n  "a": [1, 2,], /* inline */\n  "b": {"c": "//not a comment"},\n}\n'
    assert to_python(text, parse(text, jsonc=True)) == {"a": [1, 2], "b": {"c": "//not a comment"}}


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{\n  "a": 1,\n}', 2),
        ('{\n  // comment\n  "a": 1\n}', 2),
        ('{\n  "a": 1\n  "b": 2\n}', 3),
        ('{"a": tru}', 1),
        ('{\n\n  "a": "unterminated\n}', 3),
        ("{'a': 1}", 1),
    ],
)
def test_strict_json_refuses_what_json_refuses_and_names_the_line(text: str, line: int) -> None:
    with pytest.raises(HostConfigUnparseable) as caught:
        parse(text, jsonc=False, source="conf.json")
    assert caught.value.detail.startswith(f"conf.json: line {line},")
    assert caught.value.code == "HOST_CONFIG_UNPARSEABLE"


def test_jsonc_still_refuses_json5_and_unclosed_comments() -> None:
    for text in ("{a: 1}", '{"a": 0x10}', '{"a": 1 /* open'):
        with pytest.raises(HostConfigUnparseable):
            parse(text, jsonc=True)


def test_set_in_an_empty_file_creates_the_whole_path() -> None:
    document = JsonDocument("", jsonc=False).set(PATH, ENTRY)
    assert json.loads(document.text) == {"mcpServers": {"engram": ENTRY}}
    assert document.text.endswith("}\n")


def test_set_replaces_only_the_value_span() -> None:
    text = '{\n  "mcpServers": {\n    "engram": {"command": "old"}, // mine\n    "x": 1\n  }\n}\n'
    after = JsonDocument(text, jsonc=True).set(PATH, {"command": "new"}).text
    new = '{\n      "command": "new"\n    }'
    assert after == text.replace('{"command": "old"}', new)


def test_a_non_object_on_the_path_is_refused_with_its_line() -> None:
    with pytest.raises(HostConfigShape) as caught:
        JsonDocument('{\n  "mcpServers": []\n}', jsonc=False, source="f").set(PATH, ENTRY)
    assert "line 2" in caught.value.detail


def test_a_duplicated_engram_key_is_refused_not_guessed() -> None:
    text = '{"mcpServers": {"engram": {}, "engram": {}}}'
    with pytest.raises(HostConfigShape):
        JsonDocument(text, jsonc=False).get(PATH)


def test_remove_prunes_only_containers_left_empty_without_comments() -> None:
    commented = '{\n  "mcpServers": {\n    // keep me\n    "engram": {}\n  }\n}\n'
    after = JsonDocument(commented, jsonc=True).remove(PATH, prune=1).text
    assert "// keep me" in after
    assert JsonDocument(after, jsonc=True).get(("mcpServers",)) == {}
    bare = '{\n  "mcpServers": {\n    "engram": {}\n  },\n  "z": 1\n}\n'
    assert JsonDocument(bare, jsonc=True).remove(PATH, prune=1).text == '{\n  "z": 1\n}\n'


def test_a_missing_entry_is_missing() -> None:
    assert JsonDocument('{"mcpServers": {}}', jsonc=False).get(PATH) is MISSING


def test_new_entries_follow_the_documents_indentation_and_line_endings() -> None:
    text = '{\r\n\t"a": 1\r\n}\r\n'
    after = JsonDocument(text, jsonc=False).set(("b",), {"c": 2}).text
    assert after == '{\r\n\t"a": 1,\r\n\t"b": {\r\n\t\t"c": 2\r\n\t}\r\n}\r\n'


# --- properties -------------------------------------------------------------------

_keys = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=6).filter(
    lambda key: key not in {"engram", "mcpServers"}
)
_scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=8)
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_keys, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def documents(draw: st.DrawFn) -> str:
    """A host file: other keys, maybe other servers, any layout, comment lines (JSONC)."""
    value: dict[str, Any] = draw(st.dictionaries(_keys, _values, max_size=4))
    servers = draw(st.dictionaries(_keys, st.dictionaries(_keys, _scalars, max_size=2)))
    if servers:
        value["mcpServers"] = servers
    indent = draw(st.sampled_from([None, 2, 4, "\t"]))
    text = json.dumps(value, indent=indent, ensure_ascii=draw(st.booleans()))
    lines = text.split("\n")
    if indent is not None:
        for _ in range(draw(st.integers(0, 3))):
            at = draw(st.integers(1, len(lines)))
            lines.insert(at, "  // " + draw(st.text(st.sampled_from("ab */{},"), max_size=6)))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    return newline.join(lines) + draw(st.sampled_from(["", newline]))


@settings(max_examples=300)
@given(documents())
def test_link_twice_is_link_once_and_unlink_restores_every_byte(text: str) -> None:
    linked = JsonDocument(text, jsonc=True).set(PATH, ENTRY)
    assert linked.get(PATH) == ENTRY
    assert linked.set(PATH, ENTRY).text == linked.text
    assert linked.remove(PATH, prune=1).text == text


@settings(max_examples=200)
@given(documents())
def test_link_keeps_every_other_key_and_value(text: str) -> None:
    original = JsonDocument(text, jsonc=True).value()
    linked = JsonDocument(text, jsonc=True).set(PATH, ENTRY).value()
    servers = dict(original.get("mcpServers", {}))
    assert linked == {**original, "mcpServers": {**servers, "engram": ENTRY}}


@settings(max_examples=200)
@given(documents())
def test_an_appended_item_removed_by_its_index_gives_the_text_back(text: str) -> None:
    path = ("hooks", "SessionStart")
    item = {"hooks": [{"type": "command", "command": "engram hook claude"}]}
    added = JsonDocument(text, jsonc=True).append(path, item)
    last = len(added.get(path)) - 1
    assert added.get((*path, last, "hooks", 0, "command")) == "engram hook claude"
    assert added.remove((*path, last), prune=2).text == text


def test_indices_reach_array_items_to_replace_and_remove() -> None:
    text = '{"a": [{"b": [1, 2, 3]}, "x"]}'
    document = JsonDocument(text, jsonc=False)
    assert document.set(("a", 0, "b", 1), 20).text == '{"a": [{"b": [1, 20, 3]}, "x"]}'
    assert document.remove(("a", 0, "b", 2)).text == '{"a": [{"b": [1, 2]}, "x"]}'
    assert document.get(("a", 5)) is MISSING
    with pytest.raises(HostConfigShape) as missing:
        document.set(("a", 7, "c"), 1)
    assert missing.value.detail == "<text>: a.7.c is not in the document"
    with pytest.raises(HostConfigShape) as shape:
        document.get(("a", 0, 0))
    assert shape.value.detail == "<text>: line 1: a.0 is not a list"
