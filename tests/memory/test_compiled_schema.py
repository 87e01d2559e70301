"""The compiled schemas (validation's fast path) agree with the reference validator.

The compiled form may only ever say "valid" where ``jsonschema`` finds no violation,
or a refused call would be accepted. These tests generate calls around the valid ones
of every tool, change one place at a time to values chosen to sit on the rules'
edges, and require both validators to give the same verdict.
"""

from __future__ import annotations

import copy
import re
import unicodedata
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.errors import InvalidSchema
from engram.memory.compiled_schema import compile_schema
from engram.memory.schemas import INPUT_SCHEMAS
from engram.memory.validation import _accepts, _validator, validate_arguments

from .test_validation import FULL, MINIMAL

Path = tuple[str | int, ...]


def reference_accepts(tool: str, arguments: Any) -> bool:
    return not any(True for _ in _validator(tool).iter_errors(arguments))


def places(value: Any, path: Path = ()) -> Iterator[Path]:
    yield path
    if isinstance(value, dict):
        for key, item in value.items():
            yield from places(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from places(item, (*path, index))


def at(value: Any, path: Path) -> Any:
    for part in path:
        value = value[part]
    return value


DECOMPOSED = unicodedata.normalize("NFD", "é")
EDGE_STRINGS = st.sampled_from(
    [
        "",
        "x",
        "abc",
        "abcd",
        "a" * 15,
        "a" * 16,
        "a" * 256,
        "a" * 257,
        "a" * 512,
        "a" * 513,
        "é" * 256,
        "é" * 257,
        DECOMPOSED,
        "agent-a.task-42" + DECOMPOSED,
        "\ud800",
        "ok\ud800ok",
        "mem_abcdef",
        "mem_abcdef\n",
        "mem_ABC",
        "cand_abcdef",
        "cand_abcdef\n",
        "sha256:" + "0" * 64,
        "sha256:" + "0" * 64 + "\n",
        "sha256:" + "0" * 63,
        "2027-01-20T08:00:00.000Z",
        "2027-01-20T08:00:00.000Z\n",
        "2027-02-30T08:00:00.000Z",
        "2027-1-20T08:00:00.0000Z",
        "context",
        "decision",
        "lexical",
        "forbid",
        "make-ineligible",
        "retain",
    ]
)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.sampled_from([0, 1, 2, -1, 4096, 4095, 50, 51, 2**53 - 1, 2**53, -(2**53)])
    | st.sampled_from([1.0, 2.0, 0.5, 4096.0])
    | st.integers()
    | EDGE_STRINGS
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def calls(draw: st.DrawFn) -> tuple[str, Any]:
    tool = draw(st.sampled_from(sorted(INPUT_SCHEMAS)))
    arguments: Any = copy.deepcopy(draw(st.sampled_from([MINIMAL, FULL]))[tool]())
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        path = draw(st.sampled_from(list(places(arguments))))
        action = draw(st.sampled_from(["replace", "replace", "delete", "add", "repeat"]))
        if not path:
            if action == "replace":
                arguments = draw(JSON_VALUES)
            continue
        parent, last = at(arguments, path[:-1]), path[-1]
        if not isinstance(parent, dict | list):
            continue
        if action == "replace":
            parent[last] = draw(JSON_VALUES)  # type: ignore[index]
        elif action == "delete":
            del parent[last]  # type: ignore[arg-type]
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "t_end", "limit", "retention"]))] = draw(
                JSON_VALUES
            )
        elif action == "repeat" and isinstance(parent, list):
            parent.append(copy.deepcopy(parent[last]))  # type: ignore[index]
    return tool, arguments


@settings(max_examples=3000)
@given(calls())
def test_the_compiled_schema_and_the_reference_agree(call: tuple[str, Any]) -> None:
    tool, arguments = call
    assert _accepts(tool, arguments) == reference_accepts(tool, arguments)


@pytest.mark.parametrize("tool", sorted(INPUT_SCHEMAS))
@pytest.mark.parametrize("shape", ["minimal", "full"])
def test_every_valid_call_takes_the_fast_path(tool: str, shape: str) -> None:
    arguments = (MINIMAL if shape == "minimal" else FULL)[tool]()
    assert _accepts(tool, arguments) is True
    assert reference_accepts(tool, arguments) is True


@pytest.mark.parametrize(
    ("tool", "change", "value"),
    [
        ("capture", ("payload", "schema_version"), 2.0),  # const 2, and 1.0 is no integer
        ("capture", ("payload", "schema_version"), True),
        ("capture", ("payload", "schema_version"), 3),
        ("search", ("limit",), 5.0),
        ("get", ("record_id",), "mem_abcdef\n"),  # ECMA "$" ends the input
        ("capture", ("idempotency_key",), "agent-a.task-42" + DECOMPOSED),  # not NFC
        ("capture", ("idempotency_key",), "a" * 15),  # 15 bytes: below 16
        ("capture", ("payload", "citations", 0, "observed_at"), "2027-02-30T08:00:00.000Z"),
        ("capture", ("payload", "components", 0, "citation_ids"), ["cit1", "cit1"]),
    ],
)
def test_edges_are_refused_by_both(tool: str, change: Path, value: Any) -> None:
    arguments = FULL[tool]()
    at(arguments, change[:-1])[change[-1]] = value
    assert (_accepts(tool, arguments), reference_accepts(tool, arguments)) == (False, False)


def test_a_tuple_is_an_array_to_both() -> None:
    arguments = MINIMAL["capture"]()
    arguments["evidence"]["citation_ids"] = ("cit1",)
    assert (_accepts("capture", arguments), reference_accepts("capture", arguments)) == (
        True,
        True,
    )


@pytest.mark.parametrize("keyword", ["oneOf", "$ref", "prefixItems", "format", "if"])
def test_a_keyword_it_cannot_translate_stops_the_build(keyword: str) -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", keyword: {}}}}
    with pytest.raises(ValueError, match=re.escape(f"cannot translate '{keyword}'")):
        compile_schema(schema, {})


def test_additional_properties_other_than_false_stops_the_build() -> None:
    with pytest.raises(ValueError, match="cannot translate 'additionalProperties'"):
        compile_schema({"type": "object", "additionalProperties": {"type": "string"}}, {})


@pytest.mark.parametrize("depth", [300, 900])
def test_deep_nesting_is_refused_by_the_reference_never_raised(depth: int) -> None:
    nested: Any = "cit1"
    for _ in range(depth):
        nested = [nested]
    arguments = MINIMAL["capture"]()
    arguments["evidence"]["citation_ids"] = [nested, "cit1"]
    assert (_accepts("capture", arguments), reference_accepts("capture", arguments)) == (
        False,
        False,
    )
    with pytest.raises(InvalidSchema):
        validate_arguments("capture", arguments)
